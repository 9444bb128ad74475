"""The question being answered never comes back as its own memory.

With the checkpointer tapping messages and the recall node (or the middleware, or the
recall tool) reading memory in the same run, the question used to be in its own memory
block: every time with ``durability="sync"`` (the input checkpoint was tapped before the
recall node ran), some of the time with the default (a race), and the note node wrote
it before the tools ran, so the recall tool found it first. The user's messages of a
turn are now written once the turn is answered, so no durability mode and no timing
lets a recall meet them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from lg_helpers import ScriptedModel

from commonplace import Memory, Scope
from commonplace_langgraph import (
    MEMORY_MESSAGE_ID,
    CommonplaceMiddleware,
    CommonplaceSaver,
    CommonplaceStore,
    add_memory_nodes,
    memory_tools,
)

DURABILITY = ["sync", "async", "exit"]
RUNS = 3


def ana(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "user_id": "ana"}}


def recall_call(query: str) -> AIMessage:
    call = {"name": "recall", "args": {"query": query}, "id": "r1", "type": "tool_call"}
    return AIMessage("", tool_calls=[call])


def question(n: int) -> str:
    # a word no other message has, so finding it in memory can only mean the question
    return f"What colour is the kite called Zorblax{n} that my sister Rita flies?"


def seen_memory(seen: list[BaseMessage]) -> str:
    return "\n".join(
        str(m.content) for m in seen if m.type == "system" or m.id == MEMORY_MESSAGE_ID
    )


def tool_answers(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages if m.type == "tool")


def seeded(memory: Memory) -> None:
    memory.write("My sister Rita is a nurse and flies kites.", scope=Scope(user="ana", thread="t0"))


def react_with_memory_nodes(
    memory: Memory, saver: CommonplaceSaver, store: CommonplaceStore, model: ScriptedModel
) -> Any:
    tools = memory_tools()

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.bind_tools(tools).invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    add_memory_nodes(builder, memory, before="model", after="model")
    return builder.compile(checkpointer=saver, store=store)


@pytest.mark.parametrize("durability", DURABILITY)
def test_recall_node_and_tool_never_see_the_question(
    memory: Memory,
    saver: CommonplaceSaver,
    store: CommonplaceStore,
    scripted: Callable[..., ScriptedModel],
    durability: Any,
) -> None:
    seeded(memory)
    for n in range(RUNS):
        model = scripted(recall_call(question(n)), "Rita's kite is red.")
        graph = react_with_memory_nodes(memory, saver, store, model)
        out = graph.invoke(
            {"messages": [HumanMessage(question(n))]}, ana(f"q{n}"), durability=durability
        )
        token = f"Zorblax{n}"
        assert "Rita is a nurse" in seen_memory(model.seen[0])  # recall did run
        for seen in model.seen:
            assert token not in seen_memory(seen)
        answer = tool_answers(out["messages"])
        assert "Rita" in answer and token not in answer
        # once answered, the question is memory (for the turns after it), once
        assert memory.count("episode", scope=Scope(user="ana", thread=f"q{n}")) == 1


@pytest.mark.parametrize("durability", DURABILITY)
def test_the_checkpointer_alone_with_a_recall_node(
    memory: Memory,
    saver: CommonplaceSaver,
    scripted: Callable[..., ScriptedModel],
    durability: Any,
) -> None:
    seeded(memory)
    for n in range(RUNS):
        model = scripted("It is red.")

        def call_model(state: MessagesState, model: ScriptedModel = model) -> dict[str, Any]:
            return {"messages": [model.invoke(state["messages"])]}

        builder = StateGraph(MessagesState)
        builder.add_node("model", call_model)
        builder.add_edge(START, "model")
        add_memory_nodes(builder, memory, before="model")
        graph = builder.compile(checkpointer=saver)
        graph.invoke({"messages": [HumanMessage(question(n))]}, ana("one"), durability=durability)
        block = seen_memory(model.seen[0])
        assert "Rita is a nurse" in block
        assert f"Zorblax{n}" not in block
        if n:  # the earlier questions, answered, are memory now
            assert len(saver.tapped("one")) == n + 1


@pytest.mark.parametrize("durability", DURABILITY)
def test_the_middleware_and_its_tool_never_see_the_question(
    memory: Memory,
    saver: CommonplaceSaver,
    scripted: Callable[..., ScriptedModel],
    durability: Any,
) -> None:
    seeded(memory)
    middleware = CommonplaceMiddleware(memory, tools=True)
    for n in range(RUNS):
        model = scripted(recall_call(question(n)), "Red.")
        agent = create_agent(model, middleware=[middleware], checkpointer=saver)
        out = agent.invoke(
            {"messages": [HumanMessage(question(n))]}, ana(f"m{n}"), durability=durability
        )
        token = f"Zorblax{n}"
        assert len(model.seen) == 2
        assert all("Rita is a nurse" in seen_memory(seen) for seen in model.seen)
        assert all(token not in seen_memory(seen) for seen in model.seen)
        answer = tool_answers(out["messages"])
        assert "Rita" in answer and token not in answer
        # the saver and the middleware both write the turn: it is one episode
        assert memory.count("episode", scope=Scope(user="ana", thread=f"m{n}")) == 1


def test_async_runs_never_see_the_question_either(
    memory: Memory,
    saver: CommonplaceSaver,
    store: CommonplaceStore,
    scripted: Callable[..., ScriptedModel],
) -> None:
    seeded(memory)

    async def run(n: int, durability: Any) -> tuple[ScriptedModel, Any]:
        model = scripted(recall_call(question(n)), "Red.")
        graph = react_with_memory_nodes(memory, saver, store, model)
        out = await graph.ainvoke(
            {"messages": [HumanMessage(question(n))]}, ana(f"a{n}"), durability=durability
        )
        return model, out

    for n, durability in enumerate(DURABILITY):
        model, out = asyncio.run(run(n, durability))
        assert all(f"Zorblax{n}" not in seen_memory(seen) for seen in model.seen)
        assert f"Zorblax{n}" not in tool_answers(out["messages"])
