"""Synthesise the stack once per stage; the layer asset is a placeholder (bundling skipped)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "1")
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")

if TYPE_CHECKING:
    from collections.abc import Callable

    from aws_cdk.assertions import Template


def _template(stage: str, tmp: pytest.TempPathFactory, context: dict[str, str] | None = None) -> Template:
    from aws_cdk.assertions import Template

    from infra.app import build_app

    layer = tmp.mktemp(f"layer-{stage}")
    (layer / "python").mkdir()
    (layer / "python" / "placeholder.txt").write_text("the real layer is built by `make build`")
    os.environ["CDK_OUTDIR"] = str(tmp.mktemp(f"cdk-{stage}"))
    app = build_app(stage=stage, layer_dir=str(layer), context=context)
    app.synth()  # runs cdk-nag: raises on any unacknowledged finding
    return Template.from_stack(app.node.find_child(f"NeuralMemory-{stage}"))  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Template:
    return _template("dev", tmp_path_factory)


@pytest.fixture(scope="session")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, dict[str, str]], Template]:
    """The template of a stage synthesized with extra CDK context (``-c key=value``)."""
    return lambda stage, context: _template(stage, tmp_path_factory, context)


@pytest.fixture(scope="session")
def prod(tmp_path_factory: pytest.TempPathFactory) -> Template:
    return _template("prod", tmp_path_factory)


@pytest.fixture(scope="session")
def agents(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """The dev template of a stack whose routing table lets the agents of three workspaces write
    (names with '.', '_' and '-', which output ids and export names cannot all hold)."""
    routes = {
        "neural-memory:acme": "acme",
        "neural-memory:beta.team": "beta.team",
        "neural-memory:c_d-e": "c_d-e",
        "github:acme/console": "acme",
    }
    return _template("dev", tmp_path_factory, {"ingest_routes": json.dumps(routes)})
