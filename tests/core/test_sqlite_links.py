"""The SQLite store's links name their ends by number (schema v5): the links read back are
the ones written, a v4 store's links survive the migration, and a pruned or forgotten end
leaves no row naming it. What they are for (the write path's links landing at the end of
the links' indexes instead of on random pages) is measured in docs/performance.md."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from commonplace import Memory, Scope
from commonplace.stores import Backend, SQLiteBackend
from commonplace.stores._sqlite_schema import SCHEMA_VERSION
from commonplace.testing import T0


def links(backend: Backend, ids: list[str]) -> set[tuple[str, str, str, float]]:
    return {(k.a, k.b, k.kind, round(k.weight, 6)) for k in backend.links_of(ids, min_weight=0.0)}


def ends(path: Path) -> list[str]:
    return [r[0] for r in sqlite3.connect(path).execute("SELECT id FROM link_ends ORDER BY n")]


def test_a_version_4_store_keeps_its_links(
    tmp_path: Path, old_sqlite_file: Callable[[Path, int], sqlite3.Connection]
) -> None:
    """A file made by the v1 to v4 migrations themselves, links named by id."""
    path = tmp_path / "v4.db"
    db = old_sqlite_file(path, 4)
    for i in range(3):
        db.execute(
            "INSERT INTO records (id, kind, scope_user, scope_agent, scope_thread, text, tags, "
            "tier, created_at, last_access) VALUES (?, 'note', 'ana', '', '', 'x', '{}', "
            "'warm', 0, 0)",
            (f"nt_{'zyx'[i]}",),
        )
    db.executemany(
        "INSERT INTO links VALUES (?, ?, ?, ?, ?)",
        [
            ("nt_x", "nt_z", "entity", 0.5, 100.0),
            ("nt_x", "nt_z", "session", 0.3, 100.0),
            ("nt_y", "nt_z", "co_use", 0.25, 200.0),
            ("gone", "nt_y", "entity", 0.75, 300.0),  # an end that is not a record
        ],
    )
    db.close()
    with SQLiteBackend(path) as backend:
        assert links(backend, ["nt_z"]) == {
            ("nt_x", "nt_z", "entity", 0.5),
            ("nt_x", "nt_z", "session", 0.3),
            ("nt_y", "nt_z", "co_use", 0.25),
        }
        assert links(backend, ["gone"]) == {("gone", "nt_y", "entity", 0.75)}
        (kept,) = [k for k in backend.links_of(["gone"], min_weight=0.0)]
        assert kept.updated_at.timestamp() == 300.0
        # and the migrated links are reinforced, not written twice
        backend.reinforce_links([("nt_z", "nt_x", "entity")], delta=0.25, at=T0)
        assert ("nt_x", "nt_z", "entity", 0.75) in links(backend, ["nt_x"])
    # numbered in the records' order (the ids' order would not be), ids without a record last
    assert ends(path) == ["nt_z", "nt_y", "nt_x", "gone"]
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert check.execute("SELECT count(*) FROM links").fetchone() == (4,)


def test_ends_are_numbered_in_the_order_they_are_first_linked(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with SQLiteBackend(path) as backend:
        backend.reinforce_links([("c", "b", "entity"), ("b", "a", "entity")], delta=0.5, at=T0)
        backend.reinforce_links([("a", "d", "session")], delta=0.3, at=T0)
        backend.reinforce_links([("a", "a", "self")], delta=0.3, at=T0)  # no link to itself
        assert links(backend, ["a"]) == {("a", "b", "entity", 0.5), ("a", "d", "session", 0.3)}
        assert links(backend, ["c", "d"]) == {
            ("b", "c", "entity", 0.5),
            ("a", "d", "session", 0.3),
        }
    assert ends(path) == ["a", "b", "c", "d"]


def test_pruning_removes_the_ends_no_link_names(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with SQLiteBackend(path) as backend:
        backend.reinforce_links([("a", "b", "entity")], delta=0.1, at=T0)
        backend.reinforce_links([("b", "c", "entity"), ("c", "d", "entity")], delta=0.9, at=T0)
        assert backend.prune_links(min_weight=0.5) == 1
        assert links(backend, ["a", "b", "c", "d"]) == {
            ("b", "c", "entity", 0.9),
            ("c", "d", "entity", 0.9),
        }
        # "b" is still linked to "c"; "a" is named by no link any more
        assert ends(path) == ["b", "c", "d"]
        backend.reinforce_links([("a", "b", "entity")], delta=0.2, at=T0)
        assert ("a", "b", "entity", 0.2) in links(backend, ["a"])


def test_forgetting_a_note_removes_its_links_and_its_end(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(f"sqlite:///{path}") as memory:
        written = [
            memory.write(text, scope=Scope(user="ana"), at=T0 + timedelta(minutes=i)).note
            for i, text in enumerate(
                ["Joana loves climbing.", "Joana is a nurse.", "Joana lives in Porto."]
            )
        ]
        a, b, c = [n.id for n in written if n is not None]
        assert links(memory.backend, [b])
        memory.forget(b, scope="ana")
        remaining = links(memory.backend, [a, c])
        assert remaining and all(b not in (x, y) for x, y, _, _ in remaining)
    assert b not in ends(path) and {a, c} <= set(ends(path))
