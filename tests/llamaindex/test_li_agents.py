"""Real LlamaIndex agents (FunctionAgent, AgentWorkflow) with CommonplaceMemory.

The model is LlamaIndex's ``MockFunctionCallingLLM`` with a scripted reply function:
it calls the weather tool once per user turn, then answers with text that names
people and places the user never mentioned, which must never become notes.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Sequence
from typing import Any

from li_support import assert_firewall, notes_of
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.workflow import Context, JsonSerializer
from workflows.context.state_store import UnserializableKeyWarning

from commonplace import Memory
from commonplace_llamaindex import CommonplaceMemory

FACTS = [
    "I just moved to Porto with my partner Joana.",
    "I work as a night nurse at the children's hospital.",
    "My sister Rita teaches maths in Braga.",
    "I have a grumpy old cat called Miso.",
]
ANSWER = "Sunny! Your brother Tom the pilot flies over Faro today."


class ScriptedModel:
    """The provider edge: records what the agent sent, calls a tool, then answers."""

    def __init__(self) -> None:
        self.calls: list[list[ChatMessage]] = []

    def __call__(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        self.calls.append(list(messages))
        last_user = max(i for i, m in enumerate(messages) if m.role is MessageRole.USER)
        answered = any(m.role is MessageRole.TOOL for m in messages[last_user:])
        if kwargs.get("tools") and not answered:
            call = ToolCallBlock(
                tool_call_id=f"call-{len(self.calls)}",
                tool_name="weather",
                tool_kwargs={"city": "Porto"},
            )
            return ChatMessage(role=MessageRole.ASSISTANT, blocks=[call])
        return ChatMessage(role=MessageRole.ASSISTANT, content=ANSWER)

    def memory_seen(self, call: int) -> str:
        system = [m for m in self.calls[call] if m.role is MessageRole.SYSTEM]
        return "\n".join(str(m.content) for m in system)


def weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}; the pilot Tom reports clear skies over Faro."


def seeded(store: Memory) -> None:
    earlier = CommonplaceMemory.from_defaults(store, user_id="ana", session_id="earlier")
    earlier.put_messages([ChatMessage(role="user", content=f) for f in FACTS])
    earlier.flush()


def agent_with(model: ScriptedModel) -> FunctionAgent:
    return FunctionAgent(
        name="helper",
        description="Answers questions about the user's day.",
        llm=MockFunctionCallingLLM(response_generator=model),
        tools=[weather],
        system_prompt="You are a helpful assistant.",
    )


def test_function_agent_sees_the_memory_and_its_loop_stays_out_of_the_notes(
    store: Memory,
) -> None:
    seeded(store)
    model = ScriptedModel()
    agent = agent_with(model)
    memory = CommonplaceMemory.from_defaults(store, user_id="ana", session_id="today")

    async def ask() -> object:
        return await agent.run(user_msg="Will it be sunny in the city I moved to?", memory=memory)

    answer = asyncio.run(ask())

    assert str(answer) == ANSWER
    assert len(model.calls) == 2  # the tool call, then the answer
    for call in range(2):
        assert "Porto with the user's partner Joana" in model.memory_seen(call)
    roles = [m.role for m in memory.get_all()]
    assert roles == [
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
    ]
    assert len(notes_of(store, "ana")) == len(FACTS) + 1  # the question; nothing else
    assert_firewall(store, "ana", forbidden=["Tom", "pilot", "Faro", "skies"])


def test_agent_workflow_takes_the_memory_in_run(store: Memory) -> None:
    seeded(store)
    model = ScriptedModel()
    workflow = AgentWorkflow(agents=[agent_with(model)], root_agent="helper")
    memory = CommonplaceMemory.from_defaults(store, user_id="ana", session_id="today")

    async def two_turns() -> None:
        await workflow.run(user_msg="Is it sunny in the city I moved to?", memory=memory)
        await workflow.run(user_msg="What about where my sister Rita teaches?", memory=memory)

    asyncio.run(two_turns())

    assert "partner Joana" in model.memory_seen(0)
    assert "Rita teaches maths in Braga" in model.memory_seen(len(model.calls) - 1)
    assert [m.role for m in memory.get_all()].count(MessageRole.USER) == 2
    assert len(notes_of(store, "ana")) == len(FACTS) + 2
    assert_firewall(store, "ana", forbidden=["Tom", "pilot", "Faro", "skies"])


def test_the_memory_survives_the_agent_context_through_json(db_url: str, store: Memory) -> None:
    seeded(store)
    model = ScriptedModel()
    agent = agent_with(model)
    memory = CommonplaceMemory.from_defaults(url=db_url, user_id="ana", session_id="today")

    async def before_and_after() -> CommonplaceMemory:
        ctx = Context(agent)
        await agent.run(user_msg="Will it be sunny in the city I moved to?", memory=memory, ctx=ctx)
        with warnings.catch_warnings():
            # the workflow drops a memory it cannot serialise, with only this warning
            warnings.simplefilter("error", UnserializableKeyWarning)
            data = ctx.to_dict(serializer=JsonSerializer())
        payload = json.loads(json.dumps(data))  # plain JSON, e.g. stored in a database
        assert "Tom the pilot" in json.dumps(payload)  # the history went along
        restored = Context.from_dict(agent, payload, serializer=JsonSerializer())
        await agent.run(user_msg="And where does my sister teach?", ctx=restored)
        found = await restored.store.get("memory")
        assert isinstance(found, CommonplaceMemory)
        return found

    try:
        again = asyncio.run(before_and_after())
        assert again is not memory and again.session_id == "today" and again.url == db_url
        history = again.get_all()
        assert [m.role for m in history].count(MessageRole.USER) == 2
        assert history[0].content == "Will it be sunny in the city I moved to?"
        assert "Rita teaches maths in Braga" in model.memory_seen(len(model.calls) - 1)
        assert len(notes_of(store, "ana")) == len(FACTS) + 2
        assert_firewall(store, "ana", forbidden=["Tom", "pilot", "Faro", "skies"])
    finally:
        memory.close()
        if "again" in locals():
            again.close()
