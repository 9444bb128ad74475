"""Memory("weaviate://...") end to end: the entry point, write, recall, explain, the pin."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

import pytest

from commonplace import HashingEmbedder, Kind, ManualClock, Memory
from commonplace.errors import EmbedderMismatchError, InvalidURLError
from commonplace_weaviate import WeaviateBackend

pytestmark = pytest.mark.weaviate
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def url(weaviate_backend_factory: Callable[[], WeaviateBackend]) -> str:
    return weaviate_backend_factory().url


def test_memory_opens_a_weaviate_url_through_the_entry_point(url: str) -> None:
    clock = ManualClock(T0)
    with Memory(url, clock=clock) as memory:
        assert isinstance(memory.backend, WeaviateBackend)
        memory.write("I just moved to Porto with my partner Joana.", scope="ana")
        memory.write("Sounds lovely! Say hi to your brother Tom.", role="assistant", scope="ana")
        memory.write("I work as a nurse at the city hospital.", scope="ana")
        memory.write("I am learning to play the cello.", scope="bob")
        clock.advance(days=1)
        recall = memory.recall("where does the user live?", scope="ana")
        assert "Porto" in recall.text
        assert "Tom" not in recall.text  # the assistant's words never become memory
        assert "cello" not in recall.text  # bob's memory is not ana's
        porto = next(r for r in recall.recent if "Porto" in r.text)
        chain = memory.explain(porto.id)
        assert [e.text for e in chain.episodes()] == [
            "I just moved to Porto with my partner Joana."
        ]
        assert memory.count(Kind.NOTE, scope="ana") == 2
        assert memory.count(Kind.EPISODE) == 4


def test_a_store_remembers_its_embedder_and_refuses_another(url: str) -> None:
    with Memory(url, embedder=HashingEmbedder(dim=64)) as memory:
        memory.write("I live in Lisbon.", scope="ana")
    with pytest.raises(EmbedderMismatchError, match="pinned"):
        Memory(url, embedder=HashingEmbedder(dim=128))
    with Memory(url) as again:  # the pinned built-in embedder is found by name
        assert again.embedder.dim == 64
        assert again.count(Kind.NOTE, scope="ana") == 1


def test_a_malformed_weaviate_url_is_an_invalid_url_error() -> None:
    with pytest.raises(InvalidURLError, match="unknown option"):
        Memory("weaviate://127.0.0.1:1?nope=1")
