"""API Gateway's side of a refused request, read from the synthesized template: the gateway
response that answers it (a request without the authorizer's identity source gets UNAUTHORIZED
without the authorizer being called; the authorizer's Deny gets ACCESS_DENIED) and its body with
the ``$context`` variables filled in as API Gateway fills them: in place, unescaped."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

_VARIABLE = re.compile(r"\$context\.([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)")


def gateway_responses(resources: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The template's gateway responses' properties by response type (``UNAUTHORIZED``, ...)."""
    return {
        r["Properties"]["ResponseType"]: r["Properties"]
        for r in resources
        if r.get("Type", "AWS::ApiGateway::GatewayResponse") == "AWS::ApiGateway::GatewayResponse"
    }


def refusal(
    responses: Mapping[str, Mapping[str, Any]],
    policy: Mapping[str, Any] | None,
    request_id: str = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
) -> tuple[int, dict[str, Any]]:
    """The status and JSON body API Gateway answers a refused request with: ``policy`` is the
    authorizer's Deny, or None when the authorizer was not called (no identity source)."""
    properties = responses["UNAUTHORIZED" if policy is None else "ACCESS_DENIED"]
    authorizer = (policy or {}).get("context") or {}

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "requestId":
            return request_id
        if name.startswith("authorizer."):
            return str(authorizer.get(name.removeprefix("authorizer."), ""))
        raise AssertionError(f"$context.{name}: a variable this reading does not fill")

    body = _VARIABLE.sub(fill, properties["ResponseTemplates"]["application/json"])
    return int(properties["StatusCode"]), json.loads(body)
