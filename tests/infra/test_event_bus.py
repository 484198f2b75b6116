"""The bus routes every source the layer can ingest, and agents put their own events through a
grant scoped to this bus and the ``neural-memory`` source; asserted on the synthesized template."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from neural_memory.ingest.normalizers import event_sources, normalize_eventbridge
from neural_memory.ingest.routing import route_key

from tests.helpers.events import EVENTS, load_event
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


def test_every_source_the_normalizers_accept_has_a_rule_into_the_ingest_queue(dev: Template) -> None:
    # Given the sources the layer's normalizer registry accepts (github, vercel, neural-memory)
    sources = set(event_sources())
    assert {"github", "vercel", "neural-memory"} <= sources
    # When the bus's rules are read from the template
    queue, bus = _ingest_queue(dev), _bus(dev)
    routed: dict[str, list[Any]] = {}
    for rule in dev.find_resources("AWS::Events::Rule").values():
        props = rule["Properties"]
        if props.get("EventBusName") != {"Ref": bus}:
            continue  # the maintenance schedules, on the default bus
        for source in props["EventPattern"]["source"]:
            routed.setdefault(source, []).extend(t["Arn"] for t in props["Targets"])
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
    for source in event_sources():
        event = next(e for e in samples if e["source"] == source and "unsupported" not in e["detail-type"])
        assert route_key(event).startswith(f"{source}:"), source
        assert normalize_eventbridge(event).observations or normalize_eventbridge(event).skipped, source


def _managed_policy(template: Template) -> tuple[str, dict[str, Any]]:
    ((logical_id, policy),) = template.find_resources("AWS::IAM::ManagedPolicy").items()
    return logical_id, policy["Properties"]


def test_agents_may_put_only_neural_memory_events_and_only_on_this_bus(dev: Template) -> None:
    # Given the stack's managed policy for agents
    logical_id, policy = _managed_policy(dev)
    # Then it allows one action, on this bus, for one source
    (statement,) = policy["PolicyDocument"]["Statement"]
    assert statement["Effect"] == "Allow" and statement["Action"] == "events:PutEvents"
    assert statement["Resource"] == {"Fn::GetAtt": [_bus(dev), "Arn"]}
    assert statement["Condition"] == {"StringEquals": {"events:source": "neural-memory"}}
    # And the agent role holds that policy alone (no inline policy, nothing AWS-managed)
    roles = {
        k: v["Properties"]
        for k, v in dev.find_resources("AWS::IAM::Role").items()
        if {"Ref": logical_id} in v["Properties"].get("ManagedPolicyArns", [])
    }
    ((role_id, role),) = roles.items()
    assert role["ManagedPolicyArns"] == [{"Ref": logical_id}]
    assert not [
        p for p in dev.find_resources("AWS::IAM::Policy").values() if {"Ref": role_id} in p["Properties"]["Roles"]
    ]
    # Trusted by this account's principals that are themselves allowed to assume it
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Action"] == "sts:AssumeRole" and "root" in json.dumps(trust["Principal"])
    # Both are stack outputs, with the bus's name: what an operator hands an agent
    outputs = dev.find_outputs("*")
    assert outputs["AgentPutEventsPolicyArn"]["Value"] == {"Ref": logical_id}
    assert outputs["AgentRoleArn"]["Value"] == {"Fn::GetAtt": [role_id, "Arn"]}
    assert outputs["EventBusName"]["Value"] == {"Ref": _bus(dev)}


def test_the_sample_agent_events_are_the_shape_the_readme_documents() -> None:
    # The README's example PutEvents entries are these samples: a note and a conversation turn
    for name, kind in (("note", "note"), ("conversation_turn", "conversation_turn")):
        event = load_event(f"eventbridge/{name}")
        assert (event["source"], event["detail-type"]) == ("neural-memory", kind)
        assert route_key(event) == "neural-memory:acme"
        (observation,) = normalize_eventbridge(event).observations
        assert observation.observation_type == kind and observation.content == event["detail"]["content"]
