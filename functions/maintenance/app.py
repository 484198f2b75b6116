"""Maintenance: the index bootstrap at deploy (a CloudFormation custom resource backed directly by
this function; it reindexes when the model or mapping changed), and the schedules
(``use_cases/schedules.py``): the daily purge of expired observations and archive of old E ones, a
frequent one that resumes a reindex the deploy could not finish, and ``{"action": "scrub"}``."""

import time
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext
from neural_memory.api.custom_resource import physical_id, send_response
from neural_memory.observability import logger, metrics
from neural_memory.runtime import get_service

# Stop a reindex this long before the function's own timeout: its progress is saved, CloudFormation
# is answered, and the reindex schedule resumes it.
DEADLINE_MARGIN_MS = 60_000


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """``RequestType`` (custom resource) → ensure the index and answer CloudFormation; a schedule's
    event → its work (``Service.run_schedule``)."""
    if "RequestType" in event:
        return bootstrap(event, context)
    return get_service().run_schedule(event, deadline=_deadline(context))


def _deadline(context: LambdaContext) -> float:
    """The ``time.monotonic()`` by which a reindex must stop."""
    return time.monotonic() + max(0, context.get_remaining_time_in_millis() - DEADLINE_MARGIN_MS) / 1000


def bootstrap(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Create or verify the index, reindexing for a new model or mapping (the old index answers
    until the new one is complete; an unfinished reindex is resumed by the schedule); always answer
    CloudFormation, with the reason when it failed. Delete keeps the index (the data outlives a
    stack update that replaces this resource)."""
    resource_id = physical_id(event, str(event.get("LogicalResourceId", "IndexBootstrap")))
    if event["RequestType"] == "Delete":
        return send_response(event, "SUCCESS", resource_id, {"Outcome": "kept"})
    try:
        service = get_service()
        outcome = service.ensure_index(deadline=_deadline(context))
        resource_id = f"index:{service.settings.opensearch_index}"
    except Exception as exc:  # CloudFormation must hear about every failure
        logger.exception("index bootstrap failed")
        return send_response(event, "FAILED", resource_id, {}, f"{type(exc).__name__}: {exc}")
    logger.info("index bootstrap", extra={"outcome": outcome})
    return send_response(event, "SUCCESS", resource_id, {"Outcome": outcome})
