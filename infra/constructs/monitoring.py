"""The operator's dashboard and alarms: latency per stage (p50/p95/p99), gate and result counts,
ingestion outcomes, DLQ depth; alarms on p95 latency, any dead letter, and the 5xx rate."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_sqs as sqs
from constructs import Construct
from neural_memory.observability import (
    METRIC_GATE_BYPASSED,
    METRIC_GATE_FILTERED,
    METRIC_INGEST_FAILED,
    METRIC_INGEST_SUCCEEDED,
    METRIC_OBSERVATIONS_CREATED,
    METRIC_RESULTS_RETURNED,
    METRIC_SEARCH_LATENCY,
)

from infra.constants import LATENCY_ALARM_P95_MS, METRICS_NAMESPACE, SERVICE_NAME, physical_name

STEPS = ("Total", "Embed", "Retrieval", "LlmFilter", "Rerank")
PERIOD = Duration.minutes(1)


class Monitoring(Construct):
    """One dashboard and three alarms (exposed for tests and for wiring notifications). The
    application's metrics carry the dimensions ``service`` and ``stage``, so each stage's
    dashboard and alarms see only that stage."""

    def __init__(
        self, scope: Construct, construct_id: str, *, stage: str, rest_api: apigw.RestApi, dlq: sqs.IQueue
    ) -> None:
        super().__init__(scope, construct_id)
        self._stage = stage
        _metric = self._metric
        self.dashboard = cw.Dashboard(self, "Dashboard", dashboard_name=physical_name(stage))
        for step in STEPS:
            name = f"{METRIC_SEARCH_LATENCY}{step}"
            self.dashboard.add_widgets(
                cw.GraphWidget(
                    title=f"Search latency: {step} (ms)",
                    left=[_metric(name, stat) for stat in ("p50", "p95", "p99")],
                    width=8,
                )
            )
        self.dashboard.add_widgets(
            cw.GraphWidget(
                title="LLM gate",
                left=[
                    cw.MathExpression(
                        expression=(
                            f"SEARCH('{{{METRICS_NAMESPACE},reason,service,stage}} "
                            f'MetricName="{METRIC_GATE_BYPASSED}" stage="{stage}"\', \'Sum\', 60)'
                        ),
                        label="bypassed, by reason",
                        period=PERIOD,
                    ),
                    _metric(METRIC_GATE_FILTERED),
                ],
                width=8,
            ),
            cw.GraphWidget(title="Results returned", left=[_metric(METRIC_RESULTS_RETURNED, "Average")], width=8),
            cw.GraphWidget(
                title="Ingestion",
                left=[
                    _metric(METRIC_INGEST_SUCCEEDED),
                    _metric(METRIC_INGEST_FAILED),
                    _metric(METRIC_OBSERVATIONS_CREATED),
                ],
                right=[dlq.metric_approximate_number_of_messages_visible(period=PERIOD, label="DLQ depth")],
                width=8,
            ),
        )
        self.latency_alarm = cw.Alarm(
            self,
            "SearchLatencyP95",
            alarm_name=physical_name(stage, "search-latency-p95"),
            metric=_metric(f"{METRIC_SEARCH_LATENCY}Total", "p95"),
            threshold=LATENCY_ALARM_P95_MS,
            evaluation_periods=5,
            datapoints_to_alarm=3,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            alarm_description=f"p95 end-to-end search latency above {LATENCY_ALARM_P95_MS} ms",
        )
        self.dlq_alarm = cw.Alarm(
            self,
            "DeadLetters",
            alarm_name=physical_name(stage, "dead-letters"),
            metric=dlq.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum"),
            threshold=0,
            evaluation_periods=1,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            alarm_description="An observation could not be ingested and reached the dead-letter queue",
        )
        errors = cw.MathExpression(
            expression="100 * errors / MAX([requests, 1])",
            using_metrics={
                "errors": rest_api.metric_server_error(period=PERIOD, statistic="Sum"),
                "requests": rest_api.metric_count(period=PERIOD, statistic="Sum"),
            },
            period=PERIOD,
            label="5xx rate (%)",
        )
        self.server_error_alarm = cw.Alarm(
            self,
            "ServerErrorRate",
            alarm_name=physical_name(stage, "server-error-rate"),
            metric=errors,
            threshold=1,
            evaluation_periods=5,
            datapoints_to_alarm=3,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            alarm_description="More than 1% of API requests answered 5xx",
        )
        self.dashboard.add_widgets(
            cw.AlarmStatusWidget(alarms=[self.latency_alarm, self.dlq_alarm, self.server_error_alarm], width=24)
        )

    def _metric(self, name: str, statistic: str = "Sum") -> cw.Metric:
        return cw.Metric(
            namespace=METRICS_NAMESPACE,
            metric_name=name,
            dimensions_map={"service": SERVICE_NAME, "stage": self._stage},
            statistic=statistic,
            period=PERIOD,
        )
