"""Stores: the backend protocol, the embedded SQLite default, and the few helpers another
backend needs to store records exactly as the core does (their ids, the text their keyword
index holds, the keyword match), and the one reading of an SQLite URL."""

from .._records import episode_id, note_id, search_text
from .._text import keyword_coverage
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
from ._sqlite_connection import sqlite_path

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
    "episode_id",
    "keyword_coverage",
    "note_id",
    "search_text",
    "sqlite_path",
]
