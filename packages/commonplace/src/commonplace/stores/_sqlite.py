"""The embedded default store: one SQLite file, WAL, one transaction per batch.

Rows are the truth. Vectors live in the ``records`` table as float32 blobs and
are cached in a :class:`VectorIndex` that catches up by row sequence number
before every search, so writes from other processes become visible too.
Keyword candidates come from an FTS5 index kept in step by triggers.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from .._clock import to_epoch
from .._records import Episode, Kind, Record, Status, Tags, Tier
from .._scope import Scope
from .._text import keyword_coverage
from ..embedders import Vectors
from ..errors import (
    CorruptStoreError,
    EmbedderMismatchError,
    InvalidInputError,
    SchemaVersionError,
    StoreClosedError,
    StoreError,
)
from ._protocol import (
    AuditEntry,
    Candidate,
    Card,
    Conflict,
    EmbedderPin,
    Link,
    RecallLog,
    RecordQuery,
    ReembedState,
    TurnWrite,
)
from ._sqlite_rows import (
    ENTITY_SEPARATOR,
    EPISODE_COLUMNS,
    INSERT_COLUMNS,
    RECORD_COLUMNS,
    chunks,
    decoding,
    episode_from_row,
    fts_queries,
    marks,
    maybe_datetime,
    maybe_epoch,
    record_from_row,
    record_values,
    scope_clause,
    scope_from_parts,
)
from ._sqlite_schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from ._vector_index import VectorIndex

# How long opening a store waits for another process to finish switching it to WAL.
_WAL_PATIENCE_SECONDS = 30.0
# Keyword search asks FTS5 for a few more rows than it needs (the status filter runs
# after ranking), and is satisfied once the all-words search found this many.
_KEYWORD_OVERFETCH = 2
_KEYWORD_ENOUGH = 10


class SQLiteBackend:
    """A commonplace store in one SQLite file (or in memory with ``":memory:"``)."""

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self._path = str(path)
        self._lock = threading.RLock()
        self._index: VectorIndex | None = None
        self._reembed_after = 0  # the seq up to which every vector is re-embedded (staged)
        self._closed = False
        try:
            folder_exists = self._path == ":memory:" or Path(self._path).parent.is_dir()
        except OSError as exc:  # a name too long for the file system, say
            raise StoreError(f"cannot use the path {self._path!r}: {exc.strerror}") from None
        if not folder_exists:
            raise StoreError(
                f"cannot create a store at {self._path!r}: the folder "
                f"{str(Path(self._path).parent)!r} does not exist; create it first"
            )
        if self._path != ":memory:":
            _check_file(self._path)
        try:
            self._db = sqlite3.connect(
                self._path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot open {self._path!r}: {exc}; check the path and permissions"
            ) from exc
        try:
            self._open()
        except BaseException:
            self._db.close()
            raise

    # -- opening and transactions -------------------------------------------------------

    def _open(self) -> None:
        version = self._check_header()
        with self._translate_errors():
            self._db.execute("PRAGMA busy_timeout = 30000")
            if self._path != ":memory:":
                self._enable_wal()
                # WAL with synchronous=NORMAL survives a killed process; FULL adds power loss.
                self._db.execute("PRAGMA synchronous = NORMAL")
            if version < SCHEMA_VERSION:
                with self._transaction():
                    # another process may have created or migrated the store meanwhile
                    version = self._check_header()
                    for migrate in MIGRATIONS[version:]:
                        migrate(self._db)
                    self._db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                    self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _enable_wal(self) -> None:
        """Switch to WAL. Changing the journal mode needs the file to itself for a moment
        and SQLite may answer "locked" at once, without waiting out the busy timeout, when
        another process opens the same new file: so wait and ask again, within bounds."""
        deadline = time.monotonic() + _WAL_PATIENCE_SECONDS
        delay = 0.005
        while True:
            try:
                self._db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    def _check_header(self) -> int:
        """The schema version, read in one snapshot; refuses files that are not ours."""
        with self._translate_errors():
            outer = self._db.in_transaction
            if not outer:
                self._db.execute("BEGIN")
            try:
                app_id = self._db.execute("PRAGMA application_id").fetchone()[0]
                version = self._db.execute("PRAGMA user_version").fetchone()[0]
                has_tables = self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            finally:
                if not outer:
                    self._db.execute("COMMIT")
        if app_id != APPLICATION_ID and (app_id != 0 or has_tables):
            raise CorruptStoreError(
                f"{self._path!r} is an SQLite database but not a commonplace store; "
                "commonplace will not touch it: point the URL at a new or a commonplace file"
            )
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"{self._path!r} has schema version {version}, newer than this commonplace "
                f"understands ({SCHEMA_VERSION}); upgrade commonplace to open it"
            )
        return int(version)

    @contextlib.contextmanager
    def _translate_errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as exc:
            raise StoreError(f"SQLite error on {self._path!r}: {exc}{_hint(exc)}") from exc
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            if isinstance(exc, sqlite3.DatabaseError) and type(exc) is not sqlite3.DatabaseError:
                raise  # integrity and programming errors are not damage
            # (text that is no longer UTF-8 is damage SQLite's own checks did not catch)
            raise CorruptStoreError(
                f"{self._path!r} is damaged or not an SQLite file ({exc}); restore it from a "
                "backup or point the URL at a new file: commonplace will not overwrite it"
            ) from exc

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._check_open()
            with self._translate_errors():
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    if self._db.in_transaction:  # SQLite may have rolled back already
                        self._db.execute("ROLLBACK")
                    raise
                if not self._db.in_transaction:
                    # SQLite rolled the transaction back itself (an I/O error on the
                    # journal): a COMMIT now would only say "no transaction is active"
                    raise StoreError(
                        f"SQLite rolled back a write on {self._path!r} after an I/O error "
                        "(was its -wal or -shm file deleted, or its disk removed, while it "
                        "was open?); nothing of this call was stored. Close this Memory and "
                        "open the store again; if it then reports damage, restore the file "
                        "from a backup"
                    )
                self._db.execute("COMMIT")

    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._check_open()
            with self._translate_errors():
                yield self._db

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError("this store is closed; open a new Memory to use it")

    @property
    def url(self) -> str:
        return "sqlite:///" + self._path

    @property
    def path(self) -> str:
        return self._path

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._index = None
                self._db.close()

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
        ids = list(record_ids)
        matrix = np.asarray(vectors, np.float32)
        if matrix.shape != (len(ids), target.dim):
            raise InvalidInputError(
                f"reembed_stage got vectors of shape {matrix.shape} for {len(ids)} ids; it "
                f"needs one row of {target.dim} (the target's dimension) per id"
            )
        if not np.all(np.isfinite(matrix)):
            raise InvalidInputError("reembed_stage got NaN or infinite vector values")
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

    # -- episodes and records -----------------------------------------------------------

    def existing_episode_ids(self, ids: Collection[str]) -> set[str]:
        found: set[str] = set()
        with self._reading() as db:
            for chunk in chunks(list(ids)):
                q = marks(len(chunk))
                found.update(
                    row[0]
                    for row in db.execute(
                        f"SELECT id FROM episodes WHERE id IN ({q}) "
                        f"UNION SELECT id FROM forgotten WHERE id IN ({q})",
                        chunk + chunk,
                    )
                )
        return found

    def write_turns(self, turns: Sequence[TurnWrite], vectors: Vectors | None) -> list[bool]:
        notes = sum(1 for t in turns if t.note is not None)
        if notes and (vectors is None or len(vectors) != notes):
            raise InvalidInputError("write_turns needs exactly one vector per note")
        fresh: list[bool] = []
        row = 0
        with self._transaction() as db:
            for turn in turns:
                ep = turn.episode
                if db.execute("SELECT 1 FROM forgotten WHERE id = ?", (ep.id,)).fetchone():
                    fresh.append(False)  # forgotten on request: never stored again
                    if turn.note is not None:
                        row += 1
                    continue
                cursor = db.execute(
                    f"INSERT OR IGNORE INTO episodes ({EPISODE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
                    (
                        ep.id,
                        *ep.scope.parts(),
                        ep.role.value,
                        ep.text,
                        to_epoch(ep.at),
                        json.dumps(dict(ep.meta), ensure_ascii=False),
                    ),
                )
                is_new = cursor.rowcount == 1
                fresh.append(is_new)
                if turn.note is not None:
                    assert vectors is not None
                    if is_new:
                        self._insert_record(db, turn.note, vectors[row])
                    row += 1
                if is_new and turn.merge_into is not None:
                    self._merge(db, turn.merge_into, ep.id, turn.merged_tags, ep.at)
                if is_new and turn.supersedes and turn.note is not None:
                    self._supersede(db, turn.supersedes, turn.note.id, ep.at)
                if is_new and turn.superseded_at is not None and turn.note is not None:
                    newer, when = turn.superseded_at
                    self._supersede(db, [turn.note.id], newer, when)
        return fresh

    def _merge(
        self, db: sqlite3.Connection, target: str, episode_id: str, tags: Tags | None, at: datetime
    ) -> None:
        db.execute(
            "INSERT OR IGNORE INTO provenance (record_id, source_id) VALUES (?, ?)",
            (target, episode_id),
        )
        # fresh again, but frequency is earned by use, never by a merge
        db.execute(
            "UPDATE records SET "
            "last_access = max(last_access, ?), tags = coalesce(?, tags) WHERE id = ?",
            (
                to_epoch(at),
                None if tags is None else json.dumps(tags.to_json(), ensure_ascii=False),
                target,
            ),
        )

    def _supersede(
        self, db: sqlite3.Connection, old_ids: Sequence[str], new_id: str, at: datetime
    ) -> None:
        q = marks(len(old_ids))
        when = to_epoch(at)
        db.execute(
            "UPDATE records SET valid_to = ?, superseded_by = ?, tier = 'cold', tier_since = ? "
            f"WHERE id IN ({q}) AND superseded_by IS NULL",
            (when, new_id, when, *old_ids),
        )
        # a summary built on a superseded fact no longer holds
        db.execute(
            "UPDATE records SET status = 'invalid', status_since = ? WHERE kind = 'summary' "
            "AND status = 'active' AND id IN (SELECT record_id FROM provenance "
            f"WHERE source_id IN ({q}))",
            (when, *old_ids),
        )

    def add_records(self, records: Sequence[Record], vectors: Vectors) -> None:
        if len(records) != len(vectors):
            raise InvalidInputError("add_records needs exactly one vector per record")
        with self._transaction() as db:
            for record, vector in zip(records, vectors):
                try:
                    self._insert_record(db, record, vector)
                except sqlite3.IntegrityError as exc:  # the whole call is rolled back
                    raise InvalidInputError(
                        f"a record with id {record.id!r} already exists; derived records need "
                        "new ids (replace_records replaces existing ones)"
                    ) from exc

    def replace_records(self, records: Sequence[Record], vectors: Vectors) -> None:
        if len(records) != len(vectors):
            raise InvalidInputError("replace_records needs exactly one vector per record")
        with self._transaction() as db:
            for record, vector in zip(records, vectors):
                old = db.execute("SELECT seq FROM records WHERE id = ?", (record.id,)).fetchone()
                if old is not None:
                    db.execute("DELETE FROM records WHERE id = ?", (record.id,))
                    db.execute("DELETE FROM provenance WHERE record_id = ?", (record.id,))
                    if self._index is not None:
                        self._index.discard({old[0]})
                self._insert_record(db, record, vector)

    def _insert_record(self, db: sqlite3.Connection, record: Record, vector: Vectors) -> None:
        db.execute(
            f"INSERT INTO records ({INSERT_COLUMNS}) VALUES ({marks(26)})",
            (*record_values(record), np.asarray(vector, np.float32).tobytes()),
        )
        db.executemany(
            "INSERT OR IGNORE INTO provenance (record_id, source_id) VALUES (?, ?)",
            [(record.id, source) for source in record.provenance],
        )

    def get_episode(self, episode_id: str) -> Episode | None:
        with self._reading() as db:
            row = db.execute(
                f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ?", (episode_id,)
            ).fetchone()
        return None if row is None else episode_from_row(row)

    def get_episodes(
        self, scope: Scope, *, limit: int, before_seq: int | None = None
    ) -> list[Episode]:
        where, params = scope_clause(scope)
        with self._reading() as db:
            rows = db.execute(
                f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {where} AND seq < ? "
                "ORDER BY seq DESC LIMIT ?",
                (*params, before_seq if before_seq is not None else 2**62, limit),
            ).fetchall()
        return [episode_from_row(r) for r in rows]

    def get_record(self, record_id: str, *, any_status: bool = False) -> Record | None:
        status = "" if any_status else "AND status = 'active'"
        with self._reading() as db:
            rows = db.execute(
                f"SELECT {RECORD_COLUMNS} FROM records WHERE id = ? {status}", (record_id,)
            ).fetchall()
            records = self._records(db, rows)
        return records[0] if records else None

    def get_records(self, record_ids: Collection[str]) -> list[Record]:
        out: list[Record] = []
        with self._reading() as db:
            for chunk in chunks(list(record_ids)):
                rows = db.execute(
                    f"SELECT {RECORD_COLUMNS} FROM records WHERE id IN ({marks(len(chunk))})",
                    chunk,
                ).fetchall()
                out.extend(self._records(db, rows))
        return out

    def iter_records(self, query: RecordQuery, *, batch: int = 1000) -> Iterator[Record]:
        where, params = _record_filter(query)
        # tier queries ask for the few hot records: the status index finds them directly
        source = "records INDEXED BY records_status" if query.tiers is not None else "records"
        last = 0
        while True:
            with self._reading() as db:
                rows = db.execute(
                    f"SELECT {RECORD_COLUMNS} FROM {source} WHERE {where} AND seq > ? "
                    "ORDER BY seq LIMIT ?",
                    (*params, last, batch),
                ).fetchall()
                records = self._records(db, rows)
            if not rows:
                return
            last = rows[-1][0]
            yield from records

    def count(self, scope: Scope | None, kind: Kind) -> int:
        where, params = scope_clause(scope)
        with self._reading() as db:
            if kind is Kind.EPISODE:
                row = db.execute(f"SELECT count(*) FROM episodes WHERE {where}", params).fetchone()
            else:
                row = db.execute(
                    f"SELECT count(*) FROM records WHERE {where} AND kind = ? "
                    "AND status = 'active'",
                    (*params, kind.value),
                ).fetchone()
        return int(row[0])

    def get_vectors(self, record_ids: Sequence[str]) -> Vectors:
        pin = self.read_pin()
        dim = pin.dim if pin else 0
        by_id: dict[str, bytes] = {}
        with self._reading() as db:
            for chunk in chunks(list(record_ids)):
                by_id.update(
                    db.execute(
                        f"SELECT id, vector FROM records WHERE id IN ({marks(len(chunk))})", chunk
                    )
                )
        out = np.zeros((len(record_ids), dim), np.float32)
        with decoding("vector"):
            for i, rid in enumerate(record_ids):
                blob = by_id.get(rid)
                if blob is not None:
                    out[i] = np.frombuffer(blob, np.float32)
        return out

    # -- search -------------------------------------------------------------------------

    def search(
        self,
        scope: Scope,
        vector: Vectors,
        *,
        text: str | None,
        limit: int,
        kinds: Collection[Kind] = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE),
    ) -> list[Candidate]:
        with self._reading() as db:
            index = self._catch_up(db)
            if index is None:
                return []
            hits = dict(index.search(scope, vector, limit=limit))
            keyword = self._keyword_hits(db, scope, text, limit) if text else {}
            for seq in keyword.keys() - hits.keys():  # keyword-only hits need their cosine
                found = index.similarity(seq, vector)
                if found is not None:
                    hits[seq] = found
            if not hits:
                return []
            where, params = scope_clause(scope)
            kind_values = [k.value for k in kinds]
            by_seq: dict[int, Record] = {}
            for chunk in chunks(list(hits)):
                # NOT INDEXED: look the rows up by seq, never by scanning a scope index
                rows = db.execute(
                    f"SELECT {RECORD_COLUMNS} FROM records NOT INDEXED "
                    f"WHERE seq IN ({marks(len(chunk))}) "
                    f"AND status = 'active' AND kind IN ({marks(len(kind_values))}) AND {where}",
                    (*chunk, *kind_values, *params),
                ).fetchall()
                for row, record in zip(rows, self._records(db, rows)):
                    by_seq[row[0]] = record
        ordered = sorted(by_seq, key=lambda s: -hits[s])
        return [Candidate(by_seq[s], hits[s], keyword.get(s, 0.0)) for s in ordered]

    def _keyword_hits(
        self, db: sqlite3.Connection, scope: Scope, text: str, limit: int
    ) -> dict[int, float]:
        """BM25 finds the candidates; their keyword score is the share of query terms they hold
        (bounded and comparable across queries, unlike raw BM25).

        Records holding every query word are asked for first; the costlier any-word search
        (BM25 over every record that shares one word) runs only when those are few.
        """
        where, params = scope_clause(scope, "r")
        hits: dict[int, float] = {}
        for match in fts_queries(text, scope):
            rows = db.execute(
                "SELECT r.seq, r.search FROM (SELECT rowid, rank FROM records_fts "
                "WHERE records_fts MATCH ? ORDER BY rank LIMIT ?) AS f "
                "JOIN records r ON r.seq = f.rowid "
                f"WHERE r.status = 'active' AND {where} ORDER BY f.rank",
                (match, _KEYWORD_OVERFETCH * limit, *params),
            ).fetchall()
            for seq, search in rows[: limit - len(hits)]:
                hits.setdefault(seq, keyword_coverage(text, search))
            if len(hits) >= _KEYWORD_ENOUGH:
                break
        return hits

    def nearest(self, scope: Scope, vectors: Vectors) -> list[tuple[str, float] | None]:
        with self._reading() as db:
            index = self._catch_up(db)
            if index is None or len(vectors) == 0:
                return [None] * len(vectors)
            found = index.nearest(scope, np.asarray(vectors, np.float32))
            seqs = sorted({hit[0] for hit in found if hit is not None})
            ids: dict[int, str] = {}
            for chunk in chunks(seqs):
                ids.update(
                    db.execute(
                        f"SELECT seq, id FROM records WHERE seq IN ({marks(len(chunk))}) "
                        "AND status = 'active' AND kind = 'note'",
                        chunk,
                    )
                )
            for q, hit in enumerate(found):
                if hit is not None and hit[0] not in ids:
                    # the closest vector is not an active note: look further down the ranking
                    found[q] = self._nearest_note(db, index, scope, vectors[q], ids)
        return [
            None if hit is None or hit[0] not in ids else (ids[hit[0]], hit[1]) for hit in found
        ]

    def _nearest_note(
        self,
        db: sqlite3.Connection,
        index: VectorIndex,
        scope: Scope,
        vector: Vectors,
        ids: dict[int, str],
    ) -> tuple[int, float] | None:
        ranked = index.search(scope, np.asarray(vector, np.float32), limit=len(index))
        for chunk in chunks(ranked, 200):
            seqs = [seq for seq, _ in chunk]
            ids.update(
                db.execute(
                    f"SELECT seq, id FROM records WHERE seq IN ({marks(len(seqs))}) "
                    "AND status = 'active' AND kind = 'note'",
                    seqs,
                )
            )
            for seq, sim in chunk:
                if seq in ids:
                    return seq, sim
        return None

    def _catch_up(self, db: sqlite3.Connection) -> VectorIndex | None:
        """Load the vectors written since the last search (by any process)."""
        if self._index is None:
            pin = self.read_pin()
            if pin is None:
                return None
            self._index = VectorIndex(pin.dim)
        index = self._index
        rows = db.execute(
            "SELECT seq, scope_user, scope_agent, scope_thread, vector FROM records "
            "WHERE seq > ? AND vector IS NOT NULL ORDER BY seq",
            (index.max_seq,),
        ).fetchall()
        grouped: dict[tuple[str, str, str], tuple[list[int], list[bytes]]] = {}
        for seq, user, agent, thread, blob in rows:
            seqs, blobs = grouped.setdefault((user, agent, thread), ([], []))
            seqs.append(seq)
            blobs.append(blob)
        for parts, (seqs, blobs) in grouped.items():
            with decoding("vector"):
                matrix = np.frombuffer(b"".join(blobs), np.float32).reshape(len(seqs), index.dim)
            index.add(parts, np.asarray(seqs, np.int64), matrix)
        return index

    def recent_records(self, scope: Scope, *, kinds: Collection[Kind], limit: int) -> list[Record]:
        where, params = scope_clause(scope)
        with self._reading() as db:
            rows = db.execute(
                f"SELECT {RECORD_COLUMNS} FROM records WHERE {where} "
                f"AND kind IN ({marks(len(kinds))}) AND status = 'active' "
                "ORDER BY seq DESC LIMIT ?",
                (*params, *(k.value for k in kinds), limit),
            ).fetchall()
            return self._records(db, rows)

    # -- updates ------------------------------------------------------------------------

    def touch(self, record_ids: Collection[str], *, at: datetime) -> None:
        if not record_ids:
            return
        with self._transaction() as db:
            for chunk in chunks(list(record_ids)):
                # relative increments in one statement: concurrent recalls never lose a count
                db.execute(
                    "UPDATE records SET access_count = access_count + 1, "
                    f"last_access = max(last_access, ?) WHERE id IN ({marks(len(chunk))})",
                    (to_epoch(at), *chunk),
                )

    def record_feedback(
        self, *, used: Collection[str], ignored: Collection[str], at: datetime
    ) -> None:
        with self._transaction() as db:
            for chunk in chunks(list(used)):
                db.execute(
                    "UPDATE records SET used_count = used_count + 1, "
                    f"last_access = max(last_access, ?) WHERE id IN ({marks(len(chunk))})",
                    (to_epoch(at), *chunk),
                )
            db.executemany(
                "INSERT INTO uses (record_id, at) VALUES (?, ?)",
                [(rid, to_epoch(at)) for rid in used],
            )
            for chunk in chunks(list(ignored)):
                db.execute(
                    "UPDATE records SET ignored_count = ignored_count + 1 "
                    f"WHERE id IN ({marks(len(chunk))})",
                    chunk,
                )

    def uses_since(self, record_ids: Collection[str], since: datetime) -> dict[str, int]:
        out: dict[str, int] = {}
        with self._reading() as db:
            for chunk in chunks(list(record_ids)):
                out.update(
                    db.execute(
                        f"SELECT record_id, count(*) FROM uses WHERE record_id IN "
                        f"({marks(len(chunk))}) AND at >= ? GROUP BY record_id",
                        (*chunk, to_epoch(since)),
                    )
                )
        return out

    def update_records(
        self,
        record_ids: Collection[str],
        *,
        at: datetime,
        tier: Tier | None = None,
        status: Status | None = None,
        pinned: bool | None = None,
        valid_to: datetime | None = None,
        superseded_by: str | None = None,
        tags: Any = None,
    ) -> None:
        sets: list[str] = []
        values: list[Any] = []
        if tier is not None:
            sets += ["tier = ?", "tier_since = ?"]
            values += [tier.value, to_epoch(at)]
        if status is not None:
            sets += ["status = ?", "status_since = ?"]
            values += [status.value, to_epoch(at)]
        if pinned is not None:
            sets.append("pinned = ?")
            values.append(int(pinned))
        if valid_to is not None:
            sets.append("valid_to = ?")
            values.append(to_epoch(valid_to))
        if superseded_by is not None:
            sets.append("superseded_by = ?")
            values.append(superseded_by)
        if isinstance(tags, Tags):
            sets.append("tags = ?")
            values.append(json.dumps(tags.to_json(), ensure_ascii=False))
        if not sets or not record_ids:
            return
        with self._transaction() as db:
            for chunk in chunks(list(record_ids)):
                db.execute(
                    f"UPDATE records SET {', '.join(sets)} WHERE id IN ({marks(len(chunk))})",
                    (*values, *chunk),
                )

    def delete_records(self, record_ids: Collection[str]) -> list[str]:
        with self._transaction() as db:
            return self._delete_records(db, record_ids)

    def _delete_records(self, db: sqlite3.Connection, record_ids: Collection[str]) -> list[str]:
        removed: list[str] = []
        for chunk in chunks(list(record_ids)):
            found = db.execute(
                f"SELECT seq, id FROM records WHERE id IN ({marks(len(chunk))})", chunk
            ).fetchall()
            if not found:
                continue
            ids = [rid for _, rid in found]
            q = marks(len(ids))
            db.execute(f"DELETE FROM records WHERE id IN ({q})", ids)
            db.execute(f"DELETE FROM provenance WHERE record_id IN ({q})", ids)
            db.execute(f"DELETE FROM links WHERE a IN ({q}) OR b IN ({q})", ids + ids)
            db.execute(f"DELETE FROM uses WHERE record_id IN ({q})", ids)
            removed.extend(ids)
            if self._index is not None:
                self._index.discard({seq for seq, _ in found})
        return removed

    def delete_episodes(self, episode_ids: Collection[str]) -> list[str]:
        removed: list[str] = []
        with self._transaction() as db:
            for chunk in chunks(list(episode_ids)):
                found = [
                    r[0]
                    for r in db.execute(
                        f"SELECT id FROM episodes WHERE id IN ({marks(len(chunk))})", chunk
                    )
                ]
                db.execute(f"DELETE FROM episodes WHERE id IN ({marks(len(found))})", found)
                db.executemany(
                    "INSERT OR IGNORE INTO forgotten (id) VALUES (?)", [(f,) for f in found]
                )
                removed.extend(found)
        return removed

    def derived_from(self, source_ids: Collection[str]) -> list[str]:
        with self._reading() as db:
            return self._derived_from(db, source_ids)

    def _derived_from(self, db: sqlite3.Connection, source_ids: Collection[str]) -> list[str]:
        out: list[str] = []
        for chunk in chunks(list(source_ids)):
            out.extend(
                r[0]
                for r in db.execute(
                    "SELECT DISTINCT record_id FROM provenance WHERE source_id IN "
                    f"({marks(len(chunk))})",
                    chunk,
                )
            )
        return out

    def delete_scope(self, scope: Scope) -> dict[str, int]:
        where, params = scope_clause(scope)
        with self._lock, self._translate_errors():
            self._check_open()
            self._db.execute("PRAGMA secure_delete = ON")  # zero what is freed, not only unlink
            try:
                return self._delete_scope(where, params)
            finally:
                self._db.execute("PRAGMA secure_delete = OFF")

    def _delete_scope(self, where: str, params: tuple[str, ...]) -> dict[str, int]:
        with self._transaction() as db:
            rows = db.execute(
                f"SELECT id, scope_user, scope_agent, scope_thread FROM records WHERE {where}",
                params,
            ).fetchall()
            doomed = {r[0] for r in rows}
            frontier = set(doomed)
            while frontier:  # what was derived from them elsewhere, transitively
                derived = set(self._derived_from(db, frontier)) - doomed
                doomed |= derived
                frontier = derived
            counts = {"records": len(self._delete_records(db, doomed))}
            for table in ("episodes", "audit", "recalls", "conflicts", "cards"):
                counts[table] = db.execute(f"DELETE FROM {table} WHERE {where}", params).rowcount
            counts["audit"] += self._delete_traces(db, doomed, {r[1:] for r in rows})
            # FTS5 keeps the terms of deleted rows in old segments until they are merged
            db.execute("INSERT INTO records_fts (records_fts) VALUES ('optimize')")
        if self._path != ":memory:":  # and old log frames still hold the deleted pages
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return counts

    def _delete_traces(
        self, db: sqlite3.Connection, doomed: set[str], note_scopes: set[tuple[str, str, str]]
    ) -> int:
        """Outside a forgotten scope: audit entries and conflicts naming a removed record,
        and the cards of broader scopes, which were written from its notes."""
        audit = 0
        for chunk in chunks(list(doomed)):
            audit += db.execute(
                f"DELETE FROM audit WHERE record_id IN ({marks(len(chunk))})", chunk
            ).rowcount
        stale = [
            cid
            for cid, ids in db.execute("SELECT id, record_ids FROM conflicts")
            if doomed & _ids_in(ids)
        ]
        for chunk in chunks(stale):
            db.execute(f"DELETE FROM conflicts WHERE id IN ({marks(len(chunk))})", chunk)
        # a card is written from the notes its scope owns (``Scope.owns``): only those are
        # stale; a card of the agent's anonymous runs never held a user's notes
        for user, agent, thread in note_scopes:
            note_scope = scope_from_parts(user, agent, thread)
            cards = db.execute(
                "SELECT scope_user, scope_agent, scope_thread FROM cards WHERE scope_user = ? "
                "AND scope_agent IN ('', ?) AND scope_thread IN ('', ?)",
                (user, agent, thread),
            ).fetchall()
            for parts in cards:
                if any(parts) and scope_from_parts(*parts).owns(note_scope):
                    db.execute(
                        "DELETE FROM cards WHERE scope_user = ? AND scope_agent = ? "
                        "AND scope_thread = ?",
                        parts,
                    )
        return audit

    # -- links ----------------------------------------------------------------------------

    def reinforce_links(
        self, pairs: Sequence[tuple[str, str, str]], *, delta: float, at: datetime
    ) -> None:
        rows = [
            (*sorted((a, b)), kind, min(1.0, delta), to_epoch(at), delta)
            for a, b, kind in pairs
            if a != b
        ]
        if not rows:
            return
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO links (a, b, kind, weight, updated_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (a, b, kind) DO UPDATE SET "
                "weight = min(1.0, weight + ?6), updated_at = excluded.updated_at",
                rows,
            )

    def links_of(self, record_ids: Collection[str], *, min_weight: float) -> list[Link]:
        out: dict[tuple[str, str, str], Link] = {}
        with self._reading() as db:
            for chunk in chunks(list(record_ids)):
                q = marks(len(chunk))
                for a, b, kind, weight, updated in db.execute(
                    f"SELECT a, b, kind, weight, updated_at FROM links WHERE (a IN ({q}) "
                    f"OR b IN ({q})) AND weight >= ?",
                    (*chunk, *chunk, min_weight),
                ):
                    out[(a, b, kind)] = Link(
                        a, b, kind, weight, maybe_datetime(updated) or datetime.min
                    )
        return list(out.values())

    def decay_links(self, *, factor: float, at: datetime) -> None:
        with self._transaction() as db:
            db.execute("UPDATE links SET weight = weight * ?", (factor,))

    def prune_links(self, *, min_weight: float) -> int:
        with self._transaction() as db:
            return db.execute("DELETE FROM links WHERE weight < ?", (min_weight,)).rowcount

    # -- bookkeeping ----------------------------------------------------------------------

    def append_audit(self, entries: Sequence[AuditEntry]) -> None:
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO audit (at, scope_user, scope_agent, scope_thread, action, rule, "
                "record_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (to_epoch(e.at), *e.scope.parts(), e.action, e.rule, e.record_id, e.detail)
                    for e in entries
                ],
            )

    def audit_log(self, scope: Scope | None, *, limit: int) -> list[AuditEntry]:
        where, params = scope_clause(scope)
        with self._reading() as db:
            rows = db.execute(
                "SELECT at, scope_user, scope_agent, scope_thread, action, rule, record_id, "
                f"detail FROM audit WHERE {where} ORDER BY seq DESC LIMIT ?",
                (*params, limit),
            ).fetchall()
        with decoding("audit entry"):
            return [
                AuditEntry(
                    maybe_datetime(at) or datetime.min,
                    scope_from_parts(u, a, t),
                    action,
                    rule,
                    rid,
                    detail,
                )
                for at, u, a, t, action, rule, rid, detail in rows
            ]

    def log_recall(self, log: RecallLog) -> None:
        ids = {"retrieved": list(log.item_ids), "shown": list(log.shown_ids)}
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO recalls (id, scope_user, scope_agent, scope_thread, at, "
                "item_ids, feedback_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    log.id,
                    *log.scope.parts(),
                    to_epoch(log.at),
                    json.dumps(ids),
                    maybe_epoch(log.feedback_at),
                ),
            )

    def get_recall(self, recall_id: str) -> RecallLog | None:
        with self._reading() as db:
            row = db.execute(
                "SELECT id, scope_user, scope_agent, scope_thread, at, item_ids, feedback_at "
                "FROM recalls WHERE id = ?",
                (recall_id,),
            ).fetchone()
        if row is None:
            return None
        rid, u, a, t, at, items, feedback = row
        with decoding("recall log"):
            ids = json.loads(items)
            return RecallLog(
                rid,
                scope_from_parts(u, a, t),
                maybe_datetime(at) or datetime.min,
                tuple(ids["retrieved"]),
                maybe_datetime(feedback),
                tuple(ids["shown"]),
            )

    def mark_recall_feedback(self, recall_id: str, *, at: datetime) -> bool:
        with self._transaction() as db:
            return (
                db.execute(
                    "UPDATE recalls SET feedback_at = ? WHERE id = ? AND feedback_at IS NULL",
                    (to_epoch(at), recall_id),
                ).rowcount
                == 1
            )

    def add_conflict(self, conflict: Conflict) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO conflicts (id, scope_user, scope_agent, scope_thread, "
                "entity, reason, record_ids, created_at, resolved_at, resolution) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    conflict.id,
                    *conflict.scope.parts(),
                    conflict.entity,
                    conflict.reason,
                    json.dumps(list(conflict.record_ids)),
                    to_epoch(conflict.created_at),
                    maybe_epoch(conflict.resolved_at),
                    conflict.resolution,
                ),
            )

    def conflicts(self, scope: Scope | None, *, open_only: bool) -> list[Conflict]:
        where, params = scope_clause(scope)
        extra = " AND resolved_at IS NULL" if open_only else ""
        with self._reading() as db:
            rows = db.execute(
                "SELECT id, scope_user, scope_agent, scope_thread, entity, reason, record_ids, "
                f"created_at, resolved_at, resolution FROM conflicts WHERE {where}{extra} "
                "ORDER BY created_at",
                params,
            ).fetchall()
        with decoding("conflict"):
            return [
                Conflict(
                    cid,
                    scope_from_parts(u, a, t),
                    entity,
                    reason,
                    tuple(json.loads(ids)),
                    maybe_datetime(created) or datetime.min,
                    maybe_datetime(resolved),
                    resolution,
                )
                for cid, u, a, t, entity, reason, ids, created, resolved, resolution in rows
            ]

    def resolve_conflict(self, conflict_id: str, *, resolution: str, at: datetime) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE conflicts SET resolved_at = ?, resolution = ? WHERE id = ?",
                (to_epoch(at), resolution, conflict_id),
            )

    def get_card(self, scope: Scope, kind: str) -> Card | None:
        with self._reading() as db:
            row = db.execute(
                "SELECT text, data, updated_at FROM cards WHERE scope_user = ? AND "
                "scope_agent = ? AND scope_thread = ? AND kind = ?",
                (*scope.parts(), kind),
            ).fetchone()
        if row is None:
            return None
        text, data, updated = row
        with decoding("card"):
            return Card(
                scope, kind, text, maybe_datetime(updated) or datetime.min, json.loads(data)
            )

    def put_card(self, card: Card) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO cards (scope_user, scope_agent, scope_thread, kind, "
                "text, data, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    *card.scope.parts(),
                    card.kind,
                    card.text,
                    json.dumps(dict(card.data), ensure_ascii=False),
                    to_epoch(card.updated_at),
                ),
            )

    # -- row mapping --------------------------------------------------------------------

    def _records(self, db: sqlite3.Connection, rows: Sequence[Any]) -> list[Record]:
        ids = [row[1] for row in rows]
        sources: dict[str, list[str]] = {}
        for chunk in chunks(ids):
            for record_id, source_id in db.execute(
                "SELECT record_id, source_id FROM provenance WHERE record_id IN "
                f"({marks(len(chunk))}) ORDER BY source_id",
                chunk,
            ):
                sources.setdefault(record_id, []).append(source_id)
        return [record_from_row(row, tuple(sources.get(row[1], ()))) for row in rows]


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


def _ids_in(encoded: str) -> set[str]:
    with decoding("conflict"):
        return set(json.loads(encoded))


def _check_file(path: str) -> None:
    """Refuse, before SQLite opens it, a file SQLite would take for an empty database
    (and so overwrite) or one shorter than its own header says: a truncated copy."""
    try:
        # the header first: a checkpoint in another process writes it before growing the file
        with open(path, "rb") as f:
            header = f.read(100)
        size = os.path.getsize(path)
        log = os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0
    except OSError:
        return  # let SQLite say what is wrong with it
    if not header:
        return  # an empty file: a new store
    damaged = (
        f"{path!r} is damaged or not an SQLite file; restore it from a backup or point the URL "
        "at a new file: commonplace will not overwrite it"
    )
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        raise CorruptStoreError(damaged)
    if log:
        return  # newer pages live in the write-ahead log; SQLite reads them from there
    page = int.from_bytes(header[16:18], "big")
    page = 65_536 if page == 1 else page
    pages = int.from_bytes(header[28:32], "big")
    short = header[24:28] == header[92:96] and size < pages * page  # header size is valid
    if page < 512 or page & (page - 1) or size % page or short:
        raise CorruptStoreError(
            f"{path!r} is truncated ({size} bytes; its header says {pages} pages of {page}); "
            "restore it from a backup or point the URL at a new file: commonplace will not "
            "overwrite it"
        )


def _record_filter(query: RecordQuery) -> tuple[str, tuple[Any, ...]]:
    where, scope_params = scope_clause(query.scope)
    clauses = [where]
    params: list[Any] = list(scope_params)
    clauses.append(f"kind IN ({marks(len(query.kinds))})")
    params += [k.value for k in query.kinds]
    clauses.append(f"status IN ({marks(len(query.statuses))})")
    params += [s.value for s in query.statuses]
    if query.tiers is not None:
        clauses.append(f"tier IN ({marks(len(query.tiers))})")
        params += [t.value for t in query.tiers]
    if query.subject is not None:
        clauses.append("subject = ?")
        params.append(query.subject)
    if query.predicate is not None:
        clauses.append("predicate = ?")
        params.append(query.predicate)
    if query.entity is not None:
        clauses.append("instr(entities, ?) > 0")
        params.append(ENTITY_SEPARATOR + query.entity.lower() + ENTITY_SEPARATOR)
    if query.superseded is not None:
        clauses.append("superseded_by IS NOT NULL" if query.superseded else "superseded_by IS NULL")
    if query.created_before is not None:
        clauses.append("created_at < ?")
        params.append(to_epoch(query.created_before))
    return " AND ".join(clauses), tuple(params)


def _hint(exc: sqlite3.OperationalError) -> str:
    """What to do about an operational error, for the ones a user can act on."""
    text = str(exc).lower()
    if "no transaction is active" in text or "disk i/o error" in text:
        return (
            "; the store's journal (its -wal or -shm file) may have been deleted or its disk "
            "removed while it was open: close this Memory and open the store again"
        )
    if "database or disk is full" in text:
        return "; free disk space (nothing of this call was stored) and retry"
    if "readonly" in text or "read-only" in text:
        return "; the file or its folder is not writable: fix its permissions or use a copy"
    if "locked" in text or "busy" in text:
        return "; another process holds a write lock for too long: retry, or raise its timeout"
    if "unable to open" in text:
        return "; check that the folder exists and is writable"
    return ""
