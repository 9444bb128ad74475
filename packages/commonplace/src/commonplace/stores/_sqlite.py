"""The embedded default store: one SQLite file, WAL, one transaction per batch.

Rows are the truth. Vectors live in the ``records`` table as float32 blobs and
are cached in a :class:`VectorIndex` that catches up by row sequence number
before every search, so writes from other processes become visible too.
Keyword candidates come from an FTS5 index kept in step by triggers.

This module holds the record store proper: episodes, records, search and forgetting.
:class:`SQLiteBackend` composes it with the parts kept in modules of their own, each on
the connection base of ``_sqlite_connection`` (opening, transactions, errors): the
ledger (``_sqlite_ledger``), the links (``_sqlite_links``) and the embedder pin and
re-embedding (``_sqlite_reembed``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from .._clock import to_epoch
from .._records import Episode, Kind, Record, Status, Tags, Tier
from .._scope import Scope
from .._text import keyword_coverage
from ..embedders import Vectors
from ..errors import InvalidInputError
from ._protocol import Candidate, RecordQuery, TurnWrite
from ._sqlite_ledger import SQLiteLedger
from ._sqlite_links import SQLiteLinks
from ._sqlite_reembed import SQLiteReembed
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
    record_values,
    scope_clause,
)
from ._vector_index import VectorIndex

# Keyword search asks FTS5 for a few more rows than it needs (the status filter runs
# after ranking), and is satisfied once the all-words search found this many.
_KEYWORD_OVERFETCH = 2
_KEYWORD_ENOUGH = 10


class SQLiteBackend(SQLiteLedger, SQLiteLinks, SQLiteReembed):
    """A commonplace store in one SQLite file (or in memory with ``":memory:"``)."""

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
