"""Stores: the backend protocol and its optional capabilities, the core's view of a
backend (:class:`Store`), the embedded SQLite default, a copy between any two backends,
the few helpers another backend needs to store records exactly as the core does (their
ids, the text their keyword index holds), and the one reading of an SQLite URL."""

from .._records import episode_id, note_id, search_text
from ._copy import CopyReport, copy
from ._protocol import (
    COUNTERS,
    PROFILE_CARD,
    ROLLING_SUMMARY,
    AuditEntry,
    Backend,
    Candidate,
    Card,
    Conflict,
    EmbedderPin,
    Hit,
    Ledger,
    LedgerEntry,
    Link,
    LinkGraph,
    NearestNotes,
    RecallLog,
    RecordQuery,
    Reembedding,
    ReembedState,
    TurnWrite,
)
from ._sqlite import SQLiteBackend
from ._sqlite_connection import sqlite_path
from ._store import LedgerKind, Store

__all__ = [
    "AuditEntry",
    "Backend",
    "COUNTERS",
    "Candidate",
    "Card",
    "Conflict",
    "CopyReport",
    "EmbedderPin",
    "Hit",
    "Ledger",
    "LedgerEntry",
    "LedgerKind",
    "Link",
    "LinkGraph",
    "NearestNotes",
    "PROFILE_CARD",
    "ROLLING_SUMMARY",
    "RecallLog",
    "RecordQuery",
    "ReembedState",
    "Reembedding",
    "SQLiteBackend",
    "Store",
    "TurnWrite",
    "copy",
    "episode_id",
    "note_id",
    "search_text",
    "sqlite_path",
]
