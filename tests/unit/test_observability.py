"""Every metric carries the dimensions the dashboards and alarms read: service and stage; and
log lines carry their own invocation's keys when invocations run at once on threads."""

from __future__ import annotations

import io
import json
import logging
import threading
from typing import TYPE_CHECKING, Any

from neural_memory.observability import METRIC_RESULTS_RETURNED, logger, metrics, record_count

if TYPE_CHECKING:
    import pytest


def test_metrics_carry_service_and_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)  # the CLI's tests turn metrics off
    record_count(METRIC_RESULTS_RETURNED, 3)
    emf: dict[str, Any] = dict(metrics.serialize_metric_set())
    (directive,) = emf["_aws"]["CloudWatchMetrics"]
    assert set(directive["Dimensions"][0]) == {"service", "stage"}
    assert emf["stage"] == "local"


def test_keys_appended_by_concurrent_invocations_stay_with_their_own_log_lines() -> None:
    # Given three threads that each append their request id (as inject_lambda_context does), then
    # log once the others have appended theirs
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    logger.addHandler(handler)
    appended = threading.Barrier(3, timeout=5)

    def invocation(n: int) -> None:
        logger.append_keys(function_request_id=f"req-{n}")
        appended.wait()
        logger.info("handled", extra={"n": n})

    threads = [threading.Thread(target=invocation, args=(n,)) for n in range(3)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        logger.handlers.remove(handler)
    # Then each line names its own request, and the service's own keys are on every line
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert sorted((line["n"], line["function_request_id"]) for line in lines) == [(n, f"req-{n}") for n in range(3)]
    assert len({line["service"] for line in lines}) == 1 and lines[0]["service"].startswith("neural-memory")
