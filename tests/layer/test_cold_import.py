"""Every handler imports from its asset and the layer alone (as in Lambda), loading no provider SDK,
no X-Ray recorder and nothing of the embedded store. Timing lives in ``bench/cold_import.py``."""

from __future__ import annotations

import compileall
from typing import TYPE_CHECKING

import pytest

from bench.cold_import import HANDLERS, ROOT, import_once

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize("name", HANDLERS)
def test_the_handler_imports_from_its_asset_and_the_layer_alone(name: str, host_layer: Path, runtime: Path) -> None:
    compileall.compile_dir(host_layer, quiet=1, workers=0)
    _, heavy = import_once(ROOT / "functions" / name, host_layer, runtime)
    assert heavy == [], f"{name} loads {heavy} at import"
