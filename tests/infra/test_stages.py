"""Dev and prod coexist in one account: every physical name is scoped by stage, and every metric
the stage's dashboard and alarms read carries the stage dimension."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.infra.template_reading import functions

if TYPE_CHECKING:
    from aws_cdk.assertions import Template

NAMED = {
    "AWS::Events::EventBus": "Name",
    "AWS::ApiGateway::RestApi": "Name",
    "AWS::CloudWatch::Dashboard": "DashboardName",
    "AWS::CloudWatch::Alarm": "AlarmName",
    "AWS::OpenSearchService::Domain": "DomainName",
    "AWS::Logs::ResourcePolicy": "PolicyName",
}


def _names(template: Template) -> dict[str, list[Any]]:
    return {
        kind: [r["Properties"].get(prop) for r in template.find_resources(kind).values()]
        for kind, prop in NAMED.items()
    }


def dashboard_metrics(template: Template) -> list[list[Any]]:
    """Every metric line of the dashboard: [namespace, name, dimension, value, ..., {options}]."""
    body = next(iter(template.find_resources("AWS::CloudWatch::Dashboard").values()))["Properties"]["DashboardBody"]
    parts = body["Fn::Join"][1] if isinstance(body, dict) else [body]
    widgets = json.loads("".join(p if isinstance(p, str) else "TOKEN" for p in parts))["widgets"]
    return [line for w in widgets for line in w["properties"].get("metrics", [])]


def test_dev_and_prod_have_disjoint_physical_names(dev: Template, prod: Template) -> None:
    ours, theirs = _names(dev), _names(prod)
    for kind in NAMED:
        assert ours[kind] and all(isinstance(n, str) for n in ours[kind]), f"{kind} has no fixed, stage-scoped name"
        assert all("-dev" in n for n in ours[kind]) and all("-prod" in n for n in theirs[kind]), kind
        assert not set(ours[kind]) & set(theirs[kind]), kind


def test_every_function_knows_its_stage_and_every_custom_metric_read_carries_it(dev: Template) -> None:
    assert {f["Properties"]["Environment"]["Variables"]["NM_STAGE"] for f in functions(dev).values()} == {"dev"}
    for alarm in dev.find_resources("AWS::CloudWatch::Alarm").values():
        props = alarm["Properties"]
        if props.get("Namespace") == "NeuralMemory":
            assert {"Name": "stage", "Value": "dev"} in props["Dimensions"], props["AlarmName"]
    lines = dashboard_metrics(dev)
    ours = [line for line in lines if line and line[0] == "NeuralMemory"]
    assert ours and all(line[2:6] == ["service", "neural-memory", "stage", "dev"] for line in ours), ours
    expressions = [o["expression"] for line in lines for o in line if isinstance(o, dict) and "expression" in o]
    searches = [expression for expression in expressions if expression.startswith("SEARCH(")]
    assert searches and all('stage="dev"' in expression for expression in searches)


def test_no_lambda_but_ours_and_the_index_bootstrap_is_backed_by_the_maintenance_function(dev: Template) -> None:
    every = dev.find_resources("AWS::Lambda::Function")
    assert set(every) == {f["logical_id"] for f in functions(dev).values()}
    (bootstrap,) = dev.find_resources("Custom::NeuralMemoryIndex").values()
    assert bootstrap["Properties"]["ServiceToken"] == {
        "Fn::GetAtt": [functions(dev)["maintenance"]["logical_id"], "Arn"]
    }
