"""Episodes are the evidence: immutable, and idempotent by the turn (scope, role, time and
words, or the message key) per scope."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from commonplace import Kind, ManualClock, Memory, Scope


def test_same_turn_twice_is_one_episode_and_one_note(memory: Memory) -> None:
    first = memory.write("I live in Lisbon.", scope="ana")
    again = memory.write("I live in Lisbon.", scope="ana")
    assert first.created and not again.created
    assert again.episode_id == first.episode_id
    assert again.note is not None and first.note is not None
    assert again.note.id == first.note.id
    assert memory.count(Kind.EPISODE) == 1
    assert memory.count(Kind.NOTE) == 1


def test_duplicates_inside_one_batch_are_stored_once(memory: Memory) -> None:
    turns = [memory.turn("I adopted a cat named Miso.", scope="ana") for _ in range(3)]
    results = memory.write_many(turns)
    assert [r.created for r in results] == [True, False, False]
    assert memory.count(Kind.EPISODE) == 1 and memory.count(Kind.NOTE) == 1


def test_idempotency_is_per_scope(memory: Memory) -> None:
    a = memory.write("I live in Lisbon.", scope="ana")
    b = memory.write("I live in Lisbon.", scope="bob")
    assert a.episode_id != b.episode_id and b.created
    assert memory.count(Kind.EPISODE) == 2


def test_a_retried_turn_is_one_episode_whenever_it_is_sent_again(
    memory: Memory, clock: ManualClock
) -> None:
    said = clock.now()
    first = memory.write("I live in Lisbon.", scope="ana", at=said)
    clock.advance(days=3)
    again = memory.write("I live in Lisbon.", scope="ana", at=said)  # the same turn, retried
    assert not again.created and again.episode_id == first.episode_id
    episode = memory.explain(first.episode_id).record
    assert episode.at == said
    assert memory.count(Kind.EPISODE) == 1


def test_the_same_words_on_another_day_are_another_turn_of_the_same_note(
    memory: Memory, clock: ManualClock
) -> None:
    first = memory.write("Long shift again today, I work as a nurse.", scope="ana")
    clock.advance(days=1)
    again = memory.write("Long shift again today, I work as a nurse.", scope="ana")
    assert again.created and again.episode_id != first.episode_id
    assert memory.count(Kind.EPISODE) == 2 and memory.count(Kind.NOTE) == 1
    assert first.note is not None and again.note is not None
    assert again.note.id == first.note.id  # a repeat: the note has both days as evidence
    days = {e.at for e in memory.explain(first.note.id).episodes()}
    assert days == {clock.now() - timedelta(days=1), clock.now()}


def test_episodes_cannot_be_edited_even_with_sql(tmp_path: Path, clock: ManualClock) -> None:
    path = tmp_path / "m.db"
    with Memory(f"sqlite:///{path}", clock=clock) as memory:
        written = memory.write("I work at a bakery.", scope=Scope(user="ana"))
    db = sqlite3.connect(path)
    with pytest.raises(sqlite3.IntegrityError, match="immutable"):
        db.execute("UPDATE episodes SET text = 'edited' WHERE id = ?", (written.episode_id,))
    db.close()
    with Memory(f"sqlite:///{path}", clock=clock) as memory:
        assert memory.explain(written.episode_id).record.text == "I work at a bakery."


def test_no_public_api_edits_an_episode() -> None:
    editing = [n for n in dir(Memory) if n.startswith(("update", "edit", "set_", "replace"))]
    assert editing == []


def test_a_near_duplicate_note_strengthens_the_existing_one_and_keeps_both_provenances(
    memory: Memory, clock: ManualClock
) -> None:
    first = memory.write("I love hiking in the Alps!", scope="ana")
    clock.advance(days=2)
    again = memory.write("I love hiking in the Alps.", scope="ana")  # another turn, same note
    assert first.note is not None and again.note is not None
    assert again.created and again.note.id == first.note.id
    assert memory.count(Kind.NOTE) == 1 and memory.count(Kind.EPISODE) == 2
    merged = memory.explain(first.note.id)
    assert {e.id for e in merged.episodes()} == {first.episode_id, again.episode_id}
    # fresh again, but a repetition is not a use: frequency is earned by recall, never by merges
    assert merged.record.access_count == 0  # type: ignore[union-attr]
    assert merged.record.last_access == again.note.last_access > first.note.last_access  # type: ignore[union-attr]
    assert merged.record.importance > first.note.importance  # type: ignore[union-attr]


def test_a_negation_or_a_new_value_is_never_merged(memory: Memory) -> None:
    memory.write("I eat meat.", scope="ana")
    memory.write("I don't eat meat.", scope="ana")
    memory.write("My locker code is 1234.", scope="ana")
    memory.write("My locker code is 9876.", scope="ana")
    assert memory.count(Kind.NOTE) == 4


def test_a_store_written_before_keeps_its_episode_ids(memory: Memory, clock: ManualClock) -> None:
    """An unkeyed turn's id once held no time: such an episode keeps its id, a retry of it
    (the same time) is it, and the same words at another time are a new episode."""
    from commonplace._records import Episode, Role, episode_id
    from commonplace.stores import TurnWrite, WriteBatch

    scope = Scope(user="ana")
    said = clock.now()
    old = episode_id(scope, Role.USER, "Long shift again today.", at=None)
    memory.backend.apply(
        WriteBatch(
            [TurnWrite(Episode(old, scope, Role.USER, "Long shift again today.", said))], None
        )
    )
    retried = memory.write("Long shift again today.", scope=scope, at=said)
    assert not retried.created and retried.episode_id == old
    clock.advance(days=1)
    next_day = memory.write("Long shift again today.", scope=scope)
    assert next_day.created and next_day.episode_id != old
    assert memory.count(Kind.EPISODE) == 2
