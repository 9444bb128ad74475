"""Stores: the backend protocol and the embedded SQLite default."""

from ._protocol import Backend, Candidate, EmbedderPin, TurnWrite
from ._sqlite import SQLiteBackend

__all__ = ["Backend", "Candidate", "EmbedderPin", "SQLiteBackend", "TurnWrite"]
