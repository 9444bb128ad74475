"""Moving a store from SQLite to Weaviate: everything copied, counts verified, same recall."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest

from commonplace import Kind, ManualClock, Memory, Scope
from commonplace.stores import AuditEntry, Conflict, RecordQuery, SQLiteBackend
from commonplace_weaviate import WeaviateBackend, migrate
from commonplace_weaviate._cli import main

pytestmark = pytest.mark.weaviate
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
CONVERSATION = {
    "ana": [
        "I live in Lisbon with my partner Joana.",
        "I work as a nurse at the hospital.",
        "My brother Tom plays the cello.",
        "ok",
        "I moved to Porto last week.",
        "I am learning to surf on weekends.",
        "My cat Mia is twelve years old.",
        "I was laid off from the hospital today.",
    ],
    "bob": [
        "I am a software engineer in Berlin.",
        "I love climbing and jazz.",
        "My daughter Lena was born in March.",
    ],
}
QUERIES = [
    ("ana", "where does the user live?"),
    ("ana", "what does the user do for work?"),
    ("bob", "what are the user's hobbies?"),
]


def _build(url: str, clock: ManualClock) -> None:
    with Memory(url, clock=clock) as memory:
        for day, (user, lines) in enumerate(CONVERSATION.items()):
            for line in lines:
                clock.advance(hours=3 + day)
                memory.write(line, scope=user)
                memory.write(f"Noted: {line}", role="assistant", scope=user)
        for user, query in QUERIES:
            recall = memory.recall(query, scope=user)
            if recall.included:
                memory.feedback(recall.id, used=list(recall.included[:2]))
        clock.advance(days=2)
        for user in CONVERSATION:
            memory.sleep(scope=user)
            memory.rewrite_profile(scope=user)
        # bookkeeping the lifecycle writes over months, written directly here
        a, b = [r.id for r in memory.backend.iter_records(RecordQuery(scope=Scope(user="ana")))][:2]
        memory.store.books.append_audit(
            [AuditEntry(clock.now(), Scope(user="ana"), "demote", "tier.demote", a, "old")]
        )
        memory.store.books.add_conflict(
            Conflict("cf_1", Scope(user="ana"), "Tom", "two Toms", (a,), clock.now())
        )
        memory.backend.reinforce_links([(a, b, "entity")], delta=0.4, at=clock.now())
        # a forgotten turn: its id stays (a ledger entry), so a replay is not stored again
        said = memory.write("My old phone number is 555-0100.", scope="bob")
        memory.forget(said.episode_id, scope="bob", include_evidence=True)


@pytest.fixture
def stores(
    tmp_path: Path, weaviate_backend_factory: Callable[[], WeaviateBackend]
) -> tuple[str, str, ManualClock]:
    clock = ManualClock(T0)
    source = "sqlite:///" + str(tmp_path / "memory.db")
    _build(source, clock)
    return source, weaviate_backend_factory().url, clock


def test_migration_copies_everything_and_verifies_it(stores: tuple[str, str, ManualClock]) -> None:
    source, target, clock = stores
    report = migrate(source, target, batch=7)
    assert report.ok, report.table()
    assert report.counts["episodes"][0] == 2 * sum(map(len, CONVERSATION.values()))
    assert report.counts["notes (active)"][0] > 5
    assert report.counts["records equal"][0] == report.counts["records equal"][1]
    assert report.counts["provenance edges"][0] > 0 and report.counts["ledger:use"][0] > 0
    assert report.counts["ledger:card"][0] >= 2 and report.counts["ledger:audit"][0] > 0
    assert report.counts["ledger:recall"][0] == len(QUERIES)
    assert report.counts["ledger:forgotten"] == (1, 1) and report.counts["links"][0] >= 1
    assert report.vectors_checked > 0 and report.max_vector_error < 1e-6
    sqlite_backend = SQLiteBackend(source.removeprefix("sqlite:///"))
    try:
        before = {
            r.id: r
            for r in sqlite_backend.iter_records(
                RecordQuery(kinds=(Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE))
            )
        }
    finally:
        sqlite_backend.close()
    with WeaviateBackend(target) as weaviate_backend:
        after = {
            r.id: r
            for r in weaviate_backend.iter_records(
                RecordQuery(kinds=(Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE))
            )
        }
        assert weaviate_backend.read_pin() is not None
    assert before.keys() == after.keys()
    # the migrated store recalls what the original recalls
    with Memory(source, clock=clock) as old, Memory(target, clock=clock) as new:
        for user, query in QUERIES:
            a, b = old.recall(query, scope=user), new.recall(query, scope=user)
            assert [i.record.id for i in a.items] == [i.record.id for i in b.items]
            assert a.text == b.text
        assert old.profile(scope="ana") == new.profile(scope="ana")
        assert old.store.books.audit_log(None, limit=100) == new.store.books.audit_log(
            None, limit=100
        )
        assert old.store.books.conflicts(None, open_only=False) == new.store.books.conflicts(
            None, open_only=False
        )
        # the forgotten turn stays forgotten in the copy
        again = new.write("My old phone number is 555-0100.", scope="bob")
        assert not again.created


def test_running_it_again_finishes_or_confirms_the_copy(
    stores: tuple[str, str, ManualClock],
) -> None:
    source, target, _ = stores
    first = migrate(source, target)
    second = migrate(source, target)
    assert first.ok and second.ok and first.counts == second.counts


def test_the_command_line(
    stores: tuple[str, str, ManualClock], capsys: pytest.CaptureFixture[str]
) -> None:
    source, target, _ = stores
    assert main(["migrate", "--from", source, "--to", target, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["ok"] is True and printed["counts"]["episodes"]["target"] == 22
    assert main(["migrate", "--from", "sqlite:///does/not/exist.db", "--to", target]) == 2
    assert "no SQLite store" in capsys.readouterr().err
