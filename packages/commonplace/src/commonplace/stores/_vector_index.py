"""Nearest-neighbour search over float32 vectors held in memory.

The store's rows are the truth; this index is a cache of their vectors, grouped
in one block per scope so a query only searches the blocks its scope can see, and
filled incrementally by row sequence number.

A block is a contiguous matrix searched exactly while it is small. Once it holds
``ann_rows`` vectors they move into an HNSW graph (:class:`~._ann.Ann`), and the
matrix keeps only the rows added since (the tail), searched exactly beside the graph
and merged into it when it grows past ``_TAIL_ROWS``: a write never waits for the
graph, and a search costs a graph walk plus a small product, whatever the store's size.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from .._scope import Scope
from ..embedders._protocol import Vectors
from ._ann import NEAR_COPY_BOUND, NEAREST_WIDTH, Ann, near_copy_width

ScopeParts = tuple[str, str, str]

# The size at which a scope's vectors move into a graph: below it an exact product is
# about as fast as a graph walk (20,000 x 256 floats: about 2 ms here) and needs no build.
ANN_ROWS = 20_000
# The rows a graph's block keeps outside it, searched exactly: at 256 dimensions a
# product with 8,192 rows costs well under a millisecond, and merging them into the
# graph (a few hundred milliseconds) happens once per that many writes.
_TAIL_ROWS = 8192


class _Block:
    """One scope's vectors: a geometrically grown matrix, and the graph once large."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.size = 0
        self.seqs: npt.NDArray[np.int64] = np.empty(0, np.int64)
        self.matrix: Vectors = np.empty((0, dim), np.float32)
        self.ann: Ann | None = None
        # the scope's row version when the block's first rows were read (None: unknown);
        # a graph made from the block holds the rows of that version, and of no later one
        self.version: int | None = None

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

    def clear_tail(self) -> None:
        self.size = 0
        self.seqs = np.empty(0, np.int64)
        self.matrix = np.empty((0, self.dim), np.float32)


class VectorIndex:
    """Blocks of vectors per scope: exact products for small ones, a graph for large ones.

    ``ann_rows`` is the size at which a block moves into a graph (None: never)."""

    def __init__(self, dim: int, *, ann_rows: int | None = None) -> None:
        self.dim = dim
        self.ann_rows = ann_rows
        self.max_seq = 0
        self._tail_held = 0  # rows in the blocks' matrices, removed ones included
        self._blocks: dict[ScopeParts, _Block] = {}
        self._removed: set[int] = set()  # seqs of tail rows deleted since they were added
        self._where: dict[int, tuple[_Block, int]] = {}  # tail seq -> its block and row

    def __len__(self) -> int:
        in_graphs = sum(len(b.ann) for b in self._blocks.values() if b.ann is not None)
        return self._tail_held - len(self._removed) + in_graphs

    def share(self, scope: Scope) -> float:
        """The part of the held vectors that ``scope`` sees (1.0 for an empty index)."""
        total = len(self)
        if total == 0:
            return 1.0
        seen = sum(
            b.size + (len(b.ann) if b.ann is not None else 0)
            for parts, b in self._blocks.items()
            if _visible(scope, parts)
        )
        return seen / total

    def graphs(self) -> Iterator[tuple[ScopeParts, Ann]]:
        """The blocks searched through a graph, with their graphs."""
        for parts, block in self._blocks.items():
            if block.ann is not None:
                yield parts, block.ann

    def attach(self, parts: ScopeParts, ann: Ann) -> None:
        """Start a scope's block from a graph saved earlier (before any row of it)."""
        block = self._blocks.setdefault(parts, _Block(self.dim))
        block.ann = ann
        block.version = ann.version

    def holds(self, parts: ScopeParts) -> bool:
        """Whether a block for this scope was started."""
        return parts in self._blocks

    def start(self, parts: ScopeParts, *, version: int | None) -> None:
        """Start a scope's block before its first rows, read at this row version."""
        block = self._blocks.setdefault(parts, _Block(self.dim))
        block.version = version

    def add(self, parts: ScopeParts, seqs: npt.NDArray[np.int64], vectors: Vectors) -> None:
        if len(seqs) == 0:
            return
        block = self._blocks.get(parts)
        if block is None:
            block = self._blocks[parts] = _Block(self.dim)
        if block.ann is not None:  # rows a saved graph already holds are not added twice
            fresh = seqs > block.ann.max_seq
            seqs, vectors = seqs[fresh], vectors[fresh]
        self.max_seq = max(self.max_seq, int(seqs.max())) if len(seqs) else self.max_seq
        start = block.size
        block.append(seqs, vectors)
        self._tail_held += len(seqs)
        for offset, seq in enumerate(seqs.tolist()):
            self._where[seq] = (block, start + offset)
        if self.ann_rows is not None and (
            (block.ann is None and block.size >= self.ann_rows)
            or (block.ann is not None and block.size >= min(_TAIL_ROWS, self.ann_rows))
        ):
            self._merge(block)

    def _merge(self, block: _Block) -> None:
        """Move a block's tail into its graph (made now if it has none)."""
        seqs = block.seqs[: block.size]
        keep = np.array([seq not in self._removed for seq in seqs.tolist()], bool)
        if block.ann is None:
            block.ann = Ann(self.dim)
            block.ann.version = block.version
        block.ann.add(seqs[keep], block.matrix[: block.size][keep])
        for seq in seqs.tolist():
            del self._where[seq]
            self._removed.discard(seq)
        self._tail_held -= block.size
        block.clear_tail()

    def note_max_seq(self, seq: int) -> None:
        """Rows up to ``seq`` are held (a saved graph's rows, say)."""
        self.max_seq = max(self.max_seq, seq)

    def discard(self, seqs: set[int]) -> None:
        """Forget deleted rows (a graph that held one is never saved again: its memory
        still holds the vector)."""
        # only what is held: a row deleted before the cache caught up was never in it
        self._removed |= {seq for seq in seqs if seq in self._where}
        graphs = [b.ann for b in self._blocks.values() if b.ann is not None]
        if graphs:
            outside = [seq for seq in seqs if seq not in self._where]
            for ann in graphs:
                ann.remove(outside)

    def similarities(self, seqs: list[int], query: Vectors) -> dict[int, float]:
        """The cosine similarity of each held vector among ``seqs`` (one lookup per graph)."""
        out: dict[int, float] = {}
        rest: list[int] = []
        for seq in seqs:
            found = self._where.get(seq)
            if found is None:
                rest.append(seq)
            elif seq not in self._removed:
                out[seq] = float(found[0].matrix[found[1]] @ query)
        for block in self._blocks.values():
            if block.ann is None or not rest:
                continue
            held, vectors = block.ann.vectors(rest)
            out.update(zip(held, (vectors @ query).tolist()))
            rest = [seq for seq in rest if seq not in out]
        return out

    def nearest(
        self, scope: Scope, queries: Vectors, *, min_similarity: float | None = None
    ) -> list[tuple[int, float] | None]:
        """The best (seq, similarity) for each query row: one product per small block,
        one batched graph search per large one. A best less similar than
        ``min_similarity`` is None; a bound that asks for near copies only (at least
        ``NEAR_COPY_BOUND``) searches a graph with fewer candidates."""
        best: list[tuple[int, float] | None] = [None] * len(queries)
        low = -np.inf if min_similarity is None else min_similarity
        near_copies = low >= NEAR_COPY_BOUND

        def offer(q: int, seq: int, sim: float) -> None:
            current = best[q]
            if sim != -np.inf and sim >= low and (current is None or sim > current[1]):
                best[q] = (seq, sim)

        for parts, block in self._blocks.items():
            if not _visible(scope, parts):
                continue
            if block.ann is not None and len(block.ann):
                width = near_copy_width(len(block.ann)) if near_copies else NEAREST_WIDTH
                keys, sims = block.ann.search(queries, 1, width=width)
                for q in range(len(queries)):
                    if keys.shape[1] and keys[q, 0] >= 0:
                        offer(q, int(keys[q, 0]), float(sims[q, 0]))
            if block.size == 0:
                continue
            tail = block.matrix[: block.size] @ queries.T  # (block, queries)
            if self._removed:
                gone = np.isin(block.seqs[: block.size], list(self._removed))
                tail[gone] = -np.inf
            # the first row holding each column's maximum, as argmax gives it, for the
            # columns whose maximum reaches the bound: argmax down the columns of a
            # C-ordered matrix is several times slower than a max and a comparison (the
            # vectors are finite, so the maximum is in it)
            tops = tail.max(axis=0)
            wanted = np.flatnonzero(tops >= low)
            if len(wanted) == 0:
                continue
            rows = np.argmax(tail[:, wanted] == tops[wanted], axis=0)
            for q, row in zip(wanted.tolist(), rows.tolist()):
                offer(q, int(block.seqs[row]), float(tail[row, q]))
        return best

    def search(self, scope: Scope, query: Vectors, *, limit: int) -> list[tuple[int, float]]:
        """``(seq, similarity)`` pairs, best first, at most ``limit``."""
        found_seqs: list[npt.NDArray[np.int64]] = []
        found_sims: list[npt.NDArray[np.float32]] = []
        want = limit + len(self._removed)
        for parts, block in self._blocks.items():
            if not _visible(scope, parts):
                continue
            if block.ann is not None and len(block.ann):
                keys, sims = block.ann.search(query[None, :], limit)
                hit = keys[0] >= 0
                found_seqs.append(keys[0][hit])
                found_sims.append(sims[0][hit])
            if block.size == 0:
                continue
            tail = block.matrix[: block.size] @ query
            if block.size > want:
                top = np.argpartition(-tail, want)[:want]
                found_seqs.append(block.seqs[top])
                found_sims.append(tail[top])
            else:
                found_seqs.append(block.seqs[: block.size])
                found_sims.append(tail)
        if not found_seqs:
            return []
        seqs = np.concatenate(found_seqs)
        sims = np.concatenate(found_sims)
        order = np.argsort(-sims, kind="stable")
        # as Python numbers at once: converting them one by one cost more than the sort
        ranked = zip(seqs[order].tolist(), sims[order].tolist())
        if not self._removed:
            return list(ranked)[:limit]
        return [(seq, sim) for seq, sim in ranked if seq not in self._removed][:limit]


def _visible(scope: Scope, parts: ScopeParts) -> bool:
    return all(
        want is None or want == have
        for want, have in zip((scope.user, scope.agent, scope.thread), parts)
    )
