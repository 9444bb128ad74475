"""Any LangChain ``Embeddings`` as the embedder: ``Memory(embedder=embeddings)``, end to end."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from commonplace import HashingEmbedder, Kind, Memory
from commonplace.embedders import reembed
from commonplace.errors import EmbedderMismatchError, InvalidTypeError
from commonplace_langgraph import LangChainEmbedder


class HashingEmbeddings(Embeddings):
    """A small real LangChain model: commonplace's hashing features behind LangChain's API."""

    def __init__(self, dim: int = 96, model: str = "hashing-words") -> None:
        self.model = model
        self._hashing = HashingEmbedder(dim=dim)
        self.document_calls = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.document_calls += 1
        return [[float(x) for x in row] for row in self._hashing.embed(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def url_of(path: Path) -> str:
    return "sqlite:///" + str(path)


def test_a_langchain_model_writes_recalls_and_reopens_its_store(tmp_path: Path) -> None:
    url = url_of(tmp_path / "m.db")
    model = HashingEmbeddings()
    with Memory(url, embedder=model) as memory:
        assert isinstance(memory.embedder, LangChainEmbedder)
        assert memory.embedder.name == "langchain:HashingEmbeddings(model=hashing-words):96"
        assert memory.embedder.dim == 96 and model.document_calls == 1  # one probe text
        memory.write("I moved to Porto with my partner Joana.", scope="ana")
        memory.write("I work as a nurse at the city hospital.", scope="ana")
        recall = memory.recall("which city did the user move to?", scope="ana")
        assert recall.items and "Porto" in recall.items[0].record.text
    with Memory(url, embedder=HashingEmbeddings()) as memory:  # the same model, a new object
        assert memory.count(Kind.NOTE, scope="ana") == 2
        assert "nurse" in memory.recall("what is the user's job?", scope="ana").text
    for other in (HashingEmbeddings(dim=64), HashingEmbeddings(model="hashing-v2")):
        with pytest.raises(EmbedderMismatchError, match=r"langchain:HashingEmbeddings"):
            Memory(url, embedder=other)
    with pytest.raises(EmbedderMismatchError) as missing:
        Memory(url)  # no plugin can build a LangChain model from its name
    message = str(missing.value)
    assert "pip install commonplace-langgraph" in message
    assert "embedder=HashingEmbeddings(model='hashing-words')" in message


def test_langchains_fake_embedding_is_a_model_with_its_declared_size(tmp_path: Path) -> None:
    url = url_of(tmp_path / "m.db")
    with Memory(url, embedder=DeterministicFakeEmbedding(size=32)) as memory:
        assert memory.embedder.name == "langchain:DeterministicFakeEmbedding:32"
        memory.write("My sister Mia plays chess on Sundays.", scope="ana")
        assert memory.recall("Mia chess", scope="ana").items
    with Memory(url, embedder=DeterministicFakeEmbedding(size=32)) as memory:
        assert memory.count(Kind.NOTE) == 1
    with pytest.raises(EmbedderMismatchError, match="DeterministicFakeEmbedding:16"):
        Memory(url, embedder=DeterministicFakeEmbedding(size=16))


def test_the_adapter_batches_async_and_overrides() -> None:
    model = HashingEmbeddings(dim=48)
    named = LangChainEmbedder(model, name="my-hashing-v1", dim=48)
    assert named.name == "my-hashing-v1" and model.document_calls == 0  # no probe needed
    sync = named.embed(["tea", "coffee"])
    assert sync.shape == (2, 48)
    np.testing.assert_allclose(np.linalg.norm(sync, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(asyncio.run(named.aembed(["tea", "coffee"])), sync, rtol=1e-6)
    assert named.embed([]).shape == (0, 48) and model.document_calls == 2
    with pytest.raises(InvalidTypeError):
        LangChainEmbedder("not a model")  # type: ignore[arg-type]


def test_a_store_is_reembedded_into_a_langchain_model(tmp_path: Path) -> None:
    url = url_of(tmp_path / "m.db")
    with Memory(url) as memory:
        memory.write("I moved to Porto with my partner Joana.", scope="ana")
        memory.write("I adopted a cat called Mia.", scope="ana")
    report = reembed(url, to=HashingEmbeddings(dim=80))
    assert report.records == 2 and report.target.name.startswith("langchain:")
    with Memory(url, embedder=HashingEmbeddings(dim=80)) as memory:
        assert (
            "Porto" in memory.recall("where did the user move?", scope="ana").items[0].record.text
        )
    with pytest.raises(EmbedderMismatchError, match="commonplace-hashing-v1-256"):
        Memory(url, embedder=HashingEmbedder())


def test_a_langchain_model_loads_only_its_own_adapter(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from langchain_core.embeddings import DeterministicFakeEmbedding\n"
        "from commonplace import Memory\n"
        f"Memory({url_of(tmp_path / 'm.db')!r}, embedder=DeterministicFakeEmbedding(size=8))"
        ".close()\n"
        "assert 'commonplace_langgraph._plugin' in sys.modules\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in "
        "('llama_index', 'commonplace_llamaindex')], 'the LlamaIndex adapter was loaded'\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
