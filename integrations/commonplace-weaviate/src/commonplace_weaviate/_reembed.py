"""Re-embedding a store in place, to another embedder, without stopping its readers.

A re-embed writes the new model's vectors into a named vector of their own (added
to the record collections when it starts, named after the target model) and tags
each record it staged with that name (property ``reembed``), so what is left is
what lacks the tag, and a record written or replaced meanwhile is left again.
Searches and writes use the live vector named in the pin (see ``_pin``) until the
last step swaps the pin, in one schema update.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from commonplace import Record
from commonplace.embedders import Vectors
from commonplace.errors import StoreError
from commonplace.stores import EmbedderPin, ReembedState

from . import _schema as S
from ._mapping import flatten, object_uuid
from ._reads import RecordReads
from ._tenants import TENANT_MISSING, Target
from ._url import Settings


class Reembedding(RecordReads):
    """``reembed_state``, ``reembed_pending``, ``reembed_stage`` and ``reembed_finish``."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self._reembed_done: set[Target] = set()  # tenants with nothing left to stage

    def _reembed_body(self) -> tuple[dict[str, Any], EmbedderPin | None, str]:
        body = self._note_body()
        state = body.get("reembed")
        if not isinstance(state, Mapping) or "name" not in state:
            return body, None, ""
        return body, EmbedderPin(str(state["name"]), int(state["dim"])), str(state["vector"])

    def _reembed_targets(self) -> list[Target]:
        return self._targets(None, list(S.RECORD_SPECS.values()))

    def _reembed_counts(self, vector: str) -> tuple[int, int]:
        """(staged, pending) over every tenant of the record collections."""
        from weaviate.classes.query import Filter

        def counts(spec: S.Spec, tenant: str) -> list[tuple[int, int]]:
            col = self._tcol(spec, tenant)
            total = self._call(
                lambda: col.aggregate.over_all(total_count=True), "count records"
            ).total_count
            # (an aggregate over not_equal miscounts on Weaviate 1.35; equal does not)
            staged = self._call(
                lambda: col.aggregate.over_all(
                    filters=Filter.by_property("reembed").equal(vector), total_count=True
                ),
                "count re-embedded records",
            ).total_count
            return [(int(staged or 0), int(total or 0) - int(staged or 0))]

        found = self._fan_out(self._reembed_targets(), counts)
        return sum(s for s, _ in found), sum(p for _, p in found)

    def reembed_state(self) -> ReembedState | None:
        _, target, vector = self._reembed_body()
        if target is None:
            return None
        staged, pending = self._reembed_counts(vector)
        return ReembedState(target, staged, pending)

    def reembed_pending(self, target: EmbedderPin, *, limit: int) -> list[Record]:
        from weaviate.classes.config import Configure, VectorDistances
        from weaviate.classes.query import Filter, Sort

        vector = _reembed_vector(target)
        with self._pin_lock:
            body, current, _ = self._reembed_body()
            if current != target:
                for spec in S.RECORD_SPECS.values():
                    col = self._col(spec)
                    config = self._call(col.config.get, f"read {spec.suffix}")
                    if vector not in (config.vector_config or {}):
                        self._call(
                            partial(
                                col.config.add_vector,
                                vector_config=Configure.Vectors.self_provided(
                                    name=vector,
                                    vector_index_config=Configure.VectorIndex.hnsw(
                                        distance_metric=VectorDistances.COSINE
                                    ),
                                ),
                            ),
                            f"add the vector {vector} to {spec.suffix}",
                        )
                body["reembed"] = {"name": target.name, "dim": target.dim, "vector": vector}
                text = json.dumps(body, sort_keys=True)
                self._call(
                    lambda: self._col(S.NOTE).config.update(description=text),
                    "start the re-embed",
                )
                self._reembed_done = set()
        wanted = max(0, int(limit))
        rows: list[Mapping[str, Any]] = []
        left = Filter.by_property("reembed").not_equal(vector)
        for spec, tenant in self._reembed_targets():
            if len(rows) >= wanted:
                break
            if (spec, tenant) in self._reembed_done:
                continue
            try:
                found = self._call(
                    partial(
                        self._tcol(spec, tenant).query.fetch_objects,
                        filters=left,
                        limit=wanted - len(rows),
                        sort=Sort.by_property("seq"),
                        return_properties=S.RECORD_RETURN,
                    ),
                    "list records to re-embed",
                ).objects
            except StoreError as exc:
                if TENANT_MISSING.search(str(exc)):
                    continue
                raise
            if not found:  # nothing left here (finish looks again at every tenant)
                self._reembed_done.add((spec, tenant))
            rows.extend(flatten(o.properties) for o in found)
        return self._hydrate(rows)

    def reembed_stage(
        self, target: EmbedderPin, record_ids: Sequence[str], vectors: Vectors
    ) -> None:
        # the shape and values were checked by the core (Store.reembed_stage)
        ids = list(record_ids)
        matrix = np.asarray(vectors, np.float32)
        _, current, vector = self._reembed_body()
        if current != target:
            doing = "none is" if current is None else f"the one in progress is to {current.name!r}"
            raise StoreError(
                f"no re-embed to {target.name!r} is in progress ({doing}); start it with "
                "reembed_pending (commonplace reembed --to NAME does)"
            )
        located = self._locate(ids)

        def stage(row: int, rid: str) -> None:
            kind, tenant = located[rid]
            # a partial update: the live vector and the other fields stay as they are
            self._patch_vector(
                S.RECORD_SPECS[kind], tenant, object_uuid("record", rid), vector, matrix[row]
            )

        self._parallel(
            [
                partial(stage, row, rid)
                for row, rid in enumerate(ids)
                if rid in located and located[rid][0] in S.RECORD_SPECS
            ]
        )

    def _patch_vector(
        self, spec: S.Spec, tenant: str, object_id: uuid.UUID, vector: str, values: Any
    ) -> None:
        from weaviate.exceptions import UnexpectedStatusCodeError

        col = self._tcol(spec, tenant)
        try:
            self._call(
                lambda: col.data.update(
                    uuid=object_id,
                    properties={"reembed": vector},
                    vector={vector: np.asarray(values, np.float32).tolist()},
                ),
                "stage a re-embedded vector",
            )
        except StoreError as exc:
            cause = exc.__cause__
            if not (isinstance(cause, UnexpectedStatusCodeError) and cause.status_code == 404):
                raise  # a record deleted meanwhile is skipped

    def reembed_finish(self, target: EmbedderPin) -> int | None:
        with self._pin_lock:
            body, current, vector = self._reembed_body()
            if current != target:
                doing = (
                    "none is" if current is None else f"the one in progress is to {current.name!r}"
                )
                raise StoreError(
                    f"no re-embed to {target.name!r} is in progress ({doing}); start it with "
                    "reembed_pending (commonplace reembed --to NAME does)"
                )
            staged, pending = self._reembed_counts(vector)
            if pending:
                self._reembed_done = set()  # look at every tenant again
                return None
            body["embedder"] = {"name": target.name, "dim": target.dim, "vector": vector}
            body.pop("reembed", None)
            text = json.dumps(body, sort_keys=True)
            self._call(
                lambda: self._col(S.NOTE).config.update(description=text), "finish the re-embed"
            )
            self._pin, self._vector = target, vector
        return staged


def _reembed_vector(target: EmbedderPin) -> str:
    """The named vector a re-embed to ``target`` writes (one per model and dimension)."""
    import hashlib

    digest = hashlib.sha256(f"{target.name}\x00{target.dim}".encode()).hexdigest()[:16]
    return f"m_{digest}"
