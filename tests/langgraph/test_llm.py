"""A langchain-core chat model as the note writer."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from lg_helpers import ScriptedModel, note_texts

from commonplace import ManualClock, Memory
from commonplace.errors import InvalidTypeError
from commonplace_langgraph import (
    CommonplaceSaver,
    chat_model_complete,
    chat_model_note_writer,
    chat_model_update_decider,
)

NOTE = json.dumps(
    {
        "note": "The user's sister Rita works as a nurse.",
        "modality": "statement",
        "entities": ["Rita"],
        "emotion": None,
        "importance": 0.8,
        "event": None,
        "key": ["sister rita", "job"],
        "value": "nurse",
    }
)


def test_the_model_writes_notes_for_user_turns_only(tmp_path: object) -> None:
    model = FakeListChatModel(responses=[NOTE, "this is not JSON"])
    writer = chat_model_note_writer(model)
    with Memory(":memory:", plugins=[writer]) as memory, CommonplaceSaver(memory) as saver:

        def reply(state: MessagesState) -> dict[str, object]:
            return {"messages": [AIMessage("My sister Eva is a pilot, by the way.")]}

        builder = StateGraph(MessagesState)
        builder.add_node("model", reply)
        builder.add_edge(START, "model")
        builder.add_edge("model", END)
        graph = builder.compile(checkpointer=saver)
        config: RunnableConfig = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
        graph.invoke({"messages": [HumanMessage("My sister Rita is a nurse.")]}, config)
        assert model.i == 1  # called once: for the user's turn, not the assistant's
        recent = memory.recall("Rita", scope="ana").recent
        assert [r.text for r in recent] == ["The user's sister Rita works as a nurse."]
        # A junk reply falls back to the rule writer; the turn is not lost.
        graph.invoke({"messages": [HumanMessage("I just moved to Porto.")]}, config)
        assert model.i == 0 and writer.fallbacks == 1  # the fake cycled through both replies
        assert memory.count("note", scope="ana") == 2


def test_complete_takes_the_reply_text() -> None:
    complete = chat_model_complete(FakeListChatModel(responses=["hello"]))
    assert complete("prompt") == "hello"
    with pytest.raises(InvalidTypeError, match="BaseChatModel"):
        chat_model_complete(lambda prompt: "x")  # type: ignore[arg-type]


SUMMARY = json.dumps(
    {
        "sentences": [
            {"text": "Joana is a nurse who loves climbing.", "sources": [1, 2]},
            {"text": "Joana owns a yacht in Monaco.", "sources": [3]},
        ]
    }
)
CARD = json.dumps(
    {"identity": {"name": "Ana"}, "people": {}, "events": [], "voice": ["warm"], "threads": []}
)


def test_a_chat_model_summarises_and_rewrites_the_card_under_the_core_guards() -> None:
    from datetime import datetime, timezone

    from commonplace import Config, ManualClock, ProfileRules
    from commonplace_langgraph import chat_model_profile_rewriter, chat_model_summariser

    clock = ManualClock(datetime(2026, 1, 1, tzinfo=timezone.utc))
    plugins = [
        chat_model_summariser(FakeListChatModel(responses=[SUMMARY])),
        chat_model_profile_rewriter(FakeListChatModel(responses=[CARD] * 5)),
    ]
    config = Config(profile=ProfileRules(rewrite_every=1))
    with Memory(":memory:", clock=clock, config=config, plugins=plugins) as memory:
        for text in (
            "My partner Joana is a nurse.",
            "Joana loves climbing.",
            "Joana adopted a cat.",
        ):
            memory.write(text, scope="ana")
        clock.advance(days=3)
        report = memory.consolidate(scope="ana")
        (summary_id,) = [a.record_id for a in report.actions if a.action == "summarise"]
        summary = memory.explain(summary_id).record
        card = memory.profile(scope="ana")
    assert summary.text == "About joana: Joana is a nurse who loves climbing."
    assert "yacht" in str(summary.data["rejected"])  # type: ignore[union-attr]
    assert card.voice == ("warm",) and card.people == {"Joana": "partner"}  # sticky rules


def test_the_summariser_and_rewriter_refuse_non_chat_models() -> None:
    from commonplace_langgraph import chat_model_profile_rewriter, chat_model_summariser

    for build in (chat_model_summariser, chat_model_profile_rewriter):
        with pytest.raises(InvalidTypeError):
            build("gpt")  # type: ignore[arg-type]


# -- the update decider: the chat model names what a new statement replaces --------------


def test_a_chat_model_decides_what_an_update_replaces(
    db_url: str, clock: ManualClock, scripted: Callable[..., ScriptedModel]
) -> None:
    with Memory(db_url, clock=clock) as memory:
        old = memory.write("My shell is bash.", scope="ana").note
    assert old is not None
    clock.advance(days=30)
    # the rules leave these two alone (no word of the slot is shared): only the model links them
    decision = {"id": old.id, "verdict": "replaces", "reason": "switched to fish"}
    model = scripted(json.dumps({"decisions": [decision]}))
    decider = chat_model_update_decider(model)
    with (
        Memory(db_url, clock=clock, plugins=[decider]) as memory,
        CommonplaceSaver(memory) as saver,
    ):

        def reply(state: MessagesState) -> dict[str, object]:
            return {"messages": [AIMessage("Fish is a nice shell.")]}

        builder = StateGraph(MessagesState)
        builder.add_node("model", reply)
        builder.add_edge(START, "model")
        builder.add_edge("model", END)
        graph = builder.compile(checkpointer=saver)
        config: RunnableConfig = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
        graph.invoke({"messages": [HumanMessage("Using fish these days.")]}, config)
        explained = memory.explain(old.id)
        assert explained.why == "switched to fish" and explained.replaced_by is not None
        new = memory.explain(explained.replaced_by).record
        current = note_texts(memory, "ana")
    assert new.text == "The user is using fish these days."
    assert current == [new.text]  # the old statement is past, not current
    ((prompt,),) = model.seen  # one call, with the old statement listed by its id
    assert f"id={old.id}" in str(prompt.content) and "The user's shell is bash." in prompt.content
    assert decider.fallbacks == 0


def test_a_chat_model_naming_an_unknown_id_leaves_it_to_the_rules(db_url: str) -> None:
    made_up = {"id": "nt_made_up", "verdict": "replaces", "reason": "x"}
    decider = chat_model_update_decider(
        FakeListChatModel(responses=[json.dumps({"decisions": [made_up]})])
    )
    with Memory(db_url, plugins=[decider]) as memory:
        old = memory.write("I live in Lisbon.", scope="ana").note
        result = memory.write("I moved to Porto.", scope="ana")
        assert old is not None and result.superseded == (old.id,)
        assert memory.explain(old.id).why == "the same fact (city) with a new value"
    assert decider.fallbacks == 1


def test_the_update_decider_refuses_non_chat_models() -> None:
    with pytest.raises(InvalidTypeError, match="BaseChatModel"):
        chat_model_update_decider("gpt")  # type: ignore[arg-type]
