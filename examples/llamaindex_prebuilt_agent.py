"""LlamaIndex's prebuilt ``AgentWorkflow`` gains long-term memory from one object, in one line.

The agent is built as usual; the change is ``memory=CommonplaceMemory.from_defaults(store,
user_id=...)`` in ``run``. What the user says becomes notes (the tool calls, the tool
results and the agent's answers stay in the session's short-term history only), and a
later session, with a new memory object for the same user, is given those notes as one
system message before the model is called.

    python examples/llamaindex_prebuilt_agent.py [path/to/memory.db]

The model is LlamaIndex's MockFunctionCallingLLM with a short script; any function-calling
LlamaIndex LLM takes its place unchanged.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.agent.workflow import AgentWorkflow
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.llms.mock import MockFunctionCallingLLM

from commonplace import Memory
from commonplace_llamaindex import CommonplaceMemory

SEEN: list[list[ChatMessage]] = []  # what the model was given, call by call


def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny and 24°C in {city}."


def scripted_model(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    """Stands in for a real model: look up the weather when asked about it, then answer."""
    SEEN.append(list(messages))
    asked = str(messages[-1].content or "")
    if kwargs.get("tools") and "weather" in asked and messages[-1].role is MessageRole.USER:
        call = ToolCallBlock(
            tool_call_id="call-1", tool_name="weather", tool_kwargs={"city": "Porto"}
        )
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[call])
    return ChatMessage(
        role=MessageRole.ASSISTANT, content="Lovely! My own cousin Ines lives there."
    )


async def main(db_path: str | Path) -> str:
    """Two sessions of one agent; returns the memory the model was given in the second."""
    agent = AgentWorkflow.from_tools_or_functions(
        [weather],
        llm=MockFunctionCallingLLM(response_generator=scripted_model),
        system_prompt="You are a friendly assistant.",
    )
    with Memory(f"sqlite:///{Path(db_path).resolve()}") as store:
        monday = CommonplaceMemory.from_defaults(store, user_id="ana")  # the one object
        await agent.run(user_msg="I just moved to Porto with my partner Joana.", memory=monday)

        friday = CommonplaceMemory.from_defaults(store, user_id="ana")
        SEEN.clear()
        await agent.run(user_msg="What's the weather like at home today?", memory=friday)
        system = [str(m.content) for m in SEEN[0] if m.role is MessageRole.SYSTEM]
        return "\n".join(system)


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "memory.db"
    print(asyncio.run(main(path)))
