"""One graph, one memory file, many users: each sees only their own memories.

The user comes from ``config["configurable"]["user_id"]``; the checkpointer writes each
user's messages to their own scope, and the recall node reads only that scope, in any
of the user's threads.

    python examples/langgraph/multi_user.py
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from commonplace import Memory
from commonplace_langgraph import MEMORY_MESSAGE_ID, CommonplaceSaver, add_memory_nodes


def build(model: BaseChatModel) -> StateGraph[Any, Any, Any, Any]:
    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    return builder


def main(
    model: BaseChatModel | None = None, url: str = "sqlite:///example-memory.db"
) -> dict[str, str]:
    model = model or demo_model()
    seen: dict[str, str] = {}
    with Memory(url) as memory, CommonplaceSaver(memory) as checkpointer:
        builder = add_memory_nodes(build(model), memory, before="chat")
        graph = builder.compile(checkpointer=checkpointer)
        facts = {"ana": "My sister Rita is a nurse.", "bob": "My brother Tom is a pilot."}
        for user, fact in facts.items():
            config = {"configurable": {"thread_id": f"{user}-1", "user_id": user}}
            graph.invoke({"messages": [HumanMessage(fact)]}, config)
        for user in facts:
            config = {"configurable": {"thread_id": f"{user}-2", "user_id": user}}
            state = graph.invoke(
                {"messages": [HumanMessage("What do you know about my family?")]}, config
            )
            block = next((m.content for m in state["messages"] if m.id == MEMORY_MESSAGE_ID), "")
            seen[user] = str(block)
            print(f"--- what the model saw for {user}:\n{block}")
    return seen


class ScriptedChatModel(GenericFakeChatModel):
    """Stands in for a real chat model (ChatOpenAI, ChatAnthropic ...) to run offline."""


def demo_model() -> BaseChatModel:
    return ScriptedChatModel(
        messages=iter([AIMessage("Noted.")] * 2 + [AIMessage("From memory: ...")] * 2)
    )


if __name__ == "__main__":
    main()
