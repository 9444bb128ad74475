"""The commonplace plugin of commonplace-langgraph: LangChain ``Embeddings`` as embedders.

Registered in the ``commonplace.embedder_adapters`` entry-point group under the name
``langchain_core``, so the core loads it only when ``Memory(embedder=...)`` is given a
LangChain object; then ``Memory(url, embedder=OpenAIEmbeddings(...))`` just works.
"""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from commonplace import Embedder, hookimpl

from ._embeddings import LangChainEmbedder

__all__ = ["commonplace_adapt_embedder"]


@hookimpl
def commonplace_adapt_embedder(model: object) -> Embedder | None:
    """Wrap a LangChain ``Embeddings``; pass on anything else."""
    if isinstance(model, Embeddings):
        return LangChainEmbedder(model)
    return None
