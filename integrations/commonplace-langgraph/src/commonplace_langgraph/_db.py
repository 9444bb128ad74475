"""The adapter's own SQLite connection: next to the memory, never inside its transactions.

The checkpointer's and the store's tables live in the memory's SQLite file so one file
holds a graph's whole memory, but on a connection of their own: the core's connection
and lock stay the core's business, and no adapter transaction ever waits on a memory
call (memory calls are made before or after an adapter transaction, never inside one).
A ``:memory:`` memory gets an in-memory database of the adapter's own, since two
connections to ``:memory:`` are two different databases anyway.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from commonplace import Memory
from commonplace.errors import InvalidTypeError, InvalidURLError, StoreClosedError, StoreError
from commonplace.stores import SQLiteBackend

_BUSY_TIMEOUT_MS = 30_000


def adapter_path(memory: Memory, path: str | Path | None) -> str:
    """Where the adapter's tables go: ``path`` if given, else the memory's own SQLite file."""
    if path is not None:
        if not isinstance(path, (str, Path)):
            raise InvalidTypeError(f"path must be a str or a Path, not {type(path).__name__}")
        return str(path)
    if not isinstance(memory, Memory):
        raise InvalidTypeError(f"memory must be a commonplace.Memory, not {type(memory).__name__}")
    return _memory_file(memory)


def _memory_file(memory: Memory) -> str:
    # the file the memory's own backend opened: the URL is read once, by the core
    backend = memory.backend
    if not isinstance(backend, SQLiteBackend):
        raise InvalidURLError(
            f"the memory lives at {memory.url!r}, which is not an SQLite file; pass path=... "
            "to keep the LangGraph tables in an SQLite file of their own"
        )
    return backend.path


class Database:
    """One connection, one lock, explicit transactions (autocommit otherwise)."""

    def __init__(self, path: str, *, schema: Sequence[str]) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._closed = False
        try:
            self._db = sqlite3.connect(
                path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {path!r}: {exc}; check the path") from exc
        try:
            with self._translate():
                self._db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
                # as on the core's connection: a deleted thread's checkpoints are zeroed,
                # not left readable in the file's free pages
                self._db.execute("PRAGMA secure_delete = ON")
                if path != ":memory:":
                    # The core already put the file in WAL mode; this is for path=... files.
                    self._db.execute("PRAGMA journal_mode = WAL")
                    self._db.execute("PRAGMA synchronous = NORMAL")
            self.create(schema)
        except BaseException:
            self._db.close()
            raise

    def create(self, schema: Sequence[str]) -> None:
        """Run ``CREATE ... IF NOT EXISTS`` statements, all or none."""
        with self.transaction() as db:
            for statement in schema:
                db.execute(statement)

    @contextlib.contextmanager
    def _translate(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite error on {self.path!r}: {exc}") from exc

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``: all or nothing, writers serialised early."""
        with self._lock:
            self._check_open()
            with self._translate():
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._check_open()
            with self._translate():
                yield self._db

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError("this LangGraph adapter was closed; create a new one")

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()


def chunks(items: Sequence[str], size: int = 500) -> Iterator[Sequence[str]]:
    """Slices small enough for SQLite's bound-parameter limit."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
