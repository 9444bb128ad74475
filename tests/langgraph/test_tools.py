"""remember / recall / forget in a ToolNode, with the runtime hidden from the model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.memory import InMemoryStore
from lg_helpers import ScriptedModel, assert_notes_only_from_users, note_texts, notes

from commonplace import Memory, Role, Scope
from commonplace.errors import InvalidInputError, InvalidScopeError
from commonplace_langgraph import CommonplaceSaver, CommonplaceStore, memory_tools

ANA: RunnableConfig = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
BOB: RunnableConfig = {"configurable": {"thread_id": "t2", "user_id": "bob"}}


def tool_graph(store: Any, saver: Any = None, **options: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(memory_tools(**options)))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    return builder.compile(store=store, checkpointer=saver)


def call(graph: Any, config: Any, name: str, **args: Any) -> str:
    message = AIMessage(
        "", tool_calls=[{"name": name, "args": args, "id": "c", "type": "tool_call"}]
    )
    out = graph.invoke({"messages": [message]}, config)
    return str(out["messages"][-1].content)


def test_the_runtime_is_hidden_from_the_schema() -> None:
    schemas = {t.name: cast(Any, t.tool_call_schema).model_json_schema() for t in memory_tools()}
    assert {name: set(s["properties"]) for name, s in schemas.items()} == {
        "remember": {"text"},
        "recall": {"query"},
        "forget": {"memory_id"},
    }
    assert all("runtime" not in str(s) for s in schemas.values())


def test_remember_recall_forget(store: CommonplaceStore, memory: Memory) -> None:
    memory.write("My sister Rita is a nurse.", scope=Scope(user="ana", thread="t0"))
    graph = tool_graph(store)
    saved = call(graph, ANA, "remember", text="Prefers answers in Portuguese")
    key = saved.split()[-1].rstrip(".")
    item = store.get(("memories", "ana"), key)
    assert item is not None and item.value["source"] == "assistant"
    # What the assistant saved is a memory whose evidence says a tool put it there.
    assert memory.count("note", scope="ana") == 2
    saved_note = next(r for r in notes(memory, "ana") if "Portuguese" in r.text)
    assert [e.role for e in memory.explain(saved_note.id).episodes()] == [Role.TOOL]
    assert_notes_only_from_users(memory, "ana")
    found = call(graph, ANA, "recall", query="Rita sister Portuguese")
    assert "Rita is a nurse" in found and "Prefers answers in Portuguese" in found
    assert "From the user's own messages:" in found and "Saved earlier by the assistant:" in found
    assert call(graph, ANA, "forget", memory_id=key) == f"Forgot {key}."
    assert store.get(("memories", "ana"), key) is None
    note_id = found.split("[")[1].split("]")[0]
    assert note_id.startswith("nt_")
    assert call(graph, ANA, "forget", memory_id=note_id).startswith(f"Forgot {note_id}")
    assert memory.count("note", scope="ana") == 0
    assert memory.count("episode", scope="ana") == 0  # forgotten with its evidence
    assert call(graph, ANA, "recall", query="Rita") == "Nothing remembered about that."
    assert "No memory" in call(graph, ANA, "forget", memory_id="nt_doesnotexist")


def test_tools_keep_users_apart(store: CommonplaceStore, memory: Memory) -> None:
    memory.write("My sister Rita is a nurse.", scope=Scope(user="ana", thread="t1"))
    graph = tool_graph(store)
    call(graph, ANA, "remember", text="Ana's locker code is 4411")
    ana = call(graph, ANA, "recall", query="Rita locker code")
    assert "Rita" in ana and "4411" in ana
    assert call(graph, BOB, "recall", query="Rita locker code") == "Nothing remembered about that."
    note_id = ana.split("[")[1].split("]")[0]
    saved_key = ana.split("[")[2].split("]")[0]
    assert "No memory" in call(graph, BOB, "forget", memory_id=note_id)
    assert "No memory" in call(graph, BOB, "forget", memory_id=saved_key)
    assert memory.count("note", scope="ana") == 2
    assert store.get(("memories", "ana"), saved_key) is not None


def test_tools_work_on_a_plain_langgraph_store() -> None:
    graph = tool_graph(InMemoryStore())
    key = call(graph, ANA, "remember", text="Likes green tea").split()[-1].rstrip(".")
    assert "Likes green tea" in call(graph, ANA, "recall", query="tea")
    assert call(graph, ANA, "forget", memory_id=key) == f"Forgot {key}."


def test_tools_need_a_user_and_real_input(store: CommonplaceStore) -> None:
    graph = tool_graph(store)
    anonymous = {"configurable": {"thread_id": "t3"}}
    with pytest.raises(InvalidScopeError, match="per user"):
        call(graph, anonymous, "remember", text="x")
    with pytest.raises(InvalidInputError, match="need a memory or a store"):
        call(tool_graph(None), ANA, "remember", text="x")
    assert "needs the text" in call(graph, ANA, "remember", text="   ")
    assert "at most" in call(graph, ANA, "remember", text="x" * 5000)
    assert "needs a query" in call(graph, ANA, "recall", query="")
    with pytest.raises(ValueError, match="top_k"):
        memory_tools(top_k=0)


def test_a_react_agent_using_the_tools_never_turns_its_words_into_notes(
    saver: CommonplaceSaver, store: CommonplaceStore, scripted: Callable[..., ScriptedModel]
) -> None:
    tools = memory_tools()
    remember = {
        "name": "remember",
        "args": {"text": "The user's brother Tom lives in Paris"},
        "id": "c1",
        "type": "tool_call",
    }
    model = scripted(AIMessage("", tool_calls=[remember]), "I will remember that Tom is in Paris.")

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.bind_tools(tools).invoke(state["messages"])]}

    from langgraph.prebuilt import tools_condition

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    graph = builder.compile(checkpointer=saver, store=store)
    graph.invoke({"messages": [HumanMessage("My brother is visiting next week.")]}, ANA)
    # the user's turn, and the fact the agent saved on purpose; never the agent's reply
    texts = note_texts(saver.memory, "ana")
    assert len(texts) == 2 and not any("I will remember" in t for t in texts)
    assert_notes_only_from_users(saver.memory, "ana")
    saved = store.search(("memories", "ana"), query="Tom Paris")
    assert saved[0].value["source"] == "assistant"
