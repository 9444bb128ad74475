"""Search: a recall's candidates by vector and by keyword, their links, and the nearest note.

Queries run per tenant of the scope, with every filter evaluated by the server;
the core scores and reranks what comes back. BM25 only picks the keyword hits (they
are marked; how well each matches the question is the core's call), and one found
only by keyword gets its cosine from the server, without its vector being sent back,
with its properties (the others' came with the vector query).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np

from commonplace import Kind, Record, Scope, Status
from commonplace.embedders import Vectors
from commonplace.stores import Hit, Link

from . import _schema as S
from ._connection import MAX_RESULTS, chunks
from ._counters import tally_of
from ._mapping import object_uuid, parse_date, scope_of
from ._reads import RecordReads, Row
from ._tenants import Target

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
#: What a BM25 query returns: ids, whether merges added provenance to read, and the counter
#: tally (the counters of a keyword-only hit are read before its row comes).
KEYWORD_RETURN = ["record_id", "merged", "tally"]


def keywords_of(text: str | None) -> str:
    """The BM25 query of a question: its first 32 words, lower-cased, each once."""
    words = _WORD.findall(text.lower())[:32] if text else []
    return " ".join(dict.fromkeys(words))


Found = tuple[str, Any, Any, Any]  # what a first-round query found: (what, ...)


@dataclass(frozen=True)
class Asked:
    """A search's first round: the queries to send on each tenant of its kinds' collections
    (``near``, and ``bm25`` when the question has words), and what the second needs."""

    specs: list[S.Spec]
    queries: list[Callable[[S.Spec, str], list[Found]]]
    limit: int
    vector: list[float]
    active: Any


@dataclass(frozen=True)
class Second:
    """What a search's second round gives (see ``Search._hits``)."""

    hits: list[Hit]
    also: list[Record]
    linked: frozenset[str]
    links: list[Link]


class Search(RecordReads):
    """Vector and keyword candidates, and the nearest note."""

    def search(
        self,
        scope: Scope,
        vector: Vectors,
        *,
        text: str | None,
        limit: int,
        kinds: Collection[Kind] = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE),
    ) -> list[Hit]:
        asked = self._asked(vector, text=text, limit=limit, kinds=kinds)
        if asked is None:
            return []
        # every query of every tenant at once, with the tenant lookup (see _on_targets)
        found = self._on_targets(scope, asked.specs, *asked.queries)
        return self._hits(scope, asked, found).hits

    def _asked(
        self, vector: Vectors, *, text: str | None, limit: int, kinds: Collection[Kind]
    ) -> Asked | None:
        """The first round of a search (None when it can find nothing)."""
        from weaviate.classes.query import Filter, MetadataQuery

        specs = [S.RECORD_SPECS[k] for k in kinds if k in S.RECORD_SPECS]
        query = np.asarray(vector, np.float32).ravel()
        if limit <= 0 or not specs:
            return None
        active = Filter.by_property("status").equal(Status.ACTIVE.value)
        keywords = keywords_of(text)
        qlist = query.tolist()

        def near(spec: S.Spec, tenant: str) -> list[Found]:
            found = self._call(
                lambda: self._tcol(spec, tenant).query.near_vector(
                    near_vector=qlist,
                    target_vector=self._live_vector(),
                    limit=limit,
                    filters=active,
                    return_properties=S.RECORD_RETURN,
                    return_metadata=MetadataQuery(distance=True),
                ),
                "search by vector",
            ).objects
            return [
                ("v", 1.0 - float(o.metadata.distance or 0.0), row, None)
                for o, row in zip(found, self._rows(spec, tenant, found))
            ]

        def bm25(spec: S.Spec, tenant: str) -> list[Found]:
            # ids only: most keyword hits are vector hits too, whose rows came with those;
            # the rest come with their cosines (see _hits)
            found = self._call(
                lambda: self._tcol(spec, tenant).query.bm25(
                    query=keywords,
                    query_properties=["search"],
                    limit=limit,
                    filters=active,
                    return_properties=KEYWORD_RETURN,
                    return_metadata=MetadataQuery(score=True),
                ),
                "search by keyword",
            ).objects
            return [
                ("k", float(o.metadata.score or 0.0), o.properties, (spec, tenant)) for o in found
            ]

        queries: list[Callable[[S.Spec, str], list[Found]]] = [near]
        if keywords:
            queries.append(bm25)
        return Asked(specs, queries, limit, qlist, active)

    def _hits(
        self,
        scope: Scope,
        asked: Asked,
        found: Sequence[Found],
        also: Sequence[Row] = (),
        *,
        link_seeds: int = 0,
        link_min_weight: float = 0.0,
    ) -> Second:
        """The second round of a search, from what its first round ``found``: the hits,
        best first; the records of the rows ``also`` read (their counters are read with
        the hits'); and the links of the ``link_seeds`` best vector hits, if asked."""
        limit = asked.limit
        by_vector = sorted((h for h in found if h[0] == "v"), key=lambda h: -h[1])[:limit]
        by_keyword = sorted((h for h in found if h[0] == "k"), key=lambda h: -h[1])[:limit]
        similarity: dict[str, float] = {}
        rows: dict[str, Row | None] = {}
        for _, sim, props, _ in by_vector:
            rid = str(props["record_id"])
            similarity.setdefault(rid, sim)
            rows.setdefault(rid, props)
        keyword: set[str] = set()
        lexical_only: dict[Target, list[str]] = defaultdict(list)
        tallies = {rid: tally_of(p) for rid, p in rows.items()}
        tallies.update((str(p["record_id"]), tally_of(p)) for p in also)
        merged = [rid for rid, p in rows.items() if p and p.get("merged")]
        for _, _, props, where in by_keyword:
            rid = str(props["record_id"])
            keyword.add(rid)  # BM25 picks the candidates; the core scores the match
            if rid not in similarity and rid not in rows:
                lexical_only[where].append(rid)
                rows[rid] = None  # its row comes with its cosine
                tallies[rid] = tally_of(props)
                if props.get("merged"):
                    merged.append(rid)
        extra = list(dict.fromkeys(str(p["record_id"]) for p in also))
        merged += [str(p["record_id"]) for p in also if p.get("merged")]
        # The second round, all at once: the keyword-only hits' rows and cosines (the server
        # computes them), and the counters and merged provenance of every candidate.
        measuring = self._launch(
            [
                (
                    spec,
                    tenant,
                    partial(self._measured, ids=ids, query=asked.vector, where=asked.active),
                )
                for (spec, tenant), ids in lexical_only.items()
            ]
        )
        merged = list(dict.fromkeys(merged))
        sourcing = self._pool.submit(self._sources, merged) if merged else None
        # the best by vector are the best by similarity: a keyword-only hit is further away
        linked = frozenset(
            list(dict.fromkeys(str(p["record_id"]) for _, _, p, _ in by_vector if p))[:link_seeds]
        )
        linking = (
            self._pool.submit(partial(self.links_of, linked, min_weight=link_min_weight))
            if linked
            else None
        )
        counts = self._counts(list(dict.fromkeys([*rows, *extra])), tallies)
        for future in measuring:
            for rid, sim, row in future.result():
                similarity[rid] = sim
                rows[rid] = row
        sources = sourcing.result() if sourcing is not None else {}
        # a keyword hit deactivated or deleted since the first round is left out
        hit_rows = [p for p in rows.values() if p is not None]
        records = self._fold([p for p in hit_rows if scope.contains(scope_of(p))], counts, sources)
        ranked = sorted(records, key=lambda r: -similarity[r.id])
        hits = [Hit(r, similarity[r.id], r.id in keyword) for r in ranked]
        links = linking.result() if linking is not None else []
        return Second(hits, self._fold(also, counts, sources), linked, links)

    def links_of(self, record_ids: Collection[str], *, min_weight: float) -> list[Link]:
        """The links of these records (``LinkGraph``; the rest of it is in ``_backend``): what
        a recall spreads activation along, from its best candidates."""
        from weaviate.classes.query import Filter

        out: dict[tuple[str, str, str], Link] = {}
        for chunk in chunks(list(record_ids)):
            where = (
                Filter.by_property("a").contains_any(chunk)
                | Filter.by_property("b").contains_any(chunk)
            ) & Filter.by_property("weight").greater_or_equal(min_weight)
            found = self._call(
                partial(self._col(S.LINK).query.fetch_objects, filters=where, limit=MAX_RESULTS),
                "read links",
            ).objects
            for obj in found:
                p = obj.properties
                link = Link(
                    str(p["a"]),
                    str(p["b"]),
                    str(p["kind"]),
                    float(p["weight"]),
                    parse_date(p["updated_at"]) or datetime.min,
                )
                out[(link.a, link.b, link.kind)] = link
        return list(out.values())

    def _measured(
        self, spec: S.Spec, tenant: str, ids: Sequence[str], query: list[float], where: Any
    ) -> list[tuple[str, float, Row]]:
        """These records' rows, and their cosine similarity to ``query`` computed by the
        server (their vectors are not sent back), if they still match ``where``."""
        from weaviate.classes.query import Filter, MetadataQuery

        found = self._call(
            partial(
                self._tcol(spec, tenant).query.near_vector,
                near_vector=query,
                target_vector=self._live_vector(),
                limit=len(ids),
                filters=where
                & Filter.by_id().contains_any([object_uuid("record", r) for r in ids]),
                return_properties=S.RECORD_RETURN,
                return_metadata=MetadataQuery(distance=True),
            ),
            "measure keyword hits",
        ).objects
        return [
            (str(row["record_id"]), 1.0 - float(o.metadata.distance or 0.0), row)
            for o, row in zip(found, self._rows(spec, tenant, found))
        ]

    def nearest(
        self, scope: Scope, vectors: Vectors, *, min_similarity: float | None = None
    ) -> list[tuple[str, float] | None]:
        """For each row, the nearest active note visible in ``scope`` and its cosine. The
        bound saves nothing here (one query per batch either way): ``Store`` applies it."""
        from weaviate.classes.query import Filter, MetadataQuery

        matrix = np.asarray(vectors, np.float32)
        if matrix.ndim == 1:
            matrix = matrix.reshape(1, -1)
        if len(matrix) == 0:
            return []
        active = Filter.by_property("status").equal(Status.ACTIVE.value)
        best: list[tuple[str, float] | None] = [None] * len(matrix)

        def one(
            row: int, spec: S.Spec, tenant: str
        ) -> list[tuple[int, str, float, Mapping[str, Any]]]:
            found = self._call(
                partial(
                    self._tcol(spec, tenant).query.near_vector,
                    near_vector=matrix[row].tolist(),
                    target_vector=self._live_vector(),
                    limit=1,
                    filters=active,
                    return_properties=["record_id", "scope_user", "scope_agent", "scope_thread"],
                    return_metadata=MetadataQuery(distance=True),
                ),
                "find the nearest note",
            ).objects
            return [
                (
                    row,
                    str(hit.properties["record_id"]),
                    1.0 - float(hit.metadata.distance or 0.0),
                    hit.properties,
                )
                for hit in found[:1]
            ]

        rows = [partial(one, row) for row in range(len(matrix))]
        for row, rid, sim, props in self._on_targets(scope, [S.NOTE], *rows):
            if rid and scope.contains(scope_of(props)):
                current = best[row]
                if current is None or sim > current[1]:
                    best[row] = (rid, sim)
        return best
