"""commonplace as a long-term block of LlamaIndex's own ``Memory`` class.

``Memory`` keeps a short-term queue; when it overflows, the oldest messages are flushed
to its blocks. CommonplaceMemoryBlock turns the user's flushed messages into notes (the
assistant's are dropped) and, on every ``get``, contributes the compiled memory to the
system message, next to any other block.

    python examples/llamaindex_memory_block.py [path/to/memory.db]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from llama_index.core.llms import ChatMessage
from llama_index.core.memory import Memory as LlamaMemory
from llama_index.core.memory import StaticMemoryBlock
from sqlalchemy.ext.asyncio import create_async_engine

from commonplace import Memory
from commonplace_llamaindex import CommonplaceMemoryBlock

CONVERSATION = [
    ("I just moved to Porto with my partner Joana.", "How exciting, welcome to Porto!"),
    ("I work as a night nurse at the children's hospital.", "That must be demanding."),
    ("My sister Rita teaches maths in Braga.", "Braga is close by, lovely."),
    ("I have a grumpy old cat called Miso.", "Give Miso a scratch from me."),
]


async def main(db_path: str | Path) -> str:
    """A conversation that overflows the queue, then a question; returns the system message."""
    with Memory(f"sqlite:///{Path(db_path).resolve()}") as store:
        blocks = [
            StaticMemoryBlock(name="persona", static_content="You are Ana's assistant."),
            CommonplaceMemoryBlock(memory=store, user_id="ana", priority=1),
        ]
        # Memory keeps its queue in SQLite through SQLAlchemy; owning the engine lets the
        # example close it cleanly.
        engine = create_async_engine("sqlite+aiosqlite:///:memory:")
        try:
            memory = LlamaMemory.from_defaults(
                session_id="ana-today",
                token_limit=300,
                chat_history_token_ratio=0.15,  # a short queue: old turns flush early
                token_flush_size=40,
                memory_blocks=blocks,
                async_engine=engine,
            )
            for said, answered in CONVERSATION:
                await memory.aput(ChatMessage(role="user", content=said))
                await memory.aput(ChatMessage(role="assistant", content=answered))
            messages = await memory.aget(input="Where did Joana and I move to?")
        finally:
            await engine.dispose()
        return str(messages[0].content)


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "memory.db"
    print(asyncio.run(main(path)))
