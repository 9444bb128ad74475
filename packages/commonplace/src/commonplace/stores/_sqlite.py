"""The embedded default store: one SQLite file, WAL, one transaction per batch.

Rows are the truth. Vectors live in the ``records`` table as float32 blobs and
are cached in a :class:`VectorIndex` that catches up by row sequence number
before every search, so writes from other processes become visible too.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Collection, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from .._clock import from_epoch, to_epoch
from .._records import Episode, Kind, Record, Role, Tags, Tier
from .._scope import Scope
from ..embedders import Vectors
from ..errors import (
    CorruptStoreError,
    InvalidInputError,
    SchemaVersionError,
    StoreClosedError,
    StoreError,
)
from ._protocol import Candidate, EmbedderPin, TurnWrite
from ._sqlite_schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from ._vector_index import VectorIndex

_RECORD_COLUMNS = (
    "seq, id, kind, scope_user, scope_agent, scope_thread, text, tags, tier, created_at, "
    "last_access, access_count, valid_from, valid_to, superseded_by"
)
_EPISODE_COLUMNS = "id, scope_user, scope_agent, scope_thread, role, text, at, meta"


class SQLiteBackend:
    """A commonplace store in one SQLite file (or in memory with ``":memory:"``)."""

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self._path = str(path)
        self._lock = threading.RLock()
        self._index: VectorIndex | None = None
        self._closed = False
        if self._path != ":memory:" and not Path(self._path).parent.is_dir():
            raise StoreError(
                f"cannot create a store at {self._path!r}: the folder "
                f"{str(Path(self._path).parent)!r} does not exist; create it first"
            )
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

    # -- opening ------------------------------------------------------------------

    def _open(self) -> None:
        with self._translate_errors():
            app_id = self._db.execute("PRAGMA application_id").fetchone()[0]
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            has_tables = self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
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
        with self._translate_errors():
            self._db.execute("PRAGMA busy_timeout = 30000")
            if self._path != ":memory:":
                self._db.execute("PRAGMA journal_mode = WAL")
                # WAL with synchronous=NORMAL survives a killed process; FULL adds power loss.
                self._db.execute("PRAGMA synchronous = NORMAL")
            if version < SCHEMA_VERSION:
                with self._transaction():
                    for migrate in MIGRATIONS[version:]:
                        migrate(self._db)
                    self._db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                    self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextlib.contextmanager
    def _translate_errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as exc:
            raise StoreError(f"SQLite error on {self._path!r}: {exc}") from exc
        except sqlite3.IntegrityError:
            raise
        except sqlite3.DatabaseError as exc:
            raise CorruptStoreError(
                f"{self._path!r} is damaged or not an SQLite file ({exc}); restore it from a "
                "backup or point the URL at a new file: commonplace will not overwrite it"
            ) from exc

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._closed:
                raise StoreClosedError("this store is closed; open a new Memory to use it")
            with self._translate_errors():
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")

    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._closed:
                raise StoreClosedError("this store is closed; open a new Memory to use it")
            with self._translate_errors():
                yield self._db

    # -- protocol -----------------------------------------------------------------

    @property
    def url(self) -> str:
        return "sqlite:///" + self._path

    def read_pin(self) -> EmbedderPin | None:
        with self._reading() as db:
            rows = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'embedder.%'"))
        if "embedder.name" not in rows:
            return None
        return EmbedderPin(name=rows["embedder.name"], dim=int(rows["embedder.dim"]))

    def write_pin(self, pin: EmbedderPin) -> None:
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [("embedder.name", pin.name), ("embedder.dim", str(pin.dim))],
            )

    def existing_episode_ids(self, ids: Collection[str]) -> set[str]:
        found: set[str] = set()
        with self._reading() as db:
            for chunk in _chunks(list(ids)):
                marks = ",".join("?" * len(chunk))
                found.update(
                    row[0]
                    for row in db.execute(f"SELECT id FROM episodes WHERE id IN ({marks})", chunk)
                )
        return found

    def write_turns(self, turns: Sequence[TurnWrite], vectors: Vectors | None) -> list[bool]:
        notes = sum(1 for t in turns if t.note is not None)
        if notes and (vectors is None or len(vectors) != notes):
            raise InvalidInputError("write_turns needs exactly one vector per note")
        fresh: list[bool] = []
        vector_row = 0
        with self._transaction() as db:
            for turn in turns:
                ep = turn.episode
                cursor = db.execute(
                    f"INSERT OR IGNORE INTO episodes ({_EPISODE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
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
                if turn.note is None:
                    continue
                assert vectors is not None
                vector = vectors[vector_row]
                vector_row += 1
                if is_new:
                    self._insert_record(db, turn.note, vector)
        return fresh

    def _insert_record(self, db: sqlite3.Connection, record: Record, vector: Vectors) -> None:
        key = record.tags.key
        db.execute(
            "INSERT INTO records (id, kind, scope_user, scope_agent, scope_thread, text, tags, "
            "tier, subject, predicate, created_at, last_access, access_count, valid_from, "
            "valid_to, superseded_by, vector) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                record.id,
                record.kind.value,
                *record.scope.parts(),
                record.text,
                json.dumps(record.tags.to_json(), ensure_ascii=False),
                record.tier.value,
                None if key is None else key.subject,
                None if key is None else key.predicate,
                to_epoch(record.created_at),
                to_epoch(record.last_access),
                record.access_count,
                _epoch_or_none(record.valid_from),
                _epoch_or_none(record.valid_to),
                record.superseded_by,
                np.asarray(vector, np.float32).tobytes(),
            ),
        )
        db.executemany(
            "INSERT OR IGNORE INTO provenance (record_id, source_id) VALUES (?, ?)",
            [(record.id, source) for source in record.provenance],
        )

    def get_episode(self, episode_id: str) -> Episode | None:
        with self._reading() as db:
            row = db.execute(
                f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE id = ?", (episode_id,)
            ).fetchone()
        return None if row is None else _episode(row)

    def get_record(self, record_id: str) -> Record | None:
        with self._reading() as db:
            rows = db.execute(
                f"SELECT {_RECORD_COLUMNS} FROM records WHERE id = ? AND status = 'active'",
                (record_id,),
            ).fetchall()
            records = self._records(db, rows)
        return records[0] if records else None

    def search(self, scope: Scope, vector: Vectors, *, limit: int) -> list[Candidate]:
        with self._reading() as db:
            index = self._catch_up(db)
            if index is None:
                return []
            hits = index.search(scope, vector, limit=limit)
            if not hits:
                return []
            where, params = _scope_clause(scope)
            by_seq: dict[int, Record] = {}
            for chunk in _chunks([seq for seq, _ in hits]):
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    f"SELECT {_RECORD_COLUMNS} FROM records WHERE seq IN ({marks}) "
                    f"AND status = 'active' AND {where}",
                    (*chunk, *params),
                ).fetchall()
                for row, record in zip(rows, self._records(db, rows)):
                    by_seq[row[0]] = record
        return [Candidate(by_seq[seq], sim) for seq, sim in hits if seq in by_seq]

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
            matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(seqs), index.dim)
            index.add(parts, np.asarray(seqs, np.int64), matrix)
        return index

    def recent_records(self, scope: Scope, *, kinds: Collection[Kind], limit: int) -> list[Record]:
        where, params = _scope_clause(scope)
        kind_marks = ",".join("?" * len(kinds))
        with self._reading() as db:
            rows = db.execute(
                f"SELECT {_RECORD_COLUMNS} FROM records WHERE {where} AND kind IN ({kind_marks}) "
                "AND status = 'active' ORDER BY seq DESC LIMIT ?",
                (*params, *(k.value for k in kinds), limit),
            ).fetchall()
            return self._records(db, rows)

    def count(self, scope: Scope | None, kind: Kind) -> int:
        where, params = ("1", ()) if scope is None else _scope_clause(scope)
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

    def touch(self, record_ids: Collection[str], *, at: datetime) -> None:
        if not record_ids:
            return
        with self._transaction() as db:
            for chunk in _chunks(list(record_ids)):
                marks = ",".join("?" * len(chunk))
                # One UPDATE with relative increments: concurrent recalls never lose a count.
                db.execute(
                    "UPDATE records SET access_count = access_count + 1, "
                    f"last_access = max(last_access, ?) WHERE id IN ({marks})",
                    (to_epoch(at), *chunk),
                )

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._index = None
                self._db.close()

    # -- row mapping --------------------------------------------------------------

    def _records(self, db: sqlite3.Connection, rows: Sequence[Any]) -> list[Record]:
        ids = [row[1] for row in rows]
        sources: dict[str, list[str]] = {}
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            for record_id, source_id in db.execute(
                f"SELECT record_id, source_id FROM provenance WHERE record_id IN ({marks}) "
                "ORDER BY source_id",
                chunk,
            ):
                sources.setdefault(record_id, []).append(source_id)
        return [_record(row, tuple(sources.get(row[1], ()))) for row in rows]


def _record(row: Any, provenance: tuple[str, ...]) -> Record:
    (
        _seq,
        rid,
        kind,
        user,
        agent,
        thread,
        text,
        tags,
        tier,
        created,
        last,
        count,
        valid_from,
        valid_to,
        superseded_by,
    ) = row
    return Record(
        id=rid,
        kind=Kind(kind),
        scope=_scope(user, agent, thread),
        text=text,
        tags=Tags.from_json(json.loads(tags)),
        provenance=provenance,
        created_at=from_epoch(created),
        last_access=from_epoch(last),
        access_count=count,
        tier=Tier(tier),
        valid_from=None if valid_from is None else from_epoch(valid_from),
        valid_to=None if valid_to is None else from_epoch(valid_to),
        superseded_by=superseded_by,
    )


def _episode(row: Any) -> Episode:
    eid, user, agent, thread, role, text, at, meta = row
    return Episode(
        id=eid,
        scope=_scope(user, agent, thread),
        role=Role(role),
        text=text,
        at=from_epoch(at),
        meta=json.loads(meta),
    )


def _scope(user: str, agent: str, thread: str) -> Scope:
    return Scope(user=user or None, agent=agent or None, thread=thread or None)


def _scope_clause(scope: Scope) -> tuple[str, tuple[str, ...]]:
    """A WHERE fragment matching every record visible in ``scope`` (values bound, never inlined)."""
    clauses, params = [], []
    for column, value in zip(("scope_user", "scope_agent", "scope_thread"), scope.parts()):
        if value:
            clauses.append(f"{column} = ?")
            params.append(value)
    return " AND ".join(clauses), tuple(params)


def _epoch_or_none(when: datetime | None) -> float | None:
    return None if when is None else to_epoch(when)


def _chunks(items: list[Any], size: int = 500) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
