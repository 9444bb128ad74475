"""The commonplace_event hook beyond the basics: skips, merges, puts, decay, failures."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from test_hooks import Listener  # the listener the hook's own test uses

from commonplace import Config, FactKey, Kind, ManualClock, Memory, MemoryEvent, hookimpl
from commonplace.errors import PluginError

SEARCH_ALWAYS = Config(search_min_notes=0)
HOOKS_DOC = Path(__file__).resolve().parents[2] / "docs" / "hooks.md"


class Broken:
    calls = 0

    @hookimpl
    def commonplace_event(self, event: MemoryEvent) -> None:
        Broken.calls += 1
        raise RuntimeError("listener bug")


def test_a_skipped_turn_and_a_merged_one_are_written_events_that_say_so(
    db_url: str, clock: ManualClock
) -> None:
    heard = Listener()
    with Memory(db_url, clock=clock, plugins=[heard], config=SEARCH_ALWAYS) as memory:
        skipped = memory.write("Thanks!", scope="ana")
        assistant = memory.write("You are welcome.", role="assistant", scope="ana")
        first = memory.write("My cat is called Miso.", scope="ana")
        again = memory.write("My cat is called Miso!", scope="ana", key="second-message")
    assert first.note is not None and again.note is not None and again.note.id == first.note.id
    written = [e for e in heard.events if e.kind == "written"]
    assert [e.episode_ids for e in written] == [
        (skipped.episode_id,),
        (assistant.episode_id,),
        (first.episode_id,),
        (again.episode_id,),
    ]
    assert written[0].record_ids == () and written[0].detail == {"skipped": skipped.skipped}
    assert written[1].detail["skipped"] == "assistant turns never become notes"
    assert written[2].record_ids == (first.note.id,) and written[2].detail == {}
    assert written[3].record_ids == () and written[3].detail == {"merged_into": first.note.id}


def test_put_note_is_written_and_supersedes_by_its_fact_key(
    db_url: str, clock: ManualClock
) -> None:
    heard = Listener()
    fact = FactKey("user", "timezone")
    with Memory(db_url, clock=clock, plugins=[heard]) as memory:
        old = memory.put_note("Timezone: Europe/Lisbon", scope="ana", key="tz1", fact=fact)
        new = memory.put_note("Timezone: Asia/Tokyo", scope="ana", key="tz2", fact=fact)
        memory.put_note("Timezone: Asia/Tokyo", scope="ana", key="tz2", fact=fact)  # the same put
    assert [(e.kind, e.record_ids) for e in heard.events] == [
        ("written", (old.id,)),
        ("written", (new.id,)),
        ("superseded", (old.id,)),
    ]
    assert heard.events[2].detail == {"by": new.id}


def test_decay_tells_what_it_removed_and_a_dry_run_tells_nothing(
    db_url: str, clock: ManualClock
) -> None:
    heard = Listener()
    with Memory(db_url, clock=clock, plugins=[heard]) as memory:
        note = memory.write("I might try a pottery class one day.", scope="ana").note
        assert note is not None
        clock.advance(days=400)
        heard.events.clear()
        assert memory.forget_smart(scope="ana", dry_run=True).actions
        assert heard.events == []
        report = memory.forget_smart(scope="ana")
    removed = [a.record_id for a in report.actions]
    assert removed == [note.id]
    assert [(e.kind, e.record_ids) for e in heard.events] == [("forgotten", (note.id,))]
    assert heard.events[0].detail == {"rule": "forget_smart", "action": report.actions[0].action}
    assert heard.events[0].at == clock.now()


def test_forget_scope_tells_the_counts(db_url: str, clock: ManualClock) -> None:
    heard = Listener()
    with Memory(db_url, clock=clock, plugins=[heard]) as memory:
        memory.write("My cat is called Miso.", scope="ana")
        heard.events.clear()
        counts = memory.forget_scope("ana")
        assert memory.count(Kind.NOTE, scope="ana") == 0
    (event,) = heard.events
    assert (event.kind, event.detail) == ("forgotten", {"counts": counts})
    assert counts["records"] == 1 and counts["episodes"] == 1


def test_a_listener_that_raises_undoes_nothing_and_the_others_still_hear(
    db_url: str, clock: ManualClock
) -> None:
    heard = Listener()
    Broken.calls = 0
    with Memory(db_url, clock=clock, plugins=[heard, Broken()]) as memory:
        with pytest.raises(PluginError, match="committed and was not undone") as raised:
            memory.write("My cat is called Miso.", scope="ana")
        assert isinstance(raised.value.__cause__, RuntimeError)
        assert memory.count(Kind.NOTE, scope="ana") == 1  # the write stands
        assert Broken.calls == 1 and [e.kind for e in heard.events] == ["written"]
        with pytest.raises(PluginError):
            memory.recall("what is my cat called?", scope="ana", at=clock.now() + timedelta(1))
        assert [e.kind for e in heard.events] == ["written", "recalled"]


def test_the_example_on_the_hooks_page_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", HOOKS_DOC.read_text(encoding="utf-8"), re.S)
    examples = [b for b in blocks if "@hookspec" not in b]  # the rest are signatures
    assert examples, "docs/hooks.md lost its runnable example"
    for code in examples:
        exec(compile(code, "docs/hooks.md", "exec"), {})
