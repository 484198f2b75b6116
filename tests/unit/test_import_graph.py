"""No import cycle in the package: the graph of its modules' imports of each other, read from the
source (``infra/layer_contents.imports_of``). Imports under ``if TYPE_CHECKING:`` never run and
are left out; a package's ``__init__`` that runs before its submodules is not an edge."""

from __future__ import annotations

from infra.layer_contents import all_modules, imports_of, module_file


def _graph(*, module_level_only: bool) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module in all_modules():
        path = module_file(module)
        assert path is not None
        imported = imports_of(path, module_level_only=module_level_only)
        parents = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        # ``from pkg import x`` names pkg as well as pkg.x: pkg runs first either way, so a
        # package is an edge only where its own names are imported (x is not a module).
        graph[module] = {m for m in imported if m != module and m not in parents}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_among_module_level_imports() -> None:
    assert _cycles(_graph(module_level_only=True)) == []


def test_no_import_cycle_even_through_function_level_imports() -> None:
    # Stricter: the factories' and singletons' imports inside functions count too, so a port
    # never imports its backends' factory back (the old keys <-> stores <-> *_keys loop).
    assert _cycles(_graph(module_level_only=False)) == []


# The folders by role below ``use_cases/``: they are given what they need, never the facade.
BELOW_USE_CASES = (
    "answer", "audit", "auth", "engineering", "history", "ingest", "models", "providers", "redaction",
    "search", "stores", "trust",
)  # fmt: skip


def test_nothing_below_use_cases_imports_the_service() -> None:
    """Type-only imports count too: a module that names ``Service`` is written against the facade."""
    root = module_file("neural_memory.service")
    assert root is not None
    package = root.parent
    taking = {
        str(path.relative_to(package))
        for folder in BELOW_USE_CASES
        for path in sorted((package / folder).rglob("*.py"))
        if "neural_memory.service" in path.read_text()
    }
    assert taking == set()
