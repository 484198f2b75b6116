"""Every metric carries the dimensions the dashboards and alarms read: service and stage."""

from __future__ import annotations

from typing import Any

from neural_memory.observability import METRIC_RESULTS_RETURNED, metrics, record_count


def test_metrics_carry_service_and_stage() -> None:
    record_count(METRIC_RESULTS_RETURNED, 3)
    emf: dict[str, Any] = dict(metrics.serialize_metric_set())
    (directive,) = emf["_aws"]["CloudWatchMetrics"]
    assert set(directive["Dimensions"][0]) == {"service", "stage"}
    assert emf["stage"] == "local"
