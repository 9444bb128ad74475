"""`commonplace reembed` on a real Weaviate server: killed mid-way, finished by a second run.

Weaviate has no transactions: the new vectors go into a named vector of their own, each
record staged is tagged, and the pin (with the name of the live vector) switches in one
schema update at the end, so a killed run leaves a store that works with its old model.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone

import numpy as np
import pytest

from commonplace import HashingEmbedder, Kind, ManualClock, Memory, Record, Status
from commonplace.embedders import embedding_text
from commonplace.embedders._protocol import embed_checked
from commonplace.errors import EmbedderMismatchError
from commonplace.stores import EmbedderPin, RecordQuery, Store
from commonplace.stores._embedder import own_evidence
from commonplace_weaviate import WeaviateBackend

pytestmark = pytest.mark.weaviate
OLD, NEW = HashingEmbedder(dim=64), HashingEmbedder(dim=128)
ALL = RecordQuery(kinds=(Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE), statuses=tuple(Status))
JOANA = (
    "My sister Joana is a nurse in Porto.",
    "Joana loves climbing on weekends.",
    "Joana has a cat called Mia.",
    "Joana plays bass in a band.",
)
WORDS = "tea coffee jazz rock chess surfing climbing painting cycling baking".split()


def hobby_turn(i: int) -> str:
    return f"I enjoy {WORDS[i % 10]} and {WORDS[(i // 10) % 10]} on day {i}, plan {i}."


def texts_of(store: Store, records: Sequence[Record]) -> list[str]:
    return [embedding_text(r, evidence=own_evidence(store, r)) for r in records]


def assert_found_with(memory: Memory, model: HashingEmbedder, query: str, rid: str) -> None:
    """``rid`` is among the recall's items, with the cosine ``model`` gives it: the vectors
    the store searches are that model's."""
    items = memory.recall(query, scope="user1", top_k=20).items
    hit = next((i for i in items if i.record.id == rid), None)
    assert hit is not None, f"{rid} not recalled for {query!r}"
    want = float(model.embed([query])[0] @ model.embed(texts_of(memory.store, [hit.record]))[0])
    assert hit.score.cosine == pytest.approx(want, abs=1e-4)


@pytest.fixture
def url(weaviate_backend_factory: Callable[[], WeaviateBackend]) -> str:
    return weaviate_backend_factory().url


def test_a_weaviate_store_reembedded_through_a_sigkill_is_finished_by_the_next_run(
    url: str,
) -> None:
    clock = ManualClock(datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc))
    with Memory(url, embedder=OLD, clock=clock) as memory:
        for start in range(0, 600, 200):
            memory.write_many(
                [
                    memory.turn(hobby_turn(i), scope=f"user{i % 3}")
                    for i in range(start, start + 200)
                ]
            )
        for line in JOANA:
            clock.advance(days=1)
            memory.write(line, scope="ana")
        clock.advance(days=2)
        memory.consolidate(scope="ana")
        total = sum(1 for _ in memory.backend.iter_records(ALL))
        assert total > 600 and memory.count(Kind.SUMMARY) == 1
        before = memory.recall("chess and tea on day 40", scope="user1").items[0].record
    command = [sys.executable, "-m", "commonplace", "reembed", "--to", NEW.name, url]
    child = subprocess.Popen([*command, "--batch", "10"], stderr=subprocess.PIPE)
    watcher = WeaviateBackend(url)
    try:
        seen = 0
        deadline = time.monotonic() + 300
        while seen < 150:
            assert child.poll() is None, "the re-embed ended before it could be killed"
            assert time.monotonic() < deadline, "the re-embed made no progress"
            state = watcher.reembed_state()
            seen = 0 if state is None else state.staged
        child.send_signal(signal.SIGKILL)
        child.wait(60)
        assert child.returncode == -signal.SIGKILL
        state = watcher.reembed_state()
        assert state is not None and state.target == EmbedderPin(NEW.name, NEW.dim)
        assert seen <= state.staged < total and state.staged + state.pending == total
        assert watcher.read_pin() == EmbedderPin(OLD.name, OLD.dim)
    finally:
        watcher.close()
        if child.poll() is None:
            child.kill()
            child.wait(60)
        assert child.stderr is not None
        child.stderr.close()
    with Memory(url) as memory:  # still the old model, still recalls
        assert memory.embedder.name == OLD.name
        assert_found_with(memory, OLD, "chess and tea on day 40", before.id)
    with pytest.raises(EmbedderMismatchError, match="not finished") as refused:
        Memory(url, embedder=NEW)
    assert f"`commonplace reembed --to {NEW.name} '{url}'`" in str(refused.value)
    done = subprocess.run([*command, "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["records"] == total and report["resumed"] >= seen
    assert report["resumed"] + report["embedded"] == total
    with Memory(url) as memory:  # pinned to the new model, every vector from it
        assert memory.embedder.name == NEW.name
        assert memory.backend.reembed_state() is None
        records = list(memory.backend.iter_records(ALL))
        assert len(records) == total
        np.testing.assert_allclose(
            memory.backend.get_vectors([r.id for r in records]),
            embed_checked(NEW, texts_of(memory.store, records)),
            atol=1e-5,
        )
        assert_found_with(memory, NEW, "chess and tea on day 40", before.id)
        memory.write("I enjoy tango on day 9999, plan 9999.", scope="user1")  # new dimension
        assert "tango" in memory.recall("tango on day 9999", scope="user1").items[0].record.text
    with pytest.raises(EmbedderMismatchError, match="pinned to the embedder"):
        Memory(url, embedder=OLD)
