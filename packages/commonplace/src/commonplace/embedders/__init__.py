"""Embedders: the protocol any model plugs in through, and the offline built-in models."""

from ._callable import CallableEmbedder
from ._hashing import HashingEmbedder
from ._identity import declared_dim, identity_name
from ._minilm import MiniLMEmbedder
from ._protocol import Embedder, Vectors, embed_checked
from ._reembed import ReembedReport, embedding_text, reembed

__all__ = [
    "CallableEmbedder",
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "ReembedReport",
    "Vectors",
    "declared_dim",
    "embed_checked",
    "embedding_text",
    "identity_name",
    "reembed",
]
