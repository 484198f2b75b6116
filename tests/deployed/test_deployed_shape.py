"""Every function of the synthesized stack, run as Lambda runs it (its asset and the layer from the
lock alone on the path, the template's environment, its role's permissions enforced by moto),
driven by the events it gets in AWS: CloudFormation's custom-resource requests, the authorizer and
each API route, EventBridge → SQS → ingest, and the daily schedule. A missing grant, a variable
the template forgets or an import the layer lacks fails here, not in a first deploy."""

from __future__ import annotations

import contextlib
import copy
import fnmatch
import hashlib
import hmac
import json
import re
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from botocore.exceptions import ClientError
from neural_memory.api.routes import ROUTES
from neural_memory.auth.dynamodb import DynamoKeyStore
from neural_memory.auth.keys import INVALID_KEY, issue_key, key_problem
from neural_memory.auth.roles import check_role
from neural_memory.observability import METRIC_EMBEDDING_CACHE_HITS
from neural_memory.stores.opensearch.mapping import SCHEMA_VERSION

from tests.deployed.cloud import ACCOUNT, CohereStandIn, Container, Driven, allowed
from tests.helpers.events import load_event
from tests.helpers.gateway_responses import gateway_responses, refusal

if TYPE_CHECKING:
    from tests.deployed.cloud import DeployedStack

pytestmark = [pytest.mark.integration, pytest.mark.aws]
NOTE_ID = "deploy-failure-1"
NOTE_TEXT = "The console deploy failed because NEXT_PUBLIC_API_URL was missing from the environment."
_state: dict[str, Any] = {}


def _resource(stack: DeployedStack, kind: str) -> str:
    (logical_id,) = [k for k, v in stack.resources.items() if v["Type"] == kind]
    return logical_id


def _custom_resource(stack: DeployedStack, request_type: str) -> dict[str, Any]:
    event = load_event("cloudformation/index_create")
    bootstrap = _resource(stack, "Custom::NeuralMemoryIndex")
    event.update(
        RequestType=request_type,
        LogicalResourceId=bootstrap,
        ResponseURL=f"http://{stack.cloudformation.address}/response",
        ResourceProperties=stack.resolve(stack.resources[bootstrap]["Properties"]),
    )
    if request_type != "Create":
        event["PhysicalResourceId"] = "index:neural-memory"
    return event


def test_the_index_bootstrap_answers_cloudformation_on_create_and_update(deployed: DeployedStack) -> None:
    for request_type in ("Create", "Update"):
        reply = deployed.invoke(
            "maintenance", f"CloudFormation {request_type} (index bootstrap)", _custom_resource(deployed, request_type)
        )
        assert "errorType" not in reply, reply
    assert [r["Status"] for r in deployed.cloudformation.seen] == ["SUCCESS", "SUCCESS"], deployed.cloudformation.seen
    assert all(r["PhysicalResourceId"] == "index:neural-memory" for r in deployed.cloudformation.seen)


def _method_arn(method: str, path: str) -> str:
    return f"arn:aws:execute-api:us-east-1:{ACCOUNT}:k3x9q2w7e1/v1/{method}{path}"


def _authorize(stack: DeployedStack, key: str, method: str, path: str, header: str | None = None) -> dict[str, Any]:
    """The function's reply to API Gateway's REQUEST event for ``Authorization: Bearer <key>``
    (``header``: that header's value as sent)."""
    event = copy.deepcopy(load_event("authorizer/request"))
    sent = f"Bearer {key}" if header is None else header
    event["headers"]["Authorization"] = event["multiValueHeaders"]["Authorization"][0] = sent
    event.update(httpMethod=method, resource=path, path=path, methodArn=_method_arn(method, path))
    return stack.invoke("authorizer", f"REQUEST authorizer, {method} {path}", event)


class AuthorizerGate:
    """API Gateway's side of the template's REQUEST authorizer: a call missing an identity source
    is refused (401) without invoking the function; the function's policy is cached by the
    identity sources' values for the TTL and evaluated against each call's method ARN, so a
    policy scoped to the first route would deny the next route as it would in AWS. A refusal is
    answered by the template's gateway response for it, its ``$context`` variables filled in."""

    def __init__(self, stack: DeployedStack) -> None:
        props = stack.resources[_resource(stack, "AWS::ApiGateway::Authorizer")]["Properties"]
        self.sources = [
            s.strip().removeprefix("method.request.header.").lower() for s in props["IdentitySource"].split(",")
        ]
        self.ttl_s = int(props["AuthorizerResultTtlInSeconds"])
        self.invocations = 0
        self.responses = gateway_responses(stack.resources.values())
        self._stack = stack
        self._cache: dict[tuple[str, ...], tuple[float, dict[str, Any]]] = {}

    def decide(self, headers: dict[str, str], method: str, path: str) -> tuple[int, dict[str, Any]] | dict[str, Any]:
        """The authorizer's reply (its policy allows this call), or the status and body API Gateway
        answers."""
        lowered = {name.lower(): value for name, value in headers.items()}
        identity = tuple(lowered.get(source, "") for source in self.sources)
        if not all(identity):
            return refusal(self.responses, None)
        cached = self._cache.get(identity)
        if cached is None or time.monotonic() - cached[0] >= self.ttl_s:
            self.invocations += 1
            header = identity[self.sources.index("authorization")]
            reply = _authorize(self._stack, "", method, path, header=header)
            if "errorType" in reply:  # "Unauthorized" is API Gateway's 401; any other error its 500
                assert reply["errorMessage"] == "Unauthorized", reply
                return refusal(self.responses, None)
            cached = (time.monotonic(), reply["result"])
            if self.ttl_s:
                self._cache[identity] = cached
        policy = cached[1]
        statements = policy["policyDocument"]["Statement"]
        arn = _method_arn(method, path)
        matches = [s for s in statements if any(fnmatch.fnmatchcase(arn, r) for r in s["Resource"])]
        if any(s["Effect"] == "Allow" for s in matches) and not any(s["Effect"] == "Deny" for s in matches):
            return policy
        return refusal(self.responses, policy)


def test_the_authorizer_allows_a_stored_key_and_refuses_others(deployed: DeployedStack) -> None:
    table = deployed.resolve.refs[_resource(deployed, "AWS::DynamoDB::Table")]
    keys = DynamoKeyStore(table, client=deployed.moto.client("dynamodb", deployed.admin))
    _state["key"] = issue_key(keys, "acme", datetime.now(UTC))
    allowed_reply = _authorize(deployed, _state["key"], "POST", "/v1/search")
    key_id = _state["key"].split("_")[1]
    assert allowed_reply["result"]["context"] == {
        "workspaceId": "acme",
        "keyId": key_id,
        "keyName": "acme",
        "role": "write",
    }, allowed_reply
    refused = _authorize(deployed, "nm_000000000000_" + "A" * 43, "POST", "/v1/search")["result"]
    assert [s["Effect"] for s in refused["policyDocument"]["Statement"]] == ["Deny"], refused
    assert refused["context"] == {"message": INVALID_KEY}, refused


def test_each_refused_key_is_told_what_is_wrong_as_the_local_server_tells_it(deployed: DeployedStack) -> None:
    # Given API Gateway in front of the deployed authorizer, and a request with no key, one with the
    # key but not as "Bearer <key>", and one with a wrong key
    gate = AuthorizerGate(deployed)
    cases = {
        "missing": {},
        "no bearer": {"Authorization": _state["key"]},
        "wrong": {"Authorization": "Bearer nm_000000000000_" + "A" * 43},
    }
    messages = {}
    for case, headers in cases.items():
        answered = gate.decide(headers, "POST", "/v1/search")
        # Then each is a 401 in the envelope, in the local server's words for that request
        assert isinstance(answered, tuple), (case, answered)
        status, body = answered
        assert status == 401 and body["error"]["code"] == "unauthorized", (case, body)
        assert body["error"]["message"] == key_problem(headers), (case, body)
        messages[case] = body["error"]["message"]
    assert len(set(messages.values())) == 3, messages
    # And the key itself is let through (the function was called for the two with a header only)
    assert isinstance(gate.decide({"Authorization": f"Bearer {_state['key']}"}, "POST", "/v1/search"), dict)
    assert gate.invocations == 3


def _gate(stack: DeployedStack) -> AuthorizerGate:
    if "gate" not in _state:
        _state["gate"] = AuthorizerGate(stack)
    gate: AuthorizerGate = _state["gate"]
    return gate


def _route_event(
    stack: DeployedStack,
    method: str,
    path: str,
    body: Any = None,
    query: dict[str, list[str]] | None = None,
    key: str | None = None,
) -> dict[str, Any]:
    """The REST proxy event API Gateway sends after the authorizer allowed the caller (acme's key
    unless ``key``)."""
    policy = _gate(stack).decide({"Authorization": f"Bearer {key or _state['key']}"}, method, path)
    assert isinstance(policy, dict), f"API Gateway answered {policy}"
    samples = {
        "POST /v1/search": "api/search_post",
        "POST /v1/answer": "api/answer_post",
        "POST /v1/observations": "api/observations_post",
    }
    route = next(r for r in ROUTES if r.method == method and r.pattern.match(path))
    template, parameters = route.path, route.pattern.match(path).groupdict()  # type: ignore[union-attr]
    other = "api/observation_get" if method == "GET" else "api/observation_delete"
    event = load_event(
        samples.get(f"{method} {path}", "api/observation_promote" if path.endswith("/promote") else other)
    )
    event.update(httpMethod=method, path=path, resource=template, body=json.dumps(body) if body is not None else None)
    event["pathParameters"] = parameters or None
    event["queryStringParameters"] = {k: v[-1] for k, v in query.items()} if query else None
    event["multiValueQueryStringParameters"] = query or None
    event["requestContext"].update(httpMethod=method, resourcePath=template)
    event["requestContext"]["authorizer"] = {**policy["context"], "principalId": policy["principalId"]}
    return event


def _call(
    stack: DeployedStack,
    method: str,
    path: str,
    body: Any = None,
    query: dict[str, list[str]] | None = None,
    key: str | None = None,
) -> tuple[int, dict[str, Any]]:
    route = next(r for r in ROUTES if r.method == method and r.pattern.match(path))
    event = _route_event(stack, method, path, body, query, key)
    reply = stack.invoke(route.function, f"API Gateway {method} {path}", event)
    assert "errorType" not in reply, reply
    return reply["result"]["statusCode"], json.loads(reply["result"]["body"])


def test_every_api_route_answers_through_the_authorizer(deployed: DeployedStack) -> None:
    occurred = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    note = {
        "id": NOTE_ID,
        "source": "vercel",
        "observationType": "deployment_error",
        "occurredAt": occurred,
        "title": "Deploy failed: missing NEXT_PUBLIC_API_URL",
        "content": NOTE_TEXT,
        "actorName": "octocat",
    }
    status, body = _call(deployed, "POST", "/v1/observations", {"observations": [note]})
    assert (status, body["ids"]) == (200, [NOTE_ID]), body
    status, body = _call(deployed, "GET", f"/v1/observations/{NOTE_ID}")
    assert status == 200 and body["content"] == NOTE_TEXT
    # Cohere is unreachable here: hybrid search answers lexically and says so
    status, body = _call(deployed, "POST", "/v1/search", {"query": "why did the deploy fail", "topK": 5})
    assert status == 200 and NOTE_ID in [r["id"] for r in body["results"]], body
    assert any(entry.startswith("vector:skipped") for entry in body["degraded"])
    status, body = _call(deployed, "GET", "/v1/facets")
    assert status == 200 and {"value": "vercel", "count": 1} in body["facets"]["sourceTypes"], body
    status, body = _call(deployed, "POST", "/v1/answer", {"question": "Why did the console deploy fail?"})
    assert status == 200 and [c["id"] for c in body["citations"]][:1] == [NOTE_ID], body
    # Who knows (GET and POST: the search function) and why it changed (the observations function)
    status, body = _call(deployed, "GET", "/v1/experts", query={"q": ["deploy failed"], "sourceTypes": ["vercel"]})
    assert status == 200 and [e["actorName"] for e in body["experts"]] == ["octocat"], body
    status, posted = _call(deployed, "POST", "/v1/experts", {"query": "deploy failed"})
    assert status == 200 and posted["experts"] == body["experts"], posted
    status, body = _call(deployed, "GET", f"/v1/observations/{NOTE_ID}/lineage", query={"limit": ["5"]})
    assert status == 200 and [e["id"] for e in body["timeline"]] == [NOTE_ID], body
    # The promote route answers through the authorizer too (a C observation would need Cohere,
    # unreachable here, to be written: the E note is refused, naming its tier)
    status, body = _call(deployed, "POST", f"/v1/observations/{NOTE_ID}/promote", {"reason": "kept"})
    assert (status, body["error"]["code"]) == (409, "conflict") and "is tier E" in body["error"]["message"], body
    status, body = _call(deployed, "DELETE", f"/v1/observations/{NOTE_ID}")
    assert (status, body["deleted"]) == (200, True)
    assert _call(deployed, "GET", f"/v1/observations/{NOTE_ID}")[0] == 404


def test_the_console_page_is_served_without_the_authorizer(deployed: DeployedStack) -> None:
    # Given API Gateway's proxy event for the console's route (NONE authorization: no authorizer
    # context), When the search function serves it, Then the page with its security policy
    event = load_event("api/observation_get")
    event.update(httpMethod="GET", path="/console", resource="/console", pathParameters=None, body=None)
    event["requestContext"].update(httpMethod="GET", resourcePath="/console")
    event["requestContext"].pop("authorizer", None)
    reply = deployed.invoke("search", "API Gateway GET /console (no authorizer)", event)
    assert "errorType" not in reply, reply
    result = reply["result"]
    headers = result.get("headers") or {k: v[0] for k, v in result.get("multiValueHeaders", {}).items()}
    assert result["statusCode"] == 200 and "<!doctype html>" in result["body"]
    assert "script-src 'self'" in headers["Content-Security-Policy"]


def test_the_authorizer_decision_is_cached_per_key_and_covers_every_route(deployed: DeployedStack) -> None:
    # Given the key the routes above used: API Gateway invoked the authorizer once for all of them
    gate = _gate(deployed)
    assert gate.ttl_s == 300 and gate.sources == ["authorization"]
    assert gate.invocations == 1
    # A call without the identity source is refused by API Gateway itself; the authorizer is not invoked
    assert gate.decide({"x-api-key": _state["key"]}, "POST", "/v1/search") == (401, refusal(gate.responses, None)[1])
    assert gate.invocations == 1
    # A wrong key is checked (and refused) once: its Deny is cached like an Allow
    wrong = {"Authorization": "Bearer nm_000000000000_" + "A" * 43}
    for _ in range(2):
        answered = gate.decide(wrong, "POST", "/v1/search")
        assert isinstance(answered, tuple) and answered[0] == 401, answered
        assert answered[1]["error"]["message"] == INVALID_KEY, answered
    assert gate.invocations == 2


def _tool_call(stack: DeployedStack, key: str, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    """One MCP tools/call through the authorizer to the mcp function: (is an error, its text)."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    event = _route_event(stack, "POST", "/mcp", message, key=key)
    event["headers"] = {
        **(event.get("headers") or {}),
        "Content-Type": "application/json",
        "Accept": "application/json",
    }
    event["multiValueHeaders"] = {k: [v] for k, v in event["headers"].items()}
    reply = stack.invoke("mcp", f"API Gateway POST /mcp (tools/call {name})", event)
    assert "errorType" not in reply and reply["result"]["statusCode"] == 200, reply
    result = json.loads(reply["result"]["body"])["result"]
    return bool(result["isError"]), "\n".join(block["text"] for block in result["content"])


def test_roles_created_by_and_the_audit_trail_through_the_authorizer(deployed: DeployedStack) -> None:
    # Given four keys of workspace acme in the keys table: a reader, two writers, an admin
    table = deployed.resolve.refs[_resource(deployed, "AWS::DynamoDB::Table")]
    keys = DynamoKeyStore(table, client=deployed.moto.client("dynamodb", deployed.admin))
    now = datetime.now(UTC)
    reader, alice, bob, admin = (
        issue_key(keys, "acme", now, name=name, role=check_role(role))
        for name, role in (("rita", "read"), ("alice", "write"), ("bob", "write"), ("ops", "admin"))
    )
    # An E observation: embedded by nobody (Cohere is unreachable here)
    note = {"id": "role-1", "source": "vercel", "observationType": "deployment_error", "occurredAt": now.isoformat(),
            "title": "Retry budget", "content": "The retry budget is three attempts.", "createdBy": "bob"}  # fmt: skip
    # When alice writes an observation whose body claims bob wrote it
    status, body = _call(deployed, "POST", "/v1/observations", {"observations": [note]}, key=alice)
    assert status == 200, body
    # Then the authorizer named her key: the observation is hers
    status, read = _call(deployed, "GET", "/v1/observations/role-1", key=reader)
    assert (status, read["createdBy"]) == (200, "alice"), read
    # And the read key reads but is refused every write (REST 403, MCP tool errors), naming the write role
    status, found = _call(deployed, "POST", "/v1/search", {"query": "retry budget", "mode": "keyword"}, key=reader)
    assert status == 200 and [(r["id"], r["createdBy"]) for r in found["results"]] == [("role-1", "alice")], found
    refusals = [
        _call(deployed, "POST", "/v1/observations", {"observations": [{**note, "id": "role-2"}]}, key=reader),
        _call(deployed, "DELETE", "/v1/observations/role-1", key=reader),
        _call(deployed, "POST", "/v1/observations/role-1/promote", {"reason": "kept"}, key=reader),
    ]
    for status, body in refusals:
        assert status == 403 and body["error"]["code"] == "forbidden", body
        assert "needs a key with the write role" in body["error"]["message"], body
    for tool, arguments in (("remember", {"observations": [{"content": "x"}]}), ("forget", {"id": "role-1"})):
        refused, text = _tool_call(deployed, reader, tool, arguments)
        assert refused and text.startswith("forbidden: ") and "needs a key with the write role" in text, text
    # And bob cannot delete or overwrite what alice wrote (403 naming admin); the admin can delete it
    for status, body in (
        _call(deployed, "DELETE", "/v1/observations/role-1", key=bob),
        _call(deployed, "POST", "/v1/observations", {"observations": [{**note, "content": "Nine."}]}, key=bob),
    ):
        assert status == 403 and "needs a key with the admin role" in body["error"]["message"], body
    assert _tool_call(deployed, bob, "forget", {"id": "role-1"})[0]
    status, body = _call(deployed, "DELETE", "/v1/observations/role-1", key=admin)
    assert (status, body.get("deleted")) == (200, True), body
    # And the audit trail (beside the workspace's index, under the same grants) lists each, to the admin only
    status, trail = _call(deployed, "GET", "/v1/audit", query={"limit": ["50"]}, key=admin)
    assert status == 200, trail
    done = [(e["key"], e["action"], e["ids"]) for e in trail["entries"] if "role-1" in e["ids"]]
    assert done == [("ops", "delete", ["role-1"]), ("alice", "write", ["role-1"])], done
    assert "retry budget" not in json.dumps(trail).lower()
    status, only = _call(deployed, "GET", "/v1/audit", query={"key": ["alice"]}, key=admin)
    assert {e["key"] for e in only["entries"]} == {"alice"} and only["entries"][0]["ids"] == ["role-1"], only
    for key, role in ((reader, "admin"), (alice, "admin")):
        status, body = _call(deployed, "GET", "/v1/audit", key=key)
        assert status == 403 and f"needs a key with the {role} role" in body["error"]["message"], body


def _sqs_event(stack: DeployedStack, messages: list[dict[str, Any]], queue_arn: str) -> dict[str, Any]:
    """The event Lambda's SQS event source mapping sends."""
    records = [
        {
            "messageId": m["MessageId"],
            "receiptHandle": m["ReceiptHandle"],
            "body": m["Body"],
            "attributes": m.get("Attributes", {}),
            "messageAttributes": {},
            "md5OfBody": m["MD5OfBody"],
            "eventSource": "aws:sqs",
            "eventSourceARN": queue_arn,
            "awsRegion": "us-east-1",
        }
        for m in messages
    ]
    return {"Records": records}


def _deliver(stack: DeployedStack, *samples: str) -> tuple[list[dict[str, Any]], str, str]:
    """Put sample events on the stack's bus; what its rules delivered to the queue."""
    bus = stack.resolve.refs[_resource(stack, "AWS::Events::EventBus")]
    entries = [
        {"Source": e["source"], "DetailType": e["detail-type"], "Detail": json.dumps(e["detail"]), "EventBusName": bus}
        for e in (load_event(f"eventbridge/{s}") for s in samples)
    ]
    assert stack.moto.client("events", stack.admin).put_events(Entries=entries)["FailedEntryCount"] == 0
    return _queued(stack)


def _queued(stack: DeployedStack) -> tuple[list[dict[str, Any]], str, str]:
    """What the bus's rules delivered to the ingest queue (read with the ingest function's own
    credentials, as its event source mapping does), the queue's URL and ARN."""
    mapping = next(v["Properties"] for v in stack.resources.values() if v["Type"] == "AWS::Lambda::EventSourceMapping")
    queue_arn = stack.resolve(mapping["EventSourceArn"])
    queue = next(
        stack.resolve.refs[k]
        for k, v in stack.resources.items()
        if v["Type"] == "AWS::SQS::Queue" and stack.resolve.attributes[(k, "Arn")] == queue_arn
    )
    ingest_keys = stack.credentials[stack.functions["ingest"].role]
    sqs = stack.moto.client("sqs", ingest_keys)
    messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1, AttributeNames=["All"])
    return messages.get("Messages", []), queue, queue_arn


def test_webhook_events_flow_from_the_bus_through_the_queue_into_the_store(deployed: DeployedStack) -> None:
    messages, queue, queue_arn = _deliver(deployed, "github_push", "vercel_deployment_error")
    assert len(messages) == 2
    reply = deployed.invoke(
        "ingest",
        "SQS batch (EventBridge github push, vercel deployment.error)",
        _sqs_event(deployed, messages, queue_arn),
    )
    assert reply.get("result") == {"batchItemFailures": []}, (reply, deployed.container("ingest").log[-20:])
    sqs = deployed.moto.client("sqs", deployed.credentials[deployed.functions["ingest"].role])
    for message in messages:  # what the event source mapping does with records that succeeded
        sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
    push = load_event("eventbridge/github_push")["detail"]
    push_id = f"github-push-{push['repository']['full_name'].replace('/', '.')}-{push['after'][:12]}"
    assert _call(deployed, "GET", f"/v1/observations/{push_id}")[0] == 200


def _signed_delivery(stack: DeployedStack, payload: dict[str, Any], secret: str) -> dict[str, Any]:
    """The REST proxy event of a GitHub push delivery to the webhook route (no authorizer)."""
    body = json.dumps(payload)
    signature = "sha256=" + hmac.new(secret.encode(), body.encode(), hashlib.sha256).hexdigest()
    event = load_event("api/observations_post")
    headers = {
        "Content-Type": "application/json",
        "X-GitHub-Event": "push",
        "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
        "X-Hub-Signature-256": signature,
    }
    event.update(path="/v1/webhooks/github", resource="/v1/webhooks/github", body=body, headers=headers)
    event["multiValueHeaders"] = {name: [value] for name, value in headers.items()}
    event["requestContext"].update(resourcePath="/v1/webhooks/github", path="/v1/v1/webhooks/github")
    event["requestContext"].pop("authorizer", None)
    return event


def test_a_signed_github_delivery_reaches_the_routed_workspace_through_the_bus(deployed: DeployedStack) -> None:
    # Given the webhook secret set after deploy, as the README says
    secret_id = deployed.resolve.refs[
        next(k for k in deployed.resources if k.startswith("ProviderSecretsGithubWebhook"))
    ]
    deployed.moto.client("secretsmanager", deployed.admin).put_secret_value(SecretId=secret_id, SecretString="s3cret")
    push = copy.deepcopy(load_event("eventbridge/github_push")["detail"])
    push["after"] = "0123456789ab" + push["after"][12:]  # another push than the one the bus test stored
    # When a tampered delivery and an unrouted one arrive, Then 401 and 422, and nothing reaches the queue
    tampered = _signed_delivery(deployed, push, "not-the-secret")
    reply = deployed.invoke("webhooks", "API Gateway POST /v1/webhooks/github (bad signature)", tampered)
    assert reply["result"]["statusCode"] == 401, reply
    unrouted = copy.deepcopy(push)
    unrouted["repository"]["full_name"] = "acme/elsewhere"
    reply = deployed.invoke(
        "webhooks", "API Gateway POST /v1/webhooks/github (unrouted)", _signed_delivery(deployed, unrouted, "s3cret")
    )
    assert reply["result"]["statusCode"] == 422 and "github:acme/elsewhere" in reply["result"]["body"], reply
    assert _queued(deployed)[0] == []
    # When a correctly signed delivery arrives (its function puts it on the bus with its own role)
    reply = deployed.invoke(
        "webhooks", "API Gateway POST /v1/webhooks/github (signed push)", _signed_delivery(deployed, push, "s3cret")
    )
    receipt = json.loads(reply["result"]["body"])
    assert reply["result"]["statusCode"] == 200 and receipt["routedTo"] == "acme", (
        reply,
        deployed.container("webhooks").log[-20:],
    )
    assert receipt["sentTo"].startswith("eventbridge:neural-memory-dev")
    # Then the bus's rule queued it, the ingest function indexed it, and it is in acme's workspace
    messages, queue, queue_arn = _queued(deployed)
    assert len(messages) == 1
    reply = deployed.invoke(
        "ingest", "SQS batch (the webhook's GitHub push)", _sqs_event(deployed, messages, queue_arn)
    )
    assert reply.get("result") == {"batchItemFailures": []}, (reply, deployed.container("ingest").log[-20:])
    push_id = f"github-push-acme.console-{push['after'][:12]}"
    status, body = _call(deployed, "GET", f"/v1/observations/{push_id}")
    assert status == 200 and body["source"] == "github", body


# ----------------------------------------------------------------------------- agents on the bus


def _agent_credentials(stack: DeployedStack, workspace: str = "acme") -> dict[str, str]:
    """Credentials of ``workspace``'s agent role (``AgentRoleArn<workspace>``), as an agent assuming
    it gets them: the role holding the managed policy whose ``events:source`` is the workspace's."""
    (policy,) = [
        k
        for k, v in stack.resources.items()
        if v["Type"] == "AWS::IAM::ManagedPolicy"
        and v["Properties"]["PolicyDocument"]["Statement"][0]["Condition"]["StringEquals"]["events:source"]
        == f"neural-memory.{workspace}"
    ]
    (role,) = [
        k
        for k, v in stack.resources.items()
        if v["Type"] == "AWS::IAM::Role" and {"Ref": policy} in v["Properties"].get("ManagedPolicyArns", [])
    ]
    keys = stack.moto.client("sts", stack.admin).assume_role(
        RoleArn=stack.resolve.attributes[(role, "Arn")], RoleSessionName=f"agent-{workspace}"
    )["Credentials"]
    return {
        "aws_access_key_id": keys["AccessKeyId"],
        "aws_secret_access_key": keys["SecretAccessKey"],
        "aws_session_token": keys["SessionToken"],
    }


def _entry(stack: DeployedStack, event: dict[str, Any]) -> dict[str, Any]:
    """A PutEvents entry on the stack's bus (README, "Agents on the bus")."""
    bus = stack.resolve.refs[_resource(stack, "AWS::Events::EventBus")]
    detail = json.dumps(event["detail"])
    return {"Source": event["source"], "DetailType": event["detail-type"], "Detail": detail, "EventBusName": bus}


def _ingest_counting_hits(stack: DeployedStack, label: str, cohere: CohereStandIn) -> float:
    """``_ingest_queued`` in a container of its own whose Cohere is ``cohere``; returns the
    ``EmbeddingCacheHits`` its metrics (CloudWatch embedded metric format, in its log) reported."""
    messages, queue, queue_arn = _queued(stack)
    container = stack.container("ingest", variables={"CO_API_URL": cohere.url})
    try:
        reply = container.invoke(_sqs_event(stack, messages, queue_arn))
        assert reply.get("result") == {"batchItemFailures": []}, (reply, container.log[-20:])
        stack.driven.append(Driven("ingest", label, f"{len(messages)} records, 0 batch item failures"))
        deadline = time.monotonic() + 5
        while not (emf := _metric_lines(container.log)) and time.monotonic() < deadline:
            time.sleep(0.05)  # the log is read by another thread
    finally:
        container.close()
    log = container.log
    sqs = stack.moto.client("sqs", stack.credentials[stack.functions["ingest"].role])
    for message in messages:
        sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
    assert len(emf) == 1, log[-20:]
    (line,) = emf
    value = line[METRIC_EMBEDDING_CACHE_HITS]
    return float(sum(value) if isinstance(value, list) else value)


def _metric_lines(log: list[str]) -> list[dict[str, Any]]:
    """The log's embedded-metric-format lines that report the embedding cache's hits."""
    lines = []
    for line in log:
        with contextlib.suppress(ValueError):
            document = json.loads(line)
            if isinstance(document, dict) and "_aws" in document and METRIC_EMBEDDING_CACHE_HITS in document:
                lines.append(document)
    return lines


def _ingest_queued(
    stack: DeployedStack,
    label: str,
    variables: dict[str, str] | None = None,
    queued: tuple[list[dict[str, Any]], str, str] | None = None,
) -> int:
    """Run the ingest function on what the queue holds (``queued``, if already received), as its
    event source mapping would, and delete what it indexed; returns how many records it took."""
    messages, queue, queue_arn = queued or _queued(stack)
    reply = stack.invoke("ingest", label, _sqs_event(stack, messages, queue_arn), variables)
    assert reply.get("result") == {"batchItemFailures": []}, reply
    sqs = stack.moto.client("sqs", stack.credentials[stack.functions["ingest"].role])
    for message in messages:
        sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
    return len(messages)


def test_an_agent_puts_a_note_and_a_conversation_turn_on_the_bus_with_its_scoped_grant(
    deployed: DeployedStack,
) -> None:
    # Given the agent role's credentials and Cohere reachable for the ingest function
    agent = deployed.moto.client("events", _agent_credentials(deployed))
    note, turn = load_event("eventbridge/note"), load_event("eventbridge/conversation_turn")
    cohere = CohereStandIn()
    try:
        # When the agent puts a note and a conversation turn (source neural-memory.acme)
        put = agent.put_events(Entries=[_entry(deployed, note), _entry(deployed, turn)])
        assert put["FailedEntryCount"] == 0, put
        # Then the bus's rule queued both, and the ingest function indexed them in acme
        # (neural-memory:acme is a route of the stack's routing table)
        label = "SQS batch (an agent's note and conversation turn, EventBridge neural-memory.acme)"
        assert _ingest_queued(deployed, label, {"CO_API_URL": cohere.url}) == 2
        assert len(cohere.documents()) == 4  # each one's text, and its title alone
    finally:
        cohere.close()
    for event in (note, turn):
        status, body = _call(deployed, "GET", f"/v1/observations/{event['detail']['id']}")
        assert status == 200 and body["observationType"] == event["detail-type"], body
    # And search finds them
    status, body = _call(deployed, "POST", "/v1/search", {"query": "release checklist environment variables"})
    assert status == 200 and note["detail"]["id"] in [r["id"] for r in body["results"]], body
    status, body = _call(deployed, "POST", "/v1/search", {"query": "why did the deploy fail", "topK": 10})
    assert turn["detail"]["id"] in [r["id"] for r in body["results"]], body


def test_the_agent_grant_refuses_another_source_and_another_bus(deployed: DeployedStack) -> None:
    agent = deployed.moto.client("events", _agent_credentials(deployed))
    # When the agent poses as GitHub beside a note of its own, Then that entry alone is refused
    push, note = load_event("eventbridge/github_push"), load_event("eventbridge/note")
    put = agent.put_events(Entries=[_entry(deployed, push), _entry(deployed, note)])
    assert put["FailedEntryCount"] == 1, put
    assert put["Entries"][0]["ErrorCode"] == "NotAuthorizedForSourceException" and "EventId" in put["Entries"][1]
    # And nothing but the note reached the queue
    queued = _queued(deployed)
    assert [json.loads(m["Body"])["source"] for m in queued[0]] == ["neural-memory.acme"]
    # (Cohere is down for this ingest: the note's text is unchanged, so its stored vector serves)
    _ingest_queued(deployed, "SQS batch (the agent's note again, Cohere down: its vector reused)", None, queued)
    # When it puts on another bus (the account's default), Then the call is refused whole
    other = {**_entry(deployed, note), "EventBusName": "default"}
    with pytest.raises(ClientError, match="AccessDenied"):
        agent.put_events(Entries=[other])


def test_an_agent_s_credential_decides_the_workspace_it_writes_to(deployed: DeployedStack) -> None:
    # Given beta, a second workspace with an agent route, its own API key and its own agent role
    table = deployed.resolve.refs[_resource(deployed, "AWS::DynamoDB::Table")]
    beta_key = issue_key(
        DynamoKeyStore(table, client=deployed.moto.client("dynamodb", deployed.admin)), "beta", datetime.now(UTC)
    )
    acme_agent = deployed.moto.client("events", _agent_credentials(deployed, "acme"))
    beta_agent = deployed.moto.client("events", _agent_credentials(deployed, "beta"))
    note = load_event("eventbridge/note")

    def beta_note(note_id: str, **detail: Any) -> dict[str, Any]:
        content = f"Beta's on-call rotation changes on Monday ({note_id})."
        return {**note, "source": "neural-memory.beta", "detail": {"id": note_id, "content": content, **detail}}

    # When acme's agent puts an event with beta's source, Then that entry is refused by the bus
    put = acme_agent.put_events(Entries=[_entry(deployed, beta_note("note-acme-poses-as-beta"))])
    assert put["FailedEntryCount"] == 1 and put["Entries"][0]["ErrorCode"] == "NotAuthorizedForSourceException"
    assert _queued(deployed)[0] == []
    # Nor can the webhook receivers' role put an agent's source (it puts only what it verified)
    receivers = deployed.moto.client("events", deployed.credentials[deployed.functions["webhooks"].role])
    put = receivers.put_events(Entries=[_entry(deployed, beta_note("note-webhooks-pose-as-beta"))])
    assert put["FailedEntryCount"] == 1 and put["Entries"][0]["ErrorCode"] == "NotAuthorizedForSourceException"
    assert _queued(deployed)[0] == []
    # When acme's agent names beta in the detail of an event with its own source
    claim = {**beta_note("note-acme-claims-beta", workspace="beta"), "source": "neural-memory.acme"}
    assert acme_agent.put_events(Entries=[_entry(deployed, claim)])["FailedEntryCount"] == 0
    # Then the bus queues it (the source is acme's), and the ingest function refuses it before
    # embedding anything (Cohere is reachable and asked for nothing): it will end in the DLQ
    cohere = CohereStandIn()
    try:
        messages, queue, queue_arn = _queued(deployed)
        assert len(messages) == 1
        label = "SQS batch (acme's agent claiming beta in the detail)"
        reply = deployed.invoke("ingest", label, _sqs_event(deployed, messages, queue_arn), {"CO_API_URL": cohere.url})
        assert reply["result"] == {"batchItemFailures": [{"itemIdentifier": messages[0]["MessageId"]}]}, reply
        assert cohere.documents() == []
        sqs = deployed.moto.client("sqs", deployed.credentials[deployed.functions["ingest"].role])
        sqs.delete_message(QueueUrl=queue, ReceiptHandle=messages[0]["ReceiptHandle"])  # as the DLQ would take it
        # When beta's own agent puts its note, Then it lands in beta
        own = beta_note("note-beta-own")
        assert beta_agent.put_events(Entries=[_entry(deployed, own)])["FailedEntryCount"] == 0
        label = "SQS batch (beta's agent's own note, EventBridge neural-memory.beta)"
        assert _ingest_queued(deployed, label, {"CO_API_URL": cohere.url}) == 1
        assert cohere.documents() != []
    finally:
        cohere.close()
    status, body = _call(deployed, "GET", "/v1/observations/note-beta-own", key=beta_key)
    assert status == 200 and body["content"] == own["detail"]["content"], body
    assert _call(deployed, "GET", "/v1/observations/note-beta-own")[0] == 404  # not in acme
    # And neither of acme's attempts is in beta (nor in acme)
    for attempt in ("note-acme-poses-as-beta", "note-acme-claims-beta"):
        assert _call(deployed, "GET", f"/v1/observations/{attempt}", key=beta_key)[0] == 404, attempt
        assert _call(deployed, "GET", f"/v1/observations/{attempt}")[0] == 404, attempt


# ----------------------------------------------------------------------------- the embedding cache on AWS

LONG = " ".join(f"Step {i} of the runbook restarts worker {i} and checks its queue depth." for i in range(45))


def _passages(observation: dict[str, Any]) -> list[str]:
    """The texts the functions embed for an observation: its title and each passage, cut with the
    stack's chunking (the settings' defaults)."""
    from neural_memory.domain.chunking import embedding_text
    from neural_memory.ingest.prepare import prepare
    from neural_memory.models import ObservationIn
    from neural_memory.settings import Settings

    settings = Settings()
    item = prepare(
        ObservationIn.model_validate(observation),
        now=datetime.now(UTC),
        policy=settings.tier_policy,
        ttl_days=settings.collaborative_ttl_days,
        chunking=settings.chunking,
    )
    return [embedding_text(item.record.title, c.text) for c in item.chunks if c.embedded]


def _post(stack: DeployedStack, body: Any, cohere: CohereStandIn, label: str) -> dict[str, Any]:
    event = _route_event(stack, "POST", "/v1/observations", body)
    reply = stack.invoke("observations", label, event, {"CO_API_URL": cohere.url})
    assert reply["result"]["statusCode"] == 200, reply
    answer: dict[str, Any] = json.loads(reply["result"]["body"])
    return answer


def _claim_older_schema(stack: DeployedStack) -> list[str]:
    """Make every workspace's live index say it was built for the schema before this one, as the
    next change that cannot be made in place (a field's type, the analyzer) will: the next
    bootstrap reindexes them for the same model. Returns the live indices."""
    from opensearchpy import OpenSearch

    client = OpenSearch(hosts=[stack.opensearch_upstream])
    lives = sorted(client.indices.get_alias(index="neural-memory-ws-all"))
    for live in lives:
        meta = client.indices.get_mapping(index=live)[live]["mappings"]["_meta"]
        client.indices.put_mapping(index=live, body={"_meta": {**meta, "schema_version": SCHEMA_VERSION - 1}})
    return lives


def test_unchanged_content_is_never_sent_to_cohere_again(deployed: DeployedStack) -> None:
    # Given Cohere's embed API on a local port that counts what the functions ask it to embed
    cohere = CohereStandIn()
    runbook = {"id": "runbook", "source": "manual", "observationType": "note", "title": "Worker runbook",
               "occurredAt": (datetime.now(UTC) - timedelta(hours=1)).isoformat(), "content": LONG}  # fmt: skip
    passages = _passages(runbook)
    assert len(passages) >= 3
    try:
        # When a long note is ingested, Then each of its passages is embedded once
        _post(deployed, {"observations": [runbook]}, cohere, "API Gateway POST /v1/observations (Cohere counted)")
        assert sorted(cohere.documents()) == sorted(passages)
        # When it is written again unchanged, Then Cohere is not called
        _post(deployed, {"observations": [runbook]}, cohere, "API Gateway POST /v1/observations (unchanged rewrite)")
        assert len(cohere.documents()) == len(passages)
        # When the same bus event is delivered twice (an agent's retry, a replay from the DLQ),
        # Then only the first delivery is embedded, and the second counts its cache hits
        agent = deployed.moto.client("events", _agent_credentials(deployed))
        bus_note = {**runbook, "id": "runbook-bus", "title": "Worker runbook, night shift", "workspace": "acme"}
        event = {"source": "neural-memory.acme", "detail-type": "note", "detail": bus_note}
        embedded = _passages({k: v for k, v in bus_note.items() if k != "workspace"})
        hits = []
        for n in (1, 2):
            assert agent.put_events(Entries=[_entry(deployed, event)])["FailedEntryCount"] == 0
            label = f"SQS batch (an agent's note on the bus, delivery {n}, Cohere counted)"
            hits.append(_ingest_counting_hits(deployed, label, cohere))
        assert cohere.documents()[len(passages) :] == embedded
        assert hits == [0, len(embedded)]
        passages += embedded
        # When a deploy changes the mapping and the bootstrap reindexes for the same model
        lives = _claim_older_schema(deployed)
        reply = deployed.invoke(
            "maintenance",
            "CloudFormation Update (index bootstrap, same model, mapping changed)",
            _custom_resource(deployed, "Update"),
            {"CO_API_URL": cohere.url},
        )
        answer = deployed.cloudformation.seen[-1]
        assert "errorType" not in reply and answer["Status"] == "SUCCESS", (reply, answer)
        assert lives and all(f"{live} -> " in answer["Data"]["Outcome"] for live in lives), answer
        assert answer["Data"]["Outcome"].count("swapped in") == len(lives), answer
        # Then every vector was copied: Cohere was not called
        assert len(cohere.documents()) == len(passages)
        # When one sentence of the note changes, Then only the passages holding it are embedded
        changed = {**runbook, "content": LONG.replace("worker 44 and", "worker 99 and")}
        _post(deployed, {"observations": [changed]}, cohere, "API Gateway POST /v1/observations (one sentence changed)")
        fresh = [p for p in _passages(changed) if p not in passages]
        assert 0 < len(fresh) < len(_passages(changed))
        assert cohere.documents()[len(passages) :] == fresh
    finally:
        cohere.close()
        _call(deployed, "DELETE", "/v1/observations/runbook")
        _call(deployed, "DELETE", "/v1/observations/runbook-bus")


ROLLBACK = {
    "id": "mcp-rollback",
    "title": "Roll back with the instant rollback",
    "observationType": "decision",
    "actorName": "octocat",
    "content": "We roll back a broken release with the instant rollback, never by redeploying an old commit.",
}


DECIDED = {  # no actorName, no metadata: the session's headers say whose and about which repository
    "id": "mcp-decided",
    "observationType": "decision",
    "content": "We decided to keep the release notes in the repository, next to the code they describe.",
}


async def _mcp_session(url: str, key: str) -> dict[str, Any]:
    """The official MCP client over streamable HTTP with ``key``: the tools it lists, and the text
    (and whether it is an error) of each tool it calls, as one agent's session would."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    # the headers agents install writes into .mcp.json: whose session it is (a remember without them defaults to them)
    session = {"X-Neural-Memory-Repository": "acme/console", "X-Neural-Memory-Actor": "Ann Lee"}
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}", **session}, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as agent,
    ):

        async def text(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
            result = await agent.call_tool(tool, arguments)
            return bool(result.is_error), "\n".join(getattr(block, "text", "") for block in result.content)

        listed = [tool.name for tool in (await agent.list_tools()).tools]
        if key != _state["mcp_acme"]:  # another workspace: the memory is not there to see
            return {
                "tools": listed,
                "search": await text("search_memory", {"query": "roll back a broken release"}),
                "get": await text("get_memory", {"id": ROLLBACK["id"]}),
                "trace": await text("trace_decision", {"id": ROLLBACK["id"]}),
                "forget": await text("forget", {"id": ROLLBACK["id"]}),
            }
        return {
            "tools": listed,
            "remember": await text("remember", {"observations": [ROLLBACK]}),
            "search": await text("search_memory", {"query": "how do we roll back a broken release", "topK": 3}),
            "answer": await text("answer_question", {"question": "How do we roll back a broken release?"}),
            "get": await text("get_memory", {"id": ROLLBACK["id"]}),
            "who": await text("who_knows", {"query": "rollback of a broken release"}),
            "trace": await text("trace_decision", {"id": ROLLBACK["id"]}),
            "bad": await text("search_memory", {"query": "rollback", "topK": 1000}),
            "decided": await text("remember", {"observations": [DECIDED]}),
            "decided by": await text("get_memory", {"id": DECIDED["id"]}),
            "about the repository": await text(
                "search_memory", {"query": "release notes", "filters": {"metadata": {"repo": "acme/console"}}}
            ),
            "forgot decided": await text("forget", {"id": DECIDED["id"]}),
        }


async def _forget(url: str, key: str) -> list[tuple[bool, str]]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as agent,
    ):
        replies = []
        for tool in ("forget", "get_memory"):
            result = await agent.call_tool(tool, {"id": ROLLBACK["id"]})
            replies.append((bool(result.is_error), "\n".join(getattr(b, "text", "") for b in result.content)))
        return replies


def test_mcp_over_streamable_http_serves_every_tool_to_the_official_client_through_the_authorizer(
    deployed: DeployedStack,
) -> None:
    import anyio
    import httpx2

    from tests.deployed.api_gateway import ApiGatewayFront
    from tests.helpers.mcp_sessions import TOOLS

    # Given a key of workspace acme and one of workspace beta, API Gateway with the template's
    # authorizer in front of the mcp function's container, and Cohere's embed API on a local port
    table = deployed.resolve.refs[_resource(deployed, "AWS::DynamoDB::Table")]
    keys = DynamoKeyStore(table, client=deployed.moto.client("dynamodb", deployed.admin))
    _state["mcp_acme"], beta = issue_key(keys, "acme", datetime.now(UTC)), issue_key(keys, "beta", datetime.now(UTC))
    cohere = CohereStandIn()
    container = deployed.container("mcp", variables={"CO_API_URL": cohere.url})

    def invoke(event: dict[str, Any]) -> dict[str, Any]:
        reply = container.invoke(event)
        try:
            sent = json.loads(event["body"] or "null")
        except ValueError:
            sent = None
        what = sent.get("method", "a reply") if isinstance(sent, dict) else "a malformed or batch body"
        outcome = reply.get("errorType") or f"HTTP {reply['result']['statusCode']}"
        deployed.driven.append(Driven("mcp", f"API Gateway {event['httpMethod']} /mcp ({what})", outcome))
        return reply

    gate = _gate(deployed)
    front = ApiGatewayFront("/mcp", gate.decide, invoke)
    try:
        # When an agent of acme works through the official MCP client (the discover probe, then the handshake)
        acme = anyio.run(_mcp_session, front.url, _state["mcp_acme"])
        # Then it lists the seven tools and each call is served by the function, with the stdio server's texts
        assert set(acme["tools"]) == TOOLS
        assert acme["remember"] == (False, "Remembered 1 (1 new, 0 updated): mcp-rollback"), acme
        assert not acme["search"][0] and "1. [mcp-rollback] Roll back with the instant rollback" in acme["search"][1]
        assert not acme["answer"][0] and "[mcp-rollback]" in acme["answer"][1], acme["answer"]
        assert not acme["get"][0] and acme["get"][1].endswith(ROLLBACK["content"]), acme["get"]
        assert not acme["who"][0] and "1. octocat" in acme["who"][1], acme["who"]
        assert acme["trace"] == (False, acme["trace"][1]) and "Lineage of mcp-rollback" in acme["trace"][1]
        assert acme["bad"][0] and acme["bad"][1].startswith("validation_error: topK: "), acme["bad"]
        # And a decision remembered without a person or a repository carries the session's headers' (on Lambda too)
        assert not acme["decided"][0] and " by Ann Lee" in acme["decided by"][1], acme["decided by"]
        assert "[mcp-decided]" in acme["about the repository"][1], acme["about the repository"]
        assert acme["forgot decided"] == (False, "Forgot mcp-decided."), acme["forgot decided"]
        assert cohere.documents(), "remember embedded nothing: the function's Cohere grant was not used"
        # And an agent of beta sees none of it, and cannot forget it
        other = anyio.run(_mcp_session, front.url, beta)
        assert not other["search"][0] and other["search"][1].startswith("No memories match 'roll back a broken"), other
        missing = (True, "not_found: observation 'mcp-rollback' not found")
        assert (other["get"], other["trace"], other["forget"]) == (missing, missing, missing), other
        # When acme forgets it, Then it is gone
        assert anyio.run(_forget, front.url, _state["mcp_acme"]) == [(False, "Forgot mcp-rollback."), missing]

        # And a missing or wrong key is API Gateway's 401, in the REST routes' words
        for headers in ({}, {"Authorization": "Bearer nm_000000000000_" + "A" * 43}, {"Authorization": beta}):
            refused = httpx2.post(front.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
            rest = gate.decide(headers, "POST", "/v1/search")
            assert isinstance(rest, tuple) and (refused.status_code, refused.json()) == rest, refused.text
            assert refused.status_code == 401 and refused.json()["error"]["message"] == key_problem(headers)

        # And hostile input gets a JSON-RPC error or a 4xx from the function, never a 5xx
        authorized = {"Authorization": f"Bearer {beta}", "Content-Type": "application/json"}
        ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
        for method, body in [
            ("POST", b"{not json"),
            ("POST", json.dumps([ping]).encode()),
            ("POST", b"[]"),
            ("POST", json.dumps({"jsonrpc": "2.0", "id": 8, "method": "resources/list"}).encode()),
            ("POST", json.dumps({**ping, "id": None}).encode()),
            ("POST", b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "rm -rf"}}'),
            ("POST", json.dumps({**ping, "params": {"pad": "x" * 2_000_000}}).encode()),
            ("GET", b""),
            ("DELETE", b""),
        ]:
            answered = httpx2.request(method, front.url, content=body, headers=authorized)
            assert 400 <= answered.status_code < 500 or "error" in answered.json(), (method, body[:60], answered.text)
            assert answered.status_code < 500, (method, body[:60], answered.text)
        assert httpx2.post(front.url, json=ping, headers=authorized).json() == {"jsonrpc": "2.0", "id": 7, "result": {}}
    finally:
        front.close()
        container.close()
        cohere.close()


def test_the_daily_purge_and_the_stack_deletion(deployed: DeployedStack) -> None:
    purged = deployed.invoke("maintenance", "EventBridge schedule (daily purge)", load_event("schedule/purge"))
    assert isinstance(purged.get("result", {}).get("purged"), int), purged
    assert isinstance(purged["result"].get("archived"), int), purged
    reply = deployed.invoke(
        "maintenance", "CloudFormation Delete (index bootstrap)", _custom_resource(deployed, "Delete")
    )
    assert "errorType" not in reply and deployed.cloudformation.seen[-1]["Status"] == "SUCCESS"


def test_a_model_change_reindexes_each_workspace_behind_its_alias_at_deploy(deployed: DeployedStack) -> None:
    # Given the index the first bootstrap built, and a schedule run that finds nothing to resume
    resumed = deployed.invoke("maintenance", "EventBridge schedule (reindex resume)", load_event("schedule/reindex"))
    assert resumed.get("result") == {"outcome": "template ok; workspace indices 2 ok"}, resumed  # acme, beta
    # When a deploy changes the embedding model (here: to none) and the bootstrap runs again
    reply = deployed.invoke(
        "maintenance",
        "CloudFormation Update (index bootstrap, model changed)",
        _custom_resource(deployed, "Update"),
        variables={"NM_EMBEDDER": "none"},
    )
    # Then it rebuilds the index under its role's grants (the grant test below checks each
    # request) and moves the alias
    assert "errorType" not in reply, reply
    answer = deployed.cloudformation.seen[-1]
    assert answer["Status"] == "SUCCESS", answer
    assert re.search(r"-> neural-memory-ws-[a-z0-9-]+-[0-9a-f]{16}-\d{6}", answer["Data"]["Outcome"]), answer
    assert "swapped in" in answer["Data"]["Outcome"], answer


def test_every_opensearch_request_was_allowed_by_the_signers_grants(deployed: DeployedStack) -> None:
    domain = _resource(deployed, "AWS::OpenSearchService::Domain")
    domain_arn = deployed.resolve.attributes[(domain, "Arn")]
    access_policy = deployed.resolve(deployed.resources[domain]["Properties"]["AccessPolicies"])["Statement"]
    by_key = {deployed.access_key_of(name): name for name in deployed.functions}
    checked, refused = set(), []
    for request in deployed.opensearch.seen:
        name = by_key.get(request["key"])
        assert name is not None, f"unsigned or unknown signer: {request}"
        function = deployed.functions[name]
        role_arn = deployed.resolve.attributes[(function.role, "Arn")]
        identity = [
            statement
            for v in deployed.resources.values()
            if v["Type"] == "AWS::IAM::Policy" and {"Ref": function.role} in v["Properties"]["Roles"]
            for statement in deployed.resolve(v["Properties"]["PolicyDocument"])["Statement"]
        ]
        action = f"es:ESHttp{request['method'].title()}"
        resource = f"{domain_arn}/{request['path'].lstrip('/')}"
        verdicts = (allowed(identity, action, resource), allowed(access_policy, action, resource, role_arn))
        if False in verdicts or True not in verdicts or verdicts[0] is not True:
            refused.append(f"{name}: {request['method']} {request['path']} {verdicts}")
        checked.add(name)
    assert refused == []
    assert checked >= {"search", "answer", "observations", "ingest", "maintenance", "mcp"}


def test_traces_reach_xray_without_any_observation_content(deployed: DeployedStack) -> None:
    assert deployed.xray.segments, "no segment reached the X-Ray daemon"
    assert not [s for s in deployed.xray.segments if "NEXT_PUBLIC_API_URL" in s or "deploy failed" in s.lower()]


def test_a_function_whose_role_lacks_its_secret_grant_fails_with_access_denied(deployed: DeployedStack) -> None:
    # Given the ingest function with a role lacking only the Cohere secret grant
    ingest = deployed.functions["ingest"]
    iam = deployed.moto.client("iam", deployed.admin)
    role = "IngestWithoutSecretGrant"
    trust = iam.get_role(RoleName=deployed.resolve.refs[ingest.role])["Role"]["AssumeRolePolicyDocument"]
    iam.create_role(RoleName=role, AssumeRolePolicyDocument=json.dumps(trust))
    for name in iam.list_role_policies(RoleName=deployed.resolve.refs[ingest.role])["PolicyNames"]:
        document = iam.get_role_policy(RoleName=deployed.resolve.refs[ingest.role], PolicyName=name)["PolicyDocument"]
        kept = [s for s in document["Statement"] if not any("secretsmanager" in a for a in _actions(s))]
        iam.put_role_policy(RoleName=role, PolicyName=name, PolicyDocument=json.dumps({**document, "Statement": kept}))
    keys = deployed.moto.client("sts", deployed.admin).assume_role(
        RoleArn=f"arn:aws:iam::{ACCOUNT}:role/{role}", RoleSessionName="ingest"
    )["Credentials"]
    container: Container = deployed.container(
        "ingest",
        {
            "aws_access_key_id": keys["AccessKeyId"],
            "aws_secret_access_key": keys["SecretAccessKey"],
            "aws_session_token": keys["SessionToken"],
        },
    )
    try:
        # When a pull request (C tier: it must be embedded, so the Cohere key is read) arrives
        messages, _, queue_arn = _deliver(deployed, "github_pull_request")
        reply = container.invoke(_sqs_event(deployed, messages, queue_arn))
        deployed.driven.append(_negative(reply))
        # Then that record fails (to be retried, then dead-lettered), with AccessDenied as the reason
        assert [f["itemIdentifier"] for f in reply["result"]["batchItemFailures"]] == [messages[0]["MessageId"]]
        denied = "not authorized to perform: secretsmanager:GetSecretValue"
        assert any("AccessDenied" in line and denied in line for line in container.log), container.log[-20:]
    finally:
        container.close()


def _actions(statement: dict[str, Any]) -> list[str]:
    actions = statement["Action"]
    return actions if isinstance(actions, list) else [actions]


def _negative(reply: dict[str, Any]) -> Any:
    failures = len(reply.get("result", {}).get("batchItemFailures", []))
    return Driven(
        "ingest",
        "SQS batch, role without its secret grant (negative control)",
        f"{failures} batch item failures (AccessDenied reading the Cohere secret)",
    )


def test_every_function_of_the_template_was_driven(deployed: DeployedStack) -> None:
    assert {d.function for d in deployed.driven} == set(deployed.functions)


class _OpenAIStandIn:
    """OpenAI's Chat Completions on a local port: answers with a cited answer when the request
    carries ``key``, else 401 (as OpenAI does)."""

    def __init__(self, key: str, answer: dict[str, Any]) -> None:
        import http.server
        import threading

        self.authorizations: list[str] = []
        stand_in = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                stand_in.authorizations.append(self.headers.get("Authorization", ""))
                call = {
                    "id": "c",
                    "type": "function",
                    "function": {"name": "answer_with_citations", "arguments": json.dumps(answer)},
                }
                message = {"role": "assistant", "content": None, "tool_calls": [call]}
                reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "gpt-4.1-mini",
                         "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}]}  # fmt: skip
                ok = self.headers.get("Authorization") == f"Bearer {key}"
                body = json.dumps(reply if ok else {"error": {"message": "bad key", "type": "invalid_request_error"}})
                self.send_response(200 if ok else 401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_answer_function_reads_the_openai_key_with_its_role_when_anthropic_fails(deployed: DeployedStack) -> None:
    # Given the OpenAI key set after deploy, as the README says, and OpenAI reachable (Anthropic is not)
    key = "sk-test-" + hashlib.sha256(b"openai").hexdigest()[:24]
    secret_id = deployed.resolve.refs[next(k for k in deployed.resources if k.startswith("ProviderSecretsOpenAI"))]
    deployed.moto.client("secretsmanager", deployed.admin).put_secret_value(SecretId=secret_id, SecretString=key)
    quote = "NEXT_PUBLIC_API_URL was missing from the environment"
    openai = _OpenAIStandIn(key, {"answer": "A missing env var.", "citations": [{"id": "llm-note", "quote": quote}]})
    note = {"id": "llm-note", "source": "vercel", "observationType": "deployment_error", "title": "Deploy failed",
            "occurredAt": (datetime.now(UTC) - timedelta(hours=1)).isoformat(), "content": NOTE_TEXT}  # fmt: skip
    try:
        assert _call(deployed, "POST", "/v1/observations", {"observations": [note]})[0] == 200
        # When the answer function (the stack's defaults: Anthropic first, OpenAI as fallback) answers
        event = _route_event(deployed, "POST", "/v1/answer", {"question": "Why did the deploy fail?"})
        reply = deployed.invoke(
            "answer", "API Gateway POST /v1/answer (OpenAI as fallback)", event, {"OPENAI_BASE_URL": openai.url}
        )
        body = json.loads(reply["result"]["body"])
        # Then its role read the OpenAI secret, OpenAI answered with the key, and degraded names the fallback
        assert openai.authorizations == [f"Bearer {key}"], body
        assert body["method"] == "llm" and body["answer"] == "A missing env var.", body
        assert "llm:anthropic->openai (answer_with_citations: APIConnectionError)" in body["degraded"], body
    finally:
        openai.close()
        _call(deployed, "DELETE", "/v1/observations/llm-note")
