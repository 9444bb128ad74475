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
