"""The deployed API is the route table: every route and nothing else, each on the function the
table names, answering within API Gateway's limit, with API Gateway's own errors in our envelope."""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any, cast

import httpx
from neural_memory.api.routes import ROUTES
from neural_memory.auth.keys import API_KEY_HEADER, issue_key, key_problem
from neural_memory.auth.process_keys import set_key_store
from neural_memory.auth.sqlite import SqliteKeyStore
from neural_memory.clock import utcnow
from neural_memory.local.client import RetryPolicy

from functions.authorizer import app as authorizer_app
from infra.constants import API_INTEGRATION_LIMIT_S
from tests.helpers.events import load_event
from tests.helpers.gateway_responses import gateway_responses, refusal
from tests.infra.template_reading import functions, text

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from aws_cdk.assertions import Template
    from aws_lambda_powertools.utilities.typing import LambdaContext
    from neural_memory.local.serving.gateway import LocalLambdaContext


def _path(resources: Mapping[str, Mapping[str, Any]], resource_ref: Any) -> str:
    if not isinstance(resource_ref, dict) or "Ref" not in resource_ref:
        return ""  # the API's root resource
    resource = resources[resource_ref["Ref"]]["Properties"]
    return f"{_path(resources, resource['ParentId'])}/{resource['PathPart']}"


def test_the_api_serves_exactly_the_route_table(dev: Template) -> None:
    resources = dev.find_resources("AWS::ApiGateway::Resource")
    logical = {name: f["logical_id"] for name, f in functions(dev).items()}
    deployed = {}
    for method in dev.find_resources("AWS::ApiGateway::Method").values():
        props = method["Properties"]
        uri = text(props["Integration"]["Uri"])
        target = next(name for name, logical_id in logical.items() if logical_id in uri)
        deployed[(props["HttpMethod"], _path(resources, props["ResourceId"]))] = (target, props["AuthorizationType"])
    expected = {(r.method, r.path): (r.function, "CUSTOM" if r.authorization == "api_key" else "NONE") for r in ROUTES}
    assert deployed == expected


def test_every_function_behind_the_api_finishes_before_api_gateway_gives_up(dev: Template) -> None:
    routed = {route.function for route in ROUTES} | {"authorizer"}
    for name, function in functions(dev).items():
        if name in routed:
            assert function["Properties"]["Timeout"] < API_INTEGRATION_LIMIT_S, name


def test_api_gateway_errors_use_the_envelope(dev: Template) -> None:
    responses = {
        r["Properties"]["ResponseType"]: r["Properties"]
        for r in dev.find_resources("AWS::ApiGateway::GatewayResponse").values()
    }
    expected = {
        "UNAUTHORIZED": "401",
        "ACCESS_DENIED": "401",
        "THROTTLED": "429",
        "INTEGRATION_TIMEOUT": "504",
        "DEFAULT_4XX": None,
        "DEFAULT_5XX": None,
    }
    assert set(responses) == set(expected)
    for kind, status in expected.items():
        text = responses[kind]["ResponseTemplates"]["application/json"]
        # API Gateway substitutes its message as a quoted JSON string: stand one in to parse the rest
        template = json.loads(text.replace("$context.error.messageString", '"a message"'))
        assert set(template) == {"error", "requestId"} and template["requestId"] == "$context.requestId", kind
        assert set(template["error"]) == {"code", "message", "details"}, kind
        assert responses[kind].get("StatusCode") == status, kind
    # A throttled client is told when to come back, in the form the client retries on
    header = responses["THROTTLED"]["ResponseParameters"]["gatewayresponse.header.Retry-After"]
    sent = httpx.Response(429, headers={"Retry-After": header.strip("'")})
    assert RetryPolicy().delay(sent, 0) is not None


def _authorize(headers: dict[str, str], context: LocalLambdaContext) -> dict[str, Any]:
    event = copy.deepcopy(load_event("authorizer/request"))
    event["headers"] = {"Content-Type": "application/json", **headers}
    event["multiValueHeaders"] = {name: [value] for name, value in event["headers"].items()}
    policy: dict[str, Any] = authorizer_app.lambda_handler(event, cast("LambdaContext", context))
    return policy


def test_a_refused_key_is_told_on_aws_what_is_wrong_as_the_local_server_tells_it(
    dev: Template, tmp_path: Path, lambda_context: LocalLambdaContext
) -> None:
    # Given the template's authorizer, keyed by the Authorization header, its gateway responses,
    # and the authorizer's handler over a key store holding one valid key
    (authorizer,) = dev.find_resources("AWS::ApiGateway::Authorizer").values()
    assert authorizer["Properties"]["IdentitySource"] == f"method.request.header.{API_KEY_HEADER}"
    responses = gateway_responses(dev.find_resources("AWS::ApiGateway::GatewayResponse").values())
    store = SqliteKeyStore(tmp_path / "keys.db")
    key = issue_key(store, "acme", utcnow())
    set_key_store(store)
    try:
        allowed = _authorize({"Authorization": f"Bearer {key}"}, lambda_context)
        assert allowed["policyDocument"]["Statement"][0]["Effect"] == "Allow"
        cases = {
            "missing": {},
            "no bearer": {"Authorization": key},
            "wrong": {"Authorization": "Bearer nm_000000000000_" + "A" * 43},
        }
        messages = {}
        for case, headers in cases.items():
            # When API Gateway refuses it: itself when the header is absent (its identity source),
            # else with the authorizer's reply, which must then be a Deny
            policy = _authorize(headers, lambda_context) if headers else None
            if policy is not None:
                assert {s["Effect"] for s in policy["policyDocument"]["Statement"]} == {"Deny"}, case
            status, body = refusal(responses, policy)
            # Then a 401 in the envelope, in the local server's words for that request
            assert status == 401 and body["error"]["code"] == "unauthorized", (case, body)
            assert body["error"]["message"] == key_problem(headers), (case, body)
            messages[case] = body["error"]["message"]
    finally:
        set_key_store(None)
    assert len(set(messages.values())) == 3, messages
