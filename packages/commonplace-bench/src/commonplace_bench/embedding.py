"""The embedders the harness runs every workload with, behind one shared cache.

Every system in a run gets the same embedder, so a text is embedded once and its
vector served to every system that asks (each system still counts its own calls,
see :class:`commonplace_bench.systems.base.Metered`). MiniLM is optional: when its
packages are missing it is reported as not run, with the pip command.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from commonplace import HashingEmbedder
from commonplace.embedders import Embedder, Vectors

__all__ = ["EMBEDDERS", "CachedEmbedder", "LoadedEmbedder", "load_embedders"]

#: key -> display label, in the order the page shows them
EMBEDDERS = {
    "minilm": "all-MiniLM-L6-v2 (int8 ONNX, the default)",
    "hashing": "hashing (the offline fallback)",
}


class CachedEmbedder:
    """Embeds each distinct text once; batches the misses of a call together."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._cache: dict[str, Vectors] = {}
        self.embedded = 0  # distinct texts actually sent to the model

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def prime(self, texts: Iterable[str]) -> None:
        """Embed ahead, in large batches (much faster for a transformer than one by one)."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        for start in range(0, len(missing), 256):
            self._fill(missing[start : start + 256])

    def embed(self, texts: Sequence[str]) -> Vectors:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            self._fill(missing)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts]).astype(np.float32, copy=False)

    def _fill(self, texts: list[str]) -> None:
        vectors = np.asarray(self._inner.embed(texts), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        vectors = vectors / norms
        for text, vector in zip(texts, vectors):
            self._cache[text] = vector
        self.embedded += len(texts)


@dataclass(frozen=True, slots=True)
class LoadedEmbedder:
    key: str
    label: str
    embedder: CachedEmbedder
    checks: tuple[str, ...] = ()


def load_embedders(keys: Sequence[str]) -> tuple[list[LoadedEmbedder], dict[str, str]]:
    """The requested embedders that load, and a reason for each one that does not."""
    loaded: list[LoadedEmbedder] = []
    not_run: dict[str, str] = {}
    for key in keys:
        if key not in EMBEDDERS:
            raise ValueError(f"unknown embedder {key!r}; use one of {sorted(EMBEDDERS)}")
        label = EMBEDDERS[key]
        if key == "hashing":
            loaded.append(LoadedEmbedder(key, label, CachedEmbedder(HashingEmbedder())))
            continue
        from .checks import paraphrase_sanity
        from .models import MiniLMOnnxEmbedder, ModelNotInstalledError

        try:
            model = MiniLMOnnxEmbedder()
        except ModelNotInstalledError as exc:
            not_run[label] = str(exc)
            continue
        sanity = paraphrase_sanity(model)
        if not sanity.passed:
            not_run[label] = f"failed its sanity check: {sanity.describe()}"
            continue
        loaded.append(LoadedEmbedder(key, label, CachedEmbedder(model), (sanity.describe(),)))
    return loaded, not_run
