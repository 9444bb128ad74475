"""The firewall: nothing the assistant (or a tool, or the system) says becomes a note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonplace import Kind, Memory, NoteDraft, Role, Tags, Turn, hookimpl
from commonplace._cli import main

INVENTED = "You told me your brother Tom is a sailor in Lisbon and you love him."


class WritesEverything:
    """A note writer that would happily note anything it were given."""

    def __init__(self) -> None:
        self.seen: list[Role] = []

    @hookimpl
    def commonplace_write_note(self, turn: Turn) -> NoteDraft:
        self.seen.append(turn.role)
        return NoteDraft(text=turn.text, tags=Tags(importance=1.0))


@pytest.mark.parametrize("role", ["assistant", "tool", "system", "ASSISTANT", Role.ASSISTANT])
def test_non_user_turns_are_episodes_never_notes(db_url: str, role: str | Role) -> None:
    plugin = WritesEverything()
    with Memory(db_url, plugins=[plugin]) as memory:
        result = memory.write(INVENTED, role=role, scope="ana")
        assert result.created and result.note is None
        assert result.skipped is not None and "never become notes" in result.skipped
        assert memory.count(Kind.NOTE) == 0 and memory.count(Kind.EPISODE) == 1
        assert plugin.seen == []  # the writer hook is never even asked
        recall = memory.recall("brother Tom sailor", scope="ana")
        assert recall.items == () and "Tom" not in recall.render()


def test_user_turns_still_reach_a_plugin_writer(db_url: str) -> None:
    plugin = WritesEverything()
    with Memory(db_url, plugins=[plugin]) as memory:
        memory.write("I sail every weekend.", scope="ana")
        assert plugin.seen == [Role.USER] and memory.count(Kind.NOTE) == 1


def test_a_mixed_conversation_only_notes_user_turns(memory: Memory) -> None:
    turns = [
        memory.turn("I moved to Porto last month.", scope="ana"),
        memory.turn("Porto is lovely; your sister Rita must visit!", role="assistant", scope="ana"),
        memory.turn("tool result: weather Porto 21C", role="tool", scope="ana"),
    ]
    results = memory.write_many(turns)
    assert [r.note is not None for r in results] == [True, False, False]
    recall = memory.recall("sister Rita visit Porto weather", scope="ana")
    texts = " ".join(i.record.text for i in recall.items) + recall.render()
    assert "Rita" not in texts and "21C" not in texts
    for item in recall.items:
        for episode in memory.explain(item.record.id).episodes():
            assert episode.role is Role.USER


def test_quoting_the_assistant_is_recorded_as_a_user_reference(memory: Memory) -> None:
    result = memory.write("You said I should try yoga, but I hate yoga.", scope="ana")
    assert result.note is not None
    assert result.note.tags.modality.value == "quote"
    assert result.note.tags.key is None  # never a fact


def test_cli_write_of_an_assistant_turn_writes_no_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    code = main(["write", INVENTED, "--role", "assistant", "--user", "ana", "--url", url, "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["note"] is None and out["created"] is True
    with Memory(url) as memory:
        assert memory.count(Kind.NOTE) == 0
