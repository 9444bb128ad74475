"""The public surface: a sorted __all__, private modules, no work at import."""

from __future__ import annotations

import subprocess
import sys

import commonplace
import commonplace.errors


def test_all_is_sorted_and_complete() -> None:
    assert commonplace.__all__ == sorted(commonplace.__all__)
    for name in commonplace.__all__:
        assert hasattr(commonplace, name), name
    public = {n for n in vars(commonplace) if not n.startswith("_")}
    modules = {
        "embedders",
        "errors",
        "hookspecs",
        "lifecycle",
        "progress",
        "read",
        "stores",
        "testing",
        "validation",
        "write",
    }
    assert public - set(commonplace.__all__) - modules == set()


def test_errors_all_is_sorted_and_every_error_derives_from_the_base() -> None:
    names = commonplace.errors.__all__
    assert names == sorted(names)
    for name in names:
        assert issubclass(getattr(commonplace.errors, name), commonplace.errors.CommonplaceError)
    for name in names:  # the hierarchy is drawn in the module docstring
        assert name in (commonplace.errors.__doc__ or "")


def test_import_loads_no_framework_and_builds_nothing() -> None:
    code = (
        "import sys, commonplace, commonplace._tokens as t\n"
        "banned = [m for m in sys.modules if m.split('.')[0] in "
        "('langchain_core', 'langgraph', 'llama_index', 'weaviate', 'torch', 'pluggy_manager')]\n"
        "assert not banned, banned\n"
        "assert t.cl100k_base.cache_info().currsize == 0, 'encoding built at import'\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_every_public_subpackage_has_a_sorted_complete_all() -> None:
    import importlib

    for name in ("embedders", "lifecycle", "progress", "read", "stores", "validation", "write"):
        module = importlib.import_module(f"commonplace.{name}")
        assert module.__all__ == sorted(module.__all__), name
        for exported in module.__all__:
            assert hasattr(module, exported), f"commonplace.{name}.{exported}"


def test_nothing_outside_the_core_imports_its_private_modules() -> None:
    """Integrations and the bench use the core's public API only (langchain partner
    packages' rule): a private module may change under them in any release."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    private = re.compile(r"^\s*(?:from|import)\s+commonplace\._", re.MULTILINE)
    sources = [
        *sorted((root / "integrations").glob("*/src/**/*.py")),
        *sorted((root / "packages" / "commonplace-bench" / "src").glob("**/*.py")),
    ]
    assert len(sources) > 20  # the scan saw the packages
    offenders = [str(p.relative_to(root)) for p in sources if private.search(p.read_text())]
    assert offenders == []
