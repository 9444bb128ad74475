"""Forgetting on purpose: decay rules with dry runs and an audit log, and the right to be
forgotten."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from commonplace import Config, Kind, ManualClock, Memory, Status
from commonplace.errors import NotFoundError
from commonplace.stores import RecordQuery


@pytest.fixture
def memory(db_url: str, clock: ManualClock) -> Iterator[Memory]:
    with Memory(db_url, clock=clock, config=Config(search_min_notes=0)) as m:
        yield m


def test_forget_smart_takes_old_unused_unimportant_notes_only(
    memory: Memory, clock: ManualClock
) -> None:
    trivial = memory.write("I had toast this morning.", scope="ana").note
    important = memory.write("I got laid off today and I'm scared.", scope="ana").note
    used = memory.write("I had cereal this morning.", scope="ana").note
    assert trivial is not None and important is not None and used is not None
    recall = memory.recall("cereal this morning", scope="ana")
    memory.feedback(recall.id, used=[used.id])
    clock.advance(days=200)
    fresh = memory.write("I had porridge this morning.", scope="ana").note
    dry = memory.forget_smart(
        scope="ana", days=180, max_frequency=5, max_importance=0.5, dry_run=True
    )
    assert [a.record_id for a in dry.actions] == [trivial.id]
    assert memory.count(Kind.NOTE, scope="ana") == 4
    real = memory.forget_smart(scope="ana", days=180, max_frequency=5, max_importance=0.5)
    assert [a.record_id for a in real.actions] == [trivial.id]
    remaining = {r.id for r in memory.backend.iter_records(RecordQuery(scope=None))}
    assert remaining == {important.id, used.id, fresh.id}  # type: ignore[union-attr]
    assert memory.count(Kind.EPISODE, scope="ana") == 4  # episodes are never decayed
    (entry,) = memory.audit(scope="ana")
    assert entry.rule == "forget_smart" and "importance" in entry.detail


def test_invalid_summaries_are_soft_deleted_after_thirty_days(
    memory: Memory, clock: ManualClock
) -> None:
    for text in (
        "I work at Feedzai.",
        "Feedzai has an office in Porto.",
        "Feedzai pays for my train pass.",
        "Feedzai uses Kotlin.",
    ):
        memory.write(text, scope="ana")
    clock.advance(days=2)
    memory.consolidate(scope="ana")
    memory.write("I work at Talkdesk now.", scope="ana")
    clock.advance(days=29)
    assert memory.decay(scope="ana").by_rule("invalid_summary") == []
    clock.advance(days=2)
    (entry,) = memory.decay(scope="ana").by_rule("invalid_summary")
    summary = memory.explain(entry.record_id).record
    assert summary.status is Status.DELETED  # type: ignore[union-attr]


def test_unmatched_procedure_candidates_are_deleted_promoted_ones_stay(
    memory: Memory, clock: ManualClock
) -> None:
    memory.write("Can you draft my weekly status report?", scope="ana")
    clock.advance(days=7)
    memory.write("Please draft my weekly status report again.", scope="ana")
    clock.advance(days=1)
    memory.consolidate(scope="ana")
    (candidate,) = memory.backend.iter_records(RecordQuery(kinds=(Kind.PROCEDURE,)))
    clock.advance(days=89)
    assert memory.decay(scope="ana").by_rule("procedure_unmatched") == []
    clock.advance(days=2)
    (entry,) = memory.decay(scope="ana").by_rule("procedure_unmatched")
    assert entry.record_id == candidate.id
    assert list(memory.backend.iter_records(RecordQuery(kinds=(Kind.PROCEDURE,)))) == []


def test_weak_links_decay_and_are_pruned(memory: Memory, clock: ManualClock) -> None:
    a = memory.write("Joana loves climbing.", scope="ana").note
    b = memory.write("Joana is a nurse.", scope="ana").note
    assert a is not None and b is not None
    links = memory.backend.links_of([a.id], min_weight=0.0)
    assert {k.kind for k in links} == {"entity", "session"}
    assert all({k.a, k.b} == {a.id, b.id} for k in links)
    for _ in range(40):
        memory.decay(scope="ana")
    assert memory.backend.links_of([a.id], min_weight=0.0) == []
    assert any(e.rule == "weak_links" for e in memory.audit(limit=1000))


def test_forget_removes_a_note_its_evidence_and_everything_derived(
    memory: Memory, clock: ManualClock
) -> None:
    notes = [
        memory.write(t, scope="ana").note
        for t in ("My partner Joana is a nurse.", "Joana loves climbing.", "Joana adopted a cat.")
    ]
    clock.advance(days=2)
    memory.consolidate(scope="ana")
    (summary,) = memory.backend.iter_records(RecordQuery(kinds=(Kind.SUMMARY,)))
    target = notes[1]
    assert target is not None
    report = memory.forget(target.id, scope="ana")
    assert set(report.records) == {target.id, summary.id}
    assert report.episodes == target.provenance
    for removed in report.removed:
        with pytest.raises(NotFoundError):
            memory.explain(removed)
    assert "climbing" not in memory.recall("Joana climbing", scope="ana").render()
    assert memory.count(Kind.NOTE, scope="ana") == 2


def test_forget_checks_the_scope(memory: Memory) -> None:
    note = memory.write("I live in Lisbon.", scope="ana").note
    assert note is not None
    with pytest.raises(NotFoundError):
        memory.forget(note.id, scope="bob")
    assert memory.count(Kind.NOTE, scope="ana") == 1


def test_forget_scope_removes_everything_of_a_user_and_nothing_else(
    db_url: str, memory: Memory
) -> None:
    for n in range(5):
        memory.write(f"I ran {n} km with Joana today.", scope="ana")
        memory.write(f"I swam {n} km today.", scope="bob")
    recall = memory.recall("ran with Joana", scope="ana")
    memory.feedback(recall.id, used=list(recall.included[:2]))
    counts = memory.forget_scope("ana")
    assert counts["records"] == 5 and counts["episodes"] == 5
    import sqlite3

    db = sqlite3.connect(db_url.removeprefix("sqlite:///"))
    for table in ("episodes", "records", "ledger"):
        assert db.execute(f"SELECT count(*) FROM {table} WHERE scope_user = 'ana'").fetchone() == (
            0,
        ), table
    # the use log the feedback wrote (scope-less entries) went with the records it named
    assert db.execute("SELECT count(*) FROM ledger WHERE kind = 'use'").fetchone() == (0,)
    assert db.execute(
        "SELECT count(*) FROM provenance p LEFT JOIN records r "
        "ON r.seq = p.record_seq WHERE r.id IS NULL"
    ).fetchone() == (0,)
    # a link names its ends by number (link_ends): no end, and no link, is left of ana's
    assert db.execute(
        "SELECT count(*) FROM link_ends e LEFT JOIN records r ON r.id = e.id WHERE r.id IS NULL"
    ).fetchone() == (0,)
    assert db.execute(
        "SELECT count(*) FROM links l LEFT JOIN link_ends e ON e.n IN (l.a, l.b) "
        "LEFT JOIN records r ON r.id = e.id WHERE r.id IS NULL"
    ).fetchone() == (0,)
    assert memory.count(Kind.NOTE, scope="bob") == 5


def test_decay_never_removes_confirmed_notes_or_episodes(
    memory: Memory, clock: ManualClock
) -> None:
    note = memory.write("I had toast.", scope="ana").note
    assert note is not None
    memory.pin(note.id, scope="ana")
    clock.advance(days=1000)
    report = memory.forget_smart(scope="ana", days=1, max_frequency=100, max_importance=1.0)
    assert report.actions == ()
    assert memory.count(Kind.NOTE) == 1 and memory.count(Kind.EPISODE) == 1


def test_a_forgotten_turn_is_not_stored_again_when_replayed(memory: Memory) -> None:
    first = memory.write("My ex is called Sam.", scope="ana")
    assert first.note is not None
    memory.forget(first.note.id, scope="ana")
    again = memory.write("My ex is called Sam.", scope="ana")
    assert not again.created and again.note is None
    assert memory.count(Kind.EPISODE) == 0 and memory.count(Kind.NOTE) == 0
    other = memory.write("My ex is called Sam.", scope="bob")  # another scope is unaffected
    assert other.created and other.note is not None


def test_a_key_makes_two_messages_with_the_same_words_two_episodes(memory: Memory) -> None:
    a = memory.write("I work at Unbabel.", scope="ana", key="msg-1")
    b = memory.write("I work at Unbabel.", scope="ana", key="msg-2")
    replay = memory.write("I work at Unbabel.", scope="ana", key="msg-1")
    assert a.created and b.created and not replay.created
    assert (
        a.episode_id
        != b.episode_id
        == memory.write("I work at Unbabel.", scope="ana", key="msg-2").episode_id
    )
    assert memory.count(Kind.EPISODE) == 2
