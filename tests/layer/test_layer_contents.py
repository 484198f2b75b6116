"""The layer is the package minus ``local/`` and the local-only providers (``infra/layer_contents.py``),
holds everything the handlers import, transitively (a static walk of their imports, function-level
ones included), and no local-only code."""

from __future__ import annotations

from typing import TYPE_CHECKING

from infra.layer_contents import LOCAL, LOCAL_ONLY, all_modules, handler_closure, imports_of, module_file

if TYPE_CHECKING:
    from pathlib import Path

# Code for a laptop or a client, never for Lambda (numpy, onnxruntime, faiss, waitress, mcp and the
# client's own httpx use are not what the functions run): spelled out, not read from LOCAL_ONLY, so
# a module dropped from that list shows here.
LOCAL_CODE = (
    "neural_memory.local",
    "neural_memory.stores.sqlite.store",
    "neural_memory.stores.sqlite.mirror",
    "neural_memory.stores.sqlite.fts",
    "neural_memory.stores.sqlite.partitions",
    "neural_memory.stores.sqlite.lock",
    "neural_memory.auth.sqlite",
    "neural_memory.providers.embeddings.onnx_local",
    "neural_memory.providers.embeddings.local_models",
    "neural_memory.providers.rerank.cross_encoder",
    "neural_memory.providers.model_download",
)


def _layer_modules(layer: Path) -> set[str]:
    package = layer / "python"
    names = set()
    for path in (package / "neural_memory").rglob("*.py"):
        parts = path.relative_to(package).with_suffix("").parts
        names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_the_layer_is_the_package_minus_the_local_folder_and_the_local_providers(lambda_layer: Path) -> None:
    in_layer = _layer_modules(lambda_layer)
    local = {m for m in all_modules() if m.startswith((LOCAL, *LOCAL_ONLY))}
    assert in_layer == all_modules() - local
    assert handler_closure() - in_layer == set(), "the handlers import these, the layer lacks them"
    assert (lambda_layer / "python" / "neural_memory" / "api" / "console" / "static" / "index.html").is_file()


def test_the_layer_carries_no_local_only_code(lambda_layer: Path) -> None:
    carried = {m for m in _layer_modules(lambda_layer) if m.startswith(LOCAL_CODE)}
    assert carried == set()


def test_what_the_walk_stops_at_is_imported_only_lazily_and_exists() -> None:
    # A factory may name a local-only module inside a function (chosen by settings); a module-level
    # import of one would fail on Lambda, where the layer does not hold it.
    assert all(module_file(m) is not None for m in LOCAL_ONLY)
    for module in handler_closure():
        path = module_file(module)
        assert path is not None
        eager = {m for m in imports_of(path, module_level_only=True) if m.startswith(LOCAL_ONLY)}
        assert eager == set(), (module, eager)


def test_the_walk_sees_function_level_imports_and_skips_type_checking_ones() -> None:
    modules = all_modules()
    assert "neural_memory.stores.opensearch.store" in modules
    # stores/factory.py imports the OpenSearch store inside build_store only
    assert "neural_memory.stores.opensearch.store" in handler_closure()
    assert not any(m.startswith(LOCAL_CODE) for m in handler_closure())
