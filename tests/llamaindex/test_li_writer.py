"""Any LlamaIndex LLM as the note writer, through commonplace's LLMNoteWriter."""

from __future__ import annotations

import json

import pytest
from li_support import ScriptedLLM, notes_of
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import MockLLM

from commonplace import ManualClock, Memory, Record
from commonplace.errors import InvalidTypeError
from commonplace_llamaindex import CommonplaceMemory, llm_note_writer, llm_update_decider

NOTE = json.dumps(
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


def test_the_llm_writes_the_note_and_only_ever_sees_user_turns(db_url: str) -> None:
    llm = ScriptedLLM.make(NOTE)
    with Memory(db_url, plugins=[llm_note_writer(llm)]) as store:
        memory = CommonplaceMemory.from_defaults(store, user_id="ana")
        SimpleChatEngine.from_defaults(llm=MockLLM(), memory=memory).chat(
            "we got a greyhound!! his name is Bolt"
        )
        (note,) = notes_of(store, "ana")
    assert note.text == "The user adopted a greyhound named Bolt."
    assert note.tags.value == "Bolt"
    (prompt,) = llm.prompts  # one user turn; the echoed assistant reply never reached it
    assert "we got a greyhound!! his name is Bolt" in prompt


def test_a_model_that_replies_with_junk_falls_back_to_the_rule_writer(db_url: str) -> None:
    writer = llm_note_writer(MockLLM())  # it echoes the prompt back: not a note
    with Memory(db_url, plugins=[writer]) as store:
        store.write("I live in Lisbon.", scope="ana")
        (note,) = notes_of(store, "ana")
    assert note.text == "The user lives in Lisbon."
    assert writer.fallbacks == 1


def test_an_llm_summarises_and_rewrites_the_card_under_the_core_guards(db_url: str) -> None:
    from datetime import datetime, timezone

    from commonplace import Config, ManualClock, ProfileRules
    from commonplace_llamaindex import llm_profile_rewriter, llm_summariser

    summary = json.dumps(
        {
            "sentences": [
                {"text": "Joana is a nurse who loves climbing.", "sources": [1, 2]},
                {"text": "Joana owns a yacht in Monaco.", "sources": [3]},
            ]
        }
    )
    card = json.dumps(
        {"identity": {"name": "Ana"}, "people": {}, "events": [], "voice": ["warm"], "threads": []}
    )
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=timezone.utc))
    plugins = [
        llm_summariser(ScriptedLLM.make(summary)),
        llm_profile_rewriter(ScriptedLLM.make(*[card] * 5)),
    ]
    config = Config(profile=ProfileRules(rewrite_every=1))
    with Memory(db_url, clock=clock, config=config, plugins=plugins) as store:
        for text in (
            "My partner Joana is a nurse.",
            "Joana loves climbing.",
            "Joana adopted a cat.",
        ):
            store.write(text, scope="ana")
        clock.advance(days=3)
        report = store.consolidate(scope="ana")
        (summary_id,) = [a.record_id for a in report.actions if a.action == "summarise"]
        record = store.explain(summary_id).record
        profile = store.profile(scope="ana")
    assert record.text == "About joana: Joana is a nurse who loves climbing."
    assert "yacht" in str(record.data["rejected"])  # type: ignore[union-attr]
    assert profile.voice == ("warm",) and profile.people == {"Joana": "partner"}


# -- the update decider: the LLM names what a new statement replaces ---------------------


def test_the_llm_decides_what_an_update_replaces(db_url: str, clock: ManualClock) -> None:
    with Memory(db_url, clock=clock) as store:
        old = store.write("My shell is bash.", scope="ana").note
    assert old is not None
    clock.advance(days=30)
    # the rules leave these two alone (no word of the slot is shared): only the LLM links them
    decision = {"id": old.id, "verdict": "replaces", "reason": "switched to fish"}
    llm = ScriptedLLM.make(json.dumps({"decisions": [decision]}))
    decider = llm_update_decider(llm)
    with Memory(db_url, clock=clock, plugins=[decider]) as store:
        memory = CommonplaceMemory.from_defaults(store, user_id="ana")
        SimpleChatEngine.from_defaults(llm=MockLLM(), memory=memory).chat("Using fish these days.")
        explained = store.explain(old.id)
        assert explained.why == "switched to fish" and explained.replaced_by is not None
        new, past = store.explain(explained.replaced_by).record, explained.record
        assert isinstance(past, Record) and past.superseded_by == new.id  # past, not current
    assert new.text == "The user is using fish these days."
    (prompt,) = llm.prompts  # one call, with the old statement listed by its id
    assert f"id={old.id}" in prompt and "The user's shell is bash." in prompt
    assert decider.fallbacks == 0


def test_an_llm_replying_with_junk_leaves_the_update_to_the_rules(db_url: str) -> None:
    decider = llm_update_decider(MockLLM())  # it echoes the prompt back: no decisions
    with Memory(db_url, plugins=[decider]) as store:
        old = store.write("I live in Lisbon.", scope="ana").note
        result = store.write("I moved to Porto.", scope="ana")
        assert old is not None and result.superseded == (old.id,)
        assert store.explain(old.id).why == "the same fact (city) with a new value"
    assert decider.fallbacks == 1


def test_the_update_decider_refuses_what_is_not_an_llm() -> None:
    with pytest.raises(InvalidTypeError, match="LlamaIndex LLM"):
        llm_update_decider("gpt-4o")  # type: ignore[arg-type]
