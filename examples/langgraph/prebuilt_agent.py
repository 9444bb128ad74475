"""LangChain's prebuilt ``create_agent`` gains long-term memory from one object, in one line.

``middleware=[CommonplaceMiddleware(memory)]`` is the whole change. Before each model call
the agent's system prompt gets the user's compiled memory (once per turn, however many
model calls the tool loop makes); after the turn, what the user said is written to memory,
where the note writer keeps what is worth keeping. The assistant's replies never become
notes, and the question being answered is never recalled as its own memory. The user is
named the LangGraph 1.x way, by the run's context.

    python examples/langgraph/prebuilt_agent.py
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool

from commonplace import Memory
from commonplace_langgraph import CommonplaceMiddleware, CommonplaceSaver


@dataclass
class Context:
    user_id: str


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"It is sunny in {city}."


def main(model: BaseChatModel | None = None, url: str = "sqlite:///example-memory.db") -> str:
    model = model or demo_model()
    with Memory(url) as memory, CommonplaceSaver(memory) as checkpointer:
        agent = create_agent(
            model,
            tools=[get_weather],
            system_prompt="You are a friendly assistant.",
            checkpointer=checkpointer,
            context_schema=Context,
            middleware=[CommonplaceMiddleware(memory)],  # the one line
        )
        ana = Context(user_id="ana")
        monday: RunnableConfig = {"configurable": {"thread_id": "monday"}}
        agent.invoke(
            {"messages": [HumanMessage("I just moved to Porto with my partner Joana.")]},
            monday,
            context=ana,
        )
        # A new conversation, days later: the agent remembers where Ana lives.
        friday: RunnableConfig = {"configurable": {"thread_id": "friday"}}
        answer = agent.invoke(
            {"messages": [HumanMessage("What's the weather at home?")]}, friday, context=ana
        )
        print("assistant:", answer["messages"][-1].content)
        rendered = memory.recall("where does the user live?", scope="ana").render()
        print(rendered)
        return rendered


class ScriptedChatModel(GenericFakeChatModel):
    """Stands in for a real chat model (ChatOpenAI, ChatAnthropic ...) to run offline."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self


def demo_model() -> BaseChatModel:
    call = {"name": "get_weather", "args": {"city": "Porto"}, "id": "call-1", "type": "tool_call"}
    return ScriptedChatModel(
        messages=iter(
            [
                AIMessage("Welcome to Porto! My own partner, Marta, lives in Madrid."),
                AIMessage("", tool_calls=[call]),
                AIMessage("It is sunny in Porto."),
            ]
        )
    )


if __name__ == "__main__":
    main()
