"""SQS (fed by EventBridge rules) → observations, with partial batch failures: only the records
that failed come back, and one that can never succeed reaches the DLQ after its retries."""

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext
from neural_memory.observability import (
    METRIC_INGEST_FAILED,
    METRIC_INGEST_SUCCEEDED,
    logger,
    metrics,
    record_count,
    tracer,
)
from neural_memory.runtime import get_service

# A batch whose every record failed is still reported record by record, not as an invocation error.
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
_done: set[str] = set()  # records already indexed by this invocation's combined write


@tracer.capture_method(capture_response=False)  # observation content never goes to X-Ray
def record_handler(record: SQSRecord) -> None:
    """Nothing to do for a record the combined write indexed; otherwise index it alone (raises on failure)."""
    if record.message_id not in _done:
        get_service().index_event(record.body, record.message_id)


@logger.inject_lambda_context
@metrics.log_metrics(capture_cold_start_metric=True)
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Report ``batchItemFailures`` for exactly the records that failed."""
    _done.clear()
    _done.update(get_service().index_events(event.get("Records", [])))
    reply: dict[str, Any] = dict(
        process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
    )
    failed = len(reply.get("batchItemFailures", []))
    record_count(METRIC_INGEST_FAILED, failed)
    record_count(METRIC_INGEST_SUCCEEDED, len(event.get("Records", [])) - failed)
    return reply
