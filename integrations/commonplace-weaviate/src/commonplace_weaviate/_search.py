"""Search: a recall's candidates by vector and by keyword, and the nearest note.

Queries run per tenant of the scope, with every filter evaluated by the server;
the core scores and reranks what comes back. BM25 only picks the keyword hits (they
are marked; how well each matches the question is the core's call), and one found
only by keyword gets its cosine from the server, without its vector being sent back.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from commonplace import Kind, Scope, Status
from commonplace.embedders import Vectors
from commonplace.stores import Hit

from . import _schema as S
from ._mapping import object_uuid, scope_of
from ._reads import RecordReads, Row
from ._tenants import Target

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def keywords_of(text: str | None) -> str:
    """The BM25 query of a question: its first 32 words, lower-cased, each once."""
    words = _WORD.findall(text.lower())[:32] if text else []
    return " ".join(dict.fromkeys(words))


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
        from weaviate.classes.query import Filter, MetadataQuery

        specs = [S.RECORD_SPECS[k] for k in kinds if k in S.RECORD_SPECS]
        query = np.asarray(vector, np.float32).ravel()
        if limit <= 0 or not specs:
            return []
        active = Filter.by_property("status").equal(Status.ACTIVE.value)
        keywords = keywords_of(text)
        qlist = query.tolist()

        def near(spec: S.Spec, tenant: str) -> list[tuple[str, float, Row, Any]]:
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

        def bm25(spec: S.Spec, tenant: str) -> list[tuple[str, float, Row, Any]]:
            found = self._call(
                lambda: self._tcol(spec, tenant).query.bm25(
                    query=keywords,
                    query_properties=["search"],
                    limit=limit,
                    filters=active,
                    return_properties=S.RECORD_RETURN,
                    return_metadata=MetadataQuery(score=True),
                ),
                "search by keyword",
            ).objects
            return [
                ("k", float(o.metadata.score or 0.0), row, (spec, tenant))
                for o, row in zip(found, self._rows(spec, tenant, found))
            ]

        # every query of every tenant at once, with the tenant lookup (see _on_targets)
        queries = (near, bm25) if keywords else (near,)
        hits = self._on_targets(scope, specs, *queries)
        by_vector = sorted((h for h in hits if h[0] == "v"), key=lambda h: -h[1])[:limit]
        by_keyword = sorted((h for h in hits if h[0] == "k"), key=lambda h: -h[1])[:limit]
        similarity: dict[str, float] = {}
        rows: dict[str, Row] = {}
        for _, sim, props, _ in by_vector:
            rid = str(props["record_id"])
            similarity.setdefault(rid, sim)
            rows.setdefault(rid, props)
        keyword: set[str] = set()
        lexical_only: dict[Target, list[str]] = defaultdict(list)
        for _, _, props, where in by_keyword:
            rid = str(props["record_id"])
            keyword.add(rid)  # BM25 picks the candidates; the core scores the match
            if rid not in similarity:
                lexical_only[where].append(rid)
                rows[rid] = props
        # keyword-only hits need their cosine: the server computes it, while the counters
        # of every candidate are read
        measuring = self._launch(
            [
                (spec, tenant, partial(self._cosines, ids=ids, query=qlist))
                for (spec, tenant), ids in lexical_only.items()
            ]
        )
        visible = [p for p in rows.values() if scope.contains(scope_of(p))]
        records = self._hydrate(visible)
        for future in measuring:
            similarity.update(future.result())
        for rid in [r for r in rows if r not in similarity]:
            similarity[rid] = 0.0  # pragma: no cover - deleted between the two queries
        ranked = sorted(records, key=lambda r: -similarity[r.id])
        return [Hit(r, similarity[r.id], r.id in keyword) for r in ranked]

    def _cosines(
        self, spec: S.Spec, tenant: str, ids: Sequence[str], query: list[float]
    ) -> list[tuple[str, float]]:
        """The cosine similarity of these records to ``query``, without moving their vectors."""
        from weaviate.classes.query import Filter, MetadataQuery

        found = self._call(
            partial(
                self._tcol(spec, tenant).query.near_vector,
                near_vector=query,
                target_vector=self._live_vector(),
                limit=len(ids),
                filters=Filter.by_id().contains_any([object_uuid("record", r) for r in ids]),
                return_properties=["record_id"],
                return_metadata=MetadataQuery(distance=True),
            ),
            "measure keyword hits",
        ).objects
        return [
            (str(o.properties["record_id"]), 1.0 - float(o.metadata.distance or 0.0)) for o in found
        ]

    def nearest(self, scope: Scope, vectors: Vectors) -> list[tuple[str, float] | None]:
        """For each row, the nearest active note visible in ``scope`` and its cosine."""
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
