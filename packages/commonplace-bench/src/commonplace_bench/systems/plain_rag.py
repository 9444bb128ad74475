"""Plain RAG: every raw turn embedded, exact cosine top-k, packed into the budget.

The baseline any team starts from: no writer, no signals, both roles indexed as
they come (a transcript), and the ranked turns pasted into the prompt until the
token budget is spent. ``as_of`` is a timestamp filter (turns written by then),
which is what such a team would add for "what was true then".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from commonplace.embedders import Embedder

from .base import Retrieved, System, Turn, line, pack

__all__ = ["PlainRAG"]

#: how many ranked turns are offered to the packer (it stops at the budget)
DEPTH = 100


class PlainRAG(System):
    supports_as_of = True

    def __init__(self, folder: Path, embedder: Embedder, *, depth: int = DEPTH) -> None:
        super().__init__(folder, embedder)
        self.depth = depth
        self._texts: list[str] = []
        self._roles: list[str] = []
        self._times: list[datetime] = []
        self._stamps = np.empty(0, dtype=np.float64)
        self._matrix = np.empty((0, embedder.dim), dtype=np.float32)
        self._size = 0

    def add(self, turns: Sequence[Turn]) -> None:
        if not turns:
            return
        vectors = self.embedder.embed([t.text for t in turns])
        need = self._size + len(turns)
        if need > len(self._matrix):
            capacity = max(need, 2 * len(self._matrix), 256)
            grown = np.empty((capacity, self.embedder.dim), dtype=np.float32)
            grown[: self._size] = self._matrix[: self._size]
            stamps = np.empty(capacity, dtype=np.float64)
            stamps[: self._size] = self._stamps[: self._size]
            self._matrix, self._stamps = grown, stamps
        self._matrix[self._size : need] = vectors
        self._stamps[self._size : need] = [t.at.timestamp() for t in turns]
        self._size = need
        self._texts += [t.text for t in turns]
        self._roles += [t.role for t in turns]
        self._times += [t.at for t in turns]

    def ranked(self, text: str, *, limit: int, as_of: datetime | None = None) -> list[int]:
        """Indices of the ``limit`` nearest turns, best first."""
        if self._size == 0:
            return []
        query = self.embedder.embed([text])[0]
        sims: npt.NDArray[np.float32] = self._matrix[: self._size] @ query
        if as_of is not None:
            sims = np.where(self._stamps[: self._size] <= as_of.timestamp(), sims, -np.inf)
        limit = min(limit, self._size)
        top = np.argpartition(-sims, limit - 1)[:limit]
        order = top[np.argsort(-sims[top], kind="stable")]
        return [int(i) for i in order if np.isfinite(sims[i])]

    def query(
        self,
        text: str,
        *,
        at: datetime,
        top_k: int,
        budget: int,
        as_of: datetime | None = None,
    ) -> Retrieved:
        order = self.ranked(text, limit=max(top_k, self.depth), as_of=as_of)
        lines = [line(self._roles[i], self._texts[i], self._times[i]) for i in order]
        context, tokens = pack(lines, budget)
        return Retrieved(hits=tuple(self._texts[i] for i in order), context=context, tokens=tokens)

    def disk_bytes(self) -> int:
        return 0  # held in memory only
