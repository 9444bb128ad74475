"""The adapter's public surface: a sorted __all__, private modules, no work at import."""

from __future__ import annotations

import subprocess
import sys

import commonplace_langgraph


def test_all_is_sorted_and_complete() -> None:
    names = commonplace_langgraph.__all__
    assert names == sorted(names)
    for name in names:
        assert hasattr(commonplace_langgraph, name), name
    public = {n for n in vars(commonplace_langgraph) if not n.startswith("_")}
    assert public == set(names) - {"__version__"}


def test_import_opens_nothing_and_starts_nothing() -> None:
    code = (
        "import gc, sqlite3, threading\n"
        "before = threading.active_count()\n"
        "import commonplace_langgraph\n"
        "assert threading.active_count() == before, 'a thread was started at import'\n"
        "assert not [o for o in gc.get_objects() if isinstance(o, sqlite3.Connection)]\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
