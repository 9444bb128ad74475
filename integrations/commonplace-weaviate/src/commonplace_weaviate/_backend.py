"""The Weaviate backend: commonplace's Backend protocol on a real Weaviate server.

Layout (see ``_schema``): a multi-tenant collection per record kind with one
tenant per exact scope, so every query reads only the shards of the scopes it
names; small single-tenant collections for the bookkeeping, the ledger among them.
Vectors come from commonplace's embedder (no server-side vectorizer); candidates
come from near-vector and BM25 queries with every filter evaluated by the server,
and the core scores and reranks them. Policy (which summaries a supersession
invalidates, how audit entries or cards are kept, what a forgotten scope takes
along) is the core's (``commonplace.stores.Store``); this backend stores and finds.

Weaviate has no transactions and no atomic increments, so:

* every write uses deterministic object ids (UUIDv5 of the commonplace id), so a
  call that failed half-way can simply be sent again and lands on the same objects;
* ``apply`` writes notes, then merges, supersessions and invalidations, then the
  links and ledger entries the batch brings (the cards it rewrote among them), then
  episodes, and last the episodes' locators, which are what makes an episode count
  as stored: a turn whose call failed is stored again by a retry, never twice, and
  on a failure before that last step the notes it wrote are removed again (best
  effort);
* counters (accesses, uses, ignores) are insert-only event objects folded at read
  time by a server-side aggregate, so concurrent writers in any number of
  processes never lose a count; provenance is insert-only edge objects for the
  same reason;
* tiers, statuses and other fields are set with partial updates (PATCH), which the
  server applies atomically per object, so concurrent updates of different fields
  of one record do not overwrite each other.

The backend is made of parts, one module each, every part using only those
before it in this list:

* ``_connection``: the client, retried calls, collection handles, the schema check;
* ``_tenants``: a tenant per scope, a locator per id, batch inserts into tenants;
* ``_pin``: the embedder pin and the checks vectors must pass against it;
* ``_reads``: records and episodes by id and by scope (and by source), counted,
  counters folded in;
* ``_search``: candidates by vector and by keyword, the nearest note;
* ``_batch``: independent reads asked together (a recall's first reads), in two rounds;
* ``_reembed``: moving the store to another embedder in place;
* ``_forget``: deleting records and episodes with every trace of them;
* ``_ledger``: the ledger, keyed entries in one collection (``WeaviateBackend.ledger``);
* ``_upgrade``: moving a store of schema version 1 to this one, on open;
* this module: the write path described above, counters, updates and links, and
  ``WeaviateBackend``, which puts the parts together.

Besides the sixteen members of ``Backend`` it has the optional capabilities
``NearestNotes`` (``nearest``), ``LinkGraph`` (links) and ``Reembedding``; ``read``
answers a recall's first reads in two rounds (``read_batch``).
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace as replace_fields
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np

from commonplace import Episode, Kind, Record, Status, Tags, Tier
from commonplace.embedders import Vectors
from commonplace.errors import InvalidInputError
from commonplace.stores import (
    COUNTERS,
    BatchAnswer,
    ReadBatch,
    RecordUpdate,
    WriteBatch,
    search_text,
)

from . import _schema as S
from ._batch import Batches
from ._connection import MIN_SERVER_VERSION, _connect, chunks, drop_store, wipe_store
from ._counters import SEEN
from ._forget import Forgetting
from ._ledger import WeaviateLedger
from ._mapping import (
    as_utc,
    episode_properties,
    object_uuid,
    record_properties,
    tag_properties,
    tenant_name,
)
from ._reembed import Reembedding
from ._tenants import Target
from ._upgrade import upgrade_v1
from ._url import parse_url

# MIN_SERVER_VERSION, _connect, drop_store and wipe_store are imported from here by
# the package, its pytest plugin and its benchmarks.
__all__ = ["MIN_SERVER_VERSION", "WeaviateBackend", "_connect", "drop_store", "wipe_store"]


class WeaviateBackend(Batches, Reembedding, Forgetting):
    """A commonplace store in a Weaviate server (``weaviate://host:port?options``).

    Options go in the URL's query (see :mod:`commonplace_weaviate._url`); the API
    key in the URL's password (``weaviate://:KEY@host``), ``api_key=`` or
    ``$WEAVIATE_API_KEY``. Opening checks that the server answers, is recent
    enough, and holds this store's collections with the expected schema
    (creating them on first use, and upgrading a store of schema version 1, see
    ``_upgrade``). ``close()`` releases the connection.
    """

    def __init__(self, url: str, *, api_key: str | None = None, prefix: str | None = None) -> None:
        settings = parse_url(url, environ=os.environ)
        if api_key is not None:
            settings = replace_fields(settings, api_key=api_key)
        if prefix is not None:
            settings = replace_fields(settings, prefix=prefix)
            settings.__post_init__()  # validate the new prefix
        super().__init__(settings)  # connects, and checks the schema (see Connection)
        self._links_lock = threading.Lock()
        self._ledger = WeaviateLedger(self)
        if self._legacy:
            try:
                upgrade_v1(self, self._ledger)
            except BaseException:
                self.close()
                raise

    @property
    def ledger(self) -> WeaviateLedger:
        """The store's ledger (one collection beside the records)."""
        return self._ledger

    def __enter__(self) -> WeaviateBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"WeaviateBackend({self.url!r})"

    # -- episodes and records --------------------------------------------------------------------

    def apply(self, batch: WriteBatch) -> list[bool]:
        """The pin, then the records, the turns (their episodes last: see the module's
        notes) with the batch's entries, then the updates. A batch of only updates and
        entries (a recall's end: its accesses and its log) sends both side by side."""
        if batch.pin is not None:
            self.write_pin(batch.pin, replace=batch.replace_pin)
        if batch.records:
            if batch.record_vectors is None:
                raise InvalidInputError("apply needs exactly one record vector per record")
            self.put_records(batch.records, batch.record_vectors, replace=batch.replace_records)
        if not batch.turns:
            jobs: list[Callable[[], object]] = []
            if batch.updates:
                jobs.append(partial(self._update_all, batch.updates))
            if batch.entries:
                jobs.append(partial(self._ledger.put, batch.entries))
            if batch.new_entries:  # a batch insert, without a look for one to replace
                jobs.append(partial(self._ledger.put_new, batch.new_entries))
            self._parallel(jobs)
            return []
        fresh = self._apply_turns(batch)
        self._update_all(batch.updates)
        return fresh

    def _update_all(self, updates: Sequence[RecordUpdate]) -> None:
        for u in updates:
            self.update_records(u.record_ids, at=u.at, **u.changes())

    def read(self, batch: ReadBatch) -> BatchAnswer:
        """The records, vectors and episodes asked by id, then the batch's listings, search
        and entries in two rounds (``read_batch``). One after the other: ``read_batch``
        fills the request pool itself, and the core asks by id apart from a recall's first
        reads anyway."""
        self._check_open()
        by_id = BatchAnswer(
            (),
            [],
            (),
            records=self.get_records(batch.record_ids) if batch.record_ids else [],
            record_vectors=self.get_vectors(batch.vector_ids) if batch.vector_ids else None,
            found_episodes=self.get_episodes(batch.episode_ids) if batch.episode_ids else [],
        )
        if not (batch.listings or batch.search is not None or batch.entries):
            return by_id
        return replace_fields(
            self.read_batch(batch),
            records=by_id.records,
            record_vectors=by_id.record_vectors,
            found_episodes=by_id.found_episodes,
        )

    def _apply_turns(self, batch: WriteBatch) -> list[bool]:
        turns, vectors = list(batch.turns), batch.vectors
        with_notes = sum(1 for t in turns if t.note is not None)
        matrix = self._checked_vectors(vectors, with_notes, "apply")
        existing = self._stored_episodes({t.episode.id for t in turns})
        fresh: list[bool] = []
        seen: set[str] = set()
        for turn in turns:
            eid = turn.episode.id
            fresh.append(eid not in existing and eid not in seen)
            seen.add(eid)
        notes: list[tuple[Record, Any]] = []
        row = 0
        for turn, new in zip(turns, fresh):
            if turn.note is not None:
                assert matrix is not None
                if new:
                    notes.append((turn.note, matrix[row]))
                row += 1
        new_turns = [t for t, new in zip(turns, fresh) if new]
        if not new_turns:
            self._ledger.put(batch.entries)
            if batch.new_entries:
                self._ledger.put_new(batch.new_entries)
            return fresh
        self._ensure_tenants(
            [(S.EPISODE, t.episode.scope.parts()) for t in new_turns]
            + [(S.RECORD_SPECS[r.kind], r.scope.parts()) for r, _ in notes]
        )
        self._put_records(notes, "notes")
        try:
            for turn in new_turns:
                if turn.merge_into is not None:
                    self._merge(turn.merge_into, turn.episode, turn.merged_tags)
                if turn.supersedes and turn.note is not None:
                    self._supersede(turn.supersedes, turn.note.id, turn.episode.at)
                if turn.superseded_at is not None and turn.note is not None:
                    newer, when = turn.superseded_at
                    self._supersede([turn.note.id], newer, when)
                if turn.invalidates:
                    self._invalidate(turn.invalidates, turn.episode.at)
            self._put_consequences(batch, fresh)
            self._put_episodes([t.episode for t in new_turns])
        except BaseException:
            # Undo only the notes whose episode did not get committed: a failure after the
            # commit point (a lost acknowledgement) must not remove what is now stored. When
            # that cannot be checked, nothing is undone; sending the call again finishes it.
            with contextlib.suppress(Exception):
                committed = self._stored_episodes({t.episode.id for t in new_turns})
                source = {t.note.id: t.episode.id for t in new_turns if t.note is not None}
                self._undo_records([r for r, _ in notes if source.get(r.id) not in committed])
            raise
        return fresh

    def _put_consequences(self, batch: WriteBatch, fresh: Sequence[bool]) -> None:
        """What the new notes bring (links, their ledger entries) and the batch's entries,
        before the episodes that commit the batch: a batch sent again after a failure
        writes its entries under the same keys (an entry there already stays), and its
        links again (a link then holds one more reinforcement, capped at 1)."""
        for (delta, at), pairs in batch.links_of_new(fresh).items():
            self.reinforce_links(pairs, delta=delta, at=at)
        once = batch.entries_of_new(fresh)
        if once:
            self._ledger.put(once, replace=False)
        if batch.entries:
            self._ledger.put(batch.entries)
        if batch.new_entries:
            self._ledger.put_new(batch.new_entries)

    def put_records(
        self, records: Sequence[Record], vectors: Vectors, *, replace: bool = False
    ) -> None:
        """Insert derived records; with ``replace``, replace any with the same id and its
        provenance.

        Counters are event objects here, so a replacement's counts are stored as the
        difference to the events already logged: reading it back gives its own counts.
        """
        records = list(records)
        matrix = self._checked_vectors(vectors, len(records), "put_records")
        if not records:
            return
        assert matrix is not None
        for record in records:
            if record.kind not in S.RECORD_SPECS:
                raise InvalidInputError(
                    f"put_records takes notes, summaries and procedures, not {record.kind.value}"
                )
        ids = [r.id for r in records]
        if not replace:
            duplicates = {i for i in ids if ids.count(i) > 1}
            taken = set(self._locate(ids, fresh=True)) | duplicates
            if taken:
                raise InvalidInputError(
                    f"record id(s) {sorted(taken)[:5]} already exist (or repeat in this call); "
                    "derived records need new ids (put_records(..., replace=True) replaces "
                    "existing ones)"
                )
            self._ensure_tenants((S.RECORD_SPECS[r.kind], r.scope.parts()) for r in records)
            self._put_records(list(zip(records, matrix)), "records")
            return
        old = self._locate(ids, fresh=True)
        wanted = {r.id: (r.kind, tenant_name(r.scope.parts())) for r in records}
        moved = {rid: loc for rid, loc in old.items() if loc != wanted[rid]}
        if moved:
            self._delete_records_at(moved)
        if old:
            from weaviate.classes.query import Filter

            for chunk in chunks([rid for rid in old if rid not in moved]):
                self._delete_where(
                    S.SOURCE,
                    None,
                    Filter.by_property("record_id").contains_any(chunk),
                    "provenance",
                )
        # every event of each (no tally): the record written next carries none
        logged = self._counts([rid for rid in old if rid not in moved])
        adjusted = [
            replace_fields(
                r,
                access_count=max(0, r.access_count - logged[r.id].access),
                used_count=max(0, r.used_count - logged[r.id].used),
                ignored_count=max(0, r.ignored_count - logged[r.id].ignored),
            )
            if r.id in logged
            else r
            for r in records
        ]
        self._ensure_tenants((S.RECORD_SPECS[r.kind], r.scope.parts()) for r in adjusted)
        self._put_records(list(zip(adjusted, matrix)), "records", undo=False)

    def _put_records(
        self, items: Sequence[tuple[Record, Any]], what: str, *, undo: bool = True
    ) -> None:
        """Records, then their provenance edges, then their locators (which make them found).

        If a step fails, what this call wrote is removed again before the error is raised.
        """
        if not items:
            return
        from weaviate.classes.data import DataObject

        groups: dict[Target, list[tuple[Record, Any]]] = defaultdict(list)
        for record, vector in items:
            groups[(S.RECORD_SPECS[record.kind], tenant_name(record.scope.parts()))].append(
                (record, vector)
            )
        try:
            for (spec, tenant), group in groups.items():
                objects = [
                    DataObject(
                        uuid=object_uuid("record", r.id),
                        properties=record_properties(r, seq=self._seq.next()),
                        vector={self._live_vector(): np.asarray(v, np.float32).tolist()},
                    )
                    for r, v in group
                ]
                self._insert(spec, tenant, objects, what, [r.id for r, _ in group])
            records = [r for r, _ in items]
            self._put_sources([(r.id, s) for r in records for s in r.provenance])
            self._insert(
                S.LOCATOR,
                None,
                [self._locator(r.id, r.kind, r.scope) for r in records],
                f"{what} locators",
                [r.id for r in records],
            )
        except BaseException:
            if undo:  # a replacement is not undone: sending it again finishes it
                self._undo_records([r for r, _ in items])
            raise

    def _put_sources(self, edges: Sequence[tuple[str, str]]) -> None:
        from weaviate.classes.data import DataObject

        unique = list(dict.fromkeys(edges))
        objects = [
            DataObject(
                uuid=object_uuid("source", rid, sid),
                properties={"record_id": rid, "source_id": sid},
            )
            for rid, sid in unique
        ]
        self._insert(S.SOURCE, None, objects, "provenance edges", [f"{r}<-{s}" for r, s in unique])

    def _put_episodes(self, episodes: Sequence[Episode]) -> None:
        from weaviate.classes.data import DataObject

        groups: dict[str, list[Episode]] = defaultdict(list)
        for episode in episodes:
            groups[tenant_name(episode.scope.parts())].append(episode)
        for tenant, group in groups.items():
            objects = [
                DataObject(
                    uuid=object_uuid("episode", e.id),
                    properties=episode_properties(e, seq=self._seq.next()),
                )
                for e in group
            ]
            self._insert(S.EPISODE, tenant, objects, "episodes", [e.id for e in group])
        # the commit point: an episode counts as stored once its locator exists
        self._insert(
            S.LOCATOR,
            None,
            [self._locator(e.id, Kind.EPISODE, e.scope) for e in episodes],
            "episode locators",
            [e.id for e in episodes],
        )

    def _undo_records(self, records: Sequence[Record]) -> None:
        """Best effort: remove records this call wrote before it failed."""
        if not records or self._closed:
            return
        # the original error matters more; a retry rewrites these anyway
        with contextlib.suppress(Exception):
            self._delete_records_at({r.id: (r.kind, tenant_name(r.scope.parts())) for r in records})

    def _merge(self, target: str, episode: Episode, tags: Tags | None) -> None:
        location = self._locate([target]).get(target)
        if location is None:
            return
        kind, tenant = location
        self._put_sources([(target, episode.id)])
        # a repeated statement is fresh again, but frequency is earned by use, never by a
        # merge: a "seen" event moves the last access without counting one
        self._put_events(
            [(target, SEEN, episode.at)], ids=[object_uuid("merge", target, episode.id)]
        )
        # "merged" (set, never cleared) tells readers to look for Source edges as well
        changes: dict[str, Any] = {"merged": True}
        if tags is not None:
            changes.update(tag_properties(tags))
            # the keyword index follows the tags: a turn kept as the note's evidence adds words
            rows = self._fetch_rows([target])
            if rows:
                changes["search"] = search_text(str(rows[0][2]["text"]), tags)
        self._patch(
            S.RECORD_SPECS[kind],
            tenant,
            object_uuid("record", target),
            changes,
            "merge into a note",
        )

    def _supersede(self, old_ids: Sequence[str], new_id: str, at: datetime) -> None:
        when = as_utc(at)
        rows = self._fetch_rows(old_ids)
        jobs: list[Callable[[], bool]] = []
        for spec, tenant, props in rows:
            if props.get("superseded_by"):
                continue
            jobs.append(
                partial(
                    self._patch,
                    spec,
                    tenant,
                    object_uuid("record", str(props["record_id"])),
                    {
                        "valid_to": when,
                        "superseded_by": new_id,
                        "tier": Tier.COLD.value,
                        "tier_since": when,
                    },
                    "supersede a record",
                )
            )
        self._parallel(jobs)

    def _invalidate(self, record_ids: Sequence[str], at: datetime) -> None:
        """Set these records invalid as of ``at`` (the summaries the core found stale)."""
        when = as_utc(at)
        self._parallel(
            [
                partial(
                    self._patch,
                    S.RECORD_SPECS[kind],
                    tenant,
                    object_uuid("record", rid),
                    {"status": Status.INVALID.value, "status_since": when},
                    "invalidate a record",
                )
                for rid, (kind, tenant) in self._locate(record_ids).items()
                if kind in S.RECORD_SPECS
            ]
        )

    # -- counters and updates --------------------------------------------------------------------

    def _put_events(
        self, events: Sequence[tuple[str, str, datetime]], ids: Sequence[uuid.UUID] | None = None
    ) -> None:
        from weaviate.classes.data import DataObject

        stored = self._stored_at()
        objects = [
            DataObject(
                uuid=ids[i] if ids is not None else uuid.uuid4(),
                properties={
                    "key": f"{field}:{rid}",
                    "record_id": rid,
                    "field": field,
                    "at": as_utc(at),
                    S.AFTER: stored,  # when it is stored, not when it happened
                    "ledger": True,  # the core logs the use in the ledger (see _upgrade)
                },
            )
            for i, (rid, field, at) in enumerate(events)
        ]
        self._insert(S.COUNTER, None, objects, "counter events", [f"{f}:{r}" for r, f, _ in events])

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
        if counter is not None and counter not in COUNTERS:
            raise InvalidInputError(f"counter must be one of {list(COUNTERS)}, not {counter!r}")
        when = as_utc(at)
        props: dict[str, Any] = {}
        if tier is not None:
            props.update(tier=Tier(tier).value, tier_since=when)
        if status is not None:
            props.update(status=Status(status).value, status_since=when)
        if pinned is not None:
            props["pinned"] = bool(pinned)
        if valid_to is not None:
            props["valid_to"] = as_utc(valid_to)
        if superseded_by is not None:
            props["superseded_by"] = superseded_by
        if isinstance(tags, Tags):
            props.update(tag_properties(tags))
        if (not props and counter is None) or not record_ids:
            return
        located = {
            rid: loc for rid, loc in self._locate(record_ids).items() if loc[0] in S.RECORD_SPECS
        }
        if counter is not None:
            # an insert-only event per count (one per record, as an UPDATE ... IN counts):
            # concurrent writers never lose one; records read with many of them get a
            # tally, so that reading them stays bounded (see _counters)
            self._put_events([(rid, counter, at) for rid in located])
            self._tally_due()
        if not props:
            return
        self._parallel(
            [
                partial(
                    self._patch,
                    S.RECORD_SPECS[kind],
                    tenant,
                    object_uuid("record", rid),
                    props,
                    "update a record",
                )
                for rid, (kind, tenant) in located.items()
            ]
        )

    # -- links -----------------------------------------------------------------------------------

    def reinforce_links(
        self, pairs: Sequence[tuple[str, str, str]], *, delta: float, at: datetime
    ) -> None:
        from weaviate.classes.data import DataObject

        keys = [(min(a, b), max(a, b), kind) for a, b, kind in pairs if a != b]
        if not keys:
            return
        with self._links_lock:
            current = self._link_weights(list(dict.fromkeys(keys)))
            weights: dict[tuple[str, str, str], float] = {}
            for key in keys:  # in order, so a pair given twice is reinforced twice
                base = weights.get(key, current.get(key))
                weights[key] = min(1.0, delta) if base is None else min(1.0, base + delta)
            objects = [
                DataObject(
                    uuid=object_uuid("link", a, b, kind),
                    properties={
                        "a": a,
                        "b": b,
                        "kind": kind,
                        "weight": w,
                        "updated_at": as_utc(at),
                    },
                )
                for (a, b, kind), w in weights.items()
            ]
            self._insert(S.LINK, None, objects, "links", [f"{a}~{b}" for a, b, _ in weights])

    def _link_weights(
        self, keys: Sequence[tuple[str, str, str]]
    ) -> dict[tuple[str, str, str], float]:
        from weaviate.classes.query import Filter

        out = {}
        for chunk in chunks(list(keys)):
            uuids = [object_uuid("link", *key) for key in chunk]
            found = self._call(
                partial(
                    self._col(S.LINK).query.fetch_objects,
                    filters=Filter.by_id().contains_any(uuids),
                    limit=len(uuids),
                ),
                "read links",
            ).objects
            for obj in found:
                p = obj.properties
                out[(str(p["a"]), str(p["b"]), str(p["kind"]))] = float(p["weight"])
        return out

    def decay_links(self, *, factor: float, at: datetime) -> None:
        from weaviate.classes.data import DataObject

        with self._links_lock:
            batch: list[Any] = []
            labels: list[str] = []
            for obj in self._col(S.LINK).iterator():
                p = dict(obj.properties)
                p["weight"] = float(p["weight"]) * factor
                batch.append(DataObject(uuid=obj.uuid, properties=p))
                labels.append(f"{p['a']}~{p['b']}")
            self._insert(S.LINK, None, batch, "decayed links", labels)

    def prune_links(self, *, min_weight: float) -> int:
        from weaviate.classes.query import Filter

        with self._links_lock:
            return self._delete_where(
                S.LINK, None, Filter.by_property("weight").less_than(min_weight), "links"
            )

    # -- maintenance -----------------------------------------------------------------------------

    def drop(self) -> None:
        """Delete this store's collections and everything in them (tests, re-imports)."""
        names = S.names([*S.SPECS, *S.LEGACY_SPECS], self._settings.prefix)
        self._call(lambda: self._client.collections.delete(names), "delete the collections")
        self._known.clear()
        self._seen.clear()
        self._locations.clear()
        self._turn_tenants.clear()
        self._pin = None
        self._vector = None
