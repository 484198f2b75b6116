"""Every metric carries the dimensions the dashboards and alarms read: service and stage."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.observability import METRIC_RESULTS_RETURNED, metrics, record_count

if TYPE_CHECKING:
    import pytest


def test_metrics_carry_service_and_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)  # the CLI's tests turn metrics off
    record_count(METRIC_RESULTS_RETURNED, 3)
    emf: dict[str, Any] = dict(metrics.serialize_metric_set())
    (directive,) = emf["_aws"]["CloudWatchMetrics"]
    assert set(directive["Dimensions"][0]) == {"service", "stage"}
    assert emf["stage"] == "local"
