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


_V2 = (
    # lifecycle bookkeeping on every record
    "ALTER TABLE records ADD COLUMN used_count INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE records ADD COLUMN ignored_count INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE records ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE records ADD COLUMN status_since REAL",
    "ALTER TABLE records ADD COLUMN tier_since REAL",
    "ALTER TABLE records ADD COLUMN data TEXT NOT NULL DEFAULT '{}'",
    "ALTER TABLE records ADD COLUMN entities TEXT NOT NULL DEFAULT ''",
    # what keyword search matches: the text plus the writer's normalised tags
    "ALTER TABLE records ADD COLUMN search TEXT NOT NULL DEFAULT ''",
    "UPDATE records SET search = text || ' ' || "
    "commonplace_scope_tokens(scope_user, scope_agent, scope_thread)",
    "CREATE INDEX records_status ON records (kind, status, tier)",
    "CREATE TABLE uses (record_id TEXT NOT NULL, at REAL NOT NULL)",
    "CREATE INDEX uses_record ON uses (record_id, at)",
    """CREATE TABLE links (
        a TEXT NOT NULL, b TEXT NOT NULL, kind TEXT NOT NULL,
        weight REAL NOT NULL, updated_at REAL NOT NULL,
        PRIMARY KEY (a, b, kind)
    ) WITHOUT ROWID""",
    "CREATE INDEX links_b ON links (b)",
    """CREATE TABLE audit (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL,
        scope_user TEXT NOT NULL, scope_agent TEXT NOT NULL, scope_thread TEXT NOT NULL,
        action TEXT NOT NULL, rule TEXT NOT NULL, record_id TEXT NOT NULL,
        detail TEXT NOT NULL
    )""",
    """CREATE TABLE recalls (
        id TEXT PRIMARY KEY, scope_user TEXT NOT NULL, scope_agent TEXT NOT NULL,
        scope_thread TEXT NOT NULL, at REAL NOT NULL, item_ids TEXT NOT NULL,
        feedback_at REAL
    ) WITHOUT ROWID""",
    """CREATE TABLE conflicts (
        id TEXT PRIMARY KEY, scope_user TEXT NOT NULL, scope_agent TEXT NOT NULL,
        scope_thread TEXT NOT NULL, entity TEXT NOT NULL, reason TEXT NOT NULL,
        record_ids TEXT NOT NULL, created_at REAL NOT NULL, resolved_at REAL,
        resolution TEXT
    ) WITHOUT ROWID""",
    """CREATE TABLE cards (
        scope_user TEXT NOT NULL, scope_agent TEXT NOT NULL, scope_thread TEXT NOT NULL,
        kind TEXT NOT NULL, text TEXT NOT NULL, data TEXT NOT NULL, updated_at REAL NOT NULL,
        PRIMARY KEY (scope_user, scope_agent, scope_thread, kind)
    ) WITHOUT ROWID""",
    # keyword search: an external-content FTS5 index kept in step by triggers
    """CREATE VIRTUAL TABLE records_fts USING fts5(
        search, content='records', content_rowid='seq', tokenize='porter unicode61'
    )""",
    """CREATE TRIGGER records_fts_insert AFTER INSERT ON records BEGIN
        INSERT INTO records_fts (rowid, search) VALUES (new.seq, new.search);
    END""",
    """CREATE TRIGGER records_fts_delete AFTER DELETE ON records BEGIN
        INSERT INTO records_fts (records_fts, rowid, search)
        VALUES ('delete', old.seq, old.search);
    END""",
    """CREATE TRIGGER records_fts_update AFTER UPDATE OF search ON records BEGIN
        INSERT INTO records_fts (records_fts, rowid, search)
        VALUES ('delete', old.seq, old.search);
        INSERT INTO records_fts (rowid, search) VALUES (new.seq, new.search);
    END""",
    "INSERT INTO records_fts (records_fts) VALUES ('rebuild')",
    # turns removed on request: a replayed message must not bring them back
    "CREATE TABLE forgotten (id TEXT PRIMARY KEY) WITHOUT ROWID",
)


def _v2(db: sqlite3.Connection) -> None:
    from .._scope import Scope
    from ._sqlite_rows import scope_tokens

    def tokens(user: str, agent: str, thread: str) -> str:
        scope = Scope(user=user or None, agent=agent or None, thread=thread or None)
        return " ".join(scope_tokens(scope))

    db.create_function("commonplace_scope_tokens", 3, tokens, deterministic=True)
    for statement in _V2:
        db.execute(statement)
    # entities were inside the tags JSON in v1; v2 keeps them searchable in a column
    db.execute(
        "UPDATE records SET entities = coalesce((SELECT char(31) || group_concat(lower(value), "
        "char(31)) || char(31) FROM json_each(records.tags, '$.entities')), '')"
    )


_V3 = (
    # one ledger for the core's bookkeeping (see Store), instead of a table per kind
    """CREATE TABLE ledger (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, key TEXT NOT NULL,
        scope_user TEXT NOT NULL, scope_agent TEXT NOT NULL, scope_thread TEXT NOT NULL,
        at REAL NOT NULL, data TEXT NOT NULL, refs TEXT NOT NULL,
        UNIQUE (kind, key)
    )""",
    "CREATE INDEX ledger_scope ON ledger (kind, scope_user, scope_agent, scope_thread)",
    """CREATE TABLE ledger_refs (
        kind TEXT NOT NULL, ref TEXT NOT NULL, seq INTEGER NOT NULL,
        PRIMARY KEY (kind, ref, seq)
    ) WITHOUT ROWID""",
    "CREATE INDEX ledger_refs_seq ON ledger_refs (seq)",
    # the v2 tables' rows, in their order, in the shape Store writes
    """INSERT INTO ledger (kind, key, scope_user, scope_agent, scope_thread, at, data, refs)
    SELECT 'audit', 'v2-' || seq, scope_user, scope_agent, scope_thread, at,
        json_object('action', action, 'rule', rule, 'record_id', record_id, 'detail', detail),
        json_array(record_id)
    FROM audit ORDER BY seq""",
    """INSERT INTO ledger (kind, key, scope_user, scope_agent, scope_thread, at, data, refs)
    SELECT 'recall', id, scope_user, scope_agent, scope_thread, at,
        json_object('retrieved', json(item_ids) -> '$.retrieved',
                    'shown', json(item_ids) -> '$.shown'), '[]'
    FROM recalls ORDER BY at""",
    """INSERT INTO ledger (kind, key, scope_user, scope_agent, scope_thread, at, data, refs)
    SELECT 'recall_feedback', id, scope_user, scope_agent, scope_thread, feedback_at, '{}', '[]'
    FROM recalls WHERE feedback_at IS NOT NULL ORDER BY at""",
    """INSERT INTO ledger (kind, key, scope_user, scope_agent, scope_thread, at, data, refs)
    SELECT 'conflict', id, scope_user, scope_agent, scope_thread, created_at,
        json_object('entity', entity, 'reason', reason, 'record_ids', json(record_ids),
                    'resolved_at', commonplace_iso(resolved_at), 'resolution', resolution),
        record_ids
    FROM conflicts ORDER BY created_at""",
    """INSERT INTO ledger (kind, key, scope_user, scope_agent, scope_thread, at, data, refs)
    SELECT 'card', json_array(kind, scope_user, scope_agent, scope_thread), scope_user,
        scope_agent, scope_thread, updated_at,
        json_object('kind', kind, 'text', text, 'data', json(data)), '[]'
    FROM cards""",
    """INSERT INTO ledger (kind, key, scope_user, scope_agent, scope_thread, at, data, refs)
    SELECT 'use', 'v2-' || rowid, '', '', '', at, '{}', json_array(record_id)
    FROM uses ORDER BY rowid""",
    """INSERT INTO ledger (kind, key, scope_user, scope_agent, scope_thread, at, data, refs)
    SELECT 'forgotten', id, '', '', '', 0, '{}', json_array(id) FROM forgotten""",
    """INSERT INTO ledger_refs (kind, ref, seq)
    SELECT DISTINCT ledger.kind, j.value, ledger.seq FROM ledger, json_each(ledger.refs) AS j""",
    "DROP TABLE audit",
    "DROP TABLE recalls",
    "DROP TABLE conflicts",
    "DROP TABLE cards",
    "DROP TABLE uses",
    "DROP TABLE forgotten",
)


def _v3(db: sqlite3.Connection) -> None:
    from .._clock import from_epoch

    def iso(seconds: float | None) -> str | None:
        return None if seconds is None else from_epoch(seconds).isoformat()

    db.create_function("commonplace_iso", 1, iso, deterministic=True)
    for statement in _V3:
        db.execute(statement)


_COUNT_KEY = (
    "scope_user = {0}.scope_user AND scope_agent = {0}.scope_agent "
    "AND scope_thread = {0}.scope_thread AND kind = {0}.kind"
)
# Counting a scope's active records read every one of them (status is in no index that
# starts with the scope): the profile card asks after every batch, so the count grew with
# the store. Triggers keep one counter per scope and kind in the statement's own
# transaction, so it is exact whoever writes; a counter that reaches zero is deleted, so
# a forgotten scope leaves no row naming it.
_ADD = (
    "INSERT INTO record_counts (scope_user, scope_agent, scope_thread, kind, active) "
    "SELECT new.scope_user, new.scope_agent, new.scope_thread, new.kind, 1 "
    "WHERE new.status = 'active' "
    "ON CONFLICT (scope_user, scope_agent, scope_thread, kind) DO UPDATE SET active = active + 1;"
)
_REMOVE = (
    "UPDATE record_counts SET active = active - 1 "
    f"WHERE old.status = 'active' AND {_COUNT_KEY.format('old')};"
    f"DELETE FROM record_counts WHERE active <= 0 AND {_COUNT_KEY.format('old')};"
)
_V4 = (
    """CREATE TABLE record_counts (
        scope_user TEXT NOT NULL, scope_agent TEXT NOT NULL, scope_thread TEXT NOT NULL,
        kind TEXT NOT NULL, active INTEGER NOT NULL,
        PRIMARY KEY (scope_user, scope_agent, scope_thread, kind)
    ) WITHOUT ROWID""",
    f"CREATE TRIGGER record_counts_insert AFTER INSERT ON records BEGIN {_ADD} END",
    f"CREATE TRIGGER record_counts_delete AFTER DELETE ON records BEGIN {_REMOVE} END",
    # only a change of what the counter is keyed by, or of the status, moves a count
    "CREATE TRIGGER record_counts_update "
    "AFTER UPDATE OF status, kind, scope_user, scope_agent, scope_thread ON records "
    "WHEN old.status IS NOT new.status OR old.kind IS NOT new.kind "
    "OR old.scope_user IS NOT new.scope_user OR old.scope_agent IS NOT new.scope_agent "
    f"OR old.scope_thread IS NOT new.scope_thread BEGIN {_REMOVE} {_ADD} END",
    """INSERT INTO record_counts (scope_user, scope_agent, scope_thread, kind, active)
    SELECT scope_user, scope_agent, scope_thread, kind, count(*) FROM records
    WHERE status = 'active' GROUP BY scope_user, scope_agent, scope_thread, kind""",
)


def _v4(db: sqlite3.Connection) -> None:
    for statement in _V4:
        db.execute(statement)


_V5 = (
    # links name their ends by number, in the order ids are first linked (_sqlite_links)
    "CREATE TABLE link_ends (n INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE)",
    # numbered in the records' order, as a store built at v5 numbers them
    """INSERT INTO link_ends (id)
    SELECT e.id FROM (SELECT a AS id FROM links UNION SELECT b FROM links) AS e
    LEFT JOIN records AS r ON r.id = e.id ORDER BY r.seq IS NULL, r.seq, e.id""",
    "ALTER TABLE links RENAME TO links_v4",
    """CREATE TABLE links (
        a INTEGER NOT NULL, b INTEGER NOT NULL, kind TEXT NOT NULL,
        weight REAL NOT NULL, updated_at REAL NOT NULL,
        PRIMARY KEY (a, b, kind)
    ) WITHOUT ROWID""",
    """INSERT INTO links (a, b, kind, weight, updated_at)
    SELECT ea.n, eb.n, old.kind, old.weight, old.updated_at FROM links_v4 AS old
    JOIN link_ends AS ea ON ea.id = old.a JOIN link_ends AS eb ON eb.id = old.b""",
    "DROP TABLE links_v4",
    "CREATE INDEX links_b ON links (b)",
)


def _v5(db: sqlite3.Connection) -> None:
    for statement in _V5:
        db.execute(statement)


_V6 = (
    # a record's sources name it by its seq (a replaced record gets a new seq, and its
    # sources are written again): new notes' rows go to the end of the key, not to a random
    # page of it, as the links' do since v5; the index by source stays
    "ALTER TABLE provenance RENAME TO provenance_v5",
    """CREATE TABLE provenance (
        record_seq INTEGER NOT NULL,
        source_id TEXT NOT NULL,
        PRIMARY KEY (record_seq, source_id)
    ) WITHOUT ROWID""",
    """INSERT INTO provenance (record_seq, source_id)
    SELECT r.seq, p.source_id FROM provenance_v5 AS p JOIN records AS r ON r.id = p.record_id
    ORDER BY r.seq, p.source_id""",
    "DROP TABLE provenance_v5",
    "CREATE INDEX provenance_source ON provenance (source_id)",
)


def _v6(db: sqlite3.Connection) -> None:
    for statement in _V6:
        db.execute(statement)


# A scope's row version: moved, in the same transaction, by every change to its vector rows
# other than an append (a delete; a vector, scope or seq updated, by commonplace or by
# hand), so a saved vector graph knows whether the rows are still those it was saved from
# (_sqlite_vectors). Inserts never fire them: the write path costs what it did.
VECTOR_VERSION_TRIGGERS = ("vector_rows_deleted", "vector_rows_changed")
_BUMP = """INSERT INTO vector_versions (scope_user, scope_agent, scope_thread, version)
        VALUES ({0}.scope_user, {0}.scope_agent, {0}.scope_thread, 1)
        ON CONFLICT DO UPDATE SET version = version + 1;"""
_V7 = (
    """CREATE TABLE vector_versions (
        scope_user TEXT NOT NULL,
        scope_agent TEXT NOT NULL,
        scope_thread TEXT NOT NULL,
        version INTEGER NOT NULL,
        PRIMARY KEY (scope_user, scope_agent, scope_thread)
    ) WITHOUT ROWID""",
    f"""CREATE TRIGGER {VECTOR_VERSION_TRIGGERS[0]} AFTER DELETE ON records
    WHEN old.vector IS NOT NULL BEGIN {_BUMP.format("old")} END""",
    f"""CREATE TRIGGER {VECTOR_VERSION_TRIGGERS[1]}
    AFTER UPDATE OF seq, vector, scope_user, scope_agent, scope_thread ON records
    WHEN old.vector IS NOT NULL OR new.vector IS NOT NULL BEGIN
        {_BUMP.format("old")} {_BUMP.format("new")}
    END""",
)


def _v7(db: sqlite3.Connection) -> None:
    for statement in _V7:
        db.execute(statement)


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _v1,
    _v2,
    _v3,
    _v4,
    _v5,
    _v6,
    _v7,
)
SCHEMA_VERSION = len(MIGRATIONS)
