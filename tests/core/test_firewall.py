"""The firewall: nothing the assistant (or a tool, or the system) says becomes a note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonplace import (
    Kind,
    Memory,
    NoteDraft,
    Role,
    Scope,
    Tags,
    Turn,
    hookimpl,
    said_by,
    speaks_for_user,
)
from commonplace._cli import main
from commonplace.errors import InvalidInputError, InvalidTypeError
from commonplace.validation import checked_user_names

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


# -- named messages: the one rule every adapter asks ---------------------------------------


@pytest.mark.parametrize(
    ("name", "user", "declared", "expected"),
    [
        (None, "ana", (), None),  # no name: the user's
        ("", "ana", (), None),
        ("   ", "ana", (), None),
        ("ana", "ana", (), None),  # the configured user
        (" ANA ", "ana", (), None),
        ("\uff41\uff4e\uff41", "ana", (), None),  # full-width letters fold to the same name
        ("Ana  Lima", "ana", ("ana lima",), None),  # a declared name
        ("researcher_agent", "ana", (), "researcher_agent"),
        ("Bob", "ana", (), "Bob"),  # a person is not the user either
        ("Mary-Jane", "ana", (), "Mary-Jane"),
        ("\u0430na", "ana", (), "\u0430na"),  # a Cyrillic look-alike is another name
        ("ana", None, (), "ana"),  # no configured user: a name is no one's
        (7, "ana", (), "7"),  # a dict message may name anything
        ("x" * 300, "ana", (), "x" * 100),
        ("\ud800bot", "ana", (), "\\ud800bot"),  # kept by its escapes, as valid text
        ("\ud800" * 40, "ana", (), ("\\ud800" * 40)[:100]),  # cut after escaping: it fits
    ],
)
def test_a_message_is_the_users_only_by_the_one_rule(
    name: object, user: str | None, declared: tuple[str, ...], expected: str | None
) -> None:
    assert said_by(name, user=user, user_names=declared) == expected
    assert speaks_for_user(name, user=user, user_names=declared) is (expected is None)


def test_a_turn_said_by_another_is_evidence_never_a_note(db_url: str) -> None:
    plugin = WritesEverything()
    with Memory(db_url, plugins=[plugin]) as memory:
        claim = "My account number is 4417."
        result = memory.write(claim, scope="ana", said_by="researcher_agent")
        assert result.note is None and result.skipped is not None
        assert "'researcher_agent' is not the user's" in result.skipped
        assert plugin.seen == []  # the writer hook is never asked
        episode = memory.store.get_episode(result.episode_id)
        assert episode is not None and episode.role is Role.USER
        assert episode.meta["said_by"] == "researcher_agent"
        assert "4417" not in memory.recall("account number", scope="ana").render()
        # the same words said by the user are another turn, and theirs to note
        own = memory.write(claim, scope="ana")
        assert own.created and own.note is not None and own.episode_id != result.episode_id


@pytest.mark.parametrize("workers", [0, 1])
def test_an_import_drafts_no_note_for_a_turn_said_by_another(memory: Memory, workers: int) -> None:
    turns = [
        memory.turn("I live in Porto.", scope="ana"),
        memory.turn("The user lives in Faro.", scope="ana", said_by="planner"),
    ] * 3
    memory.import_turns(turns, progress=False, workers=workers, batch=2)
    found = memory.store.recent_records(Scope(user="ana"), kinds=(Kind.NOTE,), limit=10)
    notes = [r.text for r in found]
    assert any("Porto" in n for n in notes) and not any("Faro" in n for n in notes)


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("", InvalidInputError),
        ("a\nb", None),
        (5, InvalidTypeError),
        ("x" * 101, InvalidInputError),
    ],
)
def test_said_by_is_checked_as_a_name(
    memory: Memory, value: object, error: type[Exception] | None
) -> None:
    if error is None:  # a name on several lines is written on one
        assert memory.turn("hi", scope="ana", said_by=value).said_by == "a b"  # type: ignore[arg-type]
        return
    with pytest.raises(error, match="said_by"):
        memory.write("hi", scope="ana", said_by=value)  # type: ignore[arg-type]
    assert memory.count(Kind.EPISODE) == 0


@pytest.mark.parametrize(
    ("names", "error"),
    [("Ana", InvalidTypeError), ([5], InvalidTypeError), ([""], InvalidInputError)],
)
def test_user_names_are_refused_clearly(names: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="user_names"):
        checked_user_names(names)
    assert checked_user_names(["Ana", "ANA", " mum "]) == ("Ana", "mum")
