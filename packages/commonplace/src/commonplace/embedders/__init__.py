"""Embedders: the protocol any model plugs in through, and the offline default."""

from ._hashing import HashingEmbedder
from ._protocol import Embedder, Vectors

__all__ = ["Embedder", "HashingEmbedder", "Vectors"]
