"""A LlamaIndex FunctionAgent with commonplace as its memory.

The agent calls a tool and answers; the user's message becomes a note, while the tool
call, the tool's output and the answer stay in the session's short-term history only.
A second session recalls what the user said in the first.

    python examples/llamaindex_agent.py [path/to/memory.db]

The model is LlamaIndex's MockFunctionCallingLLM with a two-line script; any
function-calling LlamaIndex LLM takes its place unchanged.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.llms.mock import MockFunctionCallingLLM

from commonplace import Memory
from commonplace_llamaindex import CommonplaceMemory


def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny and 24°C in {city}."


def scripted_model(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    """Stands in for a real model: look up the weather once, then answer."""
    if kwargs.get("tools") and messages[-1].role is not MessageRole.TOOL:
        call = ToolCallBlock(
            tool_call_id="call-1", tool_name="weather", tool_kwargs={"city": "Porto"}
        )
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[call])
    memory = next((m.content for m in messages if "<memory>" in str(m.content)), "")
    return ChatMessage(role=MessageRole.ASSISTANT, content=f"It's sunny. I remember:\n{memory}")


async def main(db_path: str | Path) -> str:
    """Two sessions with one agent; returns the agent's last answer."""
    agent = FunctionAgent(
        llm=MockFunctionCallingLLM(response_generator=scripted_model),
        tools=[weather],
        system_prompt="You are a friendly assistant.",
    )
    with Memory(f"sqlite:///{Path(db_path).resolve()}") as store:
        first = CommonplaceMemory.from_defaults(store, user_id="ana", session_id="first")
        await agent.run(user_msg="I just moved to Porto with my partner Joana.", memory=first)

        second = CommonplaceMemory.from_defaults(store, user_id="ana", session_id="second")
        answer = await agent.run(user_msg="Is it a good day for a walk in Porto?", memory=second)
        return str(answer)


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "memory.db"
    print(asyncio.run(main(path)))
