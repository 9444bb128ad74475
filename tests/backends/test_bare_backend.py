"""A backend with the sixteen required members and nothing else passes the required part
of the conformance suite and runs a whole Memory: what the optional capabilities add is
only speed (nearest, reads asked together, a recall's log written with its accesses), co-use
links and re-embedding in place, and without them the core falls back or says what to do
instead."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from commonplace import HashingEmbedder, Memory
from commonplace.embedders import embed_checked, embedding_text
from commonplace.errors import UnsupportedError
from commonplace.stores import (
    Backend,
    LinkGraph,
    NearestNotes,
    RecordQuery,
    Reembedding,
    SQLiteBackend,
    copy,
)
from commonplace.testing.conformance import (  # noqa: F401 (pytest collects the groups)
    CAPABILITIES,
    TestAtomicity,
    TestBookkeeping,
    TestConcurrency,
    TestCounters,
    TestDeletes,
    TestEpisodes,
    TestLedger,
    TestPin,
    TestProtocolMembers,
    TestReadBatches,
    TestRecallWrites,
    TestRecords,
    TestScopes,
    TestSearch,
    TestStoreLifecycle,
    TestSupersession,
    TestUpdates,
    backend,
    backend_reopen,
    store,
)

# the groups of what it declares, and only those (links and reembed are not imported)

REQUIRED = (
    "url ledger close read_pin apply read iter_records recent_episodes count delete"
).split()


class BareBackend:
    """The SQLite store seen through the ten required members only."""

    def __init__(self, path: Path) -> None:
        self._inner = SQLiteBackend(path)

    def __getattr__(self, name: str) -> Any:
        if name not in REQUIRED:
            raise AttributeError(name)
        return getattr(self._inner, name)

    @property
    def url(self) -> str:
        return self._inner.url

    @property
    def ledger(self) -> Any:
        return self._inner.ledger


@pytest.fixture
def backend_factory(tmp_path: Path) -> Iterator[Callable[[], BareBackend]]:
    opened: list[BareBackend] = []

    def make() -> BareBackend:
        opened.append(BareBackend(tmp_path / f"store-{len(opened)}.db"))
        return opened[-1]

    yield make
    for made in opened:
        made.close()


@pytest.fixture
def backend_capabilities() -> Collection[str]:
    return frozenset(CAPABILITIES) - {"links", "reembed"}


def test_the_bare_backend_is_a_backend_and_nothing_more(tmp_path: Path) -> None:
    bare = BareBackend(tmp_path / "m.db")
    try:
        assert isinstance(bare, Backend)
        for capability in (NearestNotes, LinkGraph, Reembedding):
            assert not isinstance(bare, capability)
    finally:
        bare.close()


def test_a_memory_runs_on_it_and_reembedding_says_to_copy(tmp_path: Path) -> None:
    bare = BareBackend(tmp_path / "m.db")

    class Plugin:
        from commonplace import hookimpl

        @hookimpl
        def commonplace_backend(self, url: str, scheme: str) -> object:
            return bare if scheme == "bare" else None

    with Memory("bare://m", plugins=[Plugin()]) as memory:
        memory.write("I moved to Porto in March.", scope="ana")
        memory.write("My sister Joana plays the cello.", scope="ana")
        memory.write("I moved to Lisbon.", scope="ana")  # supersedes Porto, by nearest
        recall = memory.recall("Who plays the cello?", scope="ana")
        assert any("Joana" in i.record.text for i in recall.items)
        memory.feedback(recall.id, used=list(recall.included[:1]))
        assert memory.store.links.links_of(list(recall.included), min_weight=0.0) == []
        with pytest.raises(UnsupportedError, match=r"commonplace\.stores\.copy"):
            memory.store.embedding.reembed_pending(memory.store.embedding.read_pin(), limit=10)  # type: ignore[arg-type]


def test_a_copy_with_an_embedder_is_a_reembed(tmp_path: Path) -> None:
    new = HashingEmbedder(dim=64)
    with Memory(f"sqlite:///{tmp_path / 'a.db'}") as memory:
        memory.write("I moved to Porto in March.", scope="ana")
        memory.write("My sister Joana plays the cello.", scope="ana")
        with SQLiteBackend(tmp_path / "b.db") as target:
            report = copy(memory.backend, target, embedder=new)
            assert report.counts["records"] == 2
            pin = target.read_pin()
            assert pin is not None and (pin.name, pin.dim) == (new.name, 64)
            records = list(target.iter_records(RecordQuery()))
            turns = [memory.store.get_episode(r.provenance[0]) for r in records]
            # each note embedded again from its turn, as the write path embeds it
            want = embed_checked(
                new,
                [embedding_text(r, evidence=t.text if t else None) for r, t in zip(records, turns)],
            )
            np.testing.assert_allclose(target.get_vectors([r.id for r in records]), want, atol=1e-6)
    with Memory(f"sqlite:///{tmp_path / 'b.db'}", embedder=new) as moved:
        found = moved.recall("Who plays the cello?", scope="ana")
        assert any("Joana" in i.record.text for i in found.items)


def test_copy_refuses_what_is_not_an_embedder(tmp_path: Path) -> None:
    from commonplace.errors import InvalidTypeError

    with SQLiteBackend(tmp_path / "a.db") as a, SQLiteBackend(tmp_path / "b.db") as b:
        with pytest.raises(InvalidTypeError, match="Embedder"):
            copy(a, b, embedder="commonplace-hashing-v1-64")  # type: ignore[arg-type]
        assert b.read_pin() is None
