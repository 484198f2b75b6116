"""Maintenance: the index bootstrap at deploy (CloudFormation custom resource) and the scheduled
purge of expired observations."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext
from neural_memory.clock import utcnow
from neural_memory.observability import logger, metrics
from neural_memory.service import get_service
from neural_memory.stores import ensure_store


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """``RequestType`` (custom resource) → ensure the index; a scheduled event → purge."""
    service = get_service()
    if "RequestType" in event:
        outcome = "deleted" if event["RequestType"] == "Delete" else ensure_store(service.settings, service.embedder)
        logger.info("index bootstrap", extra={"outcome": outcome})
        return {"PhysicalResourceId": f"index:{service.settings.opensearch_index}", "Data": {"Outcome": outcome}}
    purged = service.store.purge_expired(utcnow())
    logger.info("purged expired observations", extra={"purged": purged})
    return {"purged": purged}
