"""The async methods of Memory: the sync method's arguments, results and errors, run in a
worker thread so that an event loop never waits on the store."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from commonplace import Config, HashingEmbedder, ManualClock, Memory, Scope
from commonplace.errors import InvalidInputError, NotFoundError, StoreClosedError

TWINS = [
    "write",
    "write_many",
    "recall",
    "feedback",
    "sleep",
    "consolidate",
    "forget",
    "forget_scope",
    "explain",
    "put_note",
]


@pytest.mark.parametrize("name", TWINS)
def test_each_twin_has_the_sync_signature(name: str) -> None:
    sync, twin = getattr(Memory, name), getattr(Memory, "a" + name)
    assert inspect.iscoroutinefunction(twin)
    assert inspect.signature(twin) == inspect.signature(sync)
    assert twin.__name__ == "a" + name and name in (twin.__doc__ or "")


def test_write_recall_feedback_and_forget(memory: Memory) -> None:
    async def run() -> None:
        result = await memory.awrite("I just moved to Porto with my partner Joana.", scope="ana")
        assert result.created and result.note is not None
        many = await memory.awrite_many(
            [
                memory.turn("My sister Rita is a nurse.", scope="ana"),
                memory.turn("I play the cello.", scope="ana"),
            ]
        )
        assert [r.created for r in many] == [True, True]
        recall = await memory.arecall("who does the user live with?", scope="ana")
        assert "Joana" in recall.render()
        sync = memory.recall("who does the user live with?", scope="ana")
        assert [i.record.id for i in recall.items] == [i.record.id for i in sync.items]
        feedback = await memory.afeedback(recall.id, reply="Joana must love Porto!")
        assert result.note is not None and result.note.id in feedback.used
        chain = await memory.aexplain(result.note.id)
        assert [e.text for e in chain.episodes()] == [
            "I just moved to Porto with my partner Joana."
        ]
        report = await memory.aforget(result.note.id, scope="ana")
        assert result.note.id in report.removed

    asyncio.run(run())
    assert memory.count("note", scope="ana") == 2


def test_the_lifecycle_and_forgetting_a_scope(memory: Memory, clock: ManualClock) -> None:
    for text in (
        "My sister Rita is a nurse.",
        "My sister Rita lives in Lisbon.",
        "My sister Rita has two kids.",
        "Rita, my sister, loves jazz.",
    ):
        memory.write(text, scope=Scope(user="ana", thread="t1"))
    clock.advance(days=3)

    async def run() -> None:
        report = await memory.asleep(scope="ana")
        assert not report.dry_run
        await memory.aconsolidate(scope="ana")
        counts = await memory.aforget_scope("ana")
        assert sum(counts.values()) > 0

    asyncio.run(run())
    assert memory.count("note", scope="ana") == 0


def test_errors_are_the_sync_errors(memory: Memory) -> None:
    async def run() -> None:
        with pytest.raises(InvalidInputError, match="empty"):
            await memory.awrite("   ", scope="ana")
        with pytest.raises(NotFoundError):
            await memory.afeedback("rc_nothing", used=[])
        with pytest.raises(InvalidInputError, match="top_k"):
            await memory.arecall("x", scope="ana", top_k=0)

    asyncio.run(run())
    memory.close()
    with pytest.raises(StoreClosedError):
        asyncio.run(memory.arecall("anything", scope="ana"))


class Rendezvous:
    """The offline embedder, whose calls wait until ``parties`` of them run together."""

    name = "test-rendezvous-hashing-256"
    dim = 256

    def __init__(self, parties: int) -> None:
        self._inner = HashingEmbedder()
        self.barrier: threading.Barrier | None = None
        self.parties = parties

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        if self.barrier is not None:
            self.barrier.wait()  # BrokenBarrierError if the calls were serialised
        return self._inner.embed(texts)


def test_the_event_loop_is_free_while_the_store_works(db_url: str, clock: ManualClock) -> None:
    embedder = Rendezvous(parties=2)
    with Memory(db_url, clock=clock, embedder=embedder, config=Config(search_min_notes=0)) as m:
        m.write("My sister Rita is a nurse.", scope="ana")
        m.write("I play the cello.", scope="bob")
        embedder.barrier = threading.Barrier(2, timeout=20)

        async def both() -> list[Any]:
            return list(
                await asyncio.gather(
                    m.arecall("sister", scope="ana"), m.arecall("music", scope="bob")
                )
            )

        ana, bob = asyncio.run(both())
        embedder.barrier = None
    assert "Rita" in ana.render() and "cello" in bob.render()


def test_put_note_async(memory: Memory) -> None:
    note = asyncio.run(memory.aput_note("Ana prefers short answers.", scope="ana", key="k1"))
    assert memory.explain(note.id).episodes()[0].text == "Ana prefers short answers."
