"""Which modules of ``neural_memory`` the Lambda layer holds: the package minus ``local/`` (what
only runs on a developer's machine: the CLI, the local server, the MCP server, the Claude Code
hooks, the importers, the evaluation commands, the Python client) and minus ``LOCAL_ONLY`` (the
providers settings choose only off Lambda: their dependencies, numpy, onnxruntime and faiss, are not
in the layer).

The handlers' imports are walked statically (the AST of each module): every ``import
neural_memory...`` and ``from neural_memory... import ...``, at module level or inside a function
(the factories import the provider settings choose on first use), with the packages each one runs
on the way (``a/__init__.py`` for ``a.b``). Imports under ``if TYPE_CHECKING:`` never run and are
left out. ``tests/layer/test_layer_contents.py`` holds the built layer to "the package minus
``local/`` and ``LOCAL_ONLY``", checks that the handlers' walk stays inside it, and that a
``LOCAL_ONLY`` module is only ever imported inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "layers" / "core" / "python"
PACKAGE = SOURCE / "neural_memory"
FUNCTIONS = ROOT / "functions"

# Everything only a developer's machine runs: one folder.
LOCAL = "neural_memory.local"
# Providers reached only through a factory's function-level import, when settings choose them.
LOCAL_ONLY = (
    "neural_memory.stores.sqlite",  # the embedded store
    "neural_memory.auth.sqlite",
    "neural_memory.audit.sqlite",  # the embedded store's audit table
    "neural_memory.providers.embeddings.cache",  # the embedded store's vector cache (a SQLite file)
    "neural_memory.providers.embeddings.onnx_local",
    "neural_memory.providers.embeddings.local_models",  # the table of local models onnx_local runs
    "neural_memory.providers.model_download",
    "neural_memory.providers.rerank.cross_encoder",  # `rerank: local`: onnxruntime, a pulled model
)


def ships(module: str) -> bool:
    """Whether the layer holds ``module``."""
    return not module.startswith((LOCAL, *LOCAL_ONLY))


def module_file(module: str) -> Path | None:
    """The source file of ``neural_memory...`` module or package, or None when there is none."""
    base = SOURCE.joinpath(*module.split("."))
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return None


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(path: Path, *, module_level_only: bool = False) -> set[str]:
    """The ``neural_memory`` modules ``path`` imports when run (TYPE_CHECKING blocks left out;
    with ``module_level_only``, imports inside functions too)."""
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and _type_checking_only(node):
                visit(node.orelse)
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name.startswith("neural_memory"))
            elif (
                isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("neural_memory")
            ):
                module = node.module or ""
                found.add(module)
                found.update(f"{module}.{a.name}" for a in node.names if module_file(f"{module}.{a.name}"))
            if module_level_only and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            for field in ("body", "orelse", "finalbody", "handlers"):
                children = getattr(node, field, None)
                if isinstance(children, list):
                    visit([c for c in children if isinstance(c, ast.stmt | ast.ExceptHandler)])  # type: ignore[misc]

    visit(ast.parse(path.read_text(), str(path)).body)
    with_parents = set(found)
    for module in found:
        parts = module.split(".")
        with_parents.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return {m for m in with_parents if module_file(m) is not None}


def handler_files() -> list[Path]:
    return sorted(FUNCTIONS.glob("*/app.py"))


def handler_closure() -> set[str]:
    """Every ``neural_memory`` module the handlers import, transitively, short of ``LOCAL_ONLY``."""
    seen: set[str] = set()
    todo = [m for app in handler_files() for m in imports_of(app)]
    while todo:
        module = todo.pop()
        if module in seen or module.startswith(LOCAL_ONLY):
            continue
        seen.add(module)
        path = module_file(module)
        if path is not None:
            todo.extend(imports_of(path))
    return seen


def all_modules() -> set[str]:
    """Every module of the package, by name."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(SOURCE).with_suffix("").parts
        names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def layer_modules() -> set[str]:
    """The package minus ``local/`` and ``LOCAL_ONLY``."""
    return {m for m in all_modules() if ships(m)}


def layer_files() -> list[Path]:
    """The files of the package the layer copies (relative to ``PACKAGE``): ``layer_modules``,
    the data files beside them (the console's static/ folder) and ``py.typed``."""
    closure = layer_modules()
    files = [module_file(m) for m in closure]
    chosen = {p.relative_to(PACKAGE) for p in files if p is not None}
    for module in closure:
        path = module_file(module)
        if path is None or path.name != "__init__.py":
            continue
        for data in path.parent.rglob("*"):
            if data.is_file() and data.suffix not in {".py", ".pyc"} and "__pycache__" not in data.parts:
                # data in this package's own folders, not in a subpackage's (that has its own __init__)
                owner = next(p for p in data.parents if (p / "__init__.py").is_file())
                if owner == path.parent:
                    chosen.add(data.relative_to(PACKAGE))
    if (PACKAGE / "py.typed").is_file():
        chosen.add(Path("py.typed"))
    return sorted(chosen)
