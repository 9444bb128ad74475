"""CommonplaceStore where LangGraph hands stores out: compile(store=...), get_store(),
InjectedStore tools and the Runtime."""

from __future__ import annotations

from typing import Annotated, Any, cast

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.config import get_store
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, ToolNode
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from commonplace_langgraph import CommonplaceSaver, CommonplaceStore


def test_nodes_reach_the_store_by_get_store_and_runtime(
    saver: CommonplaceSaver, store: CommonplaceStore
) -> None:
    def write(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        user = config["configurable"]["user_id"]
        get_store().put(("memories", user), "last", {"text": state["messages"][-1].content})
        return {}

    def read(
        state: MessagesState, config: RunnableConfig, runtime: Runtime[None]
    ) -> dict[str, Any]:
        assert runtime.store is not None
        user = config["configurable"]["user_id"]
        hits = runtime.store.search(("memories", user), query="tea")
        return {"messages": [AIMessage(f"{len(hits)}:{hits[0].value['text']}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("write", write)
    builder.add_node("read", cast(Any, read))
    builder.add_edge(START, "write")
    builder.add_edge("write", "read")
    builder.add_edge("read", END)
    graph = builder.compile(checkpointer=saver, store=store)
    out = graph.invoke(
        {"messages": [HumanMessage("I drink green tea")]},
        {"configurable": {"thread_id": "t1", "user_id": "ana"}},
    )
    assert out["messages"][-1].content == "1:I drink green tea"
    item = store.get(("memories", "ana"), "last")
    assert item is not None


def test_an_injected_store_tool_in_a_tool_node(store: CommonplaceStore) -> None:
    @tool
    def save_colour(colour: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
        """Save the user's favourite colour."""
        store.put(("prefs",), "colour", {"colour": colour})
        return "saved"

    assert set(cast(Any, save_colour.tool_call_schema).model_json_schema()["properties"]) == {
        "colour"
    }
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([save_colour]))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    graph = builder.compile(store=store)
    call = {"name": "save_colour", "args": {"colour": "teal"}, "id": "c1", "type": "tool_call"}
    out = graph.invoke({"messages": [AIMessage("", tool_calls=[call])]})
    assert out["messages"][-1].content == "saved"
    item = store.get(("prefs",), "colour")
    assert item is not None and item.value == {"colour": "teal"}
