"""Reading records and episodes: by id, by scope, oldest first, newest first, counted.

A record is stored as an unchanging ``state`` plus the properties that change (see
``_mapping``); reading it folds in what is stored beside it (``_hydrate``): its
counter events, which the server aggregates after the record's tally (``_counters``),
and, for a record a merge grew, the provenance edges it gained. Provenance is read the
other way as well (``_derived``), for ``RecordQuery.sources``: what was derived from
some ids.

What a recall reads again and again is decoded once: rows and records are kept by the
exact properties (and counters and provenance) they were decoded from, so a changed
record is simply a different key and nothing needs invalidating.
"""

from __future__ import annotations

import heapq
import uuid
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from commonplace import Episode, Kind, Record, Scope, Status, Tier
from commonplace.embedders import Vectors
from commonplace.errors import StoreError
from commonplace.stores import RecordQuery

from . import _schema as S
from ._connection import MAX_RESULTS, chunks
from ._counters import Counters, tally_of
from ._mapping import (
    DECODED,
    Counts,
    as_utc,
    episode_from,
    flatten,
    object_uuid,
    record_from,
    scope_filter,
    scope_of,
)
from ._pin import PinnedVectors
from ._tenants import _LOCATION_CACHE, TENANT_MISSING, Location, Target
from ._url import Settings

if TYPE_CHECKING:
    from weaviate.collections.classes.filters import _Filters

_NIL = uuid.UUID(int=0)  # no object has this id
Row = dict[str, Any]  # a record's stored properties, flattened (``_mapping.flatten``)
VECTOR = "__vector__"  # a row's vector, when one was asked for
_RAW = "__raw__"  # a row's key: the properties as they came back (see _rows and _hydrate)


class RecordReads(PinnedVectors, Counters):
    """Records and episodes read back, with their counters and provenance folded in."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        # where the turns that notes read here were written from are likely to be: the
        # note's tenant (a guess get_episodes checks against the locator)
        self._turn_tenants: dict[str, str] = {}
        # decoded rows and records, by what they were decoded from (see _rows, _hydrate)
        self._flat: dict[tuple[Any, ...], Row] = {}
        self._decoded: dict[tuple[Any, ...], Record] = {}

    def _stored_episodes(self, ids: Collection[str]) -> set[str]:
        """Which of these episodes are stored (their locator, the commit point, exists)."""
        found = self._locate(ids, fresh=True)
        return {oid for oid, (kind, _) in found.items() if kind is Kind.EPISODE}

    def get_episodes(self, episode_ids: Collection[str]) -> list[Episode]:
        """Episodes by id. An episode counts as stored once its locator exists, so each is
        read where its locator says. For one whose locator this process has not read yet,
        but which a note read here names as its turn, the episode is read in the note's
        tenant (where a turn's note and episode live) while its locator is looked up, and
        kept only if the locator is there and says the same."""
        wanted = list(dict.fromkeys(episode_ids))
        known = {e: self._locations[e] for e in wanted if e in self._locations}
        unknown = [e for e in wanted if e not in known]
        guessed = {e: self._turn_tenants[e] for e in unknown if e in self._turn_tenants}
        lookup = self._pool.submit(self._locate, unknown) if unknown else None
        at = {e: tenant for e, (kind, tenant) in known.items() if kind is Kind.EPISODE}
        found = self._episodes_at({**at, **guessed})
        located = lookup.result() if lookup is not None else {}
        confirmed = [
            ep
            for ep in found
            if ep.id in at or located.get(ep.id) == (Kind.EPISODE, guessed.get(ep.id))
        ]
        rest = {
            e: tenant
            for e, (kind, tenant) in located.items()
            if kind is Kind.EPISODE and guessed.get(e) != tenant
        }
        return confirmed + self._episodes_at(rest)

    def _episodes_at(self, where: Mapping[str, str]) -> list[Episode]:
        """The episodes found in the tenants given for them (one request per tenant)."""
        from weaviate.classes.query import Filter

        groups: dict[str, list[str]] = defaultdict(list)
        for eid, tenant in where.items():
            groups[tenant].append(eid)

        def fetch(spec: S.Spec, tenant: str) -> list[Episode]:
            out: list[Episode] = []
            for chunk in chunks(groups[tenant]):
                found = self._call(
                    partial(
                        self._tcol(spec, tenant).query.fetch_objects,
                        filters=Filter.by_id().contains_any(
                            [object_uuid("episode", eid) for eid in chunk]
                        ),
                        limit=len(chunk),
                    ),
                    "read episodes",
                )
                out.extend(episode_from(o.properties) for o in found.objects)
            return out

        return self._fan_out([(S.EPISODE, tenant) for tenant in groups], fetch)

    def recent_episodes(
        self, scope: Scope | None, *, limit: int, before: str | None = None
    ) -> list[Episode]:
        from weaviate.classes.query import Filter, Sort

        if limit <= 0:
            return []
        where = None
        if before is not None:
            start = self._episode_seq(before)
            if start is None:
                return []
            # (Weaviate 1.35 sorts a lone range filter on the sort property wrongly when
            # descending with a limit: it returns the lowest; a second clause avoids that)
            where = Filter.by_property("seq").less_than(start) & Filter.by_id().not_equal(_NIL)
        size = min(limit, MAX_RESULTS)

        def newest(spec: S.Spec, tenant: str) -> list[Mapping[str, Any]]:
            found = self._call(
                lambda: self._tcol(spec, tenant).query.fetch_objects(
                    filters=where, sort=Sort.by_property("seq", ascending=False), limit=size
                ),
                "read episodes",
            )
            return [o.properties for o in found.objects]

        rows = self._on_targets(scope, [S.EPISODE], newest)
        rows.sort(key=lambda p: -int(p["seq"]))
        visible = [p for p in rows if scope is None or scope.contains(scope_of(p))]
        return [episode_from(p) for p in visible[:limit]]

    def _episode_seq(self, episode_id: str) -> int | None:
        """Where a stored episode is in the order of storing (None if it is not stored)."""
        location = self._locate([episode_id]).get(episode_id)
        if location is None or location[0] is not Kind.EPISODE:
            return None
        try:
            obj = self._call(
                lambda: self._tcol(S.EPISODE, location[1]).query.fetch_object_by_id(
                    object_uuid("episode", episode_id), return_properties=["seq"]
                ),
                "read an episode",
            )
        except StoreError as exc:
            if TENANT_MISSING.search(str(exc)):
                return None
            raise
        return None if obj is None else int(obj.properties["seq"])

    def get_records(self, record_ids: Collection[str]) -> list[Record]:
        rows = self._fetch_rows(record_ids)
        return self._hydrate([props for _, _, props in rows])

    def _fetch_rows(
        self, record_ids: Iterable[str], *, vectors: bool = False
    ) -> list[tuple[S.Spec, str, Row]]:
        """The stored properties (and vectors) of these records, wherever they live.

        Locations this process has seen are used without asking (they do not change); an
        id not found where it was seen is looked up again, and read where it is now.
        """
        wanted = list(dict.fromkeys(record_ids))
        cached = {rid: self._locations[rid] for rid in wanted if rid in self._locations}
        located = self._locate(wanted)
        rows = self._rows_at(located, vectors)
        missing = [rid for rid in cached if rid not in {str(p["record_id"]) for _, _, p in rows}]
        if missing:
            now = self._locate(missing, fresh=True)
            self._forget_locations(rid for rid in missing if rid not in now)
            rows += self._rows_at({r: loc for r, loc in now.items() if loc != cached[r]}, vectors)
        return rows

    def _rows_at(
        self, located: Mapping[str, Location], vectors: bool
    ) -> list[tuple[S.Spec, str, Row]]:
        from weaviate.classes.query import Filter

        groups: dict[Target, list[str]] = defaultdict(list)
        for rid, (kind, tenant) in located.items():
            if kind in S.RECORD_SPECS:
                groups[(S.RECORD_SPECS[kind], tenant)].append(rid)

        def fetch(spec: S.Spec, tenant: str) -> list[tuple[S.Spec, str, Row]]:
            rows: list[tuple[S.Spec, str, Row]] = []
            for chunk in chunks(groups[(spec, tenant)]):
                where = Filter.by_id().contains_any([object_uuid("record", rid) for rid in chunk])
                found = self._call(
                    partial(
                        self._tcol(spec, tenant).query.fetch_objects,
                        filters=where,
                        limit=len(chunk),
                        include_vector=[self._live_vector()] if vectors else False,
                        # for vectors, the id alone: the client decodes every property
                        return_properties=["record_id"] if vectors else S.RECORD_RETURN,
                    ),
                    "read records",
                ).objects
                if vectors:
                    live = self._live_vector()
                    rows.extend(
                        (spec, tenant, {**o.properties, VECTOR: _default_vector(o.vector, live)})
                        for o in found
                    )
                else:
                    rows.extend((spec, tenant, p) for p in self._rows(spec, tenant, found))
            return rows

        return self._fan_out(list(groups), fetch)

    def _rows(self, spec: S.Spec, tenant: str, found: Sequence[Any]) -> list[Row]:
        """Record rows from the objects a query returned, their locations remembered (an
        id's kind and tenant never change, so a later read by id needs no lookup)."""
        rows = []
        if len(self._flat) >= DECODED:
            self._flat.clear()
        for obj in found:
            # what the record is decoded from: equal raws decode to equal rows and records
            raw = tuple(map(obj.properties.get, S.RECORD_RETURN))
            flat = self._flat.get(raw)
            if flat is None:
                flat = self._flat[raw] = flatten(obj.properties)
            row = dict(flat)  # shares the decoded values, which nothing changes
            row[_RAW] = raw
            rows.append(row)
        if len(self._locations) > _LOCATION_CACHE:
            self._locations.clear()
        if len(self._turn_tenants) > _LOCATION_CACHE:
            self._turn_tenants.clear()
        kind = S.SPEC_KINDS[spec.suffix]
        for row in rows:
            self._locations[str(row["record_id"])] = (kind, tenant)
            for eid in row.get("provenance") or ():
                self._turn_tenants[str(eid)] = tenant
        return rows

    def iter_records(self, query: RecordQuery, *, batch: int = 1000) -> Iterator[Record]:
        from weaviate.classes.query import Filter

        if query.limit is not None and query.limit <= 0:
            return
        specs = [S.RECORD_SPECS[k] for k in query.kinds if k in S.RECORD_SPECS]
        where = record_filter(query)
        size = max(1, min(batch, MAX_RESULTS, query.limit or MAX_RESULTS))
        newest = query.newest_first
        streams: list[Iterator[tuple[int, Record]]]
        if query.sources is None:

            def first(spec: S.Spec, tenant: str) -> list[tuple[S.Spec, str, list[Row]]]:
                return [(spec, tenant, self._page(spec, tenant, where, size, newest, None))]

            firsts = self._on_targets(query.scope, specs, first)
            # the first pages of every tenant in one hydration (one counter read)
            records = iter(self._hydrate([row for _, _, rows in firsts for row in rows]))
            streams = [
                self._stream(
                    spec, tenant, where, size, newest, (rows, [next(records) for _ in rows])
                )
                for spec, tenant, rows in firsts
            ]
        else:
            # only the tenants that hold a record derived from them: found by their locators
            groups: dict[Target, list[str]] = defaultdict(list)
            wanted = set(specs)
            for rid, (kind, tenant) in self._locate(self._derived(query.sources)).items():
                if kind in S.RECORD_SPECS and S.RECORD_SPECS[kind] in wanted:
                    groups[(S.RECORD_SPECS[kind], tenant)].append(rid)
            streams = [
                self._stream(
                    spec,
                    tenant,
                    where & Filter.by_id().contains_any([object_uuid("record", r) for r in chunk]),
                    size,
                    newest,
                )
                for (spec, tenant), ids in groups.items()
                for chunk in chunks(sorted(ids))
            ]
        yield from _merged(streams, newest, query.limit)

    def _stream(
        self,
        spec: S.Spec,
        tenant: str,
        where: _Filters,
        size: int,
        newest: bool,
        first: tuple[list[Row], list[Record]] | None = None,
    ) -> Iterator[tuple[int, Record]]:
        """One tenant's matching records, oldest (or newest) first, ``size`` at a time
        (``first``: the first page, already read)."""
        page = first
        last: int | None = None
        while True:
            if page is None:
                try:
                    rows = self._page(spec, tenant, where, size, newest, last)
                except StoreError as exc:
                    if TENANT_MISSING.search(str(exc)):
                        return
                    raise
                page = (rows, self._hydrate(rows))
            rows, records = page
            if not rows:
                return
            last = int(rows[-1]["seq"])
            yield from ((int(p["seq"]), r) for p, r in zip(rows, records))
            if len(rows) < size:
                return
            page = None

    def _page(
        self,
        spec: S.Spec,
        tenant: str,
        where: _Filters,
        size: int,
        newest: bool,
        last: int | None,
        *,
        vectors: bool = False,
    ) -> list[Row]:
        """A page of one tenant's matching records, after the seq ``last`` (with their
        vectors, under ``VECTOR``, if asked)."""
        from weaviate.classes.query import Filter, Sort

        page_filter = where
        if last is not None:
            bound = Filter.by_property("seq")
            page_filter = where & (bound.less_than(last) if newest else bound.greater_than(last))
        live = self._live_vector()
        found = self._call(
            partial(
                self._tcol(spec, tenant).query.fetch_objects,
                filters=page_filter,
                limit=size,
                sort=Sort.by_property("seq", ascending=not newest),
                return_properties=S.RECORD_RETURN,
                include_vector=[live] if vectors else False,
            ),
            "list records",
        ).objects
        rows = self._rows(spec, tenant, found)
        if vectors:
            for row, obj in zip(rows, found):
                row[VECTOR] = _default_vector(obj.vector, live)
        return rows

    def count(self, scope: Scope | None, kind: Kind) -> int:
        from weaviate.classes.query import Filter

        spec = S.KIND_SPECS[kind]
        where = (
            None
            if kind is Kind.EPISODE
            else (Filter.by_property("status").equal(Status.ACTIVE.value))
        )

        def total(spec: S.Spec, tenant: str) -> list[int]:
            result = self._call(
                lambda: self._tcol(spec, tenant).aggregate.over_all(
                    filters=where, total_count=True
                ),
                "count records",
            )
            return [int(result.total_count or 0)]

        return sum(self._on_targets(scope, [spec], total))

    def get_vectors(self, record_ids: Sequence[str]) -> Vectors:
        rows = {
            str(p["record_id"]): p[VECTOR] for _, _, p in self._fetch_rows(record_ids, vectors=True)
        }
        dim = self._dim() or (len(next(iter(rows.values()))) if rows else 0)
        out = np.zeros((len(record_ids), dim), np.float32)
        for i, rid in enumerate(record_ids):
            vector = rows.get(rid)
            if vector is not None and len(vector) == dim:
                out[i] = vector
        return out

    # -- reading counters and provenance ---------------------------------------------------------

    def _hydrate(self, rows: Sequence[Mapping[str, Any]]) -> list[Record]:
        """Records from stored properties, with counter events and provenance folded in."""
        self._check_open()
        if not rows:
            return []
        ids = list(dict.fromkeys(str(p["record_id"]) for p in rows))
        # provenance written with the record is in its state; only merges add Source edges
        merged = list(dict.fromkeys(str(p["record_id"]) for p in rows if p.get("merged")))
        pending = self._pool.submit(self._sources, merged) if merged else None
        counts = self._counts(ids, {str(p["record_id"]): tally_of(p) for p in rows})
        sources = pending.result() if pending is not None else {}
        return self._fold(rows, counts, sources)

    def _fold(
        self,
        rows: Sequence[Mapping[str, Any]],
        counts: Mapping[str, Counts],
        sources: Mapping[str, Sequence[str]],
    ) -> list[Record]:
        """Records from rows, their counters and the provenance merges added."""
        out = []
        for p in rows:
            rid = str(p["record_id"])
            provenance = tuple(sorted({*p.get("provenance", ()), *sources.get(rid, ())}))
            tally = counts.get(rid, Counts())
            # A record is a function of what it is decoded from: the same stored properties,
            # provenance and counts give the same (frozen) record, which needs no invalidation
            # (anything changed is a different key).
            raw = p.get(_RAW)
            key = None if raw is None else (raw, provenance, tally)
            record = None if key is None else self._decoded.get(key)
            if record is None:
                record = record_from(p, provenance=provenance, counts=tally)
                if key is not None:
                    if len(self._decoded) >= DECODED:
                        self._decoded.clear()
                    self._decoded[key] = record
            out.append(record)
        return out

    def _sources(self, ids: Sequence[str]) -> dict[str, list[str]]:
        from weaviate.classes.query import Filter

        out: dict[str, list[str]] = defaultdict(list)
        for chunk in chunks(list(ids), 200):
            found = self._call(
                partial(
                    self._col(S.SOURCE).query.fetch_objects,
                    filters=Filter.by_property("record_id").contains_any(chunk),
                    limit=MAX_RESULTS,
                ),
                "read provenance",
            ).objects
            if len(found) >= MAX_RESULTS:
                raise StoreError(
                    "a batch of records has over 10,000 provenance edges; read "
                    "fewer records at a time"
                )
            for obj in found:
                out[str(obj.properties["record_id"])].append(str(obj.properties["source_id"]))
        return out

    def _derived(self, source_ids: Collection[str]) -> list[str]:
        """Ids of every record whose provenance names one of ``source_ids`` (its edges)."""
        out: dict[str, None] = {}
        for chunk in chunks(list(dict.fromkeys(source_ids))):
            for rid in self._edges_from(chunk):
                out[rid] = None
        return list(out)

    def _edges_from(self, sources: Sequence[str]) -> list[str]:
        """The records naming these sources; a list with too many edges for one query is
        split until each part fits."""
        from weaviate.classes.query import Filter

        found = self._call(
            partial(
                self._col(S.SOURCE).query.fetch_objects,
                filters=Filter.by_property("source_id").contains_any(list(sources)),
                limit=MAX_RESULTS,
                return_properties=["record_id"],
            ),
            "read provenance",
        ).objects
        if len(found) < MAX_RESULTS:
            return [str(obj.properties["record_id"]) for obj in found]
        if len(sources) == 1:
            raise StoreError(
                f"over {MAX_RESULTS} records name {sources[0]!r} in their provenance; "
                "raise the server's QUERY_MAXIMUM_RESULTS to read them"
            )
        half = len(sources) // 2
        return self._edges_from(sources[:half]) + self._edges_from(sources[half:])


def _merged(
    streams: Sequence[Iterator[tuple[int, Record]]], newest: bool, limit: int | None
) -> Iterator[Record]:
    """The records of every tenant's stream in seq order (newest first if asked), up to
    ``limit``."""
    left = limit
    merged = heapq.merge(*streams, key=lambda pair: -pair[0] if newest else pair[0])
    for _, record in merged:
        yield record
        if left is not None:
            left -= 1
            if left <= 0:
                return


def record_filter(query: RecordQuery) -> _Filters:
    from weaviate.classes.query import Filter

    clauses = [
        Filter.by_property("status").contains_any([Status(s).value for s in query.statuses]),
    ]
    if query.tiers is not None:
        clauses.append(
            Filter.by_property("tier").contains_any([Tier(t).value for t in query.tiers])
        )
    if query.subject is not None:
        clauses.append(Filter.by_property("subject").equal(query.subject))
    if query.predicate is not None:
        clauses.append(Filter.by_property("predicate").equal(query.predicate))
    if query.entity is not None:
        clauses.append(Filter.by_property("entities").contains_any([query.entity.lower()]))
    if query.superseded is not None:
        clauses.append(Filter.by_property("superseded_by").is_none(not query.superseded))
    if query.created_before is not None:
        clauses.append(Filter.by_property("created_at").less_than(as_utc(query.created_before)))
    if not query.statuses or (query.tiers is not None and not query.tiers):
        clauses.append(Filter.by_property("seq").less_than(0))  # an empty IN matches nothing
    if query.scope is not None:
        scoped = scope_filter(query.scope)
        if scoped is not None:
            clauses.append(scoped)
    return Filter.all_of(clauses)


def _default_vector(vector: Any, name: str = "default") -> list[float] | None:
    if isinstance(vector, Mapping):
        vector = vector.get(name)
    return None if vector is None else list(vector)
