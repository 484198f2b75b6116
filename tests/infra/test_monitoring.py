"""The dashboard and alarms graph what is really emitted: every metric they read is one the code
emits (run through the handlers here, the way Lambda runs them) with the dimensions it emits, or
one AWS publishes for these resources with its documented dimensions; every alarm notifies the
on-call topic. A widget on a misspelt metric or a dimension the code never sets graphs nothing,
silently; these tests fail instead."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from neural_memory.runtime import set_service
from neural_memory.settings import SearchSettings

from functions.answer import app as answer_app
from functions.ingest import app as ingest_app
from functions.mcp import app as mcp_app
from functions.observations import app as observations_app
from functions.search import app as search_app
from tests.helpers.events import api_event, load_event
from tests.helpers.pipeline import DEPLOY_NOTES, FakeClaude, FakeCohere, cohere_prefers, score_by_title, service
from tests.infra.template_reading import functions

if TYPE_CHECKING:
    from collections.abc import Callable

    from aws_cdk.assertions import Template
    from neural_memory.local.serving.gateway import LocalLambdaContext
    from neural_memory.settings import Settings

OURS = "NeuralMemory"
# What AWS publishes for the resources we alarm on and graph: metric names and their dimensions.
AWS_METRICS: dict[str, tuple[set[str], frozenset[str]]] = {
    "AWS/Lambda": ({"Errors", "Throttles"}, frozenset({"FunctionName"})),
    "AWS/ApiGateway": ({"5XXError", "Count", "Latency"}, frozenset({"ApiName"})),
    "AWS/SQS": ({"ApproximateAgeOfOldestMessage", "ApproximateNumberOfMessagesVisible"}, frozenset({"QueueName"})),
    "AWS/ES": (
        {
            "ClusterStatus.red",
            "ClusterStatus.yellow",
            "FreeStorageSpace",
            "JVMMemoryPressure",
            "KNNCircuitBreakerTriggered",
            "AutomatedSnapshotFailure",
            "CPUUtilization",
        },
        frozenset({"DomainName", "ClientId"}),
    ),
}
Metric = tuple[str, str, frozenset[str]]  # namespace, name, dimension names


# ------------------------------------------------------------------ what the template reads


def _dashboard_lines(template: Template) -> list[list[Any]]:
    body = next(iter(template.find_resources("AWS::CloudWatch::Dashboard").values()))["Properties"]["DashboardBody"]
    parts = body["Fn::Join"][1] if isinstance(body, dict) else [body]
    text = "".join(p if isinstance(p, str) else json.dumps(json.dumps(p))[1:-1] for p in parts)
    widgets = json.loads(text)["widgets"]
    return [line for w in widgets for line in w["properties"].get("metrics", [])]


def _read(template: Template) -> list[Metric]:
    """Every metric a widget or an alarm reads (SEARCH expressions by their schema)."""
    found: list[Metric] = []
    for line in _dashboard_lines(template):
        if isinstance(line[0], dict):
            expression = line[0]["expression"]
            search = re.match(r"SEARCH\('\{([^}]*)\} MetricName=\"([^\"]+)\"", expression)
            if search:
                namespace, *dimensions = search.group(1).split(",")
                found.append((namespace, search.group(2), frozenset(dimensions)))
            continue
        fields = [part for part in line if not isinstance(part, dict)]
        found.append((fields[0], fields[1], frozenset(fields[2::2])))
    for alarm in template.find_resources("AWS::CloudWatch::Alarm").values():
        props = alarm["Properties"]
        stats = [m["MetricStat"]["Metric"] for m in props.get("Metrics", []) if "MetricStat" in m]
        if "MetricName" in props:
            stats.append(props)
        for stat in stats:
            names = frozenset(d["Name"] for d in stat.get("Dimensions", []))
            found.append((stat["Namespace"], stat["MetricName"], names))
    return found


# ------------------------------------------------------------------ what the code emits


def _emitted(printed: str) -> set[Metric]:
    """The metrics of every EMF document printed (CloudWatch reads them from the function's log)."""
    found: set[Metric] = set()
    for line in printed.splitlines():
        if not line.startswith("{") or '"_aws"' not in line:
            continue
        document = json.loads(line)
        for directive in document["_aws"]["CloudWatchMetrics"]:
            for dimensions in directive["Dimensions"]:
                for metric in directive["Metrics"]:
                    found.add((OURS, metric["Name"], frozenset(dimensions)))
    return found


@pytest.fixture
def emitted(
    settings: Settings,
    lambda_context: LocalLambdaContext,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> set[Metric]:
    """Drive every handler through the paths that emit: a gated and reranked search, a search whose
    gate fails, an answer, MCP tool calls (one refused), a write, and an ingest batch with a poison record."""
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    routed = settings.model_copy(update={"ingest_routes": {"github:acme/console": "acme"}})
    claude = FakeClaude(score_by_title("fail"))
    failing = FakeClaude(lambda body: httpx2.Response(529, json={"type": "error", "error": {"type": "overloaded"}}))
    cohere = FakeCohere(cohere_prefers("failed"))
    searches = [
        service(routed, scorer=claude.scorer(), reranker=cohere.reranker()),
        service(routed, scorer=failing.scorer()),
    ]
    capsys.readouterr()
    try:
        for svc in searches:
            set_service(svc)
            svc.index("acme", DEPLOY_NOTES)
            body = {"query": "why did the deploy fail", "rerank": "balanced", "llmFilter": True}
            reply = search_app.lambda_handler(api_event("api/search_post", body), lambda_context)
            assert reply["statusCode"] == 200, reply
        question = {"question": "Why did the deploy fail?"}
        assert answer_app.lambda_handler(api_event("api/answer_post", question), lambda_context)["statusCode"] == 200
        for tool, arguments in (("search_memory", {"query": "why did the deploy fail"}), ("get_memory", {"id": "x"})):
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
            event = api_event("api/search_post", call, resource="/mcp", path="/mcp")
            event["requestContext"]["resourcePath"] = "/mcp"
            assert mcp_app.lambda_handler(event, lambda_context)["statusCode"] == 200
        assert observations_app.lambda_handler(api_event("api/observations_post"), lambda_context)["statusCode"] == 200
        note = {"source": "manual", "observationType": "note", "occurredAt": "2025-12-12T10:00:00Z"}
        leaking = {"observations": [{**note, "content": "CI uses ghp_Qe4Rt7Yu0Io3Pa6Sd9Fg2Hj5Kl8Zx1Cv4Bn7M"}]}
        assert (
            observations_app.lambda_handler(api_event("api/observations_post", leaking), lambda_context)["statusCode"]
            == 200
        )
        ingest_app.lambda_handler(load_event("sqs/ingest_batch"), lambda_context)
    finally:
        set_service(None)
    return _emitted(capsys.readouterr().out)


# ------------------------------------------------------------------ the tests


def test_every_metric_read_by_the_dashboard_or_an_alarm_is_emitted_as_read(dev: Template, emitted: set[Metric]) -> None:
    read = _read(dev)
    assert {namespace for namespace, _, _ in read} == {OURS, *AWS_METRICS}
    for namespace, name, dimensions in read:
        if namespace == OURS:
            assert (namespace, name, dimensions) in emitted, f"{name} {sorted(dimensions)} is read but never emitted"
        else:
            names, expected = AWS_METRICS[namespace]
            assert name in names and dimensions == expected, (namespace, name, sorted(dimensions))
    # And the functions emit into the namespace, with the service and stage values, the dashboard reads
    environments = [f["Properties"]["Environment"]["Variables"] for f in functions(dev).values()]
    assert {e["POWERTOOLS_METRICS_NAMESPACE"] for e in environments} == {OURS}
    lines = [line for line in _dashboard_lines(dev) if line[0] == OURS]
    services = {e["POWERTOOLS_SERVICE_NAME"] for e in environments}
    stages = {e["NM_STAGE"] for e in environments}
    assert {(line[3], line[5]) for line in lines} == {(services.pop(), stages.pop())}


def test_stage_latency_is_emitted_only_for_the_stages_that_ran(emitted: set[Metric]) -> None:
    names = {name for _, name, _ in emitted}
    assert {"SearchLatencyLlmFilter", "SearchLatencyRerank", "AnswerLatencyGenerate"} <= names


def test_a_search_without_gate_or_rerank_emits_no_latency_for_them(
    settings: Settings,
    lambda_context: LocalLambdaContext,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    svc = service(settings)
    set_service(svc)
    try:
        svc.index("acme", DEPLOY_NOTES)
        capsys.readouterr()
        body = {"query": "why did the deploy fail", "rerank": "fast", "llmFilter": False}
        assert search_app.lambda_handler(api_event("api/search_post", body), lambda_context)["statusCode"] == 200
    finally:
        set_service(None)
    names = {name for _, name, _ in _emitted(capsys.readouterr().out)}
    assert {"SearchLatencyTotal", "SearchLatencyEmbed", "SearchLatencyRetrieval"} <= names
    assert not names & {"SearchLatencyLlmFilter", "SearchLatencyRerank"}, names


def test_every_alarm_notifies_the_on_call_topic_when_it_fires_and_when_it_clears(dev: Template) -> None:
    (topic,) = dev.find_resources("AWS::SNS::Topic")
    alarms = dev.find_resources("AWS::CloudWatch::Alarm")
    for alarm in alarms.values():
        props = alarm["Properties"]
        assert props["AlarmActions"] == [{"Ref": topic}] and props["OKActions"] == [{"Ref": topic}], props["AlarmName"]
    dev.resource_count_is("AWS::SNS::Subscription", 0)  # no email unless configured
    # The topic's policy replaces SNS's default one: it must still let CloudWatch publish, over TLS only
    (policy,) = dev.find_resources("AWS::SNS::TopicPolicy").values()
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    publish = [s for s in statements if s["Effect"] == "Allow" and s["Action"] == "sns:Publish"]
    assert [s["Principal"] for s in publish] == [{"Service": "cloudwatch.amazonaws.com"}], statements
    assert any(s["Effect"] == "Deny" and "aws:SecureTransport" in str(s.get("Condition")) for s in statements)


def test_an_alarm_email_subscribes_to_the_topic(synth: Callable[[str, dict[str, str]], Template]) -> None:
    template = synth("dev", {"alarm_email": "oncall@example.com"})
    template.has_resource_properties("AWS::SNS::Subscription", {"Protocol": "email", "Endpoint": "oncall@example.com"})


def test_the_alarms_an_operator_needs_exist(dev: Template) -> None:
    alarms = [a["Properties"] for a in dev.find_resources("AWS::CloudWatch::Alarm").values()]
    by_metric = {(a.get("Namespace"), a.get("MetricName")): a for a in alarms if "MetricName" in a}
    for name in ("ClusterStatus.red", "ClusterStatus.yellow", "JVMMemoryPressure", "KNNCircuitBreakerTriggered"):
        assert ("AWS/ES", name) in by_metric, name
    assert ("AWS/ES", "AutomatedSnapshotFailure") in by_metric
    assert by_metric[("AWS/ES", "FreeStorageSpace")]["Threshold"] == 2048  # 20% of the dev node's 10 GB
    assert by_metric[("AWS/SQS", "ApproximateAgeOfOldestMessage")]["Threshold"] == 900
    assert by_metric[("AWS/ApiGateway", "Latency")]["ExtendedStatistic"] == "p95"
    assert by_metric[(OURS, "SearchLatencyTotal")]["ExtendedStatistic"] == "p95"
    per_function = [a for a in alarms if a.get("Namespace") == "AWS/Lambda"]
    assert sorted(a["MetricName"] for a in per_function) == sorted(["Errors", "Throttles"] * len(functions(dev)))


def test_every_stage_budget_has_its_line_on_the_dashboard_and_its_alarm(dev: Template) -> None:
    # The design's budgets, as the settings default them (NM_BUDGET_*_MS)
    defaults = SearchSettings()
    budgets = {
        "Embed": defaults.budget_embed_ms,
        "Retrieval": defaults.budget_retrieval_ms,
        "LlmFilter": defaults.budget_llm_filter_ms,
        "Total": defaults.budget_total_ms,
    }
    assert budgets == {"Embed": 100, "Retrieval": 150, "LlmFilter": 300, "Total": 500}
    alarms = [a["Properties"] for a in dev.find_resources("AWS::CloudWatch::Alarm").values()]
    by_metric = {a.get("MetricName"): a for a in alarms if a.get("Namespace") == OURS}
    body = json.dumps(next(iter(dev.find_resources("AWS::CloudWatch::Dashboard").values())))
    for stage, budget in budgets.items():
        alarm = by_metric[f"SearchLatency{stage}"]
        assert (alarm["ExtendedStatistic"], alarm["Threshold"]) == ("p95", budget), stage
        assert f"p95 budget {budget} ms" in body, stage
    # And the degraded and cache-hit metrics the code emits have their widgets
    assert {"SearchDegraded", "RerankDegraded", "EmbeddingCacheHits"} <= {name for _, name, _ in _read(dev)}
