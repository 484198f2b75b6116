"""EventBridge bus → a rule for each source the layer has a normalizer for → SQS (with a DLQ) → ingest function with
partial batch responses. Nothing is lost: a record that keeps failing lands in the DLQ."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.constants import DLQ_MAX_RECEIVE_COUNT, EVENT_SOURCES, INGEST_BATCH_SIZE, INGEST_TIMEOUT_S


class IngestPipeline(Construct):
    """The visibility timeout is 6× the function timeout, as AWS recommends for SQS triggers; at
    most ``max_concurrency`` invocations at once (``INGEST_CONCURRENCY``)."""

    def __init__(
        self, scope: Construct, construct_id: str, *, bus_name: str, function: lambda_.Function, max_concurrency: int
    ) -> None:
        super().__init__(scope, construct_id)
        self.function = function
        self.bus = events.EventBus(self, "Bus", event_bus_name=bus_name)
        self.dlq = sqs.Queue(
            self,
            "DeadLetters",
            retention_period=Duration.days(14),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
        )
        self.queue = sqs.Queue(
            self,
            "Observations",
            visibility_timeout=Duration.seconds(6 * INGEST_TIMEOUT_S),
            retention_period=Duration.days(4),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            dead_letter_queue=sqs.DeadLetterQueue(queue=self.dlq, max_receive_count=DLQ_MAX_RECEIVE_COUNT),
        )
        for source in EVENT_SOURCES:
            events.Rule(
                self,
                # GithubRule, VercelRule, NeuralMemoryRule: ids stay stable as sources are added
                "".join(part.title() for part in source.split("-")) + "Rule",
                event_bus=self.bus,
                event_pattern=events.EventPattern(source=[source]),
                targets=[targets.SqsQueue(self.queue)],
            )
        function.add_event_source(
            sources.SqsEventSource(
                self.queue,
                batch_size=INGEST_BATCH_SIZE,
                max_batching_window=Duration.seconds(2),
                report_batch_item_failures=True,
                max_concurrency=max_concurrency,
            )
        )
