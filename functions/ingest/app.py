"""SQS (fed by EventBridge rules) → observations: partial batch failures, so only records that
failed come back, and a record that can never succeed reaches the DLQ after its retries."""

import json
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext
from neural_memory.ingest.normalizers import normalize_eventbridge
from neural_memory.ingest.routing import workspace_for
from neural_memory.observability import (
    METRIC_INGEST_FAILED,
    METRIC_INGEST_SUCCEEDED,
    logger,
    metrics,
    record_count,
    tracer,
)
from neural_memory.service import get_service

processor = BatchProcessor(event_type=EventType.SQS)


@tracer.capture_method
def record_handler(record: SQSRecord) -> None:
    """Normalise one EventBridge event and index it; raises (with the reason logged) on failure."""
    event = json.loads(record.body)
    service = get_service()
    workspace_id = workspace_for(event, service.settings.ingest_routes)
    normalized = normalize_eventbridge(event)
    if normalized.skipped:
        logger.info("event skipped", extra={"reason": normalized.skipped.reason, "event_id": event.get("id")})
        return
    service.index(workspace_id, normalized.observations)


@logger.inject_lambda_context
@metrics.log_metrics(capture_cold_start_metric=True)
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Report ``batchItemFailures`` for exactly the records that failed."""
    reply: dict[str, Any] = dict(
        process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
    )
    failed = len(reply.get("batchItemFailures", []))
    record_count(METRIC_INGEST_FAILED, failed)
    record_count(METRIC_INGEST_SUCCEEDED, len(event.get("Records", [])) - failed)
    return reply
