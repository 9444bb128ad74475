"""No class of the core has more than 25 public members: a class that does more is split by
what it does (the ``Store`` is the records; ``store.books``, ``store.erasure``,
``store.links`` and ``store.embedding`` keep the rest).

Members are read from the sources with :mod:`ast`: public methods and properties, class
attributes and dataclass fields, and the public attributes ``__init__`` sets.
"""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "packages" / "commonplace" / "src" / "commonplace"
MOST = 25
# The user's two front doors, wide on purpose: Memory is the whole public API (each verb and
# its async twin), Config one field per setting. Neither holds logic a split would clarify.
FRONT_DOORS = {"_memory.py::Memory", "_config.py::Config"}


def public_members(cls: ast.ClassDef) -> set[str]:
    names: set[str] = set()
    for item in cls.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            if not item.name.startswith("_"):
                names.add(item.name)
            if item.name == "__init__":
                for node in ast.walk(item):
                    targets = (
                        node.targets
                        if isinstance(node, ast.Assign)
                        else [node.target]
                        if isinstance(node, ast.AnnAssign)
                        else []
                    )
                    names |= {
                        t.attr
                        for t in targets
                        if isinstance(t, ast.Attribute)
                        and isinstance(t.value, ast.Name)
                        and t.value.id == "self"
                        and not t.attr.startswith("_")
                    }
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
        elif isinstance(item, ast.Assign):
            names |= {t.id for t in item.targets if isinstance(t, ast.Name)}
    return {n for n in names if not n.startswith("_")}


def class_sizes(root: Path) -> dict[str, int]:
    sizes = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                sizes[f"{path.relative_to(root)}::{node.name}"] = len(public_members(node))
    return sizes


def test_no_class_of_the_core_passes_25_public_members() -> None:
    sizes = class_sizes(CORE)
    assert "stores/_store.py::Store" in sizes  # it reads the real tree
    wide = {name: n for name, n in sizes.items() if n > MOST and name not in FRONT_DOORS}
    assert not wide, (
        f"classes with more than {MOST} public members: {wide}; split each by what it does "
        "(as Store keeps its bookkeeping in store.books)"
    )


def test_a_wide_class_is_counted_whole(tmp_path: Path) -> None:
    methods = "".join(f"    def m{i}(self) -> None: ...\n" for i in range(20))
    (tmp_path / "wide.py").write_text(
        "class Wide:\n"
        "    size: int\n"
        "    LIMIT = 3\n"
        "    def __init__(self) -> None:\n"
        "        self.a = 1\n"
        "        self._b = 2\n"
        "        self.c: int = 3\n"
        "    def _private(self) -> None: ...\n"
        "    @property\n"
        "    def shown(self) -> int: return 1\n" + methods,
        encoding="utf-8",
    )
    # size, LIMIT, a, c, shown and the twenty methods; not _b, _private or __init__
    assert class_sizes(tmp_path) == {"wide.py::Wide": 25}
