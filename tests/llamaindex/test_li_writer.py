"""Any LlamaIndex LLM as the note writer, through commonplace's LLMNoteWriter."""

from __future__ import annotations

import json

from li_support import ScriptedLLM, notes_of
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import MockLLM

from commonplace import Memory
from commonplace_llamaindex import CommonplaceMemory, llm_note_writer

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
