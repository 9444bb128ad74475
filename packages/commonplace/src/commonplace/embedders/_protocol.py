"""What an embedder is to commonplace: a pinned name, a dimension, a batch call; and the
text a record's vector is made from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .._records import Kind, Record, index_text
from ..errors import PluginError

Vectors = npt.NDArray[np.float32]
"""What an embedder returns: one unit-length float32 row per text, ``dim`` columns."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    ``name`` identifies the model *and its version*; it is pinned in every store
    the embedder writes to, so change it whenever the vectors would change.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """An ``(len(texts), dim)`` float32 array of L2-normalised rows."""
        ...


def embed_checked(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    """Call ``embedder`` and make sure what came back is usable, normalising rows."""
    vectors = np.asarray(embedder.embed(list(texts)), dtype=np.float32)
    if vectors.shape != (len(texts), embedder.dim):
        raise PluginError(
            f"embedder {embedder.name!r} returned shape {vectors.shape}, "
            f"expected {(len(texts), embedder.dim)}; fix its embed() method"
        )
    if not np.all(np.isfinite(vectors)):
        raise PluginError(f"embedder {embedder.name!r} returned NaN or infinite values")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


def embedding_text(record: Record, *, evidence: str | None = None) -> str:
    """The text a record's vector is made from, as the write path and consolidation embed it.

    A note (or any kind the write path embeds) by ``index_text``: the turn it was written
    from (``evidence``, the text of its own episode) with its key tags, or its own text when
    that episode is gone; summaries and procedures by their text.
    """
    if record.kind in (Kind.SUMMARY, Kind.PROCEDURE):
        return record.text
    return index_text(record.text, record.tags, evidence=evidence)
