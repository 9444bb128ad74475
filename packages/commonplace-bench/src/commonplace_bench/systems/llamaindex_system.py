"""LlamaIndex's ``Memory`` with a ``VectorMemoryBlock``, fed our embedder.

Every turn is ``put`` into ``Memory``; when its short-term queue passes its share
of the token limit, the oldest messages are flushed into the ``VectorMemoryBlock``,
one vector per flushed batch of messages (LlamaIndex's design). ``get(input=query)``
returns what the model would see: the retrieved batches in a system message plus
the short-term queue. Settings, all documented on the results page: the token
limit is the workload's budget, the short-term queue gets 10% of it (so nearly the
whole history is searchable, the setting most favourable to it here), batches of
about 60 tokens, ``similarity_top_k=5``, and retrieval by the query plus the last
queued message (``retrieval_context_window=2``, the smallest window it honours: a
window of 1 means the whole queue). LlamaIndex's core ships no vector store that keeps
text, which the block requires, so :class:`TextVectorStore` is a minimal exact-cosine
one in memory (what a chromadb or qdrant integration would provide).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.memory import Memory, VectorMemoryBlock
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    VectorStoreQuery,
    VectorStoreQueryResult,
)
from sqlalchemy.ext.asyncio import create_async_engine

from commonplace import count_tokens
from commonplace.embedders import Embedder

from .base import Retrieved, System, Turn
from .plain_rag import DEPTH

__all__ = ["LlamaIndexEmbedding", "LlamaIndexMemory", "TextVectorStore"]

SESSION = "bench"
HISTORY_RATIO = 0.1
FLUSH_TOKENS = 60
SIMILARITY_TOP_K = 5


class LlamaIndexEmbedding(BaseEmbedding):
    """Any commonplace ``Embedder`` as a LlamaIndex ``BaseEmbedding``."""

    _embedder: Any = PrivateAttr()

    def __init__(self, embedder: Embedder) -> None:
        super().__init__(model_name=embedder.name, embed_batch_size=64)
        self._embedder = embedder

    def _get_text_embedding(self, text: str) -> list[float]:
        return list(map(float, self._embedder.embed([text])[0]))

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in self._embedder.embed(texts)]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)


class TextVectorStore(BasePydanticVectorStore):
    """Nodes with their text and embedding, searched by exact cosine similarity."""

    stores_text: bool = True
    _nodes: list[BaseNode] = PrivateAttr(default_factory=list)
    _vectors: list[list[float]] = PrivateAttr(default_factory=list)

    @property
    def client(self) -> Any:
        return None

    def add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        for node in nodes:
            self._nodes.append(node)
            self._vectors.append(list(node.get_embedding()))
        return [node.node_id for node in nodes]

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        keep = [n for n, node in enumerate(self._nodes) if node.ref_doc_id != ref_doc_id]
        self._nodes = [self._nodes[n] for n in keep]
        self._vectors = [self._vectors[n] for n in keep]

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        if not self._nodes or query.query_embedding is None:
            return VectorStoreQueryResult(nodes=[], similarities=[], ids=[])
        matrix = np.asarray(self._vectors, dtype=np.float32)
        vector = np.asarray(query.query_embedding, dtype=np.float32)
        sims = matrix @ vector  # unit vectors: the inner product is the cosine
        order = np.argsort(-sims, kind="stable")[: query.similarity_top_k]
        return VectorStoreQueryResult(
            nodes=[self._nodes[i] for i in order],
            similarities=[float(sims[i]) for i in order],
            ids=[self._nodes[i].node_id for i in order],
        )

    def __len__(self) -> int:
        return len(self._nodes)


class LlamaIndexMemory(System):
    def __init__(
        self, folder: Path, embedder: Embedder, *, budget: int = 1500, depth: int = DEPTH
    ) -> None:
        super().__init__(folder, embedder)
        self.depth = depth
        self.vectors = TextVectorStore()
        self.embed_model = LlamaIndexEmbedding(self.embedder)
        self._loop = asyncio.new_event_loop()
        self._engine = create_async_engine("sqlite+aiosqlite:///:memory:")
        self.block = VectorMemoryBlock(
            name="retrieved_messages",
            vector_store=self.vectors,
            embed_model=self.embed_model,
            similarity_top_k=SIMILARITY_TOP_K,
            retrieval_context_window=2,
        )
        self.memory = Memory.from_defaults(
            session_id=SESSION,
            token_limit=budget,
            chat_history_token_ratio=HISTORY_RATIO,
            token_flush_size=FLUSH_TOKENS,
            memory_blocks=[self.block],
            async_engine=self._engine,
        )

    def _run(self, coroutine: Any) -> Any:
        return self._loop.run_until_complete(coroutine)

    def add(self, turns: Sequence[Turn]) -> None:
        self._run(
            self.memory.aput_messages([ChatMessage(role=t.role, content=t.text) for t in turns])
        )

    def query(
        self,
        text: str,
        *,
        at: datetime,
        top_k: int,
        budget: int,
        as_of: datetime | None = None,
    ) -> Retrieved:
        # the ranking the block would use, deeper, for the rank metrics (not counted:
        # LlamaIndex itself embeds the query once, inside get())
        vector = [float(x) for x in self.embedder.uncounted.embed([text])[0]]
        found = self.vectors.query(
            VectorStoreQuery(query_embedding=vector, similarity_top_k=max(top_k, self.depth))
        )
        hits = tuple(node.get_content() for node in found.nodes or [])
        held = self.memory.token_limit
        self.memory.token_limit = budget
        try:
            messages = self._run(self.memory.aget(input=text))
        finally:
            self.memory.token_limit = held
        context = "\n".join(f"{m.role.value}: {m.content or ''}" for m in messages)
        return Retrieved(hits=hits, context=context, tokens=count_tokens(context) if context else 0)

    def close(self) -> None:
        try:
            self._run(self._engine.dispose())
        finally:
            self._loop.close()

    def disk_bytes(self) -> int:
        return 0  # held in memory only
