"""The bus routes every source the layer can ingest, and each routed workspace's agents put their
own events through a grant scoped to this bus and their workspace's source
(``neural-memory.<workspace>``); asserted on the synthesized template."""

from __future__ import annotations

import json
from hashlib import sha256
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.ingest.normalizers import UnsupportedEvent, event_sources, matches, normalize_eventbridge
from neural_memory.ingest.routing import route_key

from tests.helpers.events import EVENTS, load_event
from tests.helpers.readme import readme_block
from tests.infra.template_reading import as_list

if TYPE_CHECKING:
    from aws_cdk.assertions import Template


def _ingest_queue(template: Template) -> str:
    """The logical id of the queue the ingest function's event source mapping reads."""
    (mapping,) = template.find_resources("AWS::Lambda::EventSourceMapping").values()
    queue: str = mapping["Properties"]["EventSourceArn"]["Fn::GetAtt"][0]
    return queue


def _bus(template: Template) -> str:
    (bus,) = template.find_resources("AWS::Events::EventBus")
    return bus


def _routed(template: Template) -> dict[str, list[Any]]:
    """Each ``source`` pattern element of the bus's rules (as JSON) -> the rules' targets."""
    bus = _bus(template)
    routed: dict[str, list[Any]] = {}
    for rule in template.find_resources("AWS::Events::Rule").values():
        props = rule["Properties"]
        if props.get("EventBusName") != {"Ref": bus}:
            continue  # the maintenance schedules, on the default bus
        for source in props["EventPattern"]["source"]:
            routed.setdefault(json.dumps(source), []).extend(t["Arn"] for t in props["Targets"])
    return routed


@pytest.mark.parametrize("stack", ["dev", "agents"])
def test_every_source_the_normalizers_accept_has_a_rule_into_the_ingest_queue(
    stack: str, request: pytest.FixtureRequest
) -> None:
    dev: Template = request.getfixturevalue(stack)
    # Given the sources the layer's normalizer registry accepts (github, vercel, every neural-memory.<ws>)
    sources = {json.dumps(s) for s in event_sources()}
    assert {'"github"', '"vercel"', '{"prefix": "neural-memory."}'} <= sources
    # When the bus's rules are read from the template (with or without agent routes: the rules
    # follow the normalizers, not the routing table)
    queue = _ingest_queue(dev)
    routed = _routed(dev)
    # Then each source has a rule whose target is the ingest queue, and no rule serves a source
    # the ingest function would refuse
    assert set(routed) == sources
    for source, targets in routed.items():
        assert targets == [{"Fn::GetAtt": [queue, "Arn"]}], source
    # The queue lets the bus (and only the bus) send to it, from these rules
    (queue_policy,) = [
        p["Properties"]
        for p in dev.find_resources("AWS::SQS::QueuePolicy").values()
        if {"Ref": queue} in p["Properties"]["Queues"]
    ]
    statements = queue_policy["PolicyDocument"]["Statement"]
    senders = [s for s in statements if s["Effect"] == "Allow" and "sqs:SendMessage" in as_list(s["Action"])]
    assert {s["Principal"]["Service"] for s in senders} == {"events.amazonaws.com"}
    assert len(senders) == len(sources)


def test_every_source_has_a_sample_event_that_normalizes_and_routes() -> None:
    # A source with a rule but no route (or no normalizer) would reach the queue only to fail
    samples = [json.loads(path.read_text()) for path in sorted((EVENTS / "eventbridge").glob("*.json"))]
    for pattern in event_sources():
        event = next(e for e in samples if matches(pattern, e["source"]) and "unsupported" not in e["detail-type"])
        route = "neural-memory" if isinstance(pattern, dict) else pattern
        assert route_key(event).startswith(f"{route}:"), pattern
        assert normalize_eventbridge(event).observations or normalize_eventbridge(event).skipped, pattern


def test_the_retired_bare_agent_source_has_no_rule_and_no_normalizer(agents: Template) -> None:
    # The bare source named its workspace in the detail, where no IAM condition can see it
    assert not any(matches(pattern, "neural-memory") for pattern in event_sources())
    assert '"neural-memory"' not in _routed(agents)
    retired = {**load_event("eventbridge/note"), "source": "neural-memory"}
    with pytest.raises(UnsupportedEvent, match="no normalizer"):
        normalize_eventbridge(retired)
    with pytest.raises(UnsupportedEvent, match=r"neural-memory\.<workspace>"):
        route_key({**retired, "detail": {**retired["detail"], "workspace": "acme"}})


def _agent_grants(template: Template) -> dict[str, tuple[str, dict[str, Any]]]:
    """``events:source`` -> (logical id, properties) of each managed policy allowing PutEvents."""
    grants = {}
    for logical_id, policy in template.find_resources("AWS::IAM::ManagedPolicy").items():
        (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
        grants[statement["Condition"]["StringEquals"]["events:source"]] = (logical_id, policy["Properties"])
    return grants


def test_each_routed_workspace_s_agents_may_put_only_their_own_source_and_only_on_this_bus(
    agents: Template, dev: Template
) -> None:
    # Given a routing table with three agent routes (and a GitHub one, which grants agents nothing)
    grants = _agent_grants(agents)
    # Then there is one managed policy per agent route, each for its workspace's source alone
    assert set(grants) == {"neural-memory.acme", "neural-memory.beta.team", "neural-memory.c_d-e"}
    outputs = agents.find_outputs("*")
    # (an output id holds only letters and digits: a workspace with others gets a hash of its name)
    named = [("acme", "acme")] + [(w, w.translate({ord(c): None for c in "._-"}) + sha256(w.encode()).hexdigest()[:8])
                                  for w in ("beta.team", "c_d-e")]  # fmt: skip
    for workspace, name in named:
        logical_id, policy = grants[f"neural-memory.{workspace}"]
        (statement,) = policy["PolicyDocument"]["Statement"]
        assert statement["Effect"] == "Allow" and statement["Action"] == "events:PutEvents"
        assert statement["Resource"] == {"Fn::GetAtt": [_bus(agents), "Arn"]}
        assert statement["Condition"] == {"StringEquals": {"events:source": f"neural-memory.{workspace}"}}
        # And a role holding that policy alone (no inline policy, nothing AWS-managed)
        roles = {
            k: v["Properties"]
            for k, v in agents.find_resources("AWS::IAM::Role").items()
            if {"Ref": logical_id} in v["Properties"].get("ManagedPolicyArns", [])
        }
        ((role_id, role),) = roles.items()
        assert role["ManagedPolicyArns"] == [{"Ref": logical_id}]
        assert not [
            p
            for p in agents.find_resources("AWS::IAM::Policy").values()
            if {"Ref": role_id} in p["Properties"]["Roles"]
        ]
        # Trusted by this account's principals that are themselves allowed to assume it
        (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
        assert trust["Action"] == "sts:AssumeRole" and "root" in json.dumps(trust["Principal"])
        # Both are stack outputs named after the workspace: what an operator hands its agent
        assert outputs[f"AgentPolicyArn{name}"]["Value"] == {"Ref": logical_id}
        assert outputs[f"AgentRoleArn{name}"]["Value"] == {"Fn::GetAtt": [role_id, "Arn"]}
        assert workspace in outputs[f"AgentPolicyArn{name}"]["Description"]
    assert outputs["EventBusName"]["Value"] == {"Ref": _bus(agents)}
    # No bus-wide agent grant is left, and a stack without agent routes grants no agent anything
    assert not [k for k in outputs if k in ("AgentPutEventsPolicyArn", "AgentRoleArn")]
    assert _agent_grants(dev) == {}


def test_the_sample_agent_events_are_the_shape_the_readme_documents() -> None:
    # The README's example PutEvents entries are these samples: a note and a conversation turn, with
    # the workspace in the source (what the agent's grant allows) and none in the detail
    block = readme_block("sh", "aws events put-events")
    entries = json.loads(block.split("--entries '", 1)[1].split("'", 1)[0])
    for entry, (name, kind) in zip(
        entries, (("note", "note"), ("conversation_turn", "conversation_turn")), strict=True
    ):
        event = load_event(f"eventbridge/{name}")
        assert (event["source"], event["detail-type"]) == ("neural-memory.acme", kind)
        assert (entry["Source"], entry["DetailType"]) == (event["source"], kind)
        detail = json.loads(entry["Detail"])
        assert "workspace" not in detail and "workspace" not in event["detail"]
        assert detail["id"] == event["detail"]["id"]
        assert route_key(event) == route_key({**event, "detail": detail}) == "neural-memory:acme"
        (observation,) = normalize_eventbridge(event).observations
        assert observation.observation_type == kind and observation.content == event["detail"]["content"]
