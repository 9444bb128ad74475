"""The SQLite store counts a scope's active records from counters its triggers keep
(schema v4): the counts must equal the rows whoever changed them, a store written
before v4 is migrated with its counts, and a forgotten scope leaves no counter behind."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from commonplace import Kind, Scope, Status
from commonplace.stores import SQLiteBackend, TurnWrite, WriteBatch
from commonplace.stores._sqlite_schema import (
    APPLICATION_ID,
    MIGRATIONS,
    SCHEMA_VERSION,
    VECTOR_VERSION_TRIGGERS,
)
from commonplace.testing import PIN, T0, episode, note, unit

SCOPES = (
    Scope(user="ana"),
    Scope(user="ana", thread="t1"),
    Scope(user="ana", agent="helper"),
    Scope(user="bob"),
)
QUERIES = (*SCOPES, Scope(agent="helper"), Scope(thread="t1"), Scope(user="nobody"), None)


def counted_by_rows(db: sqlite3.Connection, scope: Scope | None, kind: Kind) -> int:
    """What count() answered before v4: every active row of the scope, read."""
    where = "1"
    params: tuple[str, ...] = ()
    if scope is not None:
        pairs = [
            (c, v)
            for c, v in zip(("scope_user", "scope_agent", "scope_thread"), scope.parts())
            if v
        ]
        where = " AND ".join(f"{c} = ?" for c, _ in pairs)
        params = tuple(v for _, v in pairs)
    row = db.execute(
        f"SELECT count(*) FROM records WHERE {where} AND kind = ? AND status = 'active'",
        (*params, kind.value),
    ).fetchone()
    return int(row[0])


def assert_counts_match_rows(backend: SQLiteBackend) -> None:
    with backend._reading() as db:
        for scope in QUERIES:
            for kind in (Kind.NOTE, Kind.SUMMARY):
                assert backend.count(scope, kind) == counted_by_rows(db, scope, kind), (scope, kind)
        # no counter is kept for what has none left
        assert db.execute("SELECT count(*) FROM record_counts WHERE active <= 0").fetchone() == (0,)


def write_notes(
    backend: SQLiteBackend, scope: Scope, texts: list[str], kind: Kind = Kind.NOTE
) -> list[str]:
    turns = [episode(scope, text) for text in texts]
    writes = [TurnWrite(t, note(t, kind=kind)) for t in turns]
    backend.apply(WriteBatch(writes, np.stack([unit(1.0, float(i)) for i in range(len(texts))])))
    return [w.note.id for w in writes if w.note is not None]


def test_counts_follow_inserts_status_changes_and_deletes(tmp_path: Path) -> None:
    with SQLiteBackend(tmp_path / "m.db") as backend:
        backend.write_pin(PIN)
        ids = {s: write_notes(backend, s, [f"{s} note {i}" for i in range(4)]) for s in SCOPES}
        write_notes(backend, SCOPES[0], ["a summary"], kind=Kind.SUMMARY)
        assert backend.count(Scope(user="ana"), Kind.NOTE) == 12
        assert_counts_match_rows(backend)
        # invalid, then active again: the count follows the status both ways
        backend.update_records(ids[SCOPES[0]][:2], at=T0, status=Status.INVALID)
        assert backend.count(SCOPES[0], Kind.NOTE) == 10  # ana's scope holds her threads too
        assert_counts_match_rows(backend)
        backend.update_records(ids[SCOPES[0]][:1], at=T0, status=Status.ACTIVE)
        # setting the status a record already has changes no count
        backend.update_records(ids[SCOPES[0]][:1], at=T0, status=Status.ACTIVE)
        assert backend.count(SCOPES[0], Kind.NOTE) == 11
        assert_counts_match_rows(backend)
        # a deleted record (inactive or not) leaves its count; erasing bob leaves no counter
        backend.delete(records=ids[SCOPES[0]][1:3])
        backend.delete(records=ids[SCOPES[3]], erase=True)
        assert backend.count(SCOPES[0], Kind.NOTE) == 10  # one of the two was active
        assert backend.count(SCOPES[3], Kind.NOTE) == 0
        assert_counts_match_rows(backend)
        with backend._reading() as db:
            assert db.execute(
                "SELECT count(*) FROM record_counts WHERE scope_user = 'bob'"
            ).fetchone() == (0,)


@settings(max_examples=25, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["write", "invalid", "active", "delete"]),
            st.integers(0, len(SCOPES) - 1),
            st.integers(1, 5),
        ),
        max_size=12,
    )
)
def test_counts_equal_the_rows_after_any_sequence_of_changes(
    steps: list[tuple[str, int, int]],
) -> None:
    # a folder per example: hypothesis runs many examples in one test function
    with tempfile.TemporaryDirectory() as folder, SQLiteBackend(Path(folder) / "m.db") as backend:
        backend.write_pin(PIN)
        made: dict[Scope, list[str]] = {s: [] for s in SCOPES}
        for n, (action, which, size) in enumerate(steps):
            scope = SCOPES[which]
            if action == "write":
                made[scope] += write_notes(
                    backend, scope, [f"step {n} note {i}" for i in range(size)]
                )
            elif action == "delete":
                backend.delete(records=made[scope][:size])
                del made[scope][:size]
            else:
                status = Status.INVALID if action == "invalid" else Status.ACTIVE
                backend.update_records(made[scope][:size], at=T0, status=status)
        assert_counts_match_rows(backend)


def test_a_version_3_store_is_migrated_with_its_counts(tmp_path: Path) -> None:
    """A file written before the counters existed: opening it counts its rows once."""
    path = tmp_path / "v3.db"
    with SQLiteBackend(path) as backend:
        backend.write_pin(PIN)
        ids = write_notes(backend, SCOPES[0], [f"note {i}" for i in range(5)])
        write_notes(backend, SCOPES[1], ["in a thread"])
        write_notes(backend, SCOPES[3], ["bob's"])
        backend.update_records(ids[:2], at=T0, status=Status.INVALID)
    # back to the v3 format: no counters, no triggers, version 3
    db = sqlite3.connect(path, isolation_level=None)
    for trigger in ("record_counts_insert", "record_counts_delete", "record_counts_update"):
        db.execute(f"DROP TRIGGER {trigger}")
    db.execute("DROP TABLE record_counts")
    # no vector row versions, as before v7
    for trigger in VECTOR_VERSION_TRIGGERS:
        db.execute(f"DROP TRIGGER {trigger}")
    db.execute("DROP TABLE vector_versions")
    # and links named by their ends' ids, as before v5 (this store has none)
    db.execute("DROP TABLE links")
    db.execute("DROP TABLE link_ends")
    db.execute(
        "CREATE TABLE links (a TEXT NOT NULL, b TEXT NOT NULL, kind TEXT NOT NULL, "
        "weight REAL NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (a, b, kind)) WITHOUT ROWID"
    )
    db.execute("CREATE INDEX links_b ON links (b)")
    # and sources named by their record's id, as before v6
    db.execute("ALTER TABLE provenance RENAME TO provenance_v6")
    db.execute(
        "CREATE TABLE provenance (record_id TEXT NOT NULL, source_id TEXT NOT NULL, "
        "PRIMARY KEY (record_id, source_id)) WITHOUT ROWID"
    )
    db.execute(
        "INSERT INTO provenance SELECT r.id, p.source_id FROM provenance_v6 AS p "
        "JOIN records AS r ON r.seq = p.record_seq"
    )
    db.execute("DROP TABLE provenance_v6")
    db.execute("CREATE INDEX provenance_source ON provenance (source_id)")
    db.execute("PRAGMA user_version = 3")
    db.close()
    assert len(MIGRATIONS) == SCHEMA_VERSION == 7
    with SQLiteBackend(path) as backend:
        assert backend.count(Scope(user="ana"), Kind.NOTE) == 4
        assert backend.count(SCOPES[0], Kind.NOTE) == 4  # a user's scope holds its threads
        assert backend.count(Scope(thread="t1"), Kind.NOTE) == 1
        assert backend.count(SCOPES[3], Kind.NOTE) == 1
        assert_counts_match_rows(backend)
        # and the triggers it gained keep counting
        write_notes(backend, SCOPES[3], ["bob again"])
        assert backend.count(SCOPES[3], Kind.NOTE) == 2
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert check.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)


def test_a_store_built_by_the_v3_migrations_is_upgraded(
    tmp_path: Path, old_sqlite_file: Callable[[Path, int], sqlite3.Connection]
) -> None:
    """The old format made by the old migrations themselves, rows inserted by hand."""
    path = tmp_path / "old.db"
    db = old_sqlite_file(path, 3)
    for i, (user, status) in enumerate(
        [("ana", "active"), ("ana", "active"), ("ana", "invalid"), ("cy", "active")]
    ):
        db.execute(
            "INSERT INTO records (id, kind, scope_user, scope_agent, scope_thread, text, tags, "
            "tier, created_at, last_access, status) VALUES (?, 'note', ?, '', '', 'x', '{}', "
            "'warm', 0, 0, ?)",
            (f"nt_{i}", user, status),
        )
    db.close()
    with SQLiteBackend(path) as backend:
        assert backend.count(Scope(user="ana"), Kind.NOTE) == 2
        assert backend.count(Scope(user="cy"), Kind.NOTE) == 1
        assert backend.count(None, Kind.NOTE) == 3
