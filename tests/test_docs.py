"""The documentation: every public name has a docstring of its own, every Python block of
docs/ runs, and the site builds.

**Docstrings.** Each name in the ``__all__`` of ``commonplace``, of its public subpackages
and of the integrations' packages (``PUBLIC``) is documented where it is defined:

* a class or a function has a docstring of its own: for a class, a ``__doc__`` in its own
  ``__dict__`` that is neither a base class's (``object``'s, ``Protocol``'s, ``Enum``'s)
  nor the signature ``dataclasses`` writes for a class without one;
* any other value (a constant, a type alias, the ``hookimpl`` marker) has an attribute
  docstring, a string literal right after its assignment in the package that defines it
  (what the API reference shows), or is named in the docstring of the module exporting
  it. ``__version__`` is exempt: what it means is Python's convention.

**Doc blocks.** Each ```` ```python ```` block of ``docs/**/*.md`` runs with ``exec``, in a
fresh namespace and a fresh folder, with the suite's hashing embedder
(tests/conftest.py) and no ``$COMMONPLACE_URL``. The exceptions are rules, each counted:

* *hook signatures*: a block of docs/hooks.md that is only a ``@hookspec`` line and a
  ``def`` without a body is not run when that ``def`` line is the hook's exact signature,
  which tests/core/test_hooks.py checks; any other such block fails here;
* *one session*: docs/embedders.md's blocks build on each other (names, stores, and a shell
  step between them): tests/core/test_embedders_doc.py runs them in order in one namespace
  and checks what they print, so they are left to it, and this file checks that it does;
* *a Weaviate server*: a block naming a ``weaviate://`` URL runs against the suite's server
  (the ``commonplace_weaviate`` plugin), each such URL replaced by a fresh store's;
* *marked*: a block right after ``<!-- not run: REASON -->`` is not run; the reason must be
  given, and at most ``MAX_NOT_RUN`` blocks may carry one.

**The site.** ``mkdocs build --strict`` (about 7 s, offline) succeeds with no warning:
links between pages and to the repository's files, anchors, the nav, the API reference.
``nox -s docs`` runs the same build.
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import itertools
import re
import subprocess
import sys
import typing
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from commonplace import hookspecs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

PUBLIC = [
    "commonplace",
    "commonplace.embedders",
    "commonplace.errors",
    "commonplace.lifecycle",
    "commonplace.progress",
    "commonplace.read",
    "commonplace.stores",
    "commonplace.validation",
    "commonplace.write",
    "commonplace_inspect",
    "commonplace_langgraph",
    "commonplace_llamaindex",
    "commonplace_mcp",
    "commonplace_weaviate",
]
EXEMPT = {"__version__"}


# -- docstrings ---------------------------------------------------------------------


def _sources(module: ModuleType) -> list[Path]:
    """The files of the package (or the one module) that exports a name."""
    path = Path(module.__file__ or "")
    return sorted(path.parent.rglob("*.py")) if path.name == "__init__.py" else [path]


def attribute_docstrings(module: ModuleType) -> set[str]:
    """Names assigned at module level, with a string literal right after, in ``module``'s
    package (the attribute docstrings griffe and the API reference read)."""
    found: set[str] = set()
    for source in _sources(module):
        body = ast.parse(source.read_text(encoding="utf-8")).body
        for statement, after in itertools.pairwise(body):
            targets = (
                statement.targets
                if isinstance(statement, ast.Assign)
                else [statement.target]
                if isinstance(statement, ast.AnnAssign)
                else []
            )
            documented = (
                isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
                and after.value.value.strip()
            )
            if documented:
                found.update(t.id for t in targets if isinstance(t, ast.Name))
    return found


def own_docstring(obj: object) -> str | None:
    """The docstring ``obj`` has of its own, by the rule of the module docstring; None
    for a value that is neither a class nor a function."""
    if inspect.isclass(obj):
        doc = obj.__dict__.get("__doc__")
        if not isinstance(doc, str) or not doc.strip():
            return ""
        if any(doc == base.__doc__ for base in obj.__mro__[1:]):
            return ""  # a base's docstring, copied down (Enum, Protocol, NamedTuple do)
        try:
            generated = obj.__name__ + str(inspect.signature(obj)).replace(" -> None", "")
        except (TypeError, ValueError):
            generated = None
        if doc == generated:
            return ""  # dataclasses' stand-in for a missing docstring
        fields = getattr(obj, "_fields", None)
        if isinstance(fields, tuple) and doc == f"{obj.__name__}{fields!r}".replace("'", ""):
            return ""  # namedtuple's: Point(x, y), Size(width,)
        return doc
    if inspect.isroutine(obj):
        return (obj.__doc__ or "").strip()
    return None


def undocumented(module: ModuleType) -> list[str]:
    attributes: set[str] | None = None
    missing = []
    for name in module.__all__:
        if name in EXEMPT:
            continue
        doc = own_docstring(getattr(module, name))
        if doc is None:  # a value: an attribute docstring, or named in the module's own
            if attributes is None:
                attributes = attribute_docstrings(module)
            if name in attributes or re.search(rf"\b{name}\b", module.__doc__ or ""):
                continue
            missing.append(f"{module.__name__}.{name} (no attribute docstring)")
        elif not doc:
            missing.append(f"{module.__name__}.{name}")
    return missing


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_has_a_docstring_of_its_own(name: str) -> None:
    module = importlib.import_module(name)
    assert len(module.__all__) >= 5, f"{name}.__all__ lost its names"
    assert undocumented(module) == []


class _Mode(enum.Enum):
    ON = "on"


@dataclass
class _Bare:
    size: int


class _Typed(typing.NamedTuple):
    size: int


def _function() -> None:
    pass


class _Documented:
    """A class with a docstring of its own."""


_CONSTANT = 3
_DOCUMENTED = 4
"""A constant with an attribute docstring."""


def test_the_docstring_rule_refuses_what_has_none_of_its_own() -> None:
    for bare in (_Mode, _Bare, _Typed, _function, type("Plain", (), {})):
        assert own_docstring(bare) == "", bare
    assert own_docstring(_Documented) == "A class with a docstring of its own."
    assert own_docstring(own_docstring) and own_docstring(_CONSTANT) is None
    this = sys.modules[__name__]
    found = attribute_docstrings(this)
    assert "_DOCUMENTED" in found and "_CONSTANT" not in found


# -- doc blocks ---------------------------------------------------------------------

FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
NOT_RUN = re.compile(r"<!--\s*not run:(.*?)-->\s*\Z", re.DOTALL)
MAX_NOT_RUN = 3
SIGNATURE = re.compile(
    r"\A@hookspec(?:\(firstresult=True\))?\n(def (commonplace_\w+)\(.*\) -> .+)\n\Z"
)
HOOKS = sorted(n for n in dir(hookspecs) if n.startswith("commonplace_"))
ONE_SESSION = {"embedders.md": ROOT / "tests" / "core" / "test_embedders_doc.py"}
WEAVIATE_URL = re.compile(r"""(["'])weaviate://[^"']*\1""")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    code: str
    before: str  # the page's text up to the fence

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            before = text[: match.start()]
            page = path.relative_to(DOCS).as_posix()
            found.append(Block(page, before.count("\n") + 1, match.group(1), before))
    return found


def hook_signature(block: Block) -> str | None:
    """The hook a signature block of docs/hooks.md shows, if its def line is exact."""
    match = SIGNATURE.match(block.code)
    if block.page != "hooks.md" or match is None or match.group(2) not in HOOKS:
        return None
    spec = getattr(hookspecs, match.group(2))
    exact = f"def {match.group(2)}{inspect.signature(spec)}".replace("'", "")
    return match.group(2) if match.group(1) == exact else None


def not_run_reason(block: Block) -> str | None:
    match = NOT_RUN.search(block.before)
    return None if match is None else match.group(1).strip()


BLOCKS = blocks()
SIGNATURES = [b for b in BLOCKS if hook_signature(b)]
SESSIONS = [b for b in BLOCKS if b.page in ONE_SESSION]
MARKED = [b for b in BLOCKS if not_run_reason(b) is not None]
RUN = [b for b in BLOCKS if b not in SIGNATURES and b not in SESSIONS and b not in MARKED]


def test_the_exceptions_are_the_ones_the_rules_name() -> None:
    assert len(BLOCKS) >= 15, "the docs lost their Python examples"
    # each hook's signature block, once; everything else is run or accounted for
    assert sorted(hook_signature(b) or "" for b in SIGNATURES) == HOOKS
    for page, test in ONE_SESSION.items():
        assert page in test.read_text(encoding="utf-8"), f"{test.name} no longer runs {page}"
        marker = "<!-- commonplace:hand-written -->"
        for block in (b for b in SESSIONS if b.page == page):
            assert marker in block.before, f"{block.id} is outside what {test.name} runs"
    assert len(MARKED) <= MAX_NOT_RUN, [b.id for b in MARKED]
    for block in MARKED:
        assert not_run_reason(block), f"{block.id}: say why the block is not run"
    assert any(WEAVIATE_URL.search(b.code) for b in RUN)  # docs/weaviate.md's example


def _param(block: Block) -> object:
    marks = [pytest.mark.weaviate] if WEAVIATE_URL.search(block.code) else []
    if "llama_index" in block.code:  # as in tests/llamaindex/conftest.py: LlamaIndex's own
        marks.append(pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect"))
    return pytest.param(block, id=block.id, marks=marks)


@pytest.mark.parametrize("block", [_param(b) for b in RUN])
def test_a_doc_block_runs(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("COMMONPLACE_URL", raising=False)
    code = block.code
    if WEAVIATE_URL.search(code):
        url = request.getfixturevalue("weaviate_backend_factory")().url
        code = WEAVIATE_URL.sub(lambda m: repr(url), code)
        assert "weaviate://127.0.0.1:8080" not in code
    # the block fails this test by raising; it is compiled as its own module would be
    # (without this file's `from __future__ import annotations`)
    exec(compile(code, f"docs/{block.id}", "exec", dont_inherit=True), {"__name__": "docs"})


# -- the site -----------------------------------------------------------------------


def test_the_site_builds_strictly_with_no_warning(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-4000:]
    assert "WARNING" not in log, log[-4000:]
    for page in ("index.html", "concepts/index.html", "reference/commonplace/index.html"):
        assert (tmp_path / page).is_file(), page
    reference = (tmp_path / "reference" / "commonplace" / "index.html").read_text()
    assert 'id="commonplace.Memory"' in reference  # the API reference was generated


def test_the_api_reference_opens_on_memory_and_lists_every_public_name() -> None:
    import commonplace

    page = (DOCS / "reference" / "commonplace.md").read_text(encoding="utf-8")
    listed = re.findall(r"^ {8}- (\w+)$", page, flags=re.MULTILINE)
    assert listed[0] == "Memory"
    assert sorted(listed) == sorted(n for n in commonplace.__all__ if n not in EXEMPT)
    assert listed[-1] == "hookimpl"
