"""The SQLite store's embedder pin and re-embedding to another model.

The pin says which model wrote the store's vectors; re-embedding stages new vectors beside
the live ones and swaps them in with the pin in one transaction. Apart from the record
store because it owns its own tables and keys (``reembed_vectors``, ``meta``'s
``embedder.*`` and ``reembed.*``) and touches records only to read them and, at the end,
to replace their vectors.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from .._records import Record
from ..embedders._protocol import Vectors
from ..errors import CorruptStoreError, EmbedderMismatchError, StoreError
from ._protocol import EmbedderPin, ReembedState
from ._sqlite_connection import SQLiteConnection
from ._sqlite_rows import RECORD_COLUMNS, chunks, marks


class SQLiteReembed(SQLiteConnection):
    """The embedder pin and re-embedding, for :class:`~commonplace.stores.SQLiteBackend`."""

    # the seq up to which every vector is re-embedded (staged); a class default, so that
    # a store starts from the beginning without an ``__init__`` of its own
    _reembed_after = 0

    # -- the embedder pin ---------------------------------------------------------------

    def read_pin(self) -> EmbedderPin | None:
        with self._reading() as db:
            rows = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'embedder.%'"))
        if "embedder.name" not in rows:
            return None
        try:
            return EmbedderPin(name=rows["embedder.name"], dim=int(rows["embedder.dim"]))
        except (KeyError, ValueError):
            raise CorruptStoreError(
                f"{self._path!r} has a damaged embedder pin {rows}; restore it from a backup: "
                "commonplace will not overwrite it"
            ) from None

    def write_pin(self, pin: EmbedderPin, *, replace: bool = False) -> None:
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        with self._transaction() as db:
            db.executemany(
                f"{verb} INTO meta (key, value) VALUES (?, ?)",
                [("embedder.name", pin.name), ("embedder.dim", str(pin.dim))],
            )
            # another opener may have pinned first: the same model is fine, another is not
            stored = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'embedder.%'"))
            if (stored["embedder.name"], stored["embedder.dim"]) != (pin.name, str(pin.dim)):
                raise EmbedderMismatchError(
                    f"this store is pinned to the embedder {stored['embedder.name']!r} (dim "
                    f"{stored['embedder.dim']}), not {pin.name!r}; open it with the pinned "
                    "embedder or re-embed the store"
                )
        if replace:
            self._index = None

    # -- re-embedding ---------------------------------------------------------------------
    # New vectors wait in a table of their own (created when a re-embed starts, dropped
    # when it finishes); a trigger drops the staged vector of a record deleted (or
    # replaced) meanwhile. Finishing copies them over the live ones and re-pins in one
    # transaction, after counting that every record holding a vector has one staged.

    def reembed_state(self) -> ReembedState | None:
        with self._reading() as db:
            target = _reembed_target(db)
            if target is None:
                return None
            total, staged = db.execute(
                "SELECT count(*), count(s.id) FROM records r "
                "LEFT JOIN reembed_vectors s ON s.id = r.id WHERE r.vector IS NOT NULL"
            ).fetchone()
        return ReembedState(target, int(staged), int(total) - int(staged))

    def reembed_pending(self, target: EmbedderPin, *, limit: int) -> list[Record]:
        with self._reading() as db:
            current = _reembed_target(db)
        if current != target:
            with self._transaction() as db:
                if _reembed_target(db) != target:
                    for statement in _REEMBED_START:
                        db.execute(statement)
                    db.executemany(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                        [("reembed.name", target.name), ("reembed.dim", str(target.dim))],
                    )
            self._reembed_after = 0
        with self._reading() as db:
            # every record at or below _reembed_after that holds a vector is staged
            rows = db.execute(
                f"SELECT {RECORD_COLUMNS} FROM records r WHERE r.seq > ? "
                "AND r.vector IS NOT NULL AND NOT EXISTS "
                "(SELECT 1 FROM reembed_vectors s WHERE s.id = r.id) ORDER BY r.seq LIMIT ?",
                (self._reembed_after, max(0, int(limit))),
            ).fetchall()
            if rows:
                self._reembed_after = rows[0][0] - 1
            return self._records(db, rows)

    def reembed_stage(
        self, target: EmbedderPin, record_ids: Sequence[str], vectors: Vectors
    ) -> None:
        # the shape and values were checked by the core (Store.reembed_stage)
        ids = list(record_ids)
        matrix = np.asarray(vectors, np.float32)
        with self._transaction() as db:
            _check_reembedding(db, target)
            live: set[str] = set()
            for chunk in chunks(ids):
                live.update(
                    r[0]
                    for r in db.execute(
                        f"SELECT id FROM records WHERE id IN ({marks(len(chunk))}) "
                        "AND vector IS NOT NULL",
                        chunk,
                    )
                )
            db.executemany(
                "INSERT OR REPLACE INTO reembed_vectors (id, vector) VALUES (?, ?)",
                [(rid, matrix[i].tobytes()) for i, rid in enumerate(ids) if rid in live],
            )

    def reembed_finish(self, target: EmbedderPin) -> int | None:
        with self._transaction() as db:
            _check_reembedding(db, target)
            total, staged = db.execute(
                "SELECT count(*), count(s.id) FROM records r "
                "LEFT JOIN reembed_vectors s ON s.id = r.id WHERE r.vector IS NOT NULL"
            ).fetchone()
            if staged != total:
                self._reembed_after = 0  # look again from the start
                return None
            done = db.execute(
                "UPDATE records SET vector = (SELECT s.vector FROM reembed_vectors s "
                "WHERE s.id = records.id) WHERE vector IS NOT NULL"
            ).rowcount
            if done != total:  # pragma: no cover - the count above is in the same transaction
                raise StoreError(f"re-embed of {self._path!r}: {done} of {total} rows updated")
            db.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [("embedder.name", target.name), ("embedder.dim", str(target.dim))],
            )
            db.execute("DELETE FROM meta WHERE key LIKE 'reembed.%'")
            db.execute("DROP TRIGGER IF EXISTS reembed_vectors_gc")
            db.execute("DROP TABLE IF EXISTS reembed_vectors")
            self._index = None
        return int(total)


_REEMBED_START = (
    "CREATE TABLE IF NOT EXISTS reembed_vectors (id TEXT PRIMARY KEY, vector BLOB NOT NULL) "
    "WITHOUT ROWID",
    """CREATE TRIGGER IF NOT EXISTS reembed_vectors_gc AFTER DELETE ON records BEGIN
        DELETE FROM reembed_vectors WHERE id = old.id;
    END""",
    "DELETE FROM reembed_vectors",  # what a re-embed to another model staged
)


def _reembed_target(db: sqlite3.Connection) -> EmbedderPin | None:
    rows = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'reembed.%'"))
    if "reembed.name" not in rows:
        return None
    try:
        return EmbedderPin(name=rows["reembed.name"], dim=int(rows["reembed.dim"]))
    except (KeyError, ValueError):
        raise CorruptStoreError(
            f"the re-embed record {rows} is damaged; restore the store from a backup"
        ) from None


def _check_reembedding(db: sqlite3.Connection, target: EmbedderPin) -> None:
    current = _reembed_target(db)
    if current != target:
        doing = "none is" if current is None else f"the one in progress is to {current.name!r}"
        raise StoreError(
            f"no re-embed to {target.name!r} is in progress ({doing}); start it with "
            "reembed_pending (commonplace reembed --to NAME does)"
        )
