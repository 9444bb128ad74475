"""LangGraph's ``InMemoryStore`` with a semantic index over every message.

What the LangGraph docs suggest for long-term memory without extra services: each
turn is ``put`` as an item ``{"text", "role", "at"}`` indexed on ``text``, and
``search(query=...)`` ranks by cosine similarity. Our embedder reaches it as a
LangChain ``Embeddings``. ``as_of`` uses the store's own filter (``at <= date``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from commonplace.embedders import Embedder

from .base import Retrieved, System, Turn, line, pack
from .plain_rag import DEPTH

__all__ = ["LangGraphStore", "LangChainEmbeddings"]

NAMESPACE = ("bench", "memories")


class LangChainEmbeddings(Embeddings):
    """Any commonplace ``Embedder`` as a LangChain ``Embeddings``."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return cast(list[list[float]], self._embedder.embed(texts).tolist())

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class LangGraphStore(System):
    supports_as_of = True

    def __init__(self, folder: Path, embedder: Embedder, *, depth: int = DEPTH) -> None:
        super().__init__(folder, embedder)
        self.depth = depth
        self.store = InMemoryStore(
            index={
                "dims": embedder.dim,
                "embed": LangChainEmbeddings(self.embedder),
                "fields": ["text"],
            }
        )

    def add(self, turns: Sequence[Turn]) -> None:
        # InMemoryStore.batch raises ValueError when two items of one batch have the
        # same text (it embeds each text once but counts every item; langgraph 1.2), so
        # repeated texts go into the next batch
        pending = list(turns)
        while pending:
            seen: set[str] = set()
            batch: list[Turn] = []
            later: list[Turn] = []
            for turn in pending:
                (later if turn.text in seen else batch).append(turn)
                seen.add(turn.text)
            self.store.batch(
                [
                    PutOp(
                        NAMESPACE, t.key, {"text": t.text, "role": t.role, "at": t.at.timestamp()}
                    )
                    for t in batch
                ]
            )
            pending = later

    def query(
        self,
        text: str,
        *,
        at: datetime,
        top_k: int,
        budget: int,
        as_of: datetime | None = None,
    ) -> Retrieved:
        where: dict[str, Any] | None = None
        if as_of is not None:
            where = {"at": {"$lte": as_of.timestamp()}}
        with warnings.catch_warnings():
            # a text with no features ("👍" under the hashing embedder) embeds to a zero
            # vector, and InMemoryStore divides by its norm (NaN scores and a numpy warning)
            warnings.simplefilter("ignore", RuntimeWarning)
            limit = max(top_k, self.depth)
            items = self.store.search(NAMESPACE, query=text, filter=where, limit=limit)
        values = [item.value for item in items]
        lines = [
            line(
                str(v["role"]),
                str(v["text"]),
                datetime.fromtimestamp(float(v["at"]), tz=timezone.utc),
            )
            for v in values
        ]
        context, tokens = pack(lines, budget)
        return Retrieved(hits=tuple(str(v["text"]) for v in values), context=context, tokens=tokens)

    def disk_bytes(self) -> int:
        return 0  # held in memory only
