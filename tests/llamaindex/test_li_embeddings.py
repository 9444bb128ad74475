"""Any LlamaIndex ``BaseEmbedding`` as the embedder: ``Memory(embedder=embed_model)``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.embeddings import MockEmbedding
from pydantic import PrivateAttr

from commonplace import HashingEmbedder, Kind, Memory
from commonplace.embedders import reembed
from commonplace.errors import EmbedderMismatchError, InvalidTypeError
from commonplace_llamaindex import LlamaIndexEmbedder


class HashingEmbedding(BaseEmbedding):
    """A small real LlamaIndex model: commonplace's hashing features behind BaseEmbedding."""

    dim: int = 72
    _hashing: HashingEmbedder = PrivateAttr()
    _batches: list[int] = PrivateAttr(default_factory=list)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._hashing = HashingEmbedder(dim=self.dim)

    def _one(self, text: str) -> list[float]:
        return [float(x) for x in self._hashing.embed([text])[0]]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._one(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._one(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._one(text)

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        self._batches.append(len(texts))
        return [[float(x) for x in row] for row in self._hashing.embed(texts)]


def url_of(path: Path) -> str:
    return "sqlite:///" + str(path)


def test_a_llamaindex_model_writes_recalls_and_reopens_its_store(tmp_path: Path) -> None:
    url = url_of(tmp_path / "m.db")
    model = HashingEmbedding(model_name="hashing-words")
    with Memory(url, embedder=model) as memory:
        assert isinstance(memory.embedder, LlamaIndexEmbedder)
        assert memory.embedder.name == "llamaindex:HashingEmbedding(model_name=hashing-words):72"
        memory.write("I moved to Porto with my partner Joana.", scope="ana")
        memory.write("I work as a nurse at the city hospital.", scope="ana")
        assert "Porto" in memory.recall("which city did the user move to?", scope="ana").text
    assert model._batches[0] == 1  # the probe text that told the dimension
    with Memory(url, embedder=HashingEmbedding(model_name="hashing-words")) as memory:
        assert memory.count(Kind.NOTE, scope="ana") == 2
        assert "nurse" in memory.recall("what is the user's job?", scope="ana").text
    for other in (HashingEmbedding(model_name="hashing-v2"), HashingEmbedding(dim=64)):
        with pytest.raises(EmbedderMismatchError, match="llamaindex:HashingEmbedding"):
            Memory(url, embedder=other)
    with pytest.raises(EmbedderMismatchError) as missing:
        Memory(url)
    message = str(missing.value)
    assert "pip install commonplace-llamaindex" in message
    assert "embedder=HashingEmbedding(model_name='hashing-words')" in message


def test_llamaindexs_mock_embedding_declares_its_dimension(tmp_path: Path) -> None:
    url = url_of(tmp_path / "m.db")
    with Memory(url, embedder=MockEmbedding(embed_dim=12)) as memory:
        assert memory.embedder.name == "llamaindex:MockEmbedding:12"  # "unknown" is no name
        memory.write("My sister Mia plays chess on Sundays.", scope="ana")
        assert memory.recall("Mia chess", scope="ana").items
    with Memory(url, embedder=MockEmbedding(embed_dim=12)) as memory:
        assert memory.count(Kind.NOTE) == 1
    with pytest.raises(EmbedderMismatchError, match="MockEmbedding:24"):
        Memory(url, embedder=MockEmbedding(embed_dim=24))


def test_the_adapter_batches_and_runs_async() -> None:
    model = HashingEmbedding(embed_batch_size=3)
    adapter = LlamaIndexEmbedder(model, dim=72)
    vectors = adapter.embed([f"text {i}" for i in range(7)])
    assert vectors.shape == (7, 72) and model._batches == [3, 3, 1]  # LlamaIndex's batches
    np.testing.assert_allclose(
        asyncio.run(adapter.aembed([f"text {i}" for i in range(7)])), vectors, rtol=1e-6
    )
    with pytest.raises(InvalidTypeError):
        LlamaIndexEmbedder(object())  # type: ignore[arg-type]


def test_a_store_is_reembedded_from_one_llamaindex_model_to_another(tmp_path: Path) -> None:
    url = url_of(tmp_path / "m.db")
    with Memory(url, embedder=MockEmbedding(embed_dim=12)) as memory:
        memory.write("I moved to Porto with my partner Joana.", scope="ana")
        memory.write("I adopted a cat called Mia.", scope="ana")
    report = reembed(url, to=HashingEmbedding(model_name="hashing-words"), batch=1)
    assert report.records == 2 and report.embedded == 2
    with Memory(url, embedder=HashingEmbedding(model_name="hashing-words")) as memory:
        top = memory.recall("where did the user move to?", scope="ana").items[0].record
        assert "Porto" in top.text
    with pytest.raises(EmbedderMismatchError, match="was opened with 'llamaindex:MockEmbedding"):
        Memory(url, embedder=MockEmbedding(embed_dim=12))
