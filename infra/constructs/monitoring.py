"""What an on-call person watches: one dashboard (search and answer latency per stage, the gate,
results, ingestion, the API, agents' MCP tool calls, the queues, the functions and the OpenSearch
domain) and alarms that all notify one SNS topic (with an optional email subscription). Every
metric named here is one the code emits with the dimensions it emits, or one AWS publishes for
these resources (a test compares them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Duration, Stack
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct
from neural_memory.observability import (
    METRIC_ANSWER_LATENCY,
    METRIC_DEGRADED,
    METRIC_EMBEDDING_CACHE_HITS,
    METRIC_GATE_BYPASSED,
    METRIC_GATE_FILTERED,
    METRIC_INGEST_FAILED,
    METRIC_INGEST_SUCCEEDED,
    METRIC_MCP_TOOL_CALLS,
    METRIC_MCP_TOOL_ERRORS,
    METRIC_OBSERVATIONS_CREATED,
    METRIC_OBSERVATIONS_REDACTED,
    METRIC_RERANK_DEGRADED,
    METRIC_RESULTS_RETURNED,
    METRIC_SEARCH_LATENCY,
)

from infra.constants import (
    API_LATENCY_ALARM_P95_MS,
    LATENCY_ALARM_P95_MS,
    METRICS_NAMESPACE,
    QUEUE_AGE_ALARM_S,
    SERVICE_NAME,
    STAGE_BUDGETS_MS,
    physical_name,
)

if TYPE_CHECKING:
    from aws_cdk import aws_apigateway as apigw
    from aws_cdk import aws_lambda as lambda_
    from aws_cdk import aws_opensearchservice as opensearch
    from aws_cdk import aws_sqs as sqs

SEARCH_STAGES = ("Total", "Embed", "Retrieval", "LlmFilter", "Rerank")
ANSWER_STAGES = ("Total", "Search", "Generate")
PERIOD = Duration.minutes(1)
ABOVE = cw.ComparisonOperator.GREATER_THAN_THRESHOLD
AT_LEAST = cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
AT_MOST = cw.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD


class Monitoring(Construct):
    """The dashboard, the alarms (``alarms``, each with the topic as its alarm and OK action) and
    the topic. The application's metrics carry the dimensions ``service`` and ``stage``, so each
    stage's dashboard and alarms see only that stage."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        stage: str,
        rest_api: apigw.RestApi,
        functions: dict[str, lambda_.Function],
        queue: sqs.IQueue,
        dlq: sqs.IQueue,
        domain: opensearch.Domain,
        storage_gb: int,
        alarm_email: str | None,
    ) -> None:
        super().__init__(scope, construct_id)
        self._stage = stage
        self.topic = sns.Topic(self, "Alarms", topic_name=physical_name(stage, "alarms"), enforce_ssl=True)
        # The topic's own policy (it replaces SNS's default one) must let this account's alarms publish.
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                conditions={"StringEquals": {"aws:SourceAccount": Stack.of(self).account}},
            )
        )
        if alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
        self.alarms: list[cw.Alarm] = []
        self.dashboard = cw.Dashboard(self, "Dashboard", dashboard_name=physical_name(stage))
        self._search_and_answer()
        self._ingestion(queue, dlq)
        self._api(rest_api)
        self._mcp()
        self._functions(functions)
        self._domain(domain, storage_gb)
        self.dashboard.add_widgets(cw.AlarmStatusWidget(title="Alarms", alarms=self.alarms, width=24))

    # ------------------------------------------------------------------ rows

    def _search_and_answer(self) -> None:
        metric = self._metric
        for what, prefix, stages in (
            ("Search", METRIC_SEARCH_LATENCY, SEARCH_STAGES),
            ("Answer", METRIC_ANSWER_LATENCY, ANSWER_STAGES),
        ):
            for step in stages:
                budget = STAGE_BUDGETS_MS.get(step) if what == "Search" else None
                self.dashboard.add_widgets(
                    cw.GraphWidget(
                        title=f"{what} latency: {step} (ms)",
                        left=[metric(f"{prefix}{step}", stat) for stat in ("p50", "p95", "p99")],
                        left_annotations=[cw.HorizontalAnnotation(value=budget, label=f"p95 budget {budget} ms")]
                        if budget
                        else None,
                        width=8,
                    )
                )
        bypassed = (
            f"SEARCH('{{{METRICS_NAMESPACE},reason,service,stage}} "
            f'MetricName="{METRIC_GATE_BYPASSED}" stage="{self._stage}"\', \'Sum\', 60)'
        )
        self.dashboard.add_widgets(
            cw.GraphWidget(
                title="LLM gate",
                left=[
                    cw.MathExpression(expression=bypassed, label="bypassed, by reason", period=PERIOD),
                    metric(METRIC_GATE_FILTERED),
                ],
                width=12,
            ),
            cw.GraphWidget(title="Results returned", left=[metric(METRIC_RESULTS_RETURNED, "Average")], width=12),
        )
        rerank_degraded = (
            f"SEARCH('{{{METRICS_NAMESPACE},reason,service,stage}} "
            f'MetricName="{METRIC_RERANK_DEGRADED}" stage="{self._stage}"\', \'Sum\', 60)'
        )
        self.dashboard.add_widgets(
            cw.GraphWidget(
                title="Degraded searches (fallbacks taken), rerank degraded by mode",
                left=[metric(METRIC_DEGRADED).with_(label="fallbacks")],
                right=[cw.MathExpression(expression=rerank_degraded, label="rerank degraded, by mode", period=PERIOD)],
                width=12,
            ),
            cw.GraphWidget(
                title="Embedding cache hits", left=[metric(METRIC_EMBEDDING_CACHE_HITS).with_(label="hits")], width=12
            ),
        )
        self._alarm(
            "SearchLatencyP95",
            "search-latency-p95",
            metric(f"{METRIC_SEARCH_LATENCY}Total", "p95"),
            LATENCY_ALARM_P95_MS,
            f"p95 end-to-end search latency above its {LATENCY_ALARM_P95_MS} ms budget",
            periods=(3, 5),
        )
        for step, budget in STAGE_BUDGETS_MS.items():
            if step == "Total":
                continue
            self._alarm(
                f"SearchLatency{step}P95",
                f"search-latency-{step.lower()}-p95",
                metric(f"{METRIC_SEARCH_LATENCY}{step}", "p95"),
                budget,
                f"p95 search latency of the {step} stage above its {budget} ms budget",
                periods=(3, 5),
            )

    def _ingestion(self, queue: sqs.IQueue, dlq: sqs.IQueue) -> None:
        metric = self._metric
        age = queue.metric_approximate_age_of_oldest_message(period=PERIOD, statistic="Maximum")
        depth = dlq.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum")
        self.dashboard.add_widgets(
            cw.GraphWidget(
                title="Ingestion",
                left=[
                    metric(METRIC_INGEST_SUCCEEDED),
                    metric(METRIC_INGEST_FAILED),
                    metric(METRIC_OBSERVATIONS_CREATED),
                    metric(METRIC_OBSERVATIONS_REDACTED),
                ],
                width=12,
            ),
            cw.GraphWidget(
                title="Ingest queue: oldest message (s), dead letters",
                left=[age.with_(label="oldest (s)")],
                right=[depth.with_(label="DLQ depth")],
                width=12,
            ),
        )
        self._alarm(
            "DeadLetters",
            "dead-letters",
            depth,
            0,
            "An observation could not be ingested and reached the dead-letter queue",
        )
        self._alarm(
            "QueueAge",
            "ingest-queue-age",
            age,
            QUEUE_AGE_ALARM_S,
            f"The oldest message waiting for ingestion is over {QUEUE_AGE_ALARM_S // 60} minutes old",
            periods=(3, 3),
        )

    def _api(self, rest_api: apigw.RestApi) -> None:
        errors = cw.MathExpression(
            expression="100 * errors / MAX([requests, 1])",
            using_metrics={
                "errors": rest_api.metric_server_error(period=PERIOD, statistic="Sum"),
                "requests": rest_api.metric_count(period=PERIOD, statistic="Sum"),
            },
            period=PERIOD,
            label="5xx rate (%)",
        )
        latency = rest_api.metric_latency(period=PERIOD, statistic="p95")
        self.dashboard.add_widgets(
            cw.GraphWidget(title="API: 5xx rate (%)", left=[errors], width=12),
            cw.GraphWidget(title="API: latency p95 (ms)", left=[latency], width=12),
        )
        self._alarm(
            "ServerErrorRate",
            "server-error-rate",
            errors,
            1,
            "More than 1% of API requests answered 5xx",
            periods=(3, 5),
        )
        self._alarm(
            "ApiLatencyP95",
            "api-latency-p95",
            latency,
            API_LATENCY_ALARM_P95_MS,
            f"p95 API latency (every route, answers included) above {API_LATENCY_ALARM_P95_MS} ms",
            periods=(3, 5),
        )

    def _mcp(self) -> None:
        """Agents' tool calls over /mcp, and the tool errors by code (a not_found is an agent's
        wrong id; internal_error or unavailable is ours)."""
        errors = (
            f"SEARCH('{{{METRICS_NAMESPACE},reason,service,stage}} "
            f'MetricName="{METRIC_MCP_TOOL_ERRORS}" stage="{self._stage}"\', \'Sum\', 60)'
        )
        self.dashboard.add_widgets(
            cw.GraphWidget(
                title="MCP (/mcp): tool calls, tool errors by code",
                left=[self._metric(METRIC_MCP_TOOL_CALLS).with_(label="tool calls")],
                right=[cw.MathExpression(expression=errors, label="tool errors, by code", period=PERIOD)],
                width=24,
            )
        )

    def _functions(self, functions: dict[str, lambda_.Function]) -> None:
        errors, throttles = [], []
        for name, function in sorted(functions.items()):
            error = function.metric_errors(period=PERIOD, statistic="Sum")
            throttle = function.metric_throttles(period=PERIOD, statistic="Sum")
            errors.append(error.with_(label=name))
            throttles.append(throttle.with_(label=name))
            self._alarm(
                f"{name.title()}Errors", f"{name}-errors", error, 0, f"The {name} function failed (uncaught error)"
            )
            self._alarm(
                f"{name.title()}Throttles", f"{name}-throttles", throttle, 0, f"The {name} function was throttled"
            )
        self.dashboard.add_widgets(
            cw.GraphWidget(title="Function errors", left=errors, width=12),
            cw.GraphWidget(title="Function throttles", left=throttles, width=12),
        )

    def _domain(self, domain: opensearch.Domain, storage_gb: int) -> None:
        red = domain.metric_cluster_status_red(period=PERIOD, statistic="Maximum")
        yellow = domain.metric_cluster_status_yellow(period=PERIOD, statistic="Maximum")
        free_mb = domain.metric_free_storage_space(period=PERIOD, statistic="Minimum")
        jvm = domain.metric_jvm_memory_pressure(period=PERIOD, statistic="Maximum")
        breaker = domain.metric("KNNCircuitBreakerTriggered", period=PERIOD, statistic="Maximum")
        snapshots = domain.metric_automated_snapshot_failure(period=PERIOD, statistic="Maximum")
        cpu = domain.metric_cpu_utilization(period=PERIOD, statistic="Maximum")
        self.dashboard.add_widgets(
            cw.GraphWidget(
                title="OpenSearch: cluster status, k-NN breaker, snapshots",
                left=[red.with_(label="red"), yellow.with_(label="yellow"), breaker, snapshots],
                width=8,
            ),
            cw.GraphWidget(title="OpenSearch: free storage (MB)", left=[free_mb], width=8),
            cw.GraphWidget(title="OpenSearch: JVM memory pressure, CPU (%)", left=[jvm, cpu], width=8),
        )
        # Thresholds are AWS's recommended alarms for OpenSearch Service.
        self._alarm("ClusterRed", "cluster-red", red, 1, "A primary shard is unassigned: data is unavailable", AT_LEAST)
        self._alarm("ClusterYellow", "cluster-yellow", yellow, 1, "A replica shard is unassigned", AT_LEAST)
        storage_floor_mb = storage_gb * 1024 // 5
        self._alarm(
            "FreeStorage",
            "free-storage",
            free_mb,
            storage_floor_mb,
            f"A data node has {storage_floor_mb} MB (20%) or less of free storage",
            AT_MOST,
        )
        self._alarm(
            "JvmMemoryPressure",
            "jvm-memory-pressure",
            jvm,
            95,
            "JVM memory pressure at 95% or more: the node risks out-of-memory errors",
            AT_LEAST,
            periods=(3, 3),
        )
        self._alarm(
            "KnnCircuitBreaker",
            "knn-circuit-breaker",
            breaker,
            1,
            "The k-NN circuit breaker tripped: vector searches fail until graph memory is freed",
            AT_LEAST,
        )
        self._alarm("SnapshotFailure", "snapshot-failure", snapshots, 1, "An automated snapshot failed", AT_LEAST)

    # ------------------------------------------------------------------ helpers

    def _alarm(
        self,
        construct_id: str,
        name: str,
        metric: cw.IMetric,
        threshold: float,
        description: str,
        comparison: cw.ComparisonOperator = ABOVE,
        periods: tuple[int, int] = (1, 1),
    ) -> None:
        """An alarm on ``metric`` that notifies the topic when it fires and when it clears;
        ``periods`` is (datapoints to alarm, evaluation periods)."""
        datapoints, evaluation = periods
        alarm = cw.Alarm(
            self,
            construct_id,
            alarm_name=physical_name(self._stage, name),
            metric=metric,
            threshold=threshold,
            evaluation_periods=evaluation,
            datapoints_to_alarm=datapoints,
            comparison_operator=comparison,
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            alarm_description=description,
        )
        action = cw_actions.SnsAction(self.topic)
        alarm.add_alarm_action(action)
        alarm.add_ok_action(action)
        self.alarms.append(alarm)

    def _metric(self, name: str, statistic: str = "Sum") -> cw.Metric:
        return cw.Metric(
            namespace=METRICS_NAMESPACE,
            metric_name=name,
            dimensions_map={"service": SERVICE_NAME, "stage": self._stage},
            statistic=statistic,
            period=PERIOD,
        )
