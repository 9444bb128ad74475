"""The SQLite store's schema, one migration per version.

``PRAGMA application_id`` marks a file as a commonplace store and
``PRAGMA user_version`` holds its schema version. Migration ``n`` takes a store
from version ``n`` to ``n + 1`` inside the opening transaction, so a store is
always at one version or the next, never in between.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

APPLICATION_ID = 0x636F6D70  # "comp"


_V1 = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    """CREATE TABLE episodes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        scope_user TEXT NOT NULL,
        scope_agent TEXT NOT NULL,
        scope_thread TEXT NOT NULL,
        role TEXT NOT NULL,
        text TEXT NOT NULL,
        at REAL NOT NULL,
        meta TEXT NOT NULL
    )""",
    "CREATE INDEX episodes_scope ON episodes (scope_user, scope_agent, scope_thread, seq)",
    # Evidence is immutable: no statement may edit an episode.
    """CREATE TRIGGER episodes_immutable BEFORE UPDATE ON episodes
    BEGIN SELECT RAISE(ABORT, 'episodes are immutable'); END""",
    """CREATE TABLE records (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        scope_user TEXT NOT NULL,
        scope_agent TEXT NOT NULL,
        scope_thread TEXT NOT NULL,
        text TEXT NOT NULL,
        tags TEXT NOT NULL,
        tier TEXT NOT NULL,
        subject TEXT,
        predicate TEXT,
        created_at REAL NOT NULL,
        last_access REAL NOT NULL,
        access_count INTEGER NOT NULL DEFAULT 0,
        valid_from REAL,
        valid_to REAL,
        superseded_by TEXT,
        status TEXT NOT NULL DEFAULT 'active',
        vector BLOB
    )""",
    # Newest-first reads within a scope walk one of these backwards.
    "CREATE INDEX records_user ON records (scope_user, kind, seq)",
    "CREATE INDEX records_agent ON records (scope_agent, kind, seq)",
    "CREATE INDEX records_thread ON records (scope_thread, kind, seq)",
    """CREATE INDEX records_key ON records (scope_user, subject, predicate)
    WHERE subject IS NOT NULL""",
    """CREATE TABLE provenance (
        record_id TEXT NOT NULL,
        source_id TEXT NOT NULL,
        PRIMARY KEY (record_id, source_id)
    ) WITHOUT ROWID""",
    "CREATE INDEX provenance_source ON provenance (source_id)",
)


def _v1(db: sqlite3.Connection) -> None:
    # Statement by statement: executescript() would commit the opening transaction.
    for statement in _V1:
        db.execute(statement)


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1,)
SCHEMA_VERSION = len(MIGRATIONS)
