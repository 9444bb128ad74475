"""Real graphs on CommonplaceSaver: invoke, ainvoke, stream, interrupts, history, time
travel and subgraphs, each also checking what reached memory."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt
from lg_helpers import assert_notes_only_from_users, note_texts

from commonplace import Memory, Scope
from commonplace_langgraph import CommonplaceSaver, NoUserWarning

ANA: RunnableConfig = {"configurable": {"thread_id": "t1", "user_id": "ana"}}


def echo_graph(saver: CommonplaceSaver) -> Any:
    """One model node that answers with an assistant message full of facts."""

    def model(state: MessagesState) -> dict[str, Any]:
        said = state["messages"][-1].content
        return {"messages": [AIMessage(f"I live in Paris and my brother Tom loves {said}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_edge(START, "model")
    builder.add_edge("model", END)
    return builder.compile(checkpointer=saver)


def test_invoke_persists_state_and_taps_the_user_turn(saver: CommonplaceSaver) -> None:
    graph = echo_graph(saver)
    graph.invoke({"messages": [HumanMessage("My sister Rita is a nurse.")]}, ANA)
    graph.invoke({"messages": [HumanMessage("I just moved to Porto.")]}, ANA)
    assert len(graph.get_state(ANA).values["messages"]) == 4
    notes = note_texts(saver.memory, "ana")
    assert len(notes) == 2
    assert any("Rita" in n for n in notes) and any("Porto" in n for n in notes)
    assert not any("Paris" in n or "Tom" in n for n in notes)  # the assistant's words
    assert_notes_only_from_users(saver.memory, "ana")
    assert len(saver.tapped("t1")) == 2


def test_ainvoke_and_astream(saver: CommonplaceSaver) -> None:
    graph = echo_graph(saver)

    async def run() -> list[Any]:
        await graph.ainvoke({"messages": [HumanMessage("My dog is called Bolt.")]}, ANA)
        return [
            chunk
            async for chunk in graph.astream(
                {"messages": [HumanMessage("I work as a baker.")]}, ANA, stream_mode="updates"
            )
        ]

    chunks = asyncio.run(run())
    assert [list(c) for c in chunks] == [["model"]]
    assert len(saver.tapped("t1")) == 2
    assert saver.memory.count("note", scope="ana") == 2
    assert_notes_only_from_users(saver.memory, "ana")


def test_stream_values_and_durability_modes(saver: CommonplaceSaver) -> None:
    graph = echo_graph(saver)
    values = list(
        graph.stream(
            {"messages": [HumanMessage("My dog is called Bolt.")]}, ANA, stream_mode="values"
        )
    )
    assert [len(v["messages"]) for v in values] == [1, 2]
    for i, durability in enumerate(("sync", "async", "exit")):
        graph.invoke(
            {"messages": [HumanMessage(f"My favourite number is {i + 40}.")]},
            ANA,
            durability=durability,
        )
    assert len(saver.tapped("t1")) == 4
    assert len(graph.get_state(ANA).values["messages"]) == 8


def approval_graph(saver: CommonplaceSaver) -> Any:
    def ask(state: MessagesState) -> dict[str, Any]:
        answer = interrupt("What should I call you?")
        return {"messages": [HumanMessage(f"Call me {answer}.")]}

    def model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("Hello, friend. My name is Assistant Bob.")]}

    builder = StateGraph(MessagesState)
    builder.add_node("ask", ask)
    builder.add_node("model", model)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "model")
    builder.add_edge("model", END)
    return builder.compile(checkpointer=saver)


def test_interrupt_and_resume(saver: CommonplaceSaver) -> None:
    graph = approval_graph(saver)
    first = graph.invoke({"messages": [HumanMessage("I am a nurse in Lisbon.")]}, ANA)
    assert first["__interrupt__"][0].value == "What should I call you?"
    assert graph.get_state(ANA).next == ("ask",)
    # The turn is not answered yet: its message waits, so no recall can meet it as memory.
    assert len(saver.tapped("t1")) == 0
    done = graph.invoke(Command(resume="Ana"), ANA)
    assert [m.type for m in done["messages"]] == ["human", "human", "ai"]
    assert len(saver.tapped("t1")) == 2
    assert_notes_only_from_users(saver.memory, "ana")
    assert not any("Bob" in n for n in note_texts(saver.memory, "ana"))


def test_history_and_time_travel(saver: CommonplaceSaver) -> None:
    graph = echo_graph(saver)
    graph.invoke({"messages": [HumanMessage("My cat is called Miso.")]}, ANA)
    graph.invoke({"messages": [HumanMessage("I play the cello.")]}, ANA)
    history = list(graph.get_state_history(ANA))
    assert [len(s.values.get("messages", [])) for s in history] == [4, 3, 2, 2, 1, 0]
    # Go back to the state after the first answer and take the conversation elsewhere,
    # with the snapshot's own config (which names no user: the saver knows the thread's).
    after_first = next(s for s in history if len(s.values.get("messages", [])) == 2)
    forked = graph.update_state(
        after_first.config, {"messages": [HumanMessage("Actually, I play the violin.")]}
    )
    assert [m.content for m in graph.get_state(forked).values["messages"] if m.type == "human"] == [
        "My cat is called Miso.",
        "Actually, I play the violin.",
    ]
    assert len(saver.tapped("t1")) == 2  # the violin is not answered yet
    result = graph.invoke({"messages": [HumanMessage("And the piano.")]}, ANA)
    assert [m.content for m in result["messages"] if m.type == "human"][-2:] == [
        "Actually, I play the violin.",
        "And the piano.",
    ]
    assert len(saver.tapped("t1")) == 4
    # Replaying an earlier checkpoint re-runs from there; nothing is tapped twice.
    replayed = graph.invoke(None, history[-2].config)
    assert replayed["messages"][0].content == "My cat is called Miso."
    assert len(saver.tapped("t1")) == 4
    assert saver.memory.count("episode", scope="ana") == 4
    assert_notes_only_from_users(saver.memory, "ana")


class Outer(MessagesState):
    summary: str


def test_subgraphs_are_checkpointed_and_tapped_once(saver: CommonplaceSaver) -> None:
    def inner_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("Inner thought: the user surely lives in Rome.")]}

    inner = StateGraph(MessagesState)
    inner.add_node("inner_model", inner_model)
    inner.add_edge(START, "inner_model")
    inner.add_edge("inner_model", END)

    def ask_inside(state: Outer) -> dict[str, Any]:
        interrupt("pause inside the subgraph")
        return {}

    inner.add_node("pause", ask_inside)
    inner.add_edge("inner_model", "pause")

    def summarise(state: Outer) -> dict[str, Any]:
        return {"summary": f"{len(state['messages'])} messages"}

    outer = StateGraph(Outer)
    outer.add_node("sub", inner.compile(checkpointer=True))
    outer.add_node("summarise", summarise)
    outer.add_edge(START, "sub")
    outer.add_edge("sub", "summarise")
    outer.add_edge("summarise", END)
    graph = outer.compile(checkpointer=saver)

    graph.invoke({"messages": [HumanMessage("I grew up in Coimbra.")], "summary": ""}, ANA)
    state = graph.get_state(ANA, subgraphs=True)
    assert state.tasks[0].state is not None  # the subgraph's own checkpoint
    sub_config = cast(Any, state.tasks[0].state).config
    assert sub_config["configurable"]["checkpoint_ns"].split(":")[0] == "sub"
    result = graph.invoke(Command(resume="go"), ANA)
    assert result["summary"] == "2 messages"
    assert len(saver.tapped("t1")) == 1
    namespaces = {t.config["configurable"]["checkpoint_ns"] for t in saver.list(None)}
    assert "" in namespaces and any(ns.split(":")[0] == "sub" for ns in namespaces)
    assert not any("Rome" in n for n in note_texts(saver.memory, "ana"))
    assert any("Coimbra" in n for n in note_texts(saver.memory, "ana"))


def test_copy_thread_keeps_memory_single(saver: CommonplaceSaver) -> None:
    graph = echo_graph(saver)
    graph.invoke({"messages": [HumanMessage("My sister Rita is a nurse.")]}, ANA)
    saver.copy_thread("t1", "t2")
    copy = {"configurable": {"thread_id": "t2", "user_id": "ana"}}
    graph.invoke({"messages": [HumanMessage("I just moved to Porto.")]}, copy)
    assert len(graph.get_state(copy).values["messages"]) == 4
    # Rita's message came with the copy: it was already in memory and is not written again.
    assert saver.memory.count("note", scope="ana") == 2
    assert saver.memory.count("note", scope=Scope(user="ana", thread="t2")) == 1


def test_without_a_user_id_memory_is_per_thread(saver: CommonplaceSaver, memory: Memory) -> None:
    graph = echo_graph(saver)
    with pytest.warns(NoUserWarning, match="'lonely' names no user"):
        graph.invoke(
            {"messages": [HumanMessage("My sister Rita is a nurse.")]},
            {"configurable": {"thread_id": "lonely"}},
        )
    assert memory.count("note", scope=Scope(thread="lonely")) == 1
    assert memory.count("note", scope=Scope(thread="other")) == 0


def test_a_bad_user_id_is_refused_clearly(saver: CommonplaceSaver) -> None:
    graph = echo_graph(saver)
    with pytest.raises(TypeError, match="user_id"):
        graph.invoke(
            {"messages": [HumanMessage("hello there, I like tea")]},
            {"configurable": {"thread_id": "t9", "user_id": ["ana"]}},
        )


def test_a_forgotten_memory_stays_forgotten(saver: CommonplaceSaver) -> None:
    graph = echo_graph(saver)
    graph.invoke({"messages": [HumanMessage("My sister Rita is a nurse.")]}, ANA)
    note = next(r for r in saver.memory.recall("Rita", scope="ana").recent if "Rita" in r.text)
    saver.memory.forget(note.id, scope="ana")
    # The message is still in the thread's state, and every later checkpoint carries it.
    graph.invoke({"messages": [HumanMessage("I just moved to Porto.")]}, ANA)
    assert "My sister Rita is a nurse." in [
        m.content for m in graph.get_state(ANA).values["messages"]
    ]
    assert not any("Rita" in n for n in note_texts(saver.memory, "ana"))
    assert saver.memory.count("note", scope="ana") == 1


def test_ainvoke_through_a_wrapped_async_sqlite_saver(memory: Memory, tmp_path: Path) -> None:
    async def run() -> tuple[int, int, dict[str, str | None]]:
        path = str(tmp_path / "checkpoints.db")
        async with (
            AsyncSqliteSaver.from_conn_string(path) as wrapped,
            CommonplaceSaver(memory, saver=wrapped) as saver,
        ):
            graph = echo_graph(saver)
            await graph.ainvoke({"messages": [HumanMessage("My dog is called Bolt.")]}, ANA)
            await graph.ainvoke({"messages": [HumanMessage("I work as a baker.")]}, ANA)
            state = await graph.aget_state(ANA)
            history = [s async for s in graph.aget_state_history(ANA)]
            return len(state.values["messages"]), len(history), saver.tapped("t1")

    messages, history, tapped = asyncio.run(run())
    assert (messages, history, len(tapped)) == (4, 6, 2)
    assert memory.count("note", scope="ana") == 2
    assert_notes_only_from_users(memory, "ana")
