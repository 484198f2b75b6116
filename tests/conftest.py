"""Shared fixtures: events from events/, a Lambda context, a real local model, a service on a
temporary SQLite store, and metrics reset after every test."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "NeuralMemoryTest")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "neural-memory-test")

from neural_memory.local.gateway import LocalLambdaContext
from neural_memory.observability import metrics
from neural_memory.service import Service, set_service
from neural_memory.settings import Settings
from neural_memory.stores.sqlite import SqliteStore

if TYPE_CHECKING:
    from collections.abc import Iterator

    from neural_memory.embeddings.onnx_local import OnnxLocalEmbedder

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ROOT / "events"
NOW = datetime(2025, 12, 14, 12, 0, tzinfo=UTC)


def load_event(name: str) -> dict[str, Any]:
    """A sample event from ``events/`` (e.g. ``api/search_post``)."""
    event: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text())
    return event


def api_event(name: str, body: Any = None, workspace: str | None = "acme", **overrides: Any) -> dict[str, Any]:
    """A sample API Gateway event with another body or workspace (the rest as recorded)."""
    event = load_event(name)
    if body is not None:
        event["body"] = body if isinstance(body, str) else json.dumps(body)
    if workspace is None:
        event["requestContext"].pop("authorizer", None)
    else:
        event["requestContext"]["authorizer"]["workspaceId"] = workspace
    event.update(overrides)
    return event


@pytest.fixture
def lambda_context() -> LocalLambdaContext:
    return LocalLambdaContext(function_name="test", aws_request_id="req-test")


@pytest.fixture(autouse=True)
def _reset_metrics() -> Iterator[None]:
    yield
    metrics.clear_metrics()


@pytest.fixture(scope="session")
def embedder() -> OnnxLocalEmbedder:
    """The real local model, loaded once per test session."""
    from neural_memory.embeddings.onnx_local import OnnxLocalEmbedder

    model = OnnxLocalEmbedder()
    model.load()
    return model


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path)


@pytest.fixture
def service(settings: Settings, embedder: OnnxLocalEmbedder) -> Iterator[Service]:
    """A service over a fresh SQLite file with the real model, installed for the handlers."""
    store = SqliteStore(settings.sqlite_path)
    svc = Service(store, embedder, settings, clock=lambda: NOW)
    set_service(svc)
    yield svc
    set_service(None)
    store.close()
