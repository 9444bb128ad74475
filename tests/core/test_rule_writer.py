"""The default note writer's contract on the turns the foundation relies on.

Its quality on a labelled set is measured separately (docs/); these are the
rules that must never break.
"""

from __future__ import annotations

import re
import sys

import pytest

from commonplace import Kind, Memory, Modality
from commonplace.write._tense import is_wordlike


@pytest.mark.parametrize(
    "noise",
    ["ok", "lol", "wait", "thanks", "Thanks!!", "ok wait", "😂🔥", "...", "k", "haha yes", "hmm"],
)
def test_noise_writes_no_note_and_says_why(memory: Memory, noise: str) -> None:
    result = memory.write(noise, scope="ana")
    assert result.created and result.note is None
    assert result.skipped and ("noise" in result.skipped or "no words" in result.skipped)


def test_a_statement_becomes_one_present_tense_note_about_the_user(memory: Memory) -> None:
    result = memory.write("So I live in Lisbon now. The weather is nice. ok", scope="ana")
    assert result.note is not None
    assert result.note.text == "The user lives in Lisbon now."
    tags = result.note.tags
    assert tags.modality is Modality.STATEMENT and "Lisbon" in tags.entities
    assert tags.key is not None and (tags.key.subject, tags.key.predicate) == ("user", "city")
    assert tags.value == "Lisbon"


def test_a_joke_is_tagged_a_joke_and_never_a_fact(memory: Memory) -> None:
    result = memory.write("lol I live in a castle on the moon", scope="ana")
    assert result.note is not None
    assert result.note.tags.modality is Modality.JOKE and result.note.tags.key is None
    assert result.note.tags.importance < 0.3


def test_a_question_of_the_users_own_records_the_question_not_an_answer(memory: Memory) -> None:
    asked = "How do I get my toddler to sleep through the night?"
    result = memory.write(asked, scope="ana")
    assert result.note is not None and result.note.tags.modality is Modality.QUESTION
    assert result.note.text == f"The user asks: “{asked}”"


@pytest.mark.parametrize(
    ("turn", "reason"),
    [
        ("What's the capital of Mongolia?", "a general question"),
        ("Maya: And how did the interview go?", "a question to the other person"),
        ("Maya: Let me know if you need a hand!", "advice or encouragement to the listener"),
        ("Maya: That sounds amazing, good for you!", "a reaction to the listener"),
        ("Maya: Your garden is lovely", "a reaction to the listener"),
        ("Maya: Family is everything.", "a general remark"),
        ("Take care!", "small talk"),
    ],
)
def test_what_is_said_to_the_listener_is_no_note_and_says_why(
    memory: Memory, turn: str, reason: str
) -> None:
    result = memory.write(turn, scope="ana")
    assert result.note is None and memory.count(Kind.NOTE, scope="ana") == 0
    assert result.skipped is not None and result.skipped.startswith(reason), result.skipped


def test_life_events_are_tagged_and_important(memory: Memory) -> None:
    result = memory.write("I got laid off this morning and I'm scared.", scope="ana")
    assert result.note is not None
    assert result.note.tags.event == "layoff" and result.note.tags.emotion == "fear"
    assert result.note.tags.importance >= 0.7


def test_updates_of_the_same_setting_share_a_key(memory: Memory) -> None:
    old = memory.write("Our staging server port is 8000.", scope="ana").note
    new = memory.write("Update: the staging server moved to port 8001.", scope="ana").note
    assert old is not None and new is not None
    assert old.tags.key == new.tags.key
    assert (old.tags.value, new.tags.value) == ("8000", "8001")


def test_a_wordlike_token_is_what_the_word_pattern_matches_at_its_start() -> None:
    pattern = re.compile(r"[\w']")
    for cp in range(sys.maxunicode + 1):
        c = chr(cp)
        assert is_wordlike(c + "x") == (pattern.match(c) is not None), hex(cp)
