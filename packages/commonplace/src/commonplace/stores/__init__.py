"""Stores: the backend protocol and the embedded SQLite default."""

from ._protocol import (
    PROFILE_CARD,
    ROLLING_SUMMARY,
    AuditEntry,
    Backend,
    Candidate,
    Card,
    Conflict,
    EmbedderPin,
    Link,
    RecallLog,
    RecordQuery,
    ReembedState,
    TurnWrite,
)
from ._sqlite import SQLiteBackend

__all__ = [
    "AuditEntry",
    "Backend",
    "Candidate",
    "Card",
    "Conflict",
    "EmbedderPin",
    "Link",
    "PROFILE_CARD",
    "ROLLING_SUMMARY",
    "RecallLog",
    "RecordQuery",
    "ReembedState",
    "SQLiteBackend",
    "TurnWrite",
]
