"""Any LangChain ``Embeddings`` as commonplace's embedder: ``Memory(embedder=embeddings)``.

The pinned name comes from the model's identity, so two models never share a store
silently: ``langchain:<class>(<model fields>):<dim>``, where the model fields are the
ones LangChain integrations name their model with (``model``, ``model_name``,
``model_id``, ``deployment``, ``dimensions``) and the dimension is measured with one
probe text unless the object declares it (``dimensions`` or ``size``).
"""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from commonplace.embedders import CallableEmbedder, declared_dim, identity_name
from commonplace.errors import InvalidTypeError

PREFIX = "langchain"
IDENTITY_FIELDS = ("model", "model_name", "model_id", "deployment", "dimensions")
DIM_FIELDS = ("dimensions", "size")


class LangChainEmbedder(CallableEmbedder):
    """A LangChain ``Embeddings`` (``embed_documents`` / ``aembed_documents``) as an Embedder.

    ``name`` replaces the pinned name worked out from the model (give one when two
    configurations of one class make different vectors and its model fields do not
    tell them apart); ``dim`` saves the probe call. Queries are embedded like
    documents: commonplace compares queries and notes in one space.
    """

    def __init__(
        self, embeddings: Embeddings, *, name: str | None = None, dim: int | None = None
    ) -> None:
        if not isinstance(embeddings, Embeddings):
            raise InvalidTypeError(
                "LangChainEmbedder wraps a langchain_core Embeddings, not "
                f"{type(embeddings).__name__}"
            )
        self.embeddings = embeddings
        if dim is None:
            dim = declared_dim(embeddings, DIM_FIELDS)
        if dim is None:  # one probe text tells the dimension
            dim = CallableEmbedder(embeddings.embed_documents, name=PREFIX).dim
        super().__init__(
            embeddings.embed_documents,
            name=identity_name(PREFIX, embeddings, dim=dim, fields=IDENTITY_FIELDS)
            if name is None
            else name,
            dim=dim,
            afn=embeddings.aembed_documents,
        )
