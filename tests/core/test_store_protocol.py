"""The backend protocol stays small, integrations use only public seams, a store copies
into another whole, and a store from before the ledger opens with its bookkeeping intact."""

from __future__ import annotations

import ast
import sqlite3
import typing
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from commonplace import Kind, ManualClock, Memory, Scope, Status
from commonplace.stores import (
    AuditEntry,
    Backend,
    Card,
    Conflict,
    Ledger,
    LinkGraph,
    RecallLog,
    RecordQuery,
    Reembedding,
    SQLiteBackend,
    Store,
    copy,
)
from commonplace.stores._sqlite_schema import APPLICATION_ID, MIGRATIONS

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
EVERYTHING = RecordQuery(kinds=(Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE), statuses=tuple(Status))


def _members(protocol: type) -> set[str]:
    return set(typing._get_protocol_attrs(protocol))  # type: ignore[attr-defined]


def test_the_backend_protocol_is_ten_members_and_the_ledger_five() -> None:
    """Growing the required surface is a decision: change this list with the design (at
    most fifteen in all: a write is one batch, a read is one batch)."""
    assert _members(Backend) == {
        "url",
        "ledger",
        "close",
        "read_pin",
        "apply",
        "read",
        "iter_records",
        "recent_episodes",
        "count",
        "delete",
    }
    assert _members(Ledger) == {"put", "get", "list", "delete", "kinds"}
    # the optional capabilities are apart from it
    assert not _members(LinkGraph) & _members(Backend)
    assert not _members(Reembedding) & _members(Backend)


def _private_imports(folder: Path) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] == "commonplace" and any(p.startswith("_") for p in parts[1:]):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}")
    return found


def test_no_package_outside_the_core_imports_its_private_modules() -> None:
    folders = [p / "src" for p in (ROOT / "integrations").iterdir() if (p / "src").is_dir()]
    folders += [
        ROOT / "packages" / name / "src" for name in ("commonplace-bench", "commonplace-inspect")
    ]
    assert len(folders) == 6
    assert [hit for folder in folders for hit in _private_imports(folder)] == []


def test_the_private_import_check_finds_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "m.py").write_text(
        "from commonplace._text import WORD\nfrom commonplace.stores import _sqlite\n"
        "import commonplace.embedders._protocol\nfrom commonplace.stores import Store\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert [h.split(": ")[1] for h in _private_imports(tmp_path)] == [
        "commonplace._text",
        "commonplace._text.WORD",
        "commonplace.stores._sqlite",
        "commonplace.embedders._protocol",
    ]


# -- copy ---------------------------------------------------------------------------------


def _busy_store(path: Path) -> Memory:
    clock = ManualClock(T0)
    memory = Memory(f"sqlite:///{path}", clock=clock)
    for i in range(4):
        memory.write(f"I ran {5 + i} km with Joana on the river path today.", scope="ana")
        clock.advance(days=1)
    memory.write("My niece Mia is visiting on Friday.", scope="ana")
    memory.write("My coworker Mia moved to the Berlin office.", scope="ana")
    memory.write("I live in Porto.", scope="bob")
    gone = memory.write("My bank PIN is 4321.", scope="bob")
    recall = memory.recall("running with Joana", scope="ana")
    memory.feedback(recall.id, used=list(recall.included[:2]))
    memory.consolidate(scope="ana")
    assert gone.note is not None
    memory.forget(gone.note.id, scope="bob")
    return memory


def _snapshot(store: Store) -> dict[str, object]:
    backend = store.backend
    records = sorted(backend.iter_records(EVERYTHING), key=lambda r: r.id)
    ids = [r.id for r in records]
    return {
        "pin": backend.read_pin(),
        "episodes": backend.recent_episodes(None, limit=1000),
        "records": [
            (r.id, r.text, r.status, r.tier, r.access_count, r.used_count, sorted(r.provenance))
            for r in records
        ],
        "vectors": backend.get_vectors(ids).round(6).tolist(),
        "ledger": {k: backend.ledger.list(k) for k in backend.ledger.kinds()},
        "links": sorted(
            (k.a, k.b, k.kind, round(k.weight, 6))
            for k in store.links.links_of(ids, min_weight=0.0)
        ),
    }


def test_a_copy_holds_everything_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    with _busy_store(tmp_path / "a.db") as memory:
        source = memory.store
        want = _snapshot(source)
        assert want["ledger"] and want["links"]  # the fixture has something to copy
        assert {"audit", "recall", "recall_feedback", "use", "forgotten"} <= set(
            source.backend.ledger.kinds()
        )
        target = Store(SQLiteBackend(tmp_path / "b.db"))
        try:
            report = copy(source.backend, target.backend, batch=3)
            assert report.counts["episodes"] == len(want["episodes"])  # type: ignore[arg-type]
            assert _snapshot(target) == want
            copy(source.backend, target.backend, batch=1000)
            assert _snapshot(target) == want
        finally:
            target.close()
    with Memory(f"sqlite:///{tmp_path / 'b.db'}") as copied:
        found = copied.recall("who did I run with", scope="ana")
        assert any("Joana" in i.record.text for i in found.items)
        assert copied.recall("bank PIN", scope="bob").items == () or all(
            "4321" not in i.record.text for i in copied.recall("bank PIN", scope="bob").items
        )


def test_a_forgotten_turn_stays_forgotten_in_the_copy(tmp_path: Path) -> None:
    with Memory(f"sqlite:///{tmp_path / 'a.db'}") as memory:
        said = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
        written = memory.write("My bank PIN is 4321.", scope="bob", at=said)
        assert written.note is not None
        memory.forget(written.note.id, scope="bob")
        with Memory(f"sqlite:///{tmp_path / 'b.db'}") as other:
            copy(memory.backend, other.backend)
            again = other.write("My bank PIN is 4321.", scope="bob", at=said)  # a retry
            assert not again.created and other.count(Kind.NOTE, scope="bob") == 0


def test_copy_refuses_a_batch_below_one(tmp_path: Path) -> None:
    from commonplace.errors import InvalidInputError

    with (
        SQLiteBackend(tmp_path / "a.db") as a,
        SQLiteBackend(tmp_path / "b.db") as b,
        pytest.raises(InvalidInputError, match="batch"),
    ):
        copy(a, b, batch=0)


# -- a version 2 store's bookkeeping moves into the ledger --------------------------------


def _version_2_store(path: Path) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    for migrate in MIGRATIONS[:2]:
        migrate(db)
    at = T0.timestamp()
    db.execute(
        "INSERT INTO audit (at, scope_user, scope_agent, scope_thread, action, rule, record_id, "
        "detail) VALUES (?, 'ana', '', '', 'demote', 'tiers', 'nt_1', 'cold now'), "
        "(?, 'ana', '', 't1', 'delete', 'decay', 'nt_2', '')",
        (at, at + 60),
    )
    db.execute(
        "INSERT INTO recalls VALUES ('rc_1', 'ana', '', '', ?, ?, ?), "
        "('rc_2', 'ana', '', '', ?, ?, NULL)",
        (
            at,
            '{"retrieved": ["nt_1"], "shown": ["nt_1", "nt_2"]}',
            at + 5,
            at,
            '{"retrieved": [], "shown": []}',
        ),
    )
    db.execute(
        "INSERT INTO conflicts VALUES ('cf_1', 'ana', '', '', 'mia', 'niece or coworker', "
        "'[\"nt_1\", \"nt_2\"]', ?, ?, 'keep both')",
        (at, at + 30),
    )
    db.execute(
        "INSERT INTO cards VALUES ('ana', '', '', 'profile', 'Lives in Porto.', '{\"n\": 1}', ?)",
        (at,),
    )
    db.execute("INSERT INTO uses VALUES ('nt_1', ?), ('nt_1', ?)", (at, at + 3600))
    db.execute("INSERT INTO forgotten VALUES ('ep_gone')")
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute("PRAGMA user_version = 2")
    db.execute("COMMIT")
    db.close()


def test_a_version_2_store_keeps_its_bookkeeping_in_the_ledger(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    _version_2_store(path)
    ana = Scope(user="ana")
    with SQLiteBackend(path) as backend:
        store = Store(backend)
        assert store.books.audit_log(ana, limit=5) == [
            AuditEntry(
                T0 + timedelta(seconds=60),
                Scope(user="ana", thread="t1"),
                "delete",
                "decay",
                "nt_2",
                "",
            ),
            AuditEntry(T0, ana, "demote", "tiers", "nt_1", "cold now"),
        ]
        assert store.books.get_recall("rc_1") == RecallLog(
            "rc_1", ana, T0, ("nt_1",), T0 + timedelta(seconds=5), ("nt_1", "nt_2")
        )
        assert store.books.mark_recall_feedback("rc_1", at=T0) is False
        assert store.books.mark_recall_feedback("rc_2", at=T0) is True
        assert store.books.conflicts(ana, open_only=False) == [
            Conflict(
                "cf_1",
                ana,
                "mia",
                "niece or coworker",
                ("nt_1", "nt_2"),
                T0,
                T0 + timedelta(seconds=30),
                "keep both",
            )
        ]
        assert store.books.get_card(ana, "profile") == Card(
            ana, "profile", "Lives in Porto.", T0, {"n": 1}
        )
        assert store.books.uses_since(["nt_1"], T0 + timedelta(minutes=1)) == {"nt_1": 1}
        assert store.existing_episode_ids({"ep_gone", "ep_new"}) == {"ep_gone"}
        tables = {
            r[0]
            for r in sqlite3.connect(path).execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
            )
        }
        assert not tables & {"audit", "recalls", "conflicts", "cards", "uses", "forgotten"}
