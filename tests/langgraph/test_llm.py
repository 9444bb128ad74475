"""A langchain-core chat model as the note writer."""

from __future__ import annotations

import json

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph

from commonplace import Memory
from commonplace.errors import InvalidTypeError
from commonplace_langgraph import CommonplaceSaver, chat_model_complete, chat_model_note_writer

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
