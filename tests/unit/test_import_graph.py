"""No import cycle in the package: the graph of its modules' imports of each other, read from the
source (``infra/layer_contents.imports_of``). Imports under ``if TYPE_CHECKING:`` never run and
are left out; a package's ``__init__`` that runs before its submodules is not an edge."""

from __future__ import annotations

from infra.layer_contents import FUNCTIONS, ROOT, all_modules, handler_files, imports_of, module_file


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
    "answer", "audit", "auth", "domain", "engineering", "ingest", "models", "providers", "redaction",
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


# The package's top-level folders and modules by floor, lowest first (CONTRIBUTING, "The floors"): a
# module imports from its own floor and the floors below. ``functions/`` and ``infra/`` stand on top.
FLOORS: tuple[frozenset[str], ...] = (
    # the models, the domain's rules and the modules everything uses (errors, the clock, the operations)
    frozenset({"models", "domain", "clock", "errors", "json_input", "bad_input", "observability", "audit_actions",
               "operations", "__init__"}),
    frozenset({"trust", "settings", "stores", "providers", "auth", "audit"}),
    frozenset({"redaction", "ingest", "search", "engineering", "answer"}),
    frozenset({"use_cases"}),
    frozenset({"service", "wiring", "runtime"}),
    frozenset({"api", "agent_tools"}),
    frozenset({"local", "functions", "infra"}),
)  # fmt: skip


def _part(module: str) -> str:
    """The top-level folder (or module) of a ``neural_memory`` module: ``stores`` for ``neural_memory.stores.base``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _floor(part: str) -> int:
    return next(i for i, floor in enumerate(FLOORS) if part in floor)


def _edges() -> set[tuple[str, str, str, str]]:
    """(importing file or module, its part, imported module, its part) over the package, the
    handlers and infra, function-level imports included (TYPE_CHECKING ones are not imports)."""
    found = set()
    for module in all_modules():
        path = module_file(module)
        assert path is not None
        found |= {(module, _part(module), m, _part(m)) for m in imports_of(path) if _part(m) != _part(module)}
    outside = [*handler_files(), *sorted((ROOT / "infra").rglob("*.py"))]
    for path in outside:
        name = str(path.relative_to(ROOT))
        part = "functions" if path.is_relative_to(FUNCTIONS) else "infra"
        found |= {(name, part, m, _part(m)) for m in imports_of(path)}
    return found


def test_every_part_of_the_package_is_on_a_floor() -> None:
    parts = {_part(m) for m in all_modules()}
    assert parts - set().union(*FLOORS) == set()


def test_imports_go_down_the_floors() -> None:
    upward = sorted(f"{src} -> {dst}" for src, part, dst, other in _edges() if _floor(other) > _floor(part))
    assert upward == []  # issue 59 allowed 8 (there were 23): none is needed


def test_no_two_parts_of_the_package_import_each_other() -> None:
    pairs = {(part, other) for _, part, _, other in _edges()}
    assert sorted((a, b) for a, b in pairs if (b, a) in pairs and a < b) == []


def test_stores_and_settings_import_no_search_ingest_or_redaction() -> None:
    # The domain they need is on the ground floor (``domain/``); the flows above them stay above.
    leaks = sorted(
        f"{src} -> {dst}"
        for src, part, dst, other in _edges()
        if part in {"stores", "settings"} and other in {"search", "ingest", "redaction"}
    )
    assert leaks == []


# What a handler may import of the package: the facade and its singletons, the models and the
# operations they serve (the API's contract), the observability and the adapters that shape a reply
# (api/): the rest is reached through the facade.
HANDLERS_MAY_IMPORT = frozenset({"service", "runtime", "models", "operations", "observability", "api"})


def test_handlers_import_only_the_facade_models_observability_and_the_adapters() -> None:
    taken = {
        f"{path.parent.name}: {module}"
        for path in handler_files()
        for module in imports_of(path, module_level_only=False)
        if module != "neural_memory" and _part(module) not in HANDLERS_MAY_IMPORT
    }
    assert taken == set()


def test_the_rules_see_what_they_check() -> None:
    # The walk reads the handlers and infra: a rule over an empty graph would pass for nothing.
    edges = _edges()
    assert any(part == "functions" for _, part, _, _ in edges)
    assert any(part == "infra" for _, part, _, _ in edges)
