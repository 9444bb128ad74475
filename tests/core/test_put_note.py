"""Memory.put_note: a memory stated on purpose (a store item, a tool's save), kept as it is,
with an episode of its own as evidence, superseding by fact key."""

from __future__ import annotations

from datetime import timedelta

import pytest

from commonplace import FactKey, ManualClock, Memory, Role, Scope, Tags
from commonplace.errors import InvalidInputError, InvalidTypeError, NotFoundError

FACT = FactKey("app", "city")


def test_a_note_kept_as_given_with_its_evidence(memory: Memory) -> None:
    note = memory.put_note(
        "Ana prefers short answers.", scope="ana", key="put-1", data={"v": 1}, importance=0.8
    )
    assert note.text == "Ana prefers short answers." and note.importance == 0.8
    stored = memory.store.get_record(note.id)
    assert stored is not None and stored.data == {"v": 1}
    [episode] = memory.explain(note.id).episodes()
    assert episode.role is Role.SYSTEM and episode.text == note.text
    assert memory.recall("how does Ana like answers?", scope="ana").items[0].record.id == note.id
    # the same put again is the same put; twins with other keys are never merged
    assert memory.put_note("Ana prefers short answers.", scope="ana", key="put-1").id == note.id
    memory.put_note("Ana prefers short answers.", scope="ana", key="put-2")
    assert memory.count("note", scope="ana") == 2


def test_a_fact_key_supersedes_and_keeps_history(memory: Memory, clock: ManualClock) -> None:
    first = memory.put_note("Ana lives in Lisbon.", scope="ana", key="a", fact=FACT)
    clock.advance(days=10)
    second = memory.put_note("Ana lives in Porto.", scope="ana", key="b", fact=FACT)
    old = memory.store.get_record(first.id)
    assert old is not None and old.superseded_by == second.id
    before = memory.recall("where?", scope="ana", as_of=clock.now() - timedelta(days=1))
    assert [i.record.id for i in before.items] == [first.id]


def test_replaces_names_another_record(memory: Memory) -> None:
    written = memory.write("I just moved to Porto.", scope=Scope(user="ana", thread="t1"))
    assert written.note is not None
    edited = memory.put_note(
        "Ana moved to Porto in May.", scope="ana", key="edit", replaces=[written.note.id]
    )
    old = memory.store.get_record(written.note.id)
    assert old is not None and old.superseded_by == edited.id
    with pytest.raises(NotFoundError, match="to replace"):
        memory.put_note("x y z", scope="bob", key="k", replaces=[edited.id])  # not bob's


def test_what_is_refused(memory: Memory) -> None:
    with pytest.raises(InvalidInputError, match="assistant's words never become a note"):
        memory.put_note("I am Bob.", scope="ana", key="k", role="assistant")
    with pytest.raises(InvalidInputError, match="key"):
        memory.put_note("text", scope="ana", key="")
    with pytest.raises(InvalidTypeError, match="importance"):
        memory.put_note("text", scope="ana", key="k", importance="high")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="JSON"):
        memory.put_note("text", scope="ana", key="k", data={"v": object()})
    with pytest.raises(InvalidTypeError, match="FactKey"):
        memory.put_note("text", scope="ana", key="k", fact=("a", "b"))  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="empty"):
        memory.put_note("  ", scope="ana", key="k")
    assert memory.count("note", scope="ana") == 0 and memory.count("episode", scope="ana") == 0


def test_an_importance_given_is_stored_as_stated_and_none_given_is_not(memory: Memory) -> None:
    stated = memory.put_note(
        "Ana's passport expires in May 2027.", scope="ana", key="k1", importance=0.9
    )
    guessed = memory.put_note("Ana likes window seats.", scope="ana", key="k2")
    assert (stated.tags.importance, stated.tags.importance_stated) == (0.9, True)
    assert (guessed.tags.importance, guessed.tags.importance_stated) == (0.5, False)
    # kept by the store as it was put, and scored with the stated weight only when stated
    again = memory.store.get_record(stated.id)
    assert again is not None and again.tags.importance_stated
    assert Tags.from_json(stated.tags.to_json()) == stated.tags
    assert "importance_stated" not in guessed.tags.to_json()  # older stores read the same
