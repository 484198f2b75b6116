"""CloudFormation custom resources backed directly by a Lambda function: the function itself must
PUT the outcome to the pre-signed ``ResponseURL`` of the request, or the stack waits an hour."""

from __future__ import annotations

import json
import urllib.request
from typing import Any, Literal

from neural_memory.observability import logger

Status = Literal["SUCCESS", "FAILED"]


def physical_id(event: dict[str, Any], fallback: str) -> str:
    """The resource's physical id: the one CloudFormation already knows, else ``fallback``."""
    return str(event.get("PhysicalResourceId") or fallback)


def send_response(
    event: dict[str, Any], status: Status, resource_id: str, data: dict[str, str], reason: str = ""
) -> dict[str, Any]:
    """PUT the response CloudFormation waits for; returns it. A failed PUT is logged, not raised:
    there is nobody else to tell."""
    response = {
        "Status": status,
        "Reason": reason[:1000] or status,
        "PhysicalResourceId": resource_id,
        "StackId": event["StackId"],
        "RequestId": event["RequestId"],
        "LogicalResourceId": event["LogicalResourceId"],
        "NoEcho": False,
        "Data": data,
    }
    body = json.dumps(response).encode()
    # The pre-signed S3 URL is signed for an empty content type.
    request = urllib.request.Request(  # the URL is CloudFormation's pre-signed https URL
        event["ResponseURL"], data=body, method="PUT", headers={"Content-Type": "", "Content-Length": str(len(body))}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            logger.info("custom resource response sent", extra={"status": status, "http_status": reply.status})
    except OSError as exc:
        logger.error("could not send the custom resource response", extra={"reason": str(exc)})
    return response
