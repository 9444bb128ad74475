"""The plugin manager, built per Memory (never at import), and the built-in plugin."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path

import pluggy

from . import hookspecs
from .embedders import Embedder, HashingEmbedder
from .errors import InvalidTypeError, InvalidURLError, PluginError
from .hookspecs import hookimpl
from .stores import Backend, SQLiteBackend
from .write import NoteDraft, RuleNoteWriter, Skip, Turn

_HASHING_NAME = re.compile(r"commonplace-hashing-v1-(\d+)")


class BuiltinPlugin:
    """commonplace's own implementations; registered first, so they answer last."""

    def __init__(self) -> None:
        self._writer = RuleNoteWriter()

    @hookimpl(trylast=True)
    def commonplace_write_note(self, turn: Turn) -> NoteDraft | Skip | None:
        return self._writer.write(turn)

    @hookimpl(trylast=True)
    def commonplace_embedder(self, name: str | None) -> Embedder | None:
        if name is None:
            return HashingEmbedder()
        match = _HASHING_NAME.fullmatch(name)
        return HashingEmbedder(dim=int(match.group(1))) if match else None

    @hookimpl(trylast=True)
    def commonplace_backend(self, url: str, scheme: str) -> Backend | None:
        if scheme != "sqlite":
            return None
        return SQLiteBackend(sqlite_path(url))


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


def sqlite_path(url: str) -> str:
    """The file path of an SQLite URL (SQLAlchemy's convention: ``sqlite:////abs``)."""
    if url == ":memory:":
        return url
    if not url.lower().startswith("sqlite://"):
        path = url  # a plain file path
    else:
        rest = url[len("sqlite://") :]
        if not rest.startswith("/") or rest == "/":
            raise InvalidURLError(
                f"{url!r} has no file path; write sqlite:///memory.db (relative), "
                "sqlite:////var/data/memory.db (absolute) or sqlite:///:memory:"
            )
        path = rest[1:]
    if not path or "\x00" in path or "?" in path:
        raise InvalidURLError(
            f"{url!r} is not a usable SQLite path; query strings and NUL are not supported"
        )
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidURLError(f"{url!r} is not valid unicode (lone surrogates)") from None
    return path
