"""The framework-neutral LLM note writer: strict JSON in, fallback on junk."""

from __future__ import annotations

import json
import logging

import pytest

from commonplace import Config, ManualClock, Memory, Modality, ProfileRules
from commonplace.lifecycle import LLMSummariser
from commonplace.write import LLMNoteWriter, LLMProfileRewriter, NoteReplyError, parse_note_reply


class ScriptedModel:
    """The edge of the world: a model that answers from a script and records prompts."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        reply = self.replies.pop(0)
        if reply == "RAISE":
            raise TimeoutError("provider timed out")
        return reply


GOOD = json.dumps(
    {
        "note": "The user adopted a greyhound named Bolt.",
        "modality": "statement",
        "entities": ["Bolt"],
        "emotion": "joy",
        "importance": 0.8,
        "event": None,
        "key": ["user", "dog"],
        "value": "Bolt",
    }
)


def test_a_valid_reply_becomes_the_note(db_url: str) -> None:
    model = ScriptedModel("Sure! Here it is:\n" + GOOD)
    with Memory(db_url, plugins=[LLMNoteWriter(model)]) as memory:
        note = memory.write("we got a greyhound!! his name is Bolt", scope="ana").note
    assert note is not None and note.text == "The user adopted a greyhound named Bolt."
    assert note.tags.key is not None and note.tags.value == "Bolt"
    assert "we got a greyhound!! his name is Bolt" in model.prompts[0]


@pytest.mark.parametrize(
    "junk",
    [
        "no json here",
        "{not json}",
        "[1, 2]",
        json.dumps({"note": ""}),
        json.dumps({"note": "x", "importance": 7}),
        json.dumps({"note": "x", "modality": "poem"}),
        json.dumps({"note": "x", "key": ["user"], "value": "y"}),
        "RAISE",
    ],
)
def test_junk_falls_back_to_the_rule_writer_with_a_logged_reason(
    db_url: str, junk: str, caplog: pytest.LogCaptureFixture
) -> None:
    writer = LLMNoteWriter(ScriptedModel(junk))
    with (
        caplog.at_level(logging.WARNING, logger="commonplace.write"),
        Memory(db_url, plugins=[writer]) as memory,
    ):
        note = memory.write("I live in Lisbon.", scope="ana").note
    assert note is not None and note.text == "The user lives in Lisbon."  # the rule writer's
    assert writer.fallbacks == 1
    assert "fell back to the rule writer" in caplog.text


def test_a_joke_is_never_a_fact_whatever_the_model_says() -> None:
    draft = parse_note_reply(
        json.dumps(
            {
                "note": "The user jokes about living on the moon.",
                "modality": "joke",
                "key": ["user", "city"],
                "value": "the moon",
                "importance": 0.1,
            }
        )
    )
    assert not isinstance(draft, str) and draft.tags.modality is Modality.JOKE  # type: ignore[union-attr]
    assert draft.tags.key is None and draft.tags.value is None  # type: ignore[union-attr]


def test_a_skip_reply_writes_no_note(db_url: str) -> None:
    model = ScriptedModel(json.dumps({"skip": True, "reason": "small talk"}))
    with Memory(db_url, plugins=[LLMNoteWriter(model)]) as memory:
        result = memory.write("haha ok", scope="ana")
    assert result.note is None and result.skipped == "the model skipped it: small talk"


def test_the_model_never_sees_assistant_turns(db_url: str) -> None:
    model = ScriptedModel()
    with Memory(db_url, plugins=[LLMNoteWriter(model)]) as memory:
        memory.write("Your brother Tom sails.", role="assistant", scope="ana")
    assert model.prompts == []


def test_errors_name_the_problem() -> None:
    with pytest.raises(NoteReplyError, match="importance"):
        parse_note_reply('{"note": "The user x.", "importance": "high"}')


# -- the LLM summariser and profile rewriter (same shape: prompt, strict JSON, fallback) --


def _joana(memory: Memory, clock: ManualClock) -> None:
    for text in ("My partner Joana is a nurse.", "Joana loves climbing.", "Joana adopted a cat."):
        memory.write(text, scope="ana")
    clock.advance(days=3)


def test_the_llm_summariser_cites_notes_and_is_guarded(db_url: str, clock: ManualClock) -> None:
    reply = json.dumps(
        {
            "sentences": [
                {"text": "Joana is a nurse who loves climbing.", "sources": [1, 2]},
                {"text": "Joana owns a yacht.", "sources": [3]},
            ]
        }
    )
    model = ScriptedModel(reply)
    memory = Memory(db_url, clock=clock, plugins=[LLMSummariser(model)])
    _joana(memory, clock)
    report = memory.consolidate(scope="ana")
    assert "[1] The user's partner Joana is a nurse." in model.prompts[0]
    (summary_id,) = [a.record_id for a in report.actions if a.action == "summarise"]
    rejected = [a.detail for a in report.actions if a.action == "reject_sentence"]
    assert rejected and "yacht" in rejected[0]
    summary = memory.explain(summary_id).record
    memory.close()
    assert summary.text == "About joana: Joana is a nurse who loves climbing."


def test_a_junk_summary_falls_back_to_the_extractive_one(db_url: str, clock: ManualClock) -> None:
    summariser = LLMSummariser(ScriptedModel('{"sentences": [{"text": "x", "sources": [9]}]}'))
    with Memory(db_url, clock=clock, plugins=[summariser]) as memory:
        _joana(memory, clock)
        assert memory.consolidate(scope="ana").counts() == {"summarise": 1}
    assert summariser.fallbacks == 1


def test_the_llm_profile_rewriter_is_used_and_kept_honest(db_url: str, clock: ManualClock) -> None:
    card = {
        "identity": {"name": "Ana"},
        "people": {"Joana": "partner"},
        "events": [],
        "voice": ["warm"],
        "threads": [],
    }
    rewriter = LLMProfileRewriter(ScriptedModel(json.dumps(card), "not json at all"))
    config = Config(profile=ProfileRules(rewrite_every=1))
    with Memory(db_url, clock=clock, config=config, plugins=[rewriter]) as memory:
        memory.write("My name is Ana.", scope="ana")
        assert memory.profile(scope="ana").voice == ("warm",)
        memory.write("I got laid off today.", scope="ana")  # junk reply: the rules take over
        profile = memory.profile(scope="ana")
    assert rewriter.fallbacks == 1
    assert profile.identity["name"] == "Ana" and [e for _, e in profile.events] == ["layoff"]
