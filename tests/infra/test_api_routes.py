"""The deployed API is the route table: every route and nothing else, each on the function the
table names, answering within API Gateway's limit, with API Gateway's own errors in our envelope."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx
from neural_memory.api.routes import ROUTES
from neural_memory.client import RetryPolicy

from infra.constants import API_INTEGRATION_LIMIT_S
from tests.infra.template_reading import functions, text

if TYPE_CHECKING:
    from collections.abc import Mapping

    from aws_cdk.assertions import Template


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
        "ACCESS_DENIED": "403",
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
