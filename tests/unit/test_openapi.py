"""The committed OpenAPI document is the one the handlers generate (regenerate with `make openapi`)."""

from __future__ import annotations

import json

from neural_memory.api.routes import ROUTES
from neural_memory.local.serving.gateway import openapi_document

from tests.helpers.events import ROOT


def test_committed_openapi_matches_the_handlers() -> None:
    # Given the document in docs/ and the one generated from the resolvers now
    committed = json.loads((ROOT / "docs" / "openapi.json").read_text())
    # Then they are the same: any change to the contract shows up in review
    assert openapi_document() == committed, "the API changed: run `make openapi` and review docs/openapi.json"


def test_every_route_documents_its_error_envelope() -> None:
    document = openapi_document()
    open_routes = {(route.method.lower(), route.path) for route in ROUTES if route.authorization == "none"}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            # a route that takes no key (the console's static files) never answers 401
            for status in ("400", "503") if (method, path) in open_routes else ("400", "401", "503"):
                assert status in operation["responses"], f"{method.upper()} {path} does not document {status}"


def test_only_statuses_the_api_answers_are_documented_and_each_with_the_envelope() -> None:
    document = openapi_document()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            # invalid input is a 400 with the envelope; a 422 only where the route itself answers
            # one (a store refusal, an unrouted webhook), never Powertools' validation error
            routes_with_422 = {"/v1/observations", "/v1/webhooks/github", "/v1/webhooks/vercel"}
            assert "422" not in operation["responses"] or (path in routes_with_422 and method == "post"), path
            for status, response in operation["responses"].items():
                if status.startswith(("4", "5")):
                    schema = response["content"]["application/json"]["schema"]
                    jsonrpc = {("post", "400"), ("post", "406"), ("get", "405"), ("delete", "405")}
                    if path == "/mcp" and (method, status) in jsonrpc:  # MCP's own refusals: JSON-RPC errors
                        assert "#/components/schemas/JsonRpcReply" in json.dumps(schema), (method, path, status)
                        continue
                    assert schema == {"$ref": "#/components/schemas/ErrorResponse"}, (method, path, status)
