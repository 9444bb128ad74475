"""The plugin manager, built per Memory (never at import), and the built-in plugin."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import pluggy

from . import hookspecs
from ._records import Record

# the embedders' own modules, not their package: commonplace.embedders offers reembed,
# which stands above this module (it opens stores through the plugin manager)
from .embedders._hashing import HashingEmbedder
from .embedders._minilm import MiniLMEmbedder
from .embedders._protocol import Embedder
from .errors import InvalidInputError, InvalidTypeError, InvalidURLError, PluginError
from .hookspecs import hookimpl
from .stores import Backend, SQLiteBackend, sqlite_path
from .stores._vector_index import ANN_ROWS
from .write import (
    NoteDraft,
    RuleNoteWriter,
    RuleUpdateDecider,
    Skip,
    Turn,
    UpdateCandidate,
    UpdateDecision,
)

_HASHING_NAME = re.compile(r"commonplace-hashing-v1-(\d+)")
_MINILM_NAME = re.compile(r"all-MiniLM-L6-v2-onnx-int8-[0-9a-f]{12}")
#: names the embedder a new store gets (a pinned store keeps its own): "hashing" for the
#: zero-dependency choice, or any name the ``commonplace_embedder`` hook resolves
EMBEDDER_ENV = "COMMONPLACE_EMBEDDER"
# the scope size from which a store opened by URL searches through a graph ("off": never)
ANN_ROWS_ENV = "COMMONPLACE_ANN_ROWS"


class BuiltinPlugin:
    """commonplace's own implementations; registered first, so they answer last."""

    def __init__(self) -> None:
        self._writer = RuleNoteWriter()
        self._decider = RuleUpdateDecider()

    @hookimpl(trylast=True)
    def commonplace_write_note(self, turn: Turn) -> NoteDraft | Skip | None:
        return self._writer.write(turn)

    @hookimpl(trylast=True)
    def commonplace_decide_update(
        self, note: Record, turn: Turn, candidates: Sequence[UpdateCandidate]
    ) -> Sequence[UpdateDecision] | None:
        return self._decider.decide(note, turn, candidates)

    @hookimpl(trylast=True)
    def commonplace_embedder(self, name: str | None) -> Embedder | None:
        if name is None:
            return _default_embedder()
        return _embedder_named(name)

    @hookimpl(trylast=True)
    def commonplace_backend(self, url: str, scheme: str) -> Backend | None:
        if scheme != "sqlite":
            return None
        return SQLiteBackend(sqlite_path(url), ann_rows=_ann_rows())


def _ann_rows() -> int | None:
    configured = os.environ.get(ANN_ROWS_ENV, "").strip()
    if not configured:
        return ANN_ROWS
    if configured.lower() == "off":
        return None
    if not configured.isdigit() or int(configured) < 1:
        raise InvalidInputError(
            f"${ANN_ROWS_ENV}={configured!r}: give the number of vectors from which a scope "
            "is searched through a graph (a positive integer), or 'off' to search exactly"
        )
    return int(configured)


def _embedder_named(name: str) -> Embedder | None:
    match = _HASHING_NAME.fullmatch(name)
    if match:
        return HashingEmbedder(dim=int(match.group(1)))
    if _MINILM_NAME.fullmatch(name):
        model = MiniLMEmbedder()
        return model if model.name == name else None  # pinned to other weights
    return None


def _default_embedder() -> Embedder:
    """The semantic default for a new store, or what ``$COMMONPLACE_EMBEDDER`` names."""
    configured = os.environ.get(EMBEDDER_ENV, "").strip()
    if not configured:
        return MiniLMEmbedder()
    if configured.lower() == "hashing":
        return HashingEmbedder()
    found = _embedder_named(configured)
    if found is None:
        raise InvalidInputError(
            f"${EMBEDDER_ENV}={configured!r} names no embedder commonplace knows; use "
            "'hashing', 'commonplace-hashing-v1-256', or unset it for the semantic default"
        )
    return found


def make_plugin_manager(
    *, plugins: Iterable[object] = (), entry_points: bool = True
) -> pluggy.PluginManager:
    """A fresh manager: hook specs, the built-in plugin, entry points, then ``plugins``."""
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    manager.register(BuiltinPlugin(), name="commonplace.builtin")
    if entry_points:
        manager.load_setuptools_entrypoints(hookspecs.PROJECT)
    if isinstance(plugins, (str, bytes)) or not isinstance(plugins, Iterable):
        raise InvalidTypeError(f"plugins must be a list of plugin objects, not {plugins!r}")
    for plugin in plugins:
        try:
            manager.register(plugin)
        except (ValueError, pluggy.PluginValidationError) as exc:
            raise PluginError(f"cannot register the plugin {plugin!r}: {exc}") from None
    return manager


def default_url() -> str:
    """``$COMMONPLACE_URL``, else a file in the user's data folder (created if missing)."""
    configured = os.environ.get("COMMONPLACE_URL")
    if configured:
        return configured
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    folder = base / "commonplace"
    folder.mkdir(parents=True, exist_ok=True)
    return "sqlite:///" + str(folder / "memory.db")


def url_scheme(url: str) -> str:
    """The scheme of a store URL; a plain path or ``:memory:`` means SQLite."""
    if url == ":memory:":
        return "sqlite"
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)://", url)
    if match:
        return match.group(1).lower()
    # "scheme:rest" without "//" is a typo, not a file name; "C:\\x" is a Windows path.
    if "://" in url or re.match(r"[A-Za-z][A-Za-z0-9+.-]+:", url):
        raise InvalidURLError(
            f"cannot read the store URL {url!r}; use sqlite:///relative/path.db, "
            "sqlite:////absolute/path.db, sqlite:///:memory: or a plain file path"
        )
    return "sqlite"


def open_backend(url: str, manager: pluggy.PluginManager) -> Backend:
    """The store at ``url``, opened by whichever installed backend serves its scheme."""
    scheme = url_scheme(url)
    backend = manager.hook.commonplace_backend(url=url, scheme=scheme)
    if backend is None:
        raise InvalidURLError(
            f"no installed backend serves {scheme}:// URLs (from {url!r}); install the "
            f"plugin for it (e.g. commonplace-{scheme}) or use sqlite:///path.db"
        )
    return backend  # type: ignore[no-any-return]
