"""Stores: the backend protocol and its optional capabilities, the core's view of a
backend (:class:`Store`), the embedded SQLite default, a copy between any two backends,
the few helpers another backend needs to store records exactly as the core does (their
ids, the text their keyword index holds), and the one reading of an SQLite URL."""

from .._records import episode_id, note_id, search_text
from ._copy import CopyReport, copy
from ._entries import Dispute, LedgerKind
from ._protocol import (
    COUNTERS,
    PROFILE_CARD,
    ROLLING_SUMMARY,
    AuditEntry,
    Backend,
    BatchAnswer,
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
    ReadBatch,
    RecallLog,
    RecordQuery,
    RecordUpdate,
    Reembedding,
    ReembedState,
    SearchQuery,
    TurnWrite,
    WriteBatch,
)
from ._sqlite import SQLiteBackend
from ._sqlite_connection import refuse_missing_store, sqlite_path
from ._store import Reads, Store

__all__ = [
    "AuditEntry",
    "Backend",
    "BatchAnswer",
    "COUNTERS",
    "Candidate",
    "Card",
    "Conflict",
    "CopyReport",
    "Dispute",
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
    "ReadBatch",
    "Reads",
    "RecallLog",
    "RecordQuery",
    "RecordUpdate",
    "ReembedState",
    "Reembedding",
    "SQLiteBackend",
    "SearchQuery",
    "Store",
    "TurnWrite",
    "WriteBatch",
    "copy",
    "episode_id",
    "note_id",
    "refuse_missing_store",
    "search_text",
    "sqlite_path",
]
