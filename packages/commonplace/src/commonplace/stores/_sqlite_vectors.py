"""The SQLite store's vector cache: loaded from the rows, searched in memory, and the
graphs of large scopes saved beside the file so the next process need not rebuild them.

The rows are the truth. A saved graph is used only once the rows confirm it: the rows
it should hold are all in it (what it holds beyond them was deleted since and is dropped
from it), the highest row it names exists in the file's history, and a sample of its
vectors equals the rows' own. A graph that fails any of these is deleted and rebuilt.
"""

from __future__ import annotations

import sqlite3
import uuid

import numpy as np

from ._ann import Ann, ScopeParts
from ._sqlite_reembed import SQLiteReembed
from ._sqlite_rows import decoding
from ._vector_index import VectorIndex

_SAMPLE = 16  # vectors compared between a saved graph and the rows
# rows read at a time when the cache catches up: small enough that the buffers of a
# first load of a large store stay small (the allocator keeps what they took: 8,192
# rows left 52 MiB behind after loading 100k vectors, 1,024 rows 20), no slower
_CHUNK_ROWS = 1024


class SQLiteVectors(SQLiteReembed):
    """Keeps ``self._index`` in step with the ``records`` table."""

    def _catch_up(self, db: sqlite3.Connection) -> VectorIndex | None:
        """Load the vectors written since the last search (by any process)."""
        if self._index is None:
            pin = self.read_pin()
            if pin is None:
                return None
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

    def _attach_saved(self, db: sqlite3.Connection, index: VectorIndex, embedder: str) -> None:
        if self._ann_files is None or self._ann_rows is None:
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
        """Save the graphs changed since they were loaded or saved (a cache: a failure to
        write one loses nothing)."""
        index, files = self._index, self._ann_files
        if index is None or files is None:
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
            with self._transaction() as db:
                db.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('store_id', ?)",
                    (uuid.uuid4().hex,),
                )
                (store_id,) = db.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
        except Exception:
            return
        for parts, ann in dirty:
            if ann.erased:  # its file would still hold what was erased: rebuilt instead
                files.drop(parts)
                continue
            files.save(parts, ann, store_id=store_id, embedder=pin.name)

    def _drop_saved_graphs(self) -> None:
        if self._ann_files is not None:
            self._ann_files.drop()


def _confirm(db: sqlite3.Connection, parts: ScopeParts, ann: Ann) -> bool:
    """Whether the rows of this scope agree with a saved graph (which then loses what was
    deleted since it was saved)."""
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
    if len(seqs) == 0 or not bool(np.all(ann.index.contains(seqs.astype(np.uint64)))):
        return False
    gone = np.setdiff1d(ann.keys(), seqs)
    if len(gone):
        ann.remove(gone.tolist())
    sample = np.random.default_rng().choice(seqs, size=min(_SAMPLE, len(seqs)), replace=False)
    marks = ", ".join("?" * len(sample))
    for seq, blob in db.execute(
        f"SELECT seq, vector FROM records WHERE seq IN ({marks})", sample.tolist()
    ):
        held = ann.vector(int(seq))
        if held is None or not np.array_equal(held, np.frombuffer(blob, np.float32)):
            return False
    return True
