"""Maintenance: the index bootstrap at deploy (a CloudFormation custom resource backed directly by
this function) and the scheduled purge of expired observations."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext
from neural_memory.clock import utcnow
from neural_memory.custom_resource import physical_id, send_response
from neural_memory.observability import logger, metrics
from neural_memory.service import get_service
from neural_memory.stores import ensure_store


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """``RequestType`` (custom resource) → ensure the index and answer CloudFormation; a scheduled
    event → purge."""
    if "RequestType" in event:
        return bootstrap(event)
    purged = get_service().purge_expired(utcnow())
    logger.info("purged expired observations", extra={"purged": purged})
    return {"purged": purged}


def bootstrap(event: dict[str, Any]) -> dict[str, Any]:
    """Create or verify the index; always answer CloudFormation, with the reason when it failed.
    Delete keeps the index (the data outlives a stack update that replaces this resource)."""
    resource_id = physical_id(event, str(event.get("LogicalResourceId", "IndexBootstrap")))
    if event["RequestType"] == "Delete":
        return send_response(event, "SUCCESS", resource_id, {"Outcome": "kept"})
    try:
        service = get_service()
        outcome = ensure_store(service.settings, service.embedder)
        resource_id = f"index:{service.settings.opensearch_index}"
    except Exception as exc:  # CloudFormation must hear about every failure
        logger.exception("index bootstrap failed")
        return send_response(event, "FAILED", resource_id, {}, f"{type(exc).__name__}: {exc}")
    logger.info("index bootstrap", extra={"outcome": outcome})
    return send_response(event, "SUCCESS", resource_id, {"Outcome": outcome})
