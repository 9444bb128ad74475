"""Episodes are the evidence: immutable and idempotent by content hash per scope."""

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


def test_the_time_of_a_resent_turn_does_not_change_the_episode(
    memory: Memory, clock: ManualClock
) -> None:
    first = memory.write("I live in Lisbon.", scope="ana")
    clock.advance(days=3)
    again = memory.write("I live in Lisbon.", scope="ana")
    assert not again.created
    episode = memory.explain(first.episode_id).record
    assert episode.at == clock.now() - timedelta(days=3)


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
