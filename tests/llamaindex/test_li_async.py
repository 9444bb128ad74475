"""The async paths are truly async: concurrent calls are in flight at the same time.

The store's embedder holds every call at a barrier until ``n`` calls wait there
together. Two concurrent ``aget`` (or ``aretrieve``, or block ``aget``) calls only
meet if neither blocks the event loop while the other is in flight; calls that were
serialised never meet, and the barrier breaks. No clock is read.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
from li_support import BarrierEmbedder
from llama_index.core.llms import ChatMessage
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from commonplace import ManualClock, Memory
from commonplace_llamaindex import CommonplaceMemory, CommonplaceMemoryBlock, CommonplaceRetriever

FACTS = [
    "I just moved to Porto with my partner Joana.",
    "I work as a night nurse at the children's hospital.",
    "My sister Rita teaches maths in Braga.",
    "I have a grumpy old cat called Miso.",
]


@pytest.fixture
def embedder() -> BarrierEmbedder:
    return BarrierEmbedder()


@pytest.fixture
def held(db_url: str, clock: ManualClock, embedder: BarrierEmbedder) -> Iterator[Memory]:
    """A store with enough notes to search, whose next embeddings wait at the barrier."""
    with Memory(db_url, clock=clock, embedder=embedder) as store:
        for user in ("ana", "bob"):
            for fact in FACTS:
                store.write(fact, scope={"user": user, "thread": "t0"})
        yield store


def test_concurrent_memory_gets_are_in_flight_together(
    held: Memory, embedder: BarrierEmbedder
) -> None:
    sessions = [
        CommonplaceMemory.from_defaults(
            held,
            user_id=user,
            session_id=user,
            chat_history=[ChatMessage(role="user", content="hi")],
        )
        for user in ("ana", "bob")
    ]
    embedder.arm(2)

    async def both() -> list[list[ChatMessage]]:
        return list(
            await asyncio.gather(
                sessions[0].aget(input="who is my partner?"),
                sessions[1].aget(input="where does my sister teach?"),
            )
        )

    ana, bob = asyncio.run(both())
    assert embedder.met == 2
    assert "Joana" in str(ana[0].content) and "Rita" in str(bob[0].content)


def test_concurrent_puts_write_in_worker_threads(held: Memory, embedder: BarrierEmbedder) -> None:
    sessions = [
        CommonplaceMemory.from_defaults(held, user_id=user, session_id="s")
        for user in ("ana", "bob")
    ]
    for session in sessions:
        session.put(ChatMessage(role="user", content="I adopted a greyhound called Bolt."))
    embedder.arm(2)  # the pending notes are embedded when the next messages arrive

    async def both() -> None:
        await asyncio.gather(
            *(s.aput(ChatMessage(role="assistant", content="Congratulations!")) for s in sessions)
        )

    asyncio.run(both())
    assert embedder.met == 2


def test_concurrent_retrievals_are_in_flight_together(
    held: Memory, embedder: BarrierEmbedder
) -> None:
    retriever = CommonplaceRetriever(held, scope="ana")
    embedder.arm(2)

    async def both() -> list[list[NodeWithScore]]:
        return list(await asyncio.gather(retriever.aretrieve("Joana"), retriever.aretrieve("Rita")))

    joana, rita = asyncio.run(both())
    assert embedder.met == 2
    assert "Joana" in joana[0].node.get_content() and "Rita" in rita[0].node.get_content()


def test_concurrent_block_gets_are_in_flight_together(
    held: Memory, embedder: BarrierEmbedder
) -> None:
    block = CommonplaceMemoryBlock(memory=held, user_id="ana")
    embedder.arm(2)

    async def both() -> list[str]:
        return list(
            await asyncio.gather(
                block.aget([ChatMessage(role="user", content="partner Joana")]),
                block.aget([ChatMessage(role="user", content="sister Rita")]),
            )
        )

    texts = asyncio.run(both())
    assert embedder.met == 2
    # one <memory> element: the one LlamaIndex's template puts around every block
    assert all(text and "<memory>" not in text for text in texts)


class BlockingRetriever(BaseRetriever):
    """LlamaIndex's default async path: ``_aretrieve`` calls ``_retrieve`` in the loop."""

    def __init__(self, store: Memory) -> None:
        self._store = store
        super().__init__()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        self._store.recall(query_bundle.query_str, scope="ana")
        return []


def test_the_barrier_catches_a_blocking_async_path(db_url: str, clock: ManualClock) -> None:
    """The control: a retriever that blocks the loop never gets two calls in flight."""
    embedder = BarrierEmbedder(timeout=0.5)
    with Memory(db_url, clock=clock, embedder=embedder) as store:
        for fact in FACTS:
            store.write(fact, scope="ana")
        retriever = BlockingRetriever(store)
        embedder.arm(2)

        async def both() -> None:
            await asyncio.gather(retriever.aretrieve("Joana"), retriever.aretrieve("Rita"))

        with pytest.raises(threading.BrokenBarrierError):
            asyncio.run(both())
    assert embedder.met == 0
