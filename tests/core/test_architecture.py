"""The core's modules import one way: no import cycle, so the folders draw its layers.

From the bottom: the plain modules (``_records``, ``_scope``, ``errors``, ``_text``,
``_config`` ...), then ``embedders/``, ``stores/``, then ``write/``, ``read/`` and
``lifecycle/``, and at the top ``_plugins``, ``_reembed``, ``_memory`` and the CLI. A
module only imports modules below it, so each can be read, tested and changed knowing
nothing of what stands above it.

Two graphs are read from the sources with :mod:`ast` (nothing is imported), and neither
may have a cycle:

* **what a module uses**: its imports at every level, those inside functions included
  (they run on the first call, and are a dependency all the same); an import under
  ``if TYPE_CHECKING:`` does not count (it never runs: annotations only). A package is its
  ``__init__``, so ``from commonplace.stores import Store`` uses ``stores/__init__.py``,
  and ``from commonplace.stores._store import Store`` uses only ``stores/_store.py``.
* **what importing a module runs**: its module-level imports, plus the ``__init__`` of each
  package Python enters on the way (``import commonplace.embedders._protocol`` runs
  ``embedders/__init__.py`` first), except the module's own packages, already running. A
  cycle here is an import that finds a module half-initialised, or works only in one
  order. It is why ``commonplace.embedders`` imports ``reembed``, which stands above the
  stores, on first use only.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "packages" / "commonplace" / "src" / "commonplace"

HOW_TO_CUT = (
    "cut one arrow: move the function or type to the layer it belongs to, import the "
    "private module (`from ..embedders._protocol import Embedder`) rather than the "
    "package, import under `if TYPE_CHECKING:` what only annotations use, or pass the "
    "dependency in as a parameter"
)

# An edge: the imported module -> where the import is ("path:line", and why it counts).
Graph = dict[str, dict[str, str]]


def modules(root: Path) -> dict[str, Path]:
    """Each module of the package at ``root`` by its dotted name; a package is its
    ``__init__.py``."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(
    node: ast.AST, *, in_function: bool = False
) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import under ``node`` that can run, and whether it is inside a function."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for branch in child.orelse:  # the `else:` of TYPE_CHECKING runs
                yield from _imports_of(branch, in_function)
        else:
            yield from _imports_of(child, in_function)


def _imports_of(
    node: ast.AST, in_function: bool
) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node, in_function
    inside = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
    yield from _imports(node, in_function=inside)


def _targets(
    node: ast.Import | ast.ImportFrom, name: str, is_package: bool, known: dict[str, Path]
) -> list[str]:
    """The modules an import names, relative ones resolved: ``from pkg import x`` names
    the submodule ``pkg.x`` when there is one, else ``pkg`` itself."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = name.split(".") if is_package else name.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, *([node.module] if node.module else [])])
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]


def import_graph(root: Path, *, when_imported: bool = False) -> Graph:
    """What each module of the package at ``root`` uses (``when_imported``: what importing
    it runs); see the module docstring. Only the package's own modules are nodes."""
    known = modules(root)
    graph: Graph = {}
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        edges = graph.setdefault(name, {})
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, in_function in _imports(tree):
            if when_imported and in_function:
                continue
            where = f"{path.relative_to(root.parent).as_posix()}:{node.lineno}"
            for target in _targets(node, name, is_package, known):
                if target not in known:
                    continue
                edges.setdefault(target, where + (", in a function" if in_function else ""))
                if not when_imported:
                    continue
                parts = target.split(".")
                for i in range(len(parts) - 1, 0, -1):  # the packages entered on the way
                    package = ".".join(parts[:i])
                    if package in known and not (name + ".").startswith(package + "."):
                        edges.setdefault(package, f"{where}, runs it to import {target}")
        edges.pop(name, None)  # `from . import x` in a package's __init__
    return graph


def cycles(graph: Graph) -> list[list[str]]:
    """Each strongly connected component of more than one module (modules that import
    each other in a circle), sorted, found by Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, {})):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components)


def way_round(graph: Graph, component: list[str]) -> list[str]:
    """The shortest path from a component's first module back to itself: ``[a, b, c, a]``."""
    start, members = component[0], set(component)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(graph[node]):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if nxt in members and nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    raise AssertionError(f"{component} is no cycle")  # pragma: no cover


def describe(graph: Graph, component: list[str]) -> str:
    """``a → b → c → a`` round the component, then each arrow with the line drawing it."""
    cycle = way_round(graph, component)
    arrows = [f"  {a} → {b}  ({graph[a][b]})" for a, b in pairwise(cycle)]
    return (
        f"{len(component)} modules in a circle, one way round: "
        + " → ".join(cycle)
        + "\n"
        + "\n".join(arrows)
    )


def assert_acyclic(root: Path, *, when_imported: bool = False) -> None:
    graph = import_graph(root, when_imported=when_imported)
    found = cycles(graph)
    what = " when imported (a package's __init__ runs first)" if when_imported else ""
    assert not found, f"import cycle in {root.name}{what}; {HOW_TO_CUT}:\n" + "\n".join(
        describe(graph, component) for component in found
    )


def test_the_core_imports_one_way() -> None:
    graph = import_graph(CORE)
    assert len(graph) > 80  # the scan saw the package
    assert "commonplace.stores._store" in graph["commonplace.stores"]
    assert_acyclic(CORE)


def test_importing_any_module_of_the_core_runs_no_cycle() -> None:
    graph = import_graph(CORE, when_imported=True)
    # entering a package runs its __init__: embedders' before any of its modules
    assert "commonplace.embedders" in graph["commonplace.stores._protocol"]
    assert_acyclic(CORE, when_imported=True)


# -- the check itself, on made-up packages ------------------------------------------------


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def test_a_two_module_cycle_fails_with_the_way_round(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from . import b\n",
            "b.py": "def f():\n    from .a import g\n",  # inside a function: counts
        },
    )
    with pytest.raises(AssertionError) as failure:
        assert_acyclic(package)
    message = str(failure.value)
    assert "pkg.a → pkg.b → pkg.a" in message
    assert "pkg/a.py:1" in message
    assert "pkg/b.py:2, in a function" in message
    assert "move the function or type to the layer it belongs to" in message
    assert_acyclic(package, when_imported=True)  # nothing runs the function at import


def test_annotation_only_imports_and_absolute_names_are_read_right(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from pkg.high import H\n"  # never runs
                "else:\n    import os\n"
            ),
            "high.py": "import pkg.low\nfrom pkg.sub.deep import x\n",
            "sub/__init__.py": "",
            "sub/deep.py": "x = 1\n",
        },
    )
    graph = import_graph(package)
    assert graph["pkg.low"] == {}
    assert set(graph["pkg.high"]) == {"pkg.low", "pkg.sub.deep"}
    assert cycles(graph) == []


def test_a_package_init_that_imports_from_above_is_an_import_time_cycle(
    tmp_path: Path,
) -> None:
    # low/__init__ re-exports `top`, which imports low's own module: no module uses
    # another in a circle, but importing low._base runs low/__init__, which imports top
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low/__init__.py": "from ._base import B\nfrom ..top import run\n",
            "low/_base.py": "B = 1\n",
            "top.py": "from .low._base import B\n",
        },
    )
    assert_acyclic(package)
    with pytest.raises(AssertionError, match=r"pkg\.low → pkg\.top → pkg\.low\n"):
        assert_acyclic(package, when_imported=True)
