"""A ReAct agent gains long-term memory by swapping its checkpointer.

The graph is the usual StateGraph + ToolNode agent. The only change is the
checkpointer: ``CommonplaceSaver(memory)`` instead of ``InMemorySaver()``. Every user
message now also lands in the memory, where the note writer keeps what is worth keeping;
the assistant's replies never become notes.

    python examples/langgraph/react_checkpointer.py
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
from commonplace_langgraph import CommonplaceSaver


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


def main(model: BaseChatModel | None = None, url: str = "sqlite:///example-memory.db") -> str:
    model = model or demo_model()
    with Memory(url) as memory, CommonplaceSaver(memory) as checkpointer:
        graph = build(model).compile(checkpointer=checkpointer)  # was: InMemorySaver()
        config = {"configurable": {"thread_id": "monday", "user_id": "ana"}}
        for text in ("I just moved to Porto with my partner Joana.", "What's the weather here?"):
            answer = graph.invoke({"messages": [HumanMessage(text)]}, config)
            print("assistant:", answer["messages"][-1].content)
        recall = memory.recall("where does the user live?", scope="ana")
        print(recall.render())
        return recall.render()


class ScriptedChatModel(GenericFakeChatModel):
    """Stands in for a real chat model (ChatOpenAI, ChatAnthropic ...) to run offline."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self


def demo_model() -> BaseChatModel:
    call = {"name": "get_weather", "args": {"city": "Porto"}, "id": "call-1", "type": "tool_call"}
    return ScriptedChatModel(
        messages=iter(
            [
                AIMessage("Welcome to Porto! I moved to Lisbon myself last year."),
                AIMessage("", tool_calls=[call]),
                AIMessage("It is sunny in Porto."),
            ]
        )
    )


if __name__ == "__main__":
    main()
