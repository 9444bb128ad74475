"""Memory for prebuilt agents: the create_agent middleware, add_memory_nodes on compiled
graphs, and the user taken from the run's context (LangGraph 1.x) or its config."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.func import entrypoint
from langgraph.graph import START, MessagesState, StateGraph
from lg_helpers import ScriptedModel, assert_notes_only_from_users, note_texts, notes

from commonplace import Memory, Scope
from commonplace.errors import InvalidTypeError
from commonplace_langgraph import (
    MEMORY_MESSAGE_ID,
    CommonplaceMiddleware,
    CommonplaceSaver,
    NoUserWarning,
    add_memory_nodes,
)


@dataclass
class Ctx:
    user_id: str


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}."


def weather_call(city: str) -> AIMessage:
    call = {"name": "get_weather", "args": {"city": city}, "id": "w1", "type": "tool_call"}
    return AIMessage("", tool_calls=[call])


def system_text(seen: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in seen if m.type == "system")


def thread(name: str) -> RunnableConfig:
    return {"configurable": {"thread_id": name}}


def test_add_memory_nodes_takes_a_create_agent_graph(
    memory: Memory, saver: CommonplaceSaver, scripted: Callable[..., ScriptedModel]
) -> None:
    memory.write("My sister Rita is a nurse.", scope=Scope(user="ana", thread="old"))
    model = scripted(weather_call("Lisbon"), "Sunny, and Rita is a nurse.")
    agent = create_agent(model, tools=[get_weather], system_prompt="Be brief.", checkpointer=saver)
    with_memory = add_memory_nodes(agent, memory, before="model", after="model")
    assert with_memory is not agent and with_memory.checkpointer is saver
    assert "commonplace_recall" not in agent.nodes  # the agent given is left as it was
    config: RunnableConfig = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
    out = with_memory.invoke({"messages": [HumanMessage("What does my sister do?")]}, config)
    assert [m.type for m in out["messages"]] == ["system", "human", "ai", "tool", "ai"]
    assert out["messages"][0].id == MEMORY_MESSAGE_ID
    assert all("Rita is a nurse" in system_text(seen) for seen in model.seen)
    assert memory.count("note", scope="ana") == 2
    assert_notes_only_from_users(memory, "ana")


def test_add_memory_nodes_refuses_a_graph_it_cannot_rewire(memory: Memory) -> None:
    @entrypoint()
    def workflow(text: str) -> str:
        return text

    with pytest.raises(InvalidTypeError, match="functional-API"):
        add_memory_nodes(workflow, memory, before="model")  # type: ignore[call-overload]


def test_the_middleware_gives_create_agent_memory(
    memory: Memory, scripted: Callable[..., ScriptedModel]
) -> None:
    memory.write("I just moved to Porto with my partner Joana.", scope=Scope(user="ana"))
    model = scripted(
        weather_call("Porto"), "Sunny in Porto. My own partner, Marta, lives in Madrid."
    )
    agent = create_agent(
        model,
        tools=[get_weather],
        system_prompt="You are kind.",
        middleware=[CommonplaceMiddleware(memory)],
    )
    config: RunnableConfig = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
    out = agent.invoke({"messages": [HumanMessage("How is the weather in Porto?")]}, config)
    # the memory joins the system prompt on every model call; the state is not touched
    assert len(model.seen) == 2
    for seen in model.seen:
        assert seen[0].type == "system" and str(seen[0].content).startswith("You are kind.")
        assert "Joana" in seen[0].content
    assert all(m.type != "system" for m in out["messages"])
    # one recall per turn, however many model calls it takes
    porto = next(r for r in notes(memory, "ana") if "Porto" in r.text)
    assert memory.store.get_record(porto.id).access_count == 1  # type: ignore[union-attr]
    # the user's turn is kept as evidence (a question about the weather is no note about
    # her); the assistant's words are neither
    texts = note_texts(memory, "ana")
    assert not any("weather" in t for t in texts) and not any("Marta" in t for t in texts)
    said = [e.text for e in memory.store.recent_episodes(Scope(user="ana"), limit=10)]
    assert "How is the weather in Porto?" in said
    assert_notes_only_from_users(memory, "ana")


def test_the_middleware_async(memory: Memory, scripted: Callable[..., ScriptedModel]) -> None:
    memory.write("My dog is called Bolt.", scope=Scope(user="ana"))
    model = scripted("Bolt sounds lovely.")
    agent = create_agent(model, middleware=[CommonplaceMiddleware(memory)])

    async def run() -> Any:
        return await agent.ainvoke(
            {"messages": [HumanMessage("Do you remember my dog's name?")]},
            {"configurable": {"thread_id": "t1"}},
            context={"user_id": "ana"},
        )

    asyncio.run(run())
    assert "Bolt" in system_text(model.seen[0])
    assert memory.count("episode", scope=Scope(user="ana", thread="t1")) == 1


def test_the_user_comes_from_the_context(
    memory: Memory, saver: CommonplaceSaver, scripted: Callable[..., ScriptedModel]
) -> None:
    model = scripted("Noted.", "She is a nurse.")
    agent = create_agent(
        model,
        middleware=[CommonplaceMiddleware(memory)],
        checkpointer=saver,
        context_schema=Ctx,
    )
    agent.invoke(
        {"messages": [HumanMessage("My sister Rita is a nurse.")]},
        thread("monday"),
        context=Ctx(user_id="ana"),
    )
    # the user's memory, not the thread's: another thread of hers recalls it
    assert memory.count("note", scope="ana") == 1
    assert len(saver.tapped("monday")) == 1  # the tap read the context too: same episode
    assert memory.count("episode", scope="ana") == 1
    agent.invoke(
        {"messages": [HumanMessage("What does my sister do?")]},
        thread("tuesday"),
        context=Ctx(user_id="ana"),
    )
    assert "Rita is a nurse" in system_text(model.seen[1])


def test_a_graph_with_a_context_schema_and_the_recall_node(
    memory: Memory, saver: CommonplaceSaver, scripted: Callable[..., ScriptedModel]
) -> None:
    model = scripted("Noted.", "She is a nurse.")

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState, context_schema=Ctx)
    builder.add_node("model", call_model)
    builder.add_edge(START, "model")
    add_memory_nodes(builder, memory, before="model")
    graph = builder.compile(checkpointer=saver)
    graph.invoke(
        {"messages": [HumanMessage("My sister Rita is a nurse.")]},
        thread("a"),
        context=Ctx(user_id="ana"),
    )
    graph.invoke(
        {"messages": [HumanMessage("What does my sister do?")]},
        thread("b"),
        context=Ctx(user_id="ana"),
    )
    block = [m for m in model.seen[1] if m.id == MEMORY_MESSAGE_ID]
    assert block and "Rita is a nurse" in block[0].content


@pytest.mark.parametrize("key", ["user_id", "langgraph_user_id"])
def test_the_user_comes_from_the_config(
    memory: Memory, scripted: Callable[..., ScriptedModel], key: str
) -> None:
    agent = create_agent(scripted("Noted."), middleware=[CommonplaceMiddleware(memory)])
    agent.invoke(
        {"messages": [HumanMessage("My sister Rita is a nurse.")]},
        {"configurable": {"thread_id": "t1", key: "ana"}},
    )
    assert memory.count("note", scope="ana") == 1


def test_no_user_is_said_out_loud(memory: Memory, scripted: Callable[..., ScriptedModel]) -> None:
    agent = create_agent(scripted("Noted."), middleware=[CommonplaceMiddleware(memory)])
    with pytest.warns(NoUserWarning, match="'lonely' names no user"):
        agent.invoke({"messages": [HumanMessage("My sister Rita is a nurse.")]}, thread("lonely"))
    assert memory.count("note", scope=Scope(thread="lonely")) == 1


def test_swapping_the_checkpointer_plus_one_step(
    memory: Memory, saver: CommonplaceSaver, scripted: Callable[..., ScriptedModel]
) -> None:
    """The documented path: the checkpointer stores, the middleware lets the model see."""
    model = scripted("Welcome to Porto!", "Joana, your partner.")
    agent = create_agent(
        model,
        checkpointer=saver,  # was: InMemorySaver()
        middleware=[CommonplaceMiddleware(memory, write_notes=False)],  # the one step
    )
    agent.invoke(
        {"messages": [HumanMessage("I just moved to Porto with my partner Joana.")]},
        {"configurable": {"thread_id": "t1", "user_id": "ana"}},
    )
    assert len(saver.tapped("t1")) == 1
    agent.invoke(
        {"messages": [HumanMessage("Who do I live with?")]},
        {"configurable": {"thread_id": "t2", "user_id": "ana"}},
    )
    assert "Joana" in system_text(model.seen[1])
