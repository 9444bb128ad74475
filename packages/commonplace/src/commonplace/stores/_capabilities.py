"""A backend's optional capabilities, used when it has them: :class:`Links` (a
:class:`~commonplace.stores.LinkGraph`, else no links) and :class:`Embedding` (the pin, and
re-embedding in place with :class:`~commonplace.stores.Reembedding`, else a clear error
saying to copy). Parts of :class:`~commonplace.stores.Store` (``store.links``,
``store.embedding``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

import numpy as np

from .._records import Record
from ..embedders._protocol import Vectors
from ..errors import InvalidInputError, UnsupportedError
from ._protocol import (
    Backend,
    EmbedderPin,
    Link,
    LinkGraph,
    Reembedding,
    ReembedState,
    WriteBatch,
)


class Links:
    """Weighted links between records, on a backend with :class:`LinkGraph` (without one,
    nothing is linked and nothing is found)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    def reinforce_links(
        self, pairs: Sequence[tuple[str, str, str]], *, delta: float, at: datetime
    ) -> None:
        if isinstance(self.backend, LinkGraph):
            self.backend.reinforce_links(pairs, delta=delta, at=at)

    def links_of(self, record_ids: Collection[str], *, min_weight: float) -> list[Link]:
        if isinstance(self.backend, LinkGraph):
            return self.backend.links_of(record_ids, min_weight=min_weight)
        return []

    def decay_links(self, *, factor: float, at: datetime) -> None:
        if isinstance(self.backend, LinkGraph):
            self.backend.decay_links(factor=factor, at=at)

    def prune_links(self, *, min_weight: float) -> int:
        if isinstance(self.backend, LinkGraph):
            return self.backend.prune_links(min_weight=min_weight)
        return 0


class Embedding:
    """The embedder pin, and moving the vectors to another model in place."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    def read_pin(self) -> EmbedderPin | None:
        return self.backend.read_pin()

    def write_pin(self, pin: EmbedderPin, *, replace: bool = False) -> None:
        self.backend.apply(WriteBatch(pin=pin, replace_pin=replace))

    def _reembedding(self) -> Reembedding:
        if not isinstance(self.backend, Reembedding):
            raise UnsupportedError(
                f"{type(self.backend).__name__} cannot re-embed in place; copy the store "
                "into a new one with the new model: commonplace.stores.copy(backend, "
                "new_backend, embedder=new_model)"
            )
        return self.backend

    def reembed_state(self) -> ReembedState | None:
        if not isinstance(self.backend, Reembedding):
            return None
        return self.backend.reembed_state()

    def reembed_pending(self, target: EmbedderPin, *, limit: int) -> list[Record]:
        return self._reembedding().reembed_pending(target, limit=limit)

    def reembed_stage(
        self, target: EmbedderPin, record_ids: Sequence[str], vectors: Vectors
    ) -> None:
        """Stage new vectors, checked first: one finite row of the target's dimension per id."""
        backend = self._reembedding()
        matrix = np.asarray(vectors, np.float32)
        if matrix.shape != (len(record_ids), target.dim):
            raise InvalidInputError(
                f"reembed_stage got vectors of shape {matrix.shape} for {len(record_ids)} ids; "
                f"it needs one row of {target.dim} (the target's dimension) per id"
            )
        if not np.all(np.isfinite(matrix)):
            raise InvalidInputError("reembed_stage got NaN or infinite vector values")
        backend.reembed_stage(target, record_ids, matrix)

    def reembed_finish(self, target: EmbedderPin) -> int | None:
        return self._reembedding().reembed_finish(target)
