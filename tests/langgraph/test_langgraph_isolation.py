"""Two users' threads never see each other's memories, whatever path wrote them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph
from lg_helpers import ScriptedModel, note_texts

from commonplace import Scope
from commonplace_langgraph import (
    MEMORY_MESSAGE_ID,
    CommonplaceSaver,
    CommonplaceStore,
    add_memory_nodes,
)

ANA: RunnableConfig = {"configurable": {"thread_id": "ana-1", "user_id": "ana"}}
ANA_LATER: RunnableConfig = {"configurable": {"thread_id": "ana-2", "user_id": "ana"}}
BOB: RunnableConfig = {"configurable": {"thread_id": "bob-1", "user_id": "bob"}}


def test_users_share_a_file_but_not_a_memory(
    saver: CommonplaceSaver, store: CommonplaceStore, scripted: Callable[..., ScriptedModel]
) -> None:
    model = scripted(*["Got it."] * 10)

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_edge(START, "model")
    add_memory_nodes(builder, saver.memory, before="model")
    graph = builder.compile(checkpointer=saver, store=store)

    graph.invoke({"messages": [HumanMessage("My sister Rita is a nurse in Lisbon.")]}, ANA)
    graph.invoke({"messages": [HumanMessage("My brother Tom is a pilot in Oslo.")]}, BOB)
    # Ana, in a new thread, is reminded of her sister and never of Bob's brother.
    graph.invoke({"messages": [HumanMessage("What does my sister Rita do?")]}, ANA_LATER)
    ana_view = [m for m in model.seen[-1] if m.id == MEMORY_MESSAGE_ID]
    assert len(ana_view) == 1
    assert "Rita" in ana_view[0].content and "Tom" not in ana_view[0].content
    # Bob asks about a sister he never mentioned: he gets his own memory only.
    graph.invoke({"messages": [HumanMessage("Does my sister Rita live in Lisbon?")]}, BOB)
    bob_view = [m for m in model.seen[-1] if m.id == MEMORY_MESSAGE_ID]
    assert all("nurse" not in m.content for m in bob_view)
    assert not any("Tom" in n for n in note_texts(saver.memory, "ana"))
    assert not any("nurse" in n for n in note_texts(saver.memory, "bob"))
    assert saver.memory.count("note", scope=Scope(user="ana", thread="bob-1")) == 0
    # Store namespaces follow the same split: the store is a view of the same memory.
    store.put(store.namespace_for(Scope(user="ana")), "k", {"text": "Ana's locker is 12"})
    bob_items = store.search(store.namespace_for(Scope(user="bob")), query="locker")
    assert all("locker" not in str(i.value) and "nurse" not in str(i.value) for i in bob_items)
    ana_items = store.search(store.namespace_for(Scope(user="ana")), query="locker")
    assert ana_items[0].key == "k"
    assert all(i.namespace[:2] == ("memories", "ana") for i in ana_items)
    assert not any("Tom" in str(i.value) for i in ana_items)
