"""Shared fixtures: a Lambda context, a real local model, a service on a temporary SQLite store,
and metrics and the environment reset after every test. Helpers that tests import live in
``tests/helpers``."""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

import pytest

# A suite started in the background (`make test &`, a runner that starts it so) has SIGINT ignored,
# and every process it starts inherits that: a `serve` the tests stop as Ctrl-C does would never
# stop (killed after 60 s, its WAL left behind). Ctrl-C means what it means in a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "NeuralMemoryTest")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "neural-memory-test")

from neural_memory.local.serving.gateway import LocalLambdaContext
from neural_memory.observability import metrics
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.events import NOW

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder


@pytest.fixture
def lambda_context() -> LocalLambdaContext:
    return LocalLambdaContext(function_name="test", aws_request_id="req-test")


@pytest.fixture(autouse=True)
def _reset_metrics() -> Iterator[None]:
    yield
    metrics.clear_metrics()


@pytest.fixture(autouse=True)
def _restore_environment() -> Iterator[None]:
    """The CLI's ``main`` sets process-wide variables, as a program may (POWERTOOLS_METRICS_DISABLED,
    BLAS threads): a test that calls it in process must not leave them to the tests after it."""
    saved = dict(os.environ)
    yield
    if os.environ != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="session")
def embedder() -> OnnxLocalEmbedder:
    """The real local model, loaded once per test session."""
    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

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
