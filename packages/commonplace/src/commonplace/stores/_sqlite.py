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
import math
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from .._clock import to_epoch
from .._records import Episode, Kind, Record, Status, Tags, Tier
from .._scope import Scope
from ..embedders._protocol import Vectors
from ..errors import InvalidInputError
from ._protocol import (
    BatchAnswer,
    Hit,
    Link,
    ReadBatch,
    RecordQuery,
    TurnWrite,
    WriteBatch,
)
from ._sqlite_ledger import SQLiteLedger
from ._sqlite_links import SQLiteLinks, delete_links_of
from ._sqlite_rows import (
    ENTITY_SEPARATOR,
    EPISODE_COLUMNS,
    INSERT_COLUMNS,
    RECORD_COLUMNS,
    chunks,
    decoding,
    entity_column,
    episode_from_row,
    fts_match,
    fts_words,
    marks,
    record_values,
    scope_clause,
    scope_from_parts,
    search_column,
)
from ._sqlite_vectors import SQLiteVectors
from ._vector_index import ANN_ROWS, VectorIndex


def add_sources(db: sqlite3.Connection, pairs: Sequence[tuple[str, str]]) -> None:
    """Provenance rows, each a (record id, source id) pair of a stored record: a row names
    its record by seq (schema v6)."""
    db.executemany(
        "INSERT OR IGNORE INTO provenance (record_seq, source_id) "
        "SELECT seq, ?2 FROM records WHERE id = ?1",
        pairs,
    )


_COUNTER_SETS = {
    "access": "access_count = access_count + 1, last_access = max(last_access, ?)",
    "used": "used_count = used_count + 1, last_access = max(last_access, ?)",
    "ignored": "ignored_count = ignored_count + 1",
}

# Keyword search asks FTS5 for a few more rows than it needs (the status filter runs
# after ranking), and is satisfied once the all-words search found this many.
_KEYWORD_SLACK = 10
_KEYWORD_ENOUGH = 10
# In a store holding more records than this, keyword search ranks at most about this many:
# it keeps the query's rarest words while their matches add up to no more. BM25 costs a
# few microseconds for each record it ranks, and a word common in a large store ("Lisbon"
# in 100k notes) matches thousands while saying little about which record is meant.
_ANY_WORD_ROWS = 500


class SQLiteBackend(SQLiteLinks, SQLiteVectors):
    """A commonplace store in one SQLite file (or in memory with ``":memory:"``).

    A scope holding at least ``ann_rows`` vectors is searched through an HNSW graph
    (saved beside the file, in ``<file>.vectors/``, as a cache the rows rebuild);
    ``ann_rows=None`` searches every scope exactly.
    """

    def __init__(
        self, path: str | Path, *, timeout: float = 30.0, ann_rows: int | None = ANN_ROWS
    ) -> None:
        super().__init__(path, timeout=timeout, ann_rows=ann_rows)
        self._ledger = SQLiteLedger(self)

    def __enter__(self) -> SQLiteBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def ledger(self) -> SQLiteLedger:
        """The store's ledger (one table beside the records)."""
        return self._ledger

    # -- episodes and records -----------------------------------------------------------

    def apply(self, batch: WriteBatch) -> list[bool]:
        """One transaction: the pin, the turns, the records, the updates, what the new
        notes bring (links, entries), and the batch's entries (the cards it rewrote)."""
        turns, vectors = list(batch.turns), batch.vectors
        notes = sum(1 for t in turns if t.note is not None)
        if notes and (vectors is None or len(vectors) != notes):
            raise InvalidInputError("apply needs exactly one vector per turn with a note")
        if batch.records and (
            batch.record_vectors is None or len(batch.record_vectors) != len(batch.records)
        ):
            raise InvalidInputError("apply needs exactly one record vector per record")
        with self._transaction():
            if batch.pin is not None:
                self.write_pin(batch.pin, replace=batch.replace_pin)
            fresh = self._write_turns(turns, vectors) if turns else []
            if batch.records:
                assert batch.record_vectors is not None
                self.put_records(batch.records, batch.record_vectors, replace=batch.replace_records)
            for u in batch.updates:
                self.update_records(u.record_ids, at=u.at, **u.changes())
            for (delta, at), pairs in batch.links_of_new(fresh).items():
                self.reinforce_links(pairs, delta=delta, at=at)
            once = batch.entries_of_new(fresh)
            if once:
                self._ledger.put(once, replace=False)
            if batch.entries or batch.new_entries:
                self._ledger.put([*batch.entries, *batch.new_entries])
        with self._reading():  # the file grew: so may the log
            self._size_checkpoints()
        return fresh

    def read(self, batch: ReadBatch) -> BatchAnswer:
        """Every read of the batch, one after the other on the one connection, the store
        held for the whole call (no write comes between them from this process)."""
        with self._reading():
            listings = tuple(
                list(self.iter_records(q, batch=max(1, min(q.limit or 1000, 1000))))
                for q in batch.listings
            )
            query = batch.search
            hits = (
                self.search(
                    query.scope, query.vector, text=query.text, limit=query.limit, kinds=query.kinds
                )
                if query is not None
                else []
            )
            entries = tuple(self._ledger.get(kind, key) for kind, key in batch.entries)
            linked: frozenset[str] = frozenset()
            links: list[Link] = []
            if batch.link_seeds > 0 and hits:
                best = sorted(hits, key=lambda h: -h.similarity)[: batch.link_seeds]
                linked = frozenset(h.record.id for h in best)
                links = self.links_of(linked, min_weight=batch.link_min_weight)
            return BatchAnswer(
                listings,
                hits,
                entries,
                linked=linked,
                links=links,
                records=self.get_records(batch.record_ids) if batch.record_ids else [],
                record_vectors=self.get_vectors(batch.vector_ids) if batch.vector_ids else None,
                found_episodes=self.get_episodes(batch.episode_ids) if batch.episode_ids else [],
            )

    def _write_turns(self, turns: list[TurnWrite], vectors: Vectors | None) -> list[bool]:
        with self._transaction() as db:
            # one statement per table for the batch, rows in the turns' order (so the
            # sequence numbers are those one statement per turn gave them)
            fresh = self._insert_episodes(db, [t.episode for t in turns])
            rows: list[tuple[Any, ...]] = []
            sources: list[tuple[str, str]] = []
            row = 0
            for turn, is_new in zip(turns, fresh):
                if turn.note is None:
                    continue
                assert vectors is not None
                if is_new:
                    rows.append(
                        (*record_values(turn.note), np.asarray(vectors[row], np.float32).tobytes())
                    )
                    sources += [(turn.note.id, source) for source in turn.note.provenance]
                row += 1
            db.executemany(f"INSERT INTO records ({INSERT_COLUMNS}) VALUES ({marks(26)})", rows)
            add_sources(db, sources)
            # what the new turns change among the stored records, turn by turn: a merge or
            # a supersession only ever names records stored before this batch, or the
            # turn's own note, inserted above
            for turn, is_new in zip(turns, fresh):
                if not is_new:
                    continue
                ep = turn.episode
                if turn.merge_into is not None:
                    self._merge(db, turn.merge_into, ep.id, turn.merged_tags, ep.at)
                if turn.supersedes and turn.note is not None:
                    self._supersede(db, turn.supersedes, turn.note.id, ep.at)
                if turn.superseded_at is not None and turn.note is not None:
                    newer, when = turn.superseded_at
                    self._supersede(db, [turn.note.id], newer, when)
                if turn.invalidates:
                    db.execute(
                        "UPDATE records SET status = 'invalid', status_since = ? "
                        f"WHERE id IN ({marks(len(turn.invalidates))})",
                        (to_epoch(ep.at), *turn.invalidates),
                    )
        return fresh

    def _insert_episodes(self, db: sqlite3.Connection, episodes: list[Episode]) -> list[bool]:
        """Insert the episodes not stored yet; for each, whether this call stored it."""
        before = self._stored_episodes(db, [ep.id for ep in episodes])
        cursor = db.executemany(
            f"INSERT OR IGNORE INTO episodes ({EPISODE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
            [
                (
                    ep.id,
                    *ep.scope.parts(),
                    ep.role.value,
                    ep.text,
                    to_epoch(ep.at),
                    json.dumps(dict(ep.meta), ensure_ascii=False),
                )
                for ep in episodes
            ],
        )
        seen: set[str] = set()
        fresh = []
        for ep in episodes:  # the first of a batch's copies is the one stored
            fresh.append(ep.id not in before and ep.id not in seen)
            seen.add(ep.id)
        if cursor.rowcount != sum(fresh):  # a row SQLite ignored for another reason
            after = self._stored_episodes(db, list(seen))
            fresh = [new and ep.id in after for new, ep in zip(fresh, episodes)]
        return fresh

    def _stored_episodes(self, db: sqlite3.Connection, ids: list[str]) -> set[str]:
        found: set[str] = set()
        for chunk in chunks(ids):
            found.update(
                i
                for (i,) in db.execute(
                    f"SELECT id FROM episodes WHERE id IN ({marks(len(chunk))})", chunk
                )
            )
        return found

    def _merge(
        self, db: sqlite3.Connection, target: str, episode_id: str, tags: Tags | None, at: datetime
    ) -> None:
        add_sources(db, [(target, episode_id)])
        # fresh again, but frequency is earned by use, never by a merge
        db.execute(
            "UPDATE records SET last_access = max(last_access, ?) WHERE id = ?",
            (to_epoch(at), target),
        )
        if tags is None:
            return
        row = db.execute(
            "SELECT text, scope_user, scope_agent, scope_thread FROM records WHERE id = ?",
            (target,),
        ).fetchone()
        if row is None:
            return
        # the keyword index follows the tags: a turn kept as the note's evidence adds words
        db.execute(
            "UPDATE records SET tags = ?, entities = ?, search = ? WHERE id = ?",
            (
                json.dumps(tags.to_json(), ensure_ascii=False),
                entity_column(tags.entities),
                search_column(row[0], tags, scope_from_parts(*row[1:])),
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

    def put_records(
        self, records: Sequence[Record], vectors: Vectors, *, replace: bool = False
    ) -> None:
        if len(records) != len(vectors):
            raise InvalidInputError("put_records needs exactly one vector per record")
        with self._transaction() as db:
            for record, vector in zip(records, vectors):
                if replace:
                    old = db.execute(
                        "SELECT seq FROM records WHERE id = ?", (record.id,)
                    ).fetchone()
                    if old is not None:
                        self._vectors_deleted(db, [old[0]])
                        db.execute("DELETE FROM records WHERE id = ?", (record.id,))
                        db.execute("DELETE FROM provenance WHERE record_seq = ?", (old[0],))
                try:
                    self._insert_record(db, record, vector)
                except sqlite3.IntegrityError as exc:  # the whole call is rolled back
                    raise InvalidInputError(
                        f"a record with id {record.id!r} already exists; derived records need "
                        "new ids (put_records(..., replace=True) replaces existing ones)"
                    ) from exc

    def _insert_record(self, db: sqlite3.Connection, record: Record, vector: Vectors) -> None:
        db.execute(
            f"INSERT INTO records ({INSERT_COLUMNS}) VALUES ({marks(26)})",
            (*record_values(record), np.asarray(vector, np.float32).tobytes()),
        )
        add_sources(db, [(record.id, source) for source in record.provenance])

    def get_episodes(self, episode_ids: Collection[str]) -> list[Episode]:
        out: list[Episode] = []
        with self._reading() as db:
            for chunk in chunks(list(episode_ids)):
                rows = db.execute(
                    f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id IN ({marks(len(chunk))})",
                    chunk,
                ).fetchall()
                out.extend(episode_from_row(r) for r in rows)
        return out

    def recent_episodes(
        self, scope: Scope | None, *, limit: int, before: str | None = None
    ) -> list[Episode]:
        where, params = scope_clause(scope)
        with self._reading() as db:
            start = 2**62
            if before is not None:
                found = db.execute("SELECT seq FROM episodes WHERE id = ?", (before,)).fetchone()
                start = found[0] if found is not None else 0
            rows = db.execute(
                f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {where} AND seq < ? "
                "ORDER BY seq DESC LIMIT ?",
                (*params, start, limit),
            ).fetchall()
        return [episode_from_row(r) for r in rows]

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
        order, after = ("DESC", "<") if query.newest_first else ("ASC", ">")
        last = 2**62 if query.newest_first else 0
        left = query.limit
        while left is None or left > 0:
            size = batch if left is None else min(batch, left)
            with self._reading() as db:
                rows = db.execute(
                    f"SELECT {RECORD_COLUMNS} FROM {source} WHERE {where} AND seq {after} ? "
                    f"ORDER BY seq {order} LIMIT ?",
                    (*params, last, size),
                ).fetchall()
                records = self._records(db, rows)
            if not rows:
                return
            last = rows[-1][0]
            if left is not None:
                left -= len(rows)
            yield from records

    def count(self, scope: Scope | None, kind: Kind) -> int:
        where, params = scope_clause(scope)
        with self._reading() as db:
            if kind is Kind.EPISODE:
                row = db.execute(f"SELECT count(*) FROM episodes WHERE {where}", params).fetchone()
            else:  # the counters the schema's triggers keep (_sqlite_schema, v4)
                row = db.execute(
                    f"SELECT coalesce(sum(active), 0) FROM record_counts WHERE {where} "
                    "AND kind = ?",
                    (*params, kind.value),
                ).fetchone()
        return int(row[0])

    def get_vectors(self, record_ids: Sequence[str]) -> Vectors:
        by_id: dict[str, bytes | None] = {}
        with self._reading() as db:
            for chunk in chunks(list(record_ids)):
                by_id.update(
                    db.execute(
                        f"SELECT id, vector FROM records WHERE id IN ({marks(len(chunk))})", chunk
                    )
                )
        # the vectors' own size, else the pinned one (no vector was found)
        blob = next((b for b in by_id.values() if b is not None), None)
        if blob is not None:
            dim = len(blob) // 4
        else:
            pin = self.read_pin()
            dim = pin.dim if pin else 0
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
    ) -> list[Hit]:
        with self._reading() as db:
            index = self._catch_up(db)
            if index is None:
                return []
            ranked = (
                self._keyword_hits(
                    db, scope, text, limit, store_rows=len(index), share=index.share(scope)
                )
                if text
                else []
            )
            # the cache holds every vector (deleted records and other kinds too): ask it
            # for more until ``limit`` of the nearest pass the row filter; the keyword
            # hits' rows come with the first read, and the rows decide which of them count
            want = limit
            by_seq: dict[int, Record] = {}
            read: set[int] = set()
            pending = ranked[:limit]
            while True:
                found = index.search(scope, vector, limit=want)
                seqs = list(dict.fromkeys([seq for seq, _ in found if seq not in read] + pending))
                by_seq.update(self._active_rows(db, seqs, scope, kinds))
                read.update(seqs)
                pending = []
                nearest = [(seq, sim) for seq, sim in found if seq in by_seq]
                if len(nearest) >= limit or len(found) < want:
                    break
                want *= 4
            keyword = [seq for seq in ranked[:limit] if seq in by_seq]
            if len(keyword) < limit < len(ranked):
                # some of the best keyword hits were not rows of this search: the next ones
                by_seq.update(self._active_rows(db, ranked[limit:], scope, kinds))
                keyword = [seq for seq in ranked if seq in by_seq][:limit]
            hits = dict(nearest[:limit])
            # keyword-only hits need their cosine
            hits.update(index.similarities([s for s in keyword if s not in hits], vector))
        matched = set(keyword)
        ordered = sorted((s for s in hits if s in by_seq), key=lambda s: -hits[s])
        return [Hit(by_seq[s], hits[s], s in matched) for s in ordered]

    def _active_rows(
        self, db: sqlite3.Connection, seqs: list[int], scope: Scope, kinds: Collection[Kind]
    ) -> dict[int, Record]:
        """The active records of ``kinds`` visible in ``scope`` among these row seqs."""
        where, params = scope_clause(scope)
        kind_values = [k.value for k in kinds]
        out: dict[int, Record] = {}
        for chunk in chunks(seqs):
            # NOT INDEXED: look the rows up by seq, never by scanning a scope index
            rows = db.execute(
                f"SELECT {RECORD_COLUMNS} FROM records NOT INDEXED "
                f"WHERE seq IN ({marks(len(chunk))}) "
                f"AND status = 'active' AND kind IN ({marks(len(kind_values))}) AND {where}",
                (*chunk, *kind_values, *params),
            ).fetchall()
            out.update(zip((row[0] for row in rows), self._records(db, rows)))
        return out

    def _keyword_hits(
        self,
        db: sqlite3.Connection,
        scope: Scope,
        text: str,
        limit: int,
        *,
        store_rows: int,
        share: float,
    ) -> list[int]:
        """The rows the keyword index finds for ``text``, best first (the core scores how
        well each matches). ``share`` is the part of the store ``scope`` sees. Some may be
        rows the search does not want (another scope, a deleted record): its row read
        filters them, so the first ``limit`` that pass are its keyword hits.

        In a small store, records holding every query word are asked for first (cheap and
        precise), then, when those are few, records holding any, each search ranked by
        BM25 and filtered here (the second search is asked only when the first found few
        rows that pass), at most ``limit``. In a large one BM25 would cost more than the
        rest of a recall: it counts every record holding each word it ranks by (thousands
        for a word like "Lisbon" in 100k notes, a number that grows with the store), and
        intersecting common words walks their long lists. There the search keeps the
        query's rarest words while the records they match add up to at most
        ``_ANY_WORD_ROWS`` and ranks the records holding any of them, a few more than
        ``limit``, unfiltered (joining them to their rows here would read each row twice);
        a query of common words alone is left to the vector search (on LoCoMo, with the
        bound lowered so that its conversations take this path, the all-words search it
        replaced changed no answer).
        """
        words = fts_words(text)
        if not words:
            return []
        # a scope that sees most of the store is filtered by its rows, not its tokens
        # (they would match nearly every row): ask for enough that ``limit`` are its own
        narrow = share < 0.5
        fetch = limit + _KEYWORD_SLACK if narrow else math.ceil(limit / share) + _KEYWORD_SLACK
        if store_rows > _ANY_WORD_ROWS:
            rarest = self._rarest(db, words)
            if not rarest:
                return []
            rows = db.execute(
                "SELECT rowid FROM records_fts WHERE records_fts MATCH ? ORDER BY rank LIMIT ?",
                (fts_match(rarest, scope, every=False, within_scope=narrow), fetch),
            )
            return [seq for (seq,) in rows]
        # a store this small cannot match more than that
        searches = [(words, True)]
        if len(words) > 1:
            searches.append((words, False))
        where, params = scope_clause(scope, "r")
        hits: list[int] = []
        for chosen, every in searches:
            if len(hits) >= _KEYWORD_ENOUGH:
                break
            rows = db.execute(
                "SELECT r.seq FROM (SELECT rowid, rank FROM records_fts "
                "WHERE records_fts MATCH ? ORDER BY rank LIMIT ?) AS f "
                "JOIN records r ON r.seq = f.rowid "
                f"WHERE r.status = 'active' AND {where} ORDER BY f.rank",
                (fts_match(chosen, scope, every=every, within_scope=narrow), fetch, *params),
            )
            hits.extend(seq for (seq,) in rows if seq not in hits)
        return hits[:limit]

    @staticmethod
    def _rarest(db: sqlite3.Connection, words: list[str]) -> list[str]:
        """The rarest of ``words``, while the records they match add up to at most
        ``_ANY_WORD_ROWS`` (each word's are counted no further than that)."""
        # one statement for every word: a recall pays per statement
        counted = ", ".join(
            "(SELECT count(*) FROM (SELECT 1 FROM records_fts WHERE records_fts MATCH ? LIMIT ?))"
            for _ in words
        )
        bound = _ANY_WORD_ROWS + 1
        row = db.execute(f"SELECT {counted}", [v for w in words for v in (w, bound)]).fetchone()
        counts = dict(zip(words, row))
        kept, total = set(), 0
        for word in sorted(words, key=lambda w: counts[w]):
            total += counts[word]
            if total > _ANY_WORD_ROWS:
                break
            kept.add(word)
        return [w for w in words if w in kept]

    def nearest(
        self, scope: Scope, vectors: Vectors, *, min_similarity: float | None = None
    ) -> list[tuple[str, float] | None]:
        with self._reading() as db:
            index = self._catch_up(db)
            if index is None or len(vectors) == 0:
                return [None] * len(vectors)
            # a vector less similar than the bound has no note worth naming: only the
            # others' ids are read (a batch of new notes rarely has any near copy)
            found = index.nearest(
                scope, np.asarray(vectors, np.float32), min_similarity=min_similarity
            )
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
        query = np.asarray(vector, np.float32)
        want = 16  # the nearest vector is nearly always a note: widen only when it is not
        while True:
            ranked = index.search(scope, query, limit=want)
            for chunk in chunks(ranked, 200):
                seqs = [seq for seq, _ in chunk if seq not in ids]
                if seqs:
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
            if len(ranked) < want:
                break
            want *= 8
        return None

    # -- updates ------------------------------------------------------------------------

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
        tags: Tags | None = None,
        counter: str | None = None,
    ) -> None:
        sets: list[str] = []
        values: list[Any] = []
        if counter is not None:
            if counter not in _COUNTER_SETS:
                raise InvalidInputError(
                    f"counter must be one of {sorted(_COUNTER_SETS)}, not {counter!r}"
                )
            # relative increments in one statement: concurrent writers never lose a count
            sets.append(_COUNTER_SETS[counter])
            if counter != "ignored":
                values.append(to_epoch(at))
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

    def delete(
        self,
        *,
        records: Collection[str] = (),
        episodes: Collection[str] = (),
        erase: bool = False,
    ) -> dict[str, list[str]]:
        if not erase:
            with self._transaction() as db:
                return {
                    "records": self._delete_records(db, records),
                    "episodes": self._delete_episodes(db, episodes),
                }
        # freed pages are always zeroed (secure_delete is on for the connection); erasing
        # also drops what the FTS5 index and the write-ahead log still hold
        with self._transaction() as db:
            removed = {
                "records": self._delete_records(db, records),
                "episodes": self._delete_episodes(db, episodes),
            }
            if removed["records"]:  # a saved graph holds the erased vectors too
                self._drop_saved_graphs()
                # FTS5 keeps the terms of deleted rows in old segments until they are
                # merged (its secure-delete option needs SQLite 3.42): merging them all
                # costs about 1 ms per 1,000 records (0.09 s at 100,000)
                db.execute("INSERT INTO records_fts (records_fts) VALUES ('optimize')")
        if self._path != ":memory:":  # and old log frames still hold the deleted pages
            with self._lock, self._translate_errors():
                self._check_open()
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return removed

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
            self._vectors_deleted(db, [seq for seq, _ in found])
            db.execute(f"DELETE FROM records WHERE id IN ({q})", ids)
            db.execute(
                f"DELETE FROM provenance WHERE record_seq IN ({q})", [seq for seq, _ in found]
            )
            delete_links_of(db, ids)
            removed.extend(ids)
        return removed

    def _delete_episodes(self, db: sqlite3.Connection, episode_ids: Collection[str]) -> list[str]:
        removed: list[str] = []
        for chunk in chunks(list(episode_ids)):
            q = marks(len(chunk))
            removed += [
                r[0] for r in db.execute(f"SELECT id FROM episodes WHERE id IN ({q})", chunk)
            ]
            db.execute(f"DELETE FROM episodes WHERE id IN ({q})", chunk)
        return removed


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
    if query.sources is not None:
        sources = list(query.sources)
        clauses.append(
            f"seq IN (SELECT record_seq FROM provenance WHERE source_id IN ({marks(len(sources))}))"
        )
        params += sources
    return " AND ".join(clauses), tuple(params)
