"""The same agent with the prebuilt memory nodes: the model now reads its memory.

``add_memory_nodes`` puts a recall node before the agent (the compiled memory arrives as
one system message) and a note-writing node after it, without touching the agent's own
nodes or its tool loop.

    python examples/langgraph/prebuilt_nodes.py
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from commonplace import Memory
from commonplace_langgraph import CommonplaceSaver, add_memory_nodes


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"It is sunny in {city}."


TOOLS = [get_weather]


def build(model: BaseChatModel) -> StateGraph[Any, Any, Any, Any]:
    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.bind_tools(TOOLS).invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(TOOLS))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder


def main(model: BaseChatModel | None = None, url: str = "sqlite:///example-memory.db") -> list[Any]:
    model = model or demo_model()
    with Memory(url) as memory, CommonplaceSaver(memory) as checkpointer:
        builder = add_memory_nodes(build(model), memory, before="agent", after="agent")
        graph = builder.compile(checkpointer=checkpointer)
        monday = {"configurable": {"thread_id": "monday", "user_id": "ana"}}
        graph.invoke({"messages": [HumanMessage("My sister Rita is a nurse in Lisbon.")]}, monday)
        # A new conversation days later: the agent is reminded of Rita before it answers.
        friday = {"configurable": {"thread_id": "friday", "user_id": "ana"}}
        answer = graph.invoke(
            {"messages": [HumanMessage("What's the weather where Rita lives?")]}, friday
        )
        for message in answer["messages"]:
            print(f"{message.type}: {message.content}")
        return list(answer["messages"])


class ScriptedChatModel(GenericFakeChatModel):
    """Stands in for a real chat model (ChatOpenAI, ChatAnthropic ...) to run offline."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self


def demo_model() -> BaseChatModel:
    call = {"name": "get_weather", "args": {"city": "Lisbon"}, "id": "call-1", "type": "tool_call"}
    return ScriptedChatModel(
        messages=iter(
            [
                AIMessage("Noted: Rita is a nurse in Lisbon."),
                AIMessage("", tool_calls=[call]),
                AIMessage("It is sunny in Lisbon, where Rita lives."),
            ]
        )
    )


if __name__ == "__main__":
    main()
