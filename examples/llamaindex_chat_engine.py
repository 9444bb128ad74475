"""A LlamaIndex chat engine whose memory carries over to the user's next session.

Monday's conversation leaves notes, not a transcript; on Tuesday a fresh session (a new
process, even) starts with an empty history, and the model is handed what it needs to
know about the user as one compiled system message.

    python examples/llamaindex_chat_engine.py [path/to/memory.db]

MockLLM answers by echoing its prompt, so what it prints is what a real model would be
shown; swap in any LlamaIndex LLM (``OpenAI(model=...)``, ``Ollama(...)``) to chat.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import MockLLM

from commonplace import Memory
from commonplace_llamaindex import CommonplaceMemory

MONDAY = [
    "I just moved to Porto with my partner Joana.",
    "ok",
    "I work as a night nurse at the children's hospital.",
    "My sister Rita teaches maths in Braga.",
]


def main(db_path: str | Path) -> str:
    """Two sessions on one store; returns the memory the model was shown on Tuesday."""
    url = f"sqlite:///{Path(db_path).resolve()}"

    with Memory(url) as store:  # Monday
        memory = CommonplaceMemory.from_defaults(store, user_id="ana", session_id="monday")
        engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=memory)
        for message in MONDAY:
            engine.chat(message)

    with Memory(url) as store:  # Tuesday: a new session, an empty history
        memory = CommonplaceMemory.from_defaults(store, user_id="ana", session_id="tuesday")
        engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=memory)
        reply = engine.chat("Any idea what my partner and I could do in town this weekend?")
        # MockLLM echoes its prompt: the part before the user's message is the memory.
        return reply.response.split("user: Any idea")[0].strip()


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "memory.db"
    print(main(path))
