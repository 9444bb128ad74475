"""Any LlamaIndex ``BaseEmbedding`` as commonplace's embedder: ``Memory(embedder=embed_model)``.

The pinned name comes from the model's identity, so two models never share a store
silently: ``llamaindex:<class>(<model fields>):<dim>``, from ``model_name`` (unless it
is LlamaIndex's placeholder ``unknown``), ``model`` and ``dimensions``; the dimension is
measured with one probe text unless the object declares it (``embed_dim``,
``dimensions``).
"""

from __future__ import annotations

from llama_index.core.base.embeddings.base import BaseEmbedding

from commonplace.embedders import CallableEmbedder, declared_dim, identity_name
from commonplace.errors import InvalidTypeError

PREFIX = "llamaindex"
IDENTITY_FIELDS = ("model_name", "model", "dimensions")
DIM_FIELDS = ("embed_dim", "dimensions")


class LlamaIndexEmbedder(CallableEmbedder):
    """A LlamaIndex ``BaseEmbedding`` (``get_text_embedding_batch`` /
    ``aget_text_embedding_batch``) as an Embedder.

    ``name`` replaces the pinned name worked out from the model (give one when two
    configurations of one class make different vectors and its model fields do not
    tell them apart); ``dim`` saves the probe call. Queries are embedded like
    documents: commonplace compares queries and notes in one space.
    """

    def __init__(
        self, embed_model: BaseEmbedding, *, name: str | None = None, dim: int | None = None
    ) -> None:
        if not isinstance(embed_model, BaseEmbedding):
            raise InvalidTypeError(
                "LlamaIndexEmbedder wraps a llama_index BaseEmbedding, not "
                f"{type(embed_model).__name__}"
            )
        self.embed_model = embed_model
        if dim is None:
            dim = declared_dim(embed_model, DIM_FIELDS)
        if dim is None:  # one probe text tells the dimension
            dim = CallableEmbedder(embed_model.get_text_embedding_batch, name=PREFIX).dim
        fields = [f for f in IDENTITY_FIELDS if getattr(embed_model, f, None) != "unknown"]
        super().__init__(
            embed_model.get_text_embedding_batch,
            name=identity_name(PREFIX, embed_model, dim=dim, fields=fields)
            if name is None
            else name,
            dim=dim,
            afn=embed_model.aget_text_embedding_batch,
        )
