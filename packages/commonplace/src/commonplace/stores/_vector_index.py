"""Exact nearest-neighbour search over float32 vectors held in memory.

The store's rows are the truth; this index is a cache of their vectors, grouped
in one contiguous block per scope so a query only multiplies the blocks its
scope can see, and filled incrementally by row sequence number.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._scope import Scope
from ..embedders import Vectors

ScopeParts = tuple[str, str, str]


class _Block:
    """One scope's vectors in a contiguous, geometrically grown matrix."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.size = 0
        self.seqs: npt.NDArray[np.int64] = np.empty(0, np.int64)
        self.matrix: Vectors = np.empty((0, dim), np.float32)

    def append(self, seqs: npt.NDArray[np.int64], vectors: Vectors) -> None:
        need = self.size + len(seqs)
        if need > len(self.seqs):
            capacity = max(need, 2 * len(self.seqs), 64)
            grown_seqs = np.empty(capacity, np.int64)
            grown = np.empty((capacity, self.dim), np.float32)
            grown_seqs[: self.size] = self.seqs[: self.size]
            grown[: self.size] = self.matrix[: self.size]
            self.seqs, self.matrix = grown_seqs, grown
        self.seqs[self.size : need] = seqs
        self.matrix[self.size : need] = vectors
        self.size = need


class VectorIndex:
    """Blocks of vectors per scope, searched by brute-force inner product."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.max_seq = 0
        self._held = 0  # rows added, removed ones included (len() without a walk)
        self._blocks: dict[ScopeParts, _Block] = {}
        self._removed: set[int] = set()
        self._where: dict[int, tuple[_Block, int]] = {}  # seq -> its block and row

    def __len__(self) -> int:
        return self._held - len(self._removed)

    def add(self, parts: ScopeParts, seqs: npt.NDArray[np.int64], vectors: Vectors) -> None:
        if len(seqs) == 0:
            return
        block = self._blocks.get(parts)
        if block is None:
            block = self._blocks[parts] = _Block(self.dim)
        start = block.size
        block.append(seqs, vectors)
        self._held += len(seqs)
        for offset, seq in enumerate(seqs.tolist()):
            self._where[seq] = (block, start + offset)
        self.max_seq = max(self.max_seq, int(seqs.max()))

    def discard(self, seqs: set[int]) -> None:
        # only what is held: a row deleted before the cache caught up was never in it
        self._removed |= {seq for seq in seqs if seq in self._where}

    def similarity(self, seq: int, query: Vectors) -> float | None:
        """The cosine similarity of one stored vector, or None if it is not held."""
        found = self._where.get(seq)
        if found is None or seq in self._removed:
            return None
        block, row = found
        return float(block.matrix[row] @ query)

    def nearest(self, scope: Scope, queries: Vectors) -> list[tuple[int, float] | None]:
        """The best (seq, similarity) for each query row, with one product per block."""
        best: list[tuple[int, float] | None] = [None] * len(queries)
        for parts, block in self._blocks.items():
            if not _visible(scope, parts) or block.size == 0:
                continue
            sims = block.matrix[: block.size] @ queries.T  # (block, queries)
            if self._removed:
                gone = np.isin(block.seqs[: block.size], list(self._removed))
                sims[gone] = -np.inf
            rows = np.argmax(sims, axis=0)
            for q, row in enumerate(rows):
                sim = float(sims[row, q])
                if sim != -np.inf and (best[q] is None or sim > best[q][1]):  # type: ignore[index]
                    best[q] = (int(block.seqs[row]), sim)
        return best

    def search(self, scope: Scope, query: Vectors, *, limit: int) -> list[tuple[int, float]]:
        """``(seq, similarity)`` pairs, best first, at most ``limit``."""
        found_seqs: list[npt.NDArray[np.int64]] = []
        found_sims: list[npt.NDArray[np.float32]] = []
        want = limit + len(self._removed)
        for parts, block in self._blocks.items():
            if not _visible(scope, parts) or block.size == 0:
                continue
            sims = block.matrix[: block.size] @ query
            if block.size > want:
                top = np.argpartition(-sims, want)[:want]
                found_seqs.append(block.seqs[top])
                found_sims.append(sims[top])
            else:
                found_seqs.append(block.seqs[: block.size])
                found_sims.append(sims)
        if not found_seqs:
            return []
        seqs = np.concatenate(found_seqs)
        sims = np.concatenate(found_sims)
        order = np.argsort(-sims, kind="stable")
        out: list[tuple[int, float]] = []
        for i in order:
            seq = int(seqs[i])
            if seq in self._removed:
                continue
            out.append((seq, float(sims[i])))
            if len(out) == limit:
                break
        return out


def _visible(scope: Scope, parts: ScopeParts) -> bool:
    return all(
        want is None or want == have
        for want, have in zip((scope.user, scope.agent, scope.thread), parts)
    )
