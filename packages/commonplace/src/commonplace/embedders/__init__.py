"""Embedders: the protocol any model plugs in through, and the offline built-in models."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._callable import CallableEmbedder
from ._hashing import HashingEmbedder
from ._identity import declared_dim, identity_name
from ._minilm import MiniLMEmbedder
from ._protocol import Embedder, Vectors, embed_checked, embedding_text

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

# reembed opens a store by URL through the plugin manager, so it lives above the stores
# (commonplace/_reembed.py), while the stores import the embedders' modules. Python runs
# this file before any of them, so importing it here would close an import cycle; it is
# imported on first use instead. Type checkers see the plain import (and no __getattr__,
# so a misspelt name here is still an error).
if TYPE_CHECKING:
    from .._reembed import ReembedReport, reembed
else:
    _ABOVE = frozenset({"ReembedReport", "reembed"})

    def __getattr__(name: str) -> Any:
        if name not in _ABOVE:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from .. import _reembed

        value = getattr(_reembed, name)
        globals()[name] = value  # later lookups find it without this function
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
