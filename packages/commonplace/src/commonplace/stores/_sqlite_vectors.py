"""The SQLite store's vector cache: loaded from the rows, searched in memory, and the
graphs of large scopes saved beside the file so the next process need not rebuild them.

The rows are the truth. A saved graph is a cache that proves itself before it is used:
its file has the checksum its manifest names (checked in :mod:`._ann`), it was saved at
the scope's current row version, it holds exactly the scope's rows up to the highest one
it names (rows added since are read from the file), that row exists in the file's
history, and a sample of its vectors equals the rows' own. A graph that fails any of
these is deleted and rebuilt.

The row version of a scope is a counter in the table ``vector_versions`` (schema v7),
moved by triggers in the same transaction as every change to the scope's vector rows other
than an append (a delete, a vector or scope or seq updated, by this code or any other);
appends are what a graph's highest row covers. A graph is saved only under the store's write lock
and only if the scope's row version is still the one its rows were read at, and never
once a row was deleted from it (HNSW removal keeps the vector): so a graph file never
holds a vector whose row was deleted, whichever process deleted it.
"""

from __future__ import annotations

import contextlib
import sqlite3
import uuid
from collections.abc import Iterator

import numpy as np

from ._ann import Ann, ScopeParts
from ._sqlite_reembed import SQLiteReembed
from ._sqlite_rows import chunks, decoding, marks
from ._sqlite_schema import VECTOR_VERSION_TRIGGERS
from ._vector_index import VectorIndex

_SAMPLE = 16  # vectors compared between a saved graph and the rows
# rows read at a time when the cache catches up: small enough that the buffers of a
# first load of a large store stay small (the allocator keeps what they took: 8,192
# rows left 52 MiB behind after loading 100k vectors, 1,024 rows 20), no slower
_CHUNK_ROWS = 1024


class SQLiteVectors(SQLiteReembed):
    """Keeps ``self._index`` in step with the ``records`` table."""

    # whether this process saves and loads graphs: it may, and the row versions' triggers
    # are in the file (a class default, so that a store needs no ``__init__`` of its own)
    _versioned = False

    def _catch_up(self, db: sqlite3.Connection) -> VectorIndex | None:
        """Load the vectors written since the last search (by any process)."""
        if self._index is None:
            pin = self.read_pin()
            if pin is None:
                return None
            # without the triggers (dropped by hand) no row version can be trusted
            self._versioned = (
                self._ann_files is not None and self._ann_rows is not None and _has_versions(db)
            )
            self._index = VectorIndex(pin.dim, ann_rows=self._ann_rows)
            self._attach_saved(db, self._index, pin.name)
        index = self._index
        covered = [(parts, ann.max_seq) for parts, ann in index.graphs()]
        graphs_before = {parts for parts, _ in covered}
        # rows a loaded graph holds are not read again (on the first catch-up only: later
        # ones start past every held row anyway)
        skip = "".join(
            " AND NOT (scope_user = ? AND scope_agent = ? AND scope_thread = ? AND seq <= ?)"
            for _ in covered
        )
        params = [value for parts, top in covered for value in (*parts, top)]
        with _snapshot(db):  # a new block's row version is read with its first rows
            cursor = db.execute(
                "SELECT seq, scope_user, scope_agent, scope_thread, vector FROM records "
                f"WHERE seq > ? AND vector IS NOT NULL{skip} ORDER BY seq",
                (index.max_seq, *params),
            )
            # a chunk at a time: a first load of a large store never holds its rows, their
            # bytes and the index's copy of them all at once (memory a process keeps after)
            while rows := cursor.fetchmany(_CHUNK_ROWS):
                grouped: dict[ScopeParts, tuple[list[int], list[bytes]]] = {}
                for seq, user, agent, thread, blob in rows:
                    seqs, blobs = grouped.setdefault((user, agent, thread), ([], []))
                    seqs.append(seq)
                    blobs.append(blob)
                for parts, (seqs, blobs) in grouped.items():
                    if not index.holds(parts):
                        index.start(parts, version=self._row_version(db, parts))
                    with decoding("vector"):
                        matrix = np.frombuffer(b"".join(blobs), np.float32).reshape(
                            len(seqs), index.dim
                        )
                    index.add(parts, np.asarray(seqs, np.int64), matrix)
        for _, top in covered:
            index.note_max_seq(top)
        built = [parts for parts, _ in index.graphs() if parts not in graphs_before]
        if built:  # a build is what a later process should not pay for again
            self._save_graphs(only=set(built))
        return index

    def _row_version(self, db: sqlite3.Connection, parts: ScopeParts) -> int | None:
        if not self._versioned:
            return None
        return _row_version(db, parts)

    def _attach_saved(self, db: sqlite3.Connection, index: VectorIndex, embedder: str) -> None:
        if self._ann_files is None or not self._versioned:
            return
        found = db.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
        if found is None:
            return
        for parts in self._ann_files.saved_scopes():

            def confirm(ann: Ann, parts: ScopeParts = parts) -> bool:
                return _confirm(db, parts, ann)

            ann = self._ann_files.load(
                parts, store_id=found[0], embedder=embedder, dim=index.dim, confirm=confirm
            )
            if ann is not None:
                index.attach(parts, ann)

    def _save_graphs(self, *, only: set[ScopeParts] | None = None) -> None:
        """Save the graphs changed since they were loaded or saved whose rows are still
        those of the file (a cache: a failure to write one loses nothing)."""
        index, files = self._index, self._ann_files
        if index is None or files is None or not self._versioned:
            return
        dirty = [
            (parts, ann)
            for parts, ann in index.graphs()
            if ann.dirty and (only is None or parts in only)
        ]
        if not dirty:
            return
        pin = self.read_pin()
        if pin is None:
            return
        try:
            # the write lock is held while the graphs are saved: no process deletes a row
            # between the version check and the file, and one that deletes after finds the
            # file and drops it in its own transaction
            with self._transaction() as db:
                db.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('store_id', ?)",
                    (uuid.uuid4().hex,),
                )
                (store_id,) = db.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
                if not _has_versions(db):
                    return
                for parts, ann in dirty:
                    if ann.held_deleted:  # its file would still hold what was deleted
                        files.drop(parts)
                        continue
                    version = _row_version(db, parts)
                    if ann.version != version:  # rows changed in a way it did not see
                        continue
                    files.save(parts, ann, store_id=store_id, embedder=pin.name, version=version)
        except Exception:
            return

    def _vectors_deleted(self, db: sqlite3.Connection, seqs: list[int]) -> None:
        """Rows about to be deleted in this transaction: the cache forgets them, and the
        saved graphs of their scopes are removed (their files hold the vectors)."""
        if self._index is not None:
            self._index.discard(set(seqs))
        if self._ann_files is None or not self._ann_files.folder.is_dir():
            return
        scopes: set[ScopeParts] = set()
        for chunk in chunks(seqs):
            scopes.update(
                db.execute(
                    "SELECT DISTINCT scope_user, scope_agent, scope_thread FROM records "
                    f"WHERE seq IN ({marks(len(chunk))}) AND vector IS NOT NULL",
                    chunk,
                )
            )
        for parts in scopes:
            self._ann_files.drop(parts)

    def _drop_saved_graphs(self) -> None:
        if self._ann_files is not None:
            self._ann_files.drop()


@contextlib.contextmanager
def _snapshot(db: sqlite3.Connection) -> Iterator[None]:
    """One read transaction: what is read inside is of one state of the file."""
    outer = db.in_transaction  # a transaction of the caller's is one state already
    if not outer:
        db.execute("BEGIN")
    try:
        yield
    finally:
        if not outer and db.in_transaction:  # a read: nothing to keep or lose
            db.execute("COMMIT")


def _has_versions(db: sqlite3.Connection) -> bool:
    (found,) = db.execute(
        f"SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN "
        f"({marks(len(VECTOR_VERSION_TRIGGERS))})",
        VECTOR_VERSION_TRIGGERS,
    ).fetchone()
    return int(found) == len(VECTOR_VERSION_TRIGGERS)


def _row_version(db: sqlite3.Connection, parts: ScopeParts) -> int:
    found = db.execute(
        "SELECT version FROM vector_versions WHERE scope_user = ? AND scope_agent = ? "
        "AND scope_thread = ?",
        parts,
    ).fetchone()
    return 0 if found is None else int(found[0])


def _confirm(db: sqlite3.Connection, parts: ScopeParts, ann: Ann) -> bool:
    """Whether the rows of this scope are those a saved graph was saved from."""
    if ann.version is None or ann.version != _row_version(db, parts):
        return False  # a row of the scope deleted or changed since it was saved
    top = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'records'").fetchone()
    if top is None or int(top[0]) < ann.max_seq:  # a file older than its graph
        return False
    seqs = np.asarray(
        [
            seq
            for (seq,) in db.execute(
                "SELECT seq FROM records WHERE scope_user = ? AND scope_agent = ? "
                "AND scope_thread = ? AND seq <= ? AND vector IS NOT NULL",
                (*parts, ann.max_seq),
            )
        ],
        np.int64,
    )
    # exactly the rows it should hold: a difference the version did not count (a row
    # inserted by hand below the graph's highest) is a graph of other rows
    if len(seqs) == 0 or not np.array_equal(np.sort(seqs), np.sort(ann.keys())):
        return False
    sample = np.random.default_rng().choice(seqs, size=min(_SAMPLE, len(seqs)), replace=False)
    for seq, blob in db.execute(
        f"SELECT seq, vector FROM records WHERE seq IN ({marks(len(sample))})", sample.tolist()
    ):
        held = ann.vector(int(seq))
        if held is None or not np.array_equal(held, np.frombuffer(blob, np.float32)):
            return False
    return True
