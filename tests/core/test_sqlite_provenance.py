"""The SQLite store names a record's sources by the record's seq (schema v6): a v5 store's
sources survive the migration, and a record written again under its id (a new seq) keeps
exactly the sources it is written with. What it is for (a new note's rows at the end of
the key instead of on a random page) is measured in docs/performance.md."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from commonplace import Kind, Scope
from commonplace.stores import RecordQuery, SQLiteBackend, TurnWrite, WriteBatch
from commonplace.stores._sqlite_schema import SCHEMA_VERSION
from commonplace.testing import PIN, episode, note, unit
from commonplace.testing._fixtures import rows

ANA = Scope(user="ana")


def sources(backend: SQLiteBackend, ids: list[str]) -> dict[str, tuple[str, ...]]:
    return {r.id: r.provenance for r in backend.get_records(ids)}


def test_a_version_5_store_keeps_its_sources(
    tmp_path: Path, old_sqlite_file: Callable[[Path, int], sqlite3.Connection]
) -> None:
    path = tmp_path / "v5.db"
    db = old_sqlite_file(path, 5)
    for rid in ("nt_b", "nt_a"):  # seq 1 and 2: the ids' order is not the records'
        db.execute(
            "INSERT INTO records (id, kind, scope_user, scope_agent, scope_thread, text, tags, "
            "tier, created_at, last_access) VALUES (?, 'note', 'ana', '', '', 'x', '{}', "
            "'warm', 0, 0)",
            (rid,),
        )
    db.executemany(
        "INSERT INTO provenance VALUES (?, ?)",
        [
            ("nt_a", "ep_2"),
            ("nt_a", "ep_1"),  # a merge's second source
            ("nt_b", "ep_3"),
            ("nt_gone", "ep_4"),  # a record that is no longer there
        ],
    )
    db.close()
    with SQLiteBackend(path) as backend:
        assert sources(backend, ["nt_a", "nt_b"]) == {
            "nt_a": ("ep_1", "ep_2"),
            "nt_b": ("ep_3",),
        }
        found = backend.iter_records(RecordQuery(scope=ANA, sources=["ep_1", "ep_3", "ep_4"]))
        assert sorted(r.id for r in found) == ["nt_a", "nt_b"]
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert check.execute(
        "SELECT record_seq, source_id FROM provenance ORDER BY record_seq, source_id"
    ).fetchall() == [
        (1, "ep_3"),
        (2, "ep_1"),
        (2, "ep_2"),
    ]


def test_a_record_written_again_has_the_sources_it_is_written_with(tmp_path: Path) -> None:
    """``put_records(replace=True)`` gives the record a new seq: its old sources must not
    stay behind under the old one, nor be lost under the new."""
    path = tmp_path / "m.db"
    with SQLiteBackend(path) as backend:
        backend.write_pin(PIN)
        turn = episode(ANA, "ana bakes bread")
        made = note(turn)
        backend.apply(WriteBatch([TurnWrite(turn, made)], rows(unit(1.0))))
        summary = note(
            turn, "Ana bakes.", kind=Kind.SUMMARY, record_id="sm_1", provenance=[made.id]
        )
        backend.put_records([summary], rows(unit(1.0)))
        again = note(
            turn, "Ana bakes.", kind=Kind.SUMMARY, record_id="sm_1", provenance=["nt_x", made.id]
        )
        backend.put_records([again], rows(unit(0.5)), replace=True)
        assert sources(backend, ["sm_1", made.id]) == {
            "sm_1": tuple(sorted(["nt_x", made.id])),
            made.id: (turn.id,),
        }
        found = backend.iter_records(
            RecordQuery(scope=ANA, sources=["nt_x"], kinds=(Kind.SUMMARY,))
        )
        assert [r.id for r in found] == ["sm_1"]
    seqs = sqlite3.connect(path).execute(
        "SELECT DISTINCT record_seq FROM provenance ORDER BY record_seq"
    )
    assert [s for (s,) in seqs] == [1, 3]  # the note's, and the summary's new seq
