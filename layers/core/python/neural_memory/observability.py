"""The one home of Powertools logger, tracer and metrics, metric names, and the stage timer."""

from __future__ import annotations

import functools
import logging
import os
import sys
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

R = TypeVar("R")

SERVICE_NAME = "neural-memory"
METRICS_NAMESPACE = "NeuralMemory"

# Metric names (the CDK dashboard uses the same constants).
METRIC_SEARCH_LATENCY = "SearchLatency"  # + stage suffix, e.g. SearchLatencyEmbed
METRIC_ANSWER_LATENCY = "AnswerLatency"  # + stage suffix: Total, Search, Generate
METRIC_RESULTS_RETURNED = "ResultsReturned"
METRIC_GATE_BYPASSED = "GateBypassed"
METRIC_GATE_FILTERED = "GateFiltered"
METRIC_RERANK_DEGRADED = "RerankDegraded"
METRIC_OBSERVATIONS_CREATED = "ObservationsCreated"
METRIC_OBSERVATIONS_UPDATED = "ObservationsUpdated"
METRIC_OBSERVATIONS_REDACTED = "ObservationsRedacted"  # written with a secret replaced (redaction/)
METRIC_DEGRADED = "SearchDegraded"
METRIC_EMBEDDING_CACHE_HITS = "EmbeddingCacheHits"
METRIC_INGEST_SUCCEEDED = "IngestSucceeded"
METRIC_INGEST_FAILED = "IngestFailed"
METRIC_MCP_TOOL_CALLS = "McpToolCalls"  # calls of MCP tools over /mcp
METRIC_MCP_TOOL_ERRORS = "McpToolErrors"  # by reason: the tool error's code (not_found, validation_error, ...)


class LazyTracer:
    """Powertools' ``Tracer``, built when the first traced call runs instead of at import.

    Building it imports the X-Ray SDK, whose recorder creates botocore clients for centralized
    sampling (about 0.2 s on a cold start) that Lambda never uses: Lambda samples the request
    itself. Every invocation is still traced; only the handler's import stops paying for it.
    Offers the two decorators the functions use, with Powertools' own arguments.
    """

    def __init__(self, service: str) -> None:
        self._service = service
        self._tracer: Tracer | None = None

    def _real(self) -> Tracer:
        if self._tracer is None:
            self._tracer = Tracer(service=self._service)
        return self._tracer

    def capture_lambda_handler(
        self, *, capture_response: bool | None = None, capture_error: bool | None = None
    ) -> Callable[[Callable[..., R]], Callable[..., R]]:
        """``Tracer.capture_lambda_handler``: one segment per invocation, with cold start and errors."""
        return self._deferred("capture_lambda_handler", capture_response, capture_error)

    def capture_method(
        self, *, capture_response: bool | None = None, capture_error: bool | None = None
    ) -> Callable[[Callable[..., R]], Callable[..., R]]:
        """``Tracer.capture_method``: a subsegment per call."""
        return self._deferred("capture_method", capture_response, capture_error)

    def _deferred(
        self, kind: str, capture_response: bool | None, capture_error: bool | None
    ) -> Callable[[Callable[..., R]], Callable[..., R]]:
        def decorate(function: Callable[..., R]) -> Callable[..., R]:
            traced: Callable[..., R] | None = None

            @functools.wraps(function)
            def call(*args: Any, **kwargs: Any) -> R:
                nonlocal traced
                if traced is None:
                    wrap = getattr(self._real(), kind)
                    traced = wrap(function, capture_response=capture_response, capture_error=capture_error)
                return traced(*args, **kwargs)

            return call

        return decorate


class RequestScopedFormatter(LambdaPowertoolsFormatter):
    """Powertools' JSON formatter, except that keys appended once the logger is built (what
    ``inject_lambda_context`` adds per invocation: request id, correlation id, cold start) belong
    to the thread that appended them. Lambda runs one invocation per process, so nothing changes
    there; the local server runs several handler instances at once on threads, and none may log
    another's request id."""

    def __init__(self) -> None:
        super().__init__()
        self.sealed = False

    def append_keys(self, **additional_keys: Any) -> None:
        if self.sealed:
            self.thread_safe_append_keys(**additional_keys)
        else:
            super().append_keys(**additional_keys)

    def remove_keys(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        super().remove_keys(keys)
        self.thread_safe_remove_keys(keys)


class SwitchableMetrics(Metrics):
    """Powertools' ``Metrics`` whose ``log_metrics`` decorator does nothing at all while metrics are
    disabled (``POWERTOOLS_METRICS_DISABLED``, as in every local command): Powertools' own still
    prints the cold-start EMF block and warns "No application metrics to publish" on the first call,
    which locally lands in a terminal or a command's data output. Checked per call, so a process
    that disables metrics after the handlers are imported is obeyed too."""

    def log_metrics(
        self,
        lambda_handler: Callable[..., Any] | None = None,
        capture_cold_start_metric: bool = False,
        raise_on_empty_metrics: bool = False,
        default_dimensions: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> Callable[..., Any]:
        options: dict[str, Any] = {
            "capture_cold_start_metric": capture_cold_start_metric,
            "raise_on_empty_metrics": raise_on_empty_metrics,
            "default_dimensions": default_dimensions,
            **kwargs,
        }
        if lambda_handler is None:
            return functools.partial(self.log_metrics, **options)
        handler = lambda_handler
        measured = super().log_metrics(handler, **options)

        @functools.wraps(handler)
        def call(*args: Any, **kw: Any) -> Any:
            return handler(*args, **kw) if is_metrics_disabled() else measured(*args, **kw)

        return call


# Logs go to standard error everywhere: Lambda sends both streams to CloudWatch, and a local
# command's standard output is its data (`neural-memory search --json | jq`), never a log line.
_formatter = RequestScopedFormatter()
logger = Logger(
    service=os.getenv("POWERTOOLS_SERVICE_NAME", SERVICE_NAME),
    logger_formatter=_formatter,
    logger_handler=logging.StreamHandler(sys.stderr),
)
_formatter.sealed = True  # the service's own keys are in; from now on keys are per invocation
tracer = LazyTracer(service=os.getenv("POWERTOOLS_SERVICE_NAME", SERVICE_NAME))
metrics = SwitchableMetrics(
    namespace=os.getenv("POWERTOOLS_METRICS_NAMESPACE", METRICS_NAMESPACE),
    service=os.getenv("POWERTOOLS_SERVICE_NAME", SERVICE_NAME),
)
# Dev and prod share the namespace; the stage dimension keeps their graphs and alarms apart.
metrics.set_default_dimensions(stage=os.getenv("NM_STAGE", "local"))


class StageTimer:
    """Times named pipeline stages in integer milliseconds; a stage may be entered more than once."""

    def __init__(self) -> None:
        self._start = time.perf_counter()
        self._elapsed: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Add the time spent inside the block to ``name``."""
        began = time.perf_counter()
        try:
            yield
        finally:
            self._elapsed[name] = self._elapsed.get(name, 0.0) + (time.perf_counter() - began)

    def ms(self, name: str) -> int:
        """Milliseconds spent in ``name`` (0 if it never ran), rounded to the nearest integer."""
        return round(self._elapsed.get(name, 0.0) * 1000)

    def ran(self) -> frozenset[str]:
        """The stages entered at least once."""
        return frozenset(self._elapsed)

    def total_ms(self) -> int:
        """Milliseconds since the timer was created; never less than the sum of the rounded stages."""
        total = round((time.perf_counter() - self._start) * 1000)
        return max(total, sum(self.ms(name) for name in self._elapsed))


def record_latency(metric: str, stages: Mapping[str, int]) -> None:
    """Emit one latency metric per stage (``SearchLatencyTotal``, ``SearchLatencyEmbed``, ...).
    Callers pass only the stages that ran: a 0 for a skipped stage would drag its percentiles down."""
    if is_metrics_disabled():  # Powertools would still buffer and auto-flush every 100 values
        return
    for stage, value in stages.items():
        metrics.add_metric(
            name=f"{metric}{stage[:1].upper()}{stage[1:]}",
            unit=MetricUnit.Milliseconds,
            value=value,
        )


def record_count(name: str, value: float) -> None:
    """Emit a count metric."""
    if is_metrics_disabled():
        return
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


def record_reason(name: str, reason: str) -> None:
    """Count one event with a low-cardinality ``reason`` dimension (e.g. why the gate was bypassed)."""
    if is_metrics_disabled():
        return
    with single_metric(
        name=name,
        unit=MetricUnit.Count,
        value=1,
        namespace=metrics.namespace,
        default_dimensions=metrics.default_dimensions,
    ) as metric:
        metric.add_dimension(name="reason", value=reason)
