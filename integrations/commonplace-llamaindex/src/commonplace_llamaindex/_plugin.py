"""The commonplace plugin of commonplace-llamaindex: LlamaIndex ``BaseEmbedding`` as embedders.

Registered in the ``commonplace.embedder_adapters`` entry-point group under the name
``llama_index``, so the core loads it only when ``Memory(embedder=...)`` is given a
LlamaIndex object; then ``Memory(url, embedder=OpenAIEmbedding(...))`` just works.
"""

from __future__ import annotations

from llama_index.core.base.embeddings.base import BaseEmbedding

from commonplace import Embedder, hookimpl

from ._embeddings import LlamaIndexEmbedder

__all__ = ["commonplace_adapt_embedder"]


@hookimpl
def commonplace_adapt_embedder(model: object) -> Embedder | None:
    """Wrap a LlamaIndex ``BaseEmbedding``; pass on anything else."""
    if isinstance(model, BaseEmbedding):
        return LlamaIndexEmbedder(model)
    return None
