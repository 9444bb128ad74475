"""The prebuilt nodes and add_memory_nodes on real graphs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from lg_helpers import ScriptedModel, assert_notes_only_from_users, notes

from commonplace import ManualClock, Memory, Scope
from commonplace.errors import InvalidInputError
from commonplace_langgraph import (
    MEMORY_MESSAGE_ID,
    CommonplaceSaver,
    ConsolidationNode,
    NoteNode,
    RecallNode,
    add_memory_nodes,
)

ANA: RunnableConfig = {"configurable": {"thread_id": "t1", "user_id": "ana"}}


def test_recall_node_keeps_one_memory_block_after_the_system_prompt(memory: Memory) -> None:
    memory.write("My sister Rita is a nurse.", scope=Scope(user="ana", thread="old"))
    node = RecallNode(memory)
    state: dict[str, Any] = {
        "messages": [
            SystemMessage("You are kind.", id="sys"),
            HumanMessage("Tell me about Rita", id="h1"),
        ]
    }
    update = node(state, ANA)
    remove_all, *messages = update["messages"]
    assert remove_all.type == "remove"
    assert [m.id for m in messages] == ["sys", MEMORY_MESSAGE_ID, "h1"]
    assert "Rita is a nurse" in messages[1].content
    # Next turn: the block is replaced, not duplicated.
    messages += [AIMessage("She is a nurse.", id="a1"), HumanMessage("And me?", id="h2")]
    again = node({"messages": messages}, ANA)["messages"][1:]
    assert [m.id for m in again] == ["sys", MEMORY_MESSAGE_ID, "h1", "a1", "h2"]
    # After a tool call the turn is not new: nothing changes.
    assert node({"messages": [*again, ToolMessage("42", tool_call_id="c")]}, ANA) == {}
    # Another user has no memory: no block at all.
    assert (
        node({"messages": [HumanMessage("hi", id="x")]}, {"configurable": {"user_id": "bob"}}) == {}
    )


def test_note_node_writes_user_turns_only_once_answered(memory: Memory) -> None:
    node = NoteNode(memory)
    call = {"name": "lookup", "args": {}, "id": "c", "type": "tool_call"}
    asking: list[Any] = [
        SystemMessage("You are kind. The user lives in Mars."),
        HumanMessage("My sister Rita is a nurse.", id="h1"),
        AIMessage("", tool_calls=[call]),
    ]
    # The model called a tool: the turn is still being answered, nothing is written yet
    # (a recall tool running next must not find the question as its own memory).
    assert node({"messages": asking}, ANA) == {}
    assert memory.count("episode", scope="ana") == 0
    first_turn = [
        *asking,
        ToolMessage("The user's brother is Tom.", tool_call_id="c"),
        AIMessage("My name is Bob and I live in Paris."),
    ]
    assert node({"messages": first_turn}, ANA) == {}
    second_turn = [
        *first_turn,
        {"role": "assistant", "content": "I love Berlin."},
        {"role": "user", "content": "I just moved to Porto."},
        AIMessage("Porto is lovely; I was born in Rome."),
    ]
    assert node({"messages": second_turn}, ANA) == {}
    assert node({"messages": second_turn}, ANA) == {}  # again: idempotent
    assert memory.count("episode", scope="ana") == 2
    assert memory.count("note", scope="ana") == 2
    assert_notes_only_from_users(memory, "ana")
    # A forgotten note stays forgotten: later runs only write the current turn.
    rita = next(r for r in notes(memory, "ana") if "Rita" in r.text)
    memory.forget(rita.id, scope="ana")
    third_turn = [*second_turn, HumanMessage("I play the cello."), AIMessage("Nice.")]
    node({"messages": third_turn}, ANA)
    assert memory.count("note", scope="ana") == 2
    assert not any("Rita" in r.text for r in notes(memory, "ana"))


def test_two_identical_messages_are_two_episodes(memory: Memory) -> None:
    node = NoteNode(memory)
    said_twice = [
        HumanMessage("I am tired.", id="m1"),
        AIMessage("Rest a little."),
        HumanMessage("I am tired.", id="m2"),
        AIMessage("Then sleep."),
    ]
    node({"messages": said_twice[:2]}, ANA)
    node({"messages": said_twice}, ANA)
    node({"messages": said_twice}, ANA)  # the same messages again: nothing new
    assert memory.count("episode", scope="ana") == 2


def test_consolidation_node_runs_at_the_end_of_every_nth_turn(
    memory: Memory, clock: ManualClock
) -> None:
    assert hasattr(Memory, "consolidate"), (
        "Memory.consolidate is not in the installed core yet; ConsolidationNode calls it"
    )
    for text in RITA:
        memory.write(text, scope=Scope(user="ana", thread="t0"))
    clock.advance(days=3)  # consolidation waits until notes are a day old
    node = ConsolidationNode(memory, every=2)
    one_turn = [HumanMessage("My dog is Bolt."), AIMessage("Nice.")]
    assert node({"messages": one_turn}, ANA) == {}
    assert memory.count("summary", scope="ana") == 0  # turn 1 of every 2
    call = {"name": "x", "args": {}, "id": "1", "type": "tool_call"}
    tool_loop = [*one_turn, HumanMessage("My cat is Miso."), AIMessage("", tool_calls=[call])]
    assert node({"messages": tool_loop}, ANA) == {}
    assert memory.count("summary", scope="ana") == 0  # mid-turn: not yet
    two_turns = [*tool_loop[:-1], AIMessage("Lovely.")]
    assert node({"messages": two_turns}, ANA) == {}
    assert memory.count("summary", scope="ana") >= 1
    with pytest.raises(InvalidInputError):
        ConsolidationNode(memory, every=0)


RITA = [
    "My sister Rita is a nurse.",
    "My sister Rita lives in Lisbon.",
    "My sister Rita has two kids.",
    "Rita, my sister, loves jazz.",
]


def react_builder(model: ScriptedModel, tools: list[Any]) -> StateGraph[Any, Any, Any, Any]:
    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.bind_tools(tools).invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder


def test_add_memory_nodes_wraps_a_react_graph(
    saver: CommonplaceSaver, scripted: Callable[..., ScriptedModel]
) -> None:
    memory = saver.memory
    memory.write("My sister Rita is a nurse.", scope=Scope(user="ana", thread="old"))
    call = {"name": "lookup", "args": {"q": "rita"}, "id": "c1", "type": "tool_call"}
    model = scripted(AIMessage("", tool_calls=[call]), "Rita is a nurse, and I am Bob.")

    from langchain_core.tools import tool

    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return "found"

    builder = react_builder(model, [lookup])
    user_nodes = {name: builder.nodes[name] for name in builder.nodes}
    add_memory_nodes(builder, memory, before="model", after="model")
    assert all(builder.nodes[name] is spec for name, spec in user_nodes.items())
    graph = builder.compile(checkpointer=saver)
    out = graph.invoke({"messages": [HumanMessage("What does my sister do?")]}, ANA)
    assert [m.type for m in out["messages"]] == ["system", "human", "ai", "tool", "ai"]
    assert out["messages"][0].id == MEMORY_MESSAGE_ID
    # The model saw the memory on both calls of the turn, once each time.
    assert len(model.seen) == 2
    for seen in model.seen:
        assert sum(m.id == MEMORY_MESSAGE_ID for m in seen) == 1
        assert "Rita is a nurse" in seen[0].content
    assert_notes_only_from_users(memory, "ana")
    assert memory.count("note", scope="ana") == 2  # the old one and "What does my sister do?"


def test_add_memory_nodes_with_consolidation_and_a_path_function(
    memory: Memory, clock: ManualClock, scripted: Callable[..., ScriptedModel]
) -> None:
    assert hasattr(Memory, "consolidate"), "Memory.consolidate is not in the installed core yet"
    for text in RITA:
        memory.write(text, scope=Scope(user="ana", thread="t0"))
    clock.advance(days=3)
    model = scripted("ok")

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def route(state: MessagesState) -> str:
        return "model" if len(state["messages"]) < 1 else END

    builder = StateGraph(MessagesState)
    builder.add_node("gate", lambda state: {})
    builder.add_node("model", call_model)
    builder.add_edge(START, "gate")
    builder.add_conditional_edges("gate", lambda state: "model")  # returns the name itself
    builder.add_conditional_edges("model", route)
    add_memory_nodes(builder, memory, before="model", after="model", consolidate=True)
    graph = builder.compile()
    out = graph.invoke({"messages": [HumanMessage("I play the cello.")]}, ANA)
    assert [m.type for m in out["messages"]] == ["system", "human", "ai"]
    assert "Rita" in out["messages"][0].content  # recall ran, through the renamed branch
    assert memory.count("note", scope="ana") == 5
    assert memory.count("summary", scope="ana") >= 1


def test_add_memory_nodes_refuses_bad_requests(memory: Memory) -> None:
    builder = StateGraph(MessagesState)
    builder.add_node("model", lambda state: {})
    builder.add_edge(START, "model")
    with pytest.raises(InvalidInputError, match="no node named 'llm'"):
        add_memory_nodes(builder, memory, before="llm")
    with pytest.raises(InvalidInputError, match="name a node"):
        add_memory_nodes(builder, memory)
    with pytest.raises(InvalidInputError, match="consolidate"):
        add_memory_nodes(builder, memory, before="model", consolidate=True)
    add_memory_nodes(builder, memory, before="model")
    with pytest.raises(InvalidInputError, match="already has"):
        add_memory_nodes(builder, memory, before="model")
