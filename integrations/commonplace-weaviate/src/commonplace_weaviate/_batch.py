"""Reads asked together (``Backend.read``): a recall's first reads in two rounds.

A recall starts with reads that do not depend on each other: the always-remembered
records, the newest notes, the candidates and the profile card. Asked one by one they
wait for the server seven times (each listing and the search wait for their rows, then
for their counters) and look the scope's tenants up three times. Here, on one scope:

* the first round sends at once, on the tenants the scope had last time while the
  registry is asked again (``_on_targets``, one lookup for every collection asked), the
  first page of every listing (with the vectors, if asked), the search's near-vector and
  BM25 queries, and the ledger reads;
* the second round reads the counters of every row the first returned in one aggregate,
  with the keyword-only hits' cosines, the provenance merges added and, if asked, the links
  of the best vector hits (``Search._hits``), the disputes naming any record the first
  returned and the turns of the best vector hits (what a recall reads next: read now, it
  waits for no round of its own).

A listing longer than one page reads its further pages after that, and a listing of
another scope, of every scope or by source is read on its own (``iter_records``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from functools import partial
from typing import Any

import numpy as np

from commonplace import Episode, Record, Scope
from commonplace.embedders import Vectors
from commonplace.stores import BatchAnswer, LedgerEntry, LedgerKind, ReadBatch, RecordQuery

from . import _schema as S
from ._connection import MAX_RESULTS
from ._ledger import WeaviateLedger
from ._reads import VECTOR, Row, _merged, record_filter
from ._search import Asked, Found, Search, Second
from ._tenants import Target

#: The first page of a listing (``iter_records`` reads 1,000 records at a time too).
FIRST_PAGE = 1_000


class Batches(Search):
    """``read_batch``: independent reads in two rounds."""

    _ledger: WeaviateLedger

    def read_batch(self, batch: ReadBatch) -> BatchAnswer:
        self._check_open()
        search = batch.search
        scope = search.scope if search is not None else _first_scope(batch.listings)
        together = [
            n
            for n, q in enumerate(batch.listings)
            if scope is not None and q.scope == scope and q.sources is None
        ]
        entries: list[Future[LedgerEntry | None]] = [
            self._pool.submit(self._ledger.get, kind, key) for kind, key in batch.entries
        ]
        asked = (
            None
            if search is None
            else self._asked(
                search.vector, text=search.text, limit=search.limit, kinds=search.kinds
            )
        )
        firsts: dict[int, list[tuple[Target, list[Row]]]] = defaultdict(list)
        found: list[Found] = []
        if scope is not None and (asked is not None or together):
            jobs, specs = self._first_round(batch, together, asked)
            for item in self._on_targets(scope, specs, *jobs):
                if item[0] == "L":
                    firsts[item[1]].append((item[3], item[2]))
                else:
                    found.append(item)
        pages = [rows for n in together for _, rows in firsts[n]]
        also = [row for rows in pages for row in rows]
        disputed, disputing = self._read_disputes(batch, found, also)
        turns_read, turning = self._read_turns(batch, found)
        if asked is not None and scope is not None:
            second = self._hits(
                scope,
                asked,
                found,
                also,
                link_seeds=batch.link_seeds,
                link_min_weight=batch.link_min_weight,
            )
        else:
            second = Second([], self._hydrate(also), frozenset(), [])
        decoded = iter(second.also)
        listings: list[list[Record]] = []
        for n, query in enumerate(batch.listings):
            if n in together:
                listings.append(self._listed(query, firsts[n], decoded))
            else:
                listings.append(list(self.iter_records(query)))
        vectors = self._listed_vectors(listings, also) if batch.vectors else {}
        return BatchAnswer(
            tuple(listings),
            second.hits,
            tuple(f.result() for f in entries),
            vectors,
            second.linked,
            second.links,
            tuple(disputing.result()) if disputing is not None else (),
            disputed,
            tuple(turning.result()) if turning is not None else (),
            turns_read,
        )

    def _read_disputes(
        self, batch: ReadBatch, found: list[Found], also: list[Row]
    ) -> tuple[frozenset[str], Future[list[LedgerEntry]] | None]:
        """If asked, the disputes naming any record the first round returned, sent now."""
        if not batch.disputes:
            return frozenset(), None
        ids = frozenset(
            [str(f[2]["record_id"]) for f in found if f[0] in ("v", "k")]
            + [str(row["record_id"]) for row in also]
        )
        if not ids:
            return ids, None
        kind = LedgerKind.DISPUTE.value
        return ids, self._side.submit(partial(self._ledger.list, kind, refs=sorted(ids)))

    def _read_turns(
        self, batch: ReadBatch, found: list[Found]
    ) -> tuple[frozenset[str], Future[list[Episode]] | None]:
        """If asked, the turns of the best vector hits (those whose rows give their whole
        provenance: merges add to it), sent now."""
        if batch.turns <= 0 or batch.turn_seeds <= 0:
            return frozenset(), None
        best = sorted((f for f in found if f[0] == "v"), key=lambda f: -f[1])
        seeds: dict[str, Row] = {}
        for _, _, row, _ in best:
            seeds.setdefault(str(row["record_id"]), row)
            if len(seeds) >= batch.turn_seeds:
                break
        wanted = frozenset(
            e
            for row in seeds.values()
            if not row.get("merged")
            for e in sorted({str(e) for e in row.get("provenance") or ()})[-batch.turns :]
        )
        if not wanted:
            return wanted, None
        return wanted, self._side.submit(self.get_episodes, sorted(wanted))

    def _first_round(
        self, batch: ReadBatch, together: list[int], asked: Asked | None
    ) -> tuple[list[Callable[[S.Spec, str], list[Found]]], list[S.Spec]]:
        """The queries of the first round, per tenant, and every collection they read."""
        specs: dict[S.Spec, None] = {}
        jobs: list[Callable[[S.Spec, str], list[Found]]] = []
        for n in together:
            query = batch.listings[n]
            wanted = [S.RECORD_SPECS[k] for k in query.kinds if k in S.RECORD_SPECS]
            if query.limit is not None and query.limit <= 0:
                continue
            specs.update(dict.fromkeys(wanted))
            jobs.append(partial(self._first_page, n, query, frozenset(wanted), batch.vectors))
        if asked is not None:
            specs.update(dict.fromkeys(asked.specs))
            jobs += [partial(_only, frozenset(asked.specs), fn) for fn in asked.queries]
        return jobs, list(specs)

    def _first_page(
        self,
        n: int,
        query: RecordQuery,
        wanted: frozenset[S.Spec],
        vectors: bool,
        spec: S.Spec,
        tenant: str,
    ) -> list[Found]:
        if spec not in wanted:
            return []
        rows = self._page(
            spec,
            tenant,
            record_filter(query),
            _page_size(query),
            query.newest_first,
            None,
            vectors=vectors,
        )
        return [("L", n, rows, (spec, tenant))]

    def _listed(
        self, query: RecordQuery, firsts: list[tuple[Target, list[Row]]], decoded: Any
    ) -> list[Record]:
        """A listing's records: its first pages (decoded in the second round, in order),
        and the pages after them of any tenant that has more."""
        size = _page_size(query)
        where = record_filter(query)
        streams = [
            self._stream(
                spec, tenant, where, size, query.newest_first, (rows, [next(decoded) for _ in rows])
            )
            for (spec, tenant), rows in firsts
        ]
        return list(_merged(streams, query.newest_first, query.limit))

    def _listed_vectors(
        self, listings: list[list[Record]], rows: list[Row]
    ) -> Mapping[str, Vectors]:
        """The listed records' vectors: those that came with their first pages, and the
        rest (records of later pages) read by id."""
        dim = self._dim()
        came = {str(p["record_id"]): p.get(VECTOR) for p in rows}
        out: dict[str, Vectors] = {}
        missing: list[str] = []
        for record in (r for records in listings for r in records):
            vector = came.get(record.id)
            if vector is not None and (dim is None or len(vector) == dim):
                out[record.id] = np.asarray(vector, np.float32)
            elif record.id not in out:
                missing.append(record.id)
        missing = list(dict.fromkeys(missing))
        if missing:
            out.update(zip(missing, self.get_vectors(missing)))
        return out


def _only(
    specs: frozenset[S.Spec], fn: Callable[[S.Spec, str], list[Found]], spec: S.Spec, tenant: str
) -> list[Found]:
    """``fn`` on the collections it asks for (a batch's tenants are those of all its reads)."""
    return fn(spec, tenant) if spec in specs else []


def _page_size(query: RecordQuery) -> int:
    return max(1, min(FIRST_PAGE, MAX_RESULTS, query.limit or MAX_RESULTS))


def _first_scope(listings: Any) -> Scope | None:
    return next((q.scope for q in listings if q.scope is not None), None)
