"""One deployed stack for the suite: the dev template synthesized, its resources on moto (IAM
enforced) and osmem-server, its functions run from the host layer built from the lock."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest

from infra.layer_build import build_layer, build_runtime
from tests.deployed.cloud import ROUTES, DeployedStack

if TYPE_CHECKING:
    from collections.abc import Iterator

_STACKS: list[DeployedStack] = []


@pytest.fixture(scope="session")
def deployed(tmp_path_factory: pytest.TempPathFactory, osmem_server: object) -> Iterator[DeployedStack]:
    from infra.app import build_app

    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "1")
    os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
    outdir = tmp_path_factory.mktemp("cdk-deployed")
    placeholder = tmp_path_factory.mktemp("layer-asset")
    (placeholder / "python").mkdir()
    os.environ["CDK_OUTDIR"] = str(outdir)
    build_app(stage="dev", layer_dir=str(placeholder), context={"ingest_routes": json.dumps(ROUTES)}).synth()
    template = json.loads((outdir / "NeuralMemory-dev.template.json").read_text())
    layer = build_layer("host", tmp_path_factory.mktemp("host-layer"))
    runtime = build_runtime(tmp_path_factory.mktemp("runtime") / "runtime")
    clone = osmem_server.clone()  # type: ignore[attr-defined]
    stack = DeployedStack(template, outdir, layer, runtime, clone.url)
    _STACKS.append(stack)
    yield stack
    stack.close()
    clone.close()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name every function and every event the deployed-shape suite drove, and what came back."""
    for stack in _STACKS:
        terminalreporter.section("deployed shape: every function of the template, driven by its events")
        width = max(len(d.event) for d in stack.driven) if stack.driven else 10
        for driven in stack.driven:
            terminalreporter.write_line(f"{driven.function:<13} {driven.event:<{width}}  {driven.outcome}")
