"""Layers built from the lock (once per session; the locked wheels are cached under .build/)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from infra.layer_build import build_layer, build_runtime

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="session")
def lambda_layer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_layer("lambda", tmp_path_factory.mktemp("lambda-layer"))


@pytest.fixture(scope="session")
def host_layer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_layer("host", tmp_path_factory.mktemp("host-layer"))


@pytest.fixture(scope="session")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_runtime(tmp_path_factory.mktemp("runtime") / "runtime")
