"""Helpers shared by the LlamaIndex adapter's tests (imported as ``li_support``)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator, Sequence
from typing import Any

import numpy as np

from commonplace import Episode, HashingEmbedder, Kind, Memory, Role, Scope


class BarrierEmbedder:
    """The offline embedder, with a rendezvous that proves calls run at the same time.

    Once ``arm(n)`` is called, each ``embed`` waits until ``n`` calls are waiting
    together. Calls that were serialised (one blocking the event loop, or holding a
    lock) never meet, and the barrier breaks after ``timeout`` seconds.
    """

    def __init__(self, *, timeout: float = 20.0) -> None:
        self._inner = HashingEmbedder()
        self._timeout = timeout
        self._barrier: threading.Barrier | None = None
        self.met = 0

    @property
    def name(self) -> str:
        return "test-barrier-hashing-256"

    @property
    def dim(self) -> int:
        return self._inner.dim

    def arm(self, parties: int) -> None:
        self._barrier = threading.Barrier(parties, timeout=self._timeout)

    def disarm(self) -> None:
        self._barrier = None

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        barrier = self._barrier
        if barrier is not None:
            barrier.wait()  # raises BrokenBarrierError if the others never come
            self.met += 1
        return self._inner.embed(texts)


def notes_of(store: Memory, scope: Scope | str) -> list[Any]:
    """Every active note visible in ``scope`` (newest first)."""
    query = Scope(user=scope) if isinstance(scope, str) else scope
    return list(store.store.recent_records(query, kinds=(Kind.NOTE,), limit=10_000))


def evidence_of(store: Memory, record_id: str) -> list[Episode]:
    return store.explain(record_id).episodes()


def assert_firewall(store: Memory, scope: Scope | str, *, forbidden: Sequence[str]) -> None:
    """No note in ``scope`` came from anything but a user turn, or mentions ``forbidden``."""
    for note in notes_of(store, scope):
        for episode in evidence_of(store, note.id):
            assert episode.role is Role.USER, (note.text, episode)
        for marker in forbidden:
            assert marker.lower() not in note.text.lower(), note.text


class ScriptedLLM:
    """Builds a LlamaIndex ``CustomLLM`` that answers from a script and records its prompts.

    The edge of the world for the note-writer tests: it stands where a provider would.
    """

    @staticmethod
    def make(*replies: str) -> Any:
        from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
        from llama_index.core.llms.callbacks import llm_completion_callback

        class _Scripted(CustomLLM):
            replies: list[str]
            prompts: list[str]

            @property
            def metadata(self) -> LLMMetadata:
                return LLMMetadata(model_name="scripted")

            @llm_completion_callback()
            def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
                self.prompts.append(prompt)
                return CompletionResponse(text=self.replies.pop(0))

            @llm_completion_callback()
            def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
                raise NotImplementedError

        return _Scripted(replies=list(replies), prompts=[])


def counting_llm() -> Any:
    """LlamaIndex's ``MockLLM`` (it echoes its prompt), recording every completion prompt."""
    from llama_index.core.bridge.pydantic import Field
    from llama_index.core.llms import MockLLM

    class _Counting(MockLLM):
        prompts: list[str] = Field(default_factory=list)

        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            self.prompts.append(prompt)
            return super().complete(prompt, formatted, **kwargs)  # acomplete comes here too

    return _Counting(max_tokens=None)


def message_texts(messages: Sequence[Any]) -> list[str]:
    return [str(m.content or "") for m in messages]


@contextlib.asynccontextmanager
async def llama_memory(blocks: Sequence[Any], **options: Any) -> AsyncIterator[Any]:
    """LlamaIndex's ``Memory`` on a chat store whose engine is disposed of at the end.

    ``Memory`` keeps its short-term queue in SQLite through aiosqlite; left to the
    garbage collector, its connection warns that it was never closed.
    """
    from llama_index.core.memory import Memory as LlamaMemory
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine("sqlite+aiosqlite:///:memory:")
    try:
        yield LlamaMemory.from_defaults(memory_blocks=list(blocks), async_engine=engine, **options)
    finally:
        await engine.dispose()
