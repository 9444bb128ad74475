"""Any function from texts to vectors as an embedder: bring your own model in one line.

:class:`CallableEmbedder` is also what the framework adapters build on
(``commonplace_langgraph.LangChainEmbedder``, ``commonplace_llamaindex.LlamaIndexEmbedder``):
they only work out the model's name and hand over its batch functions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np

from .._validate import checked_dim
from ..errors import InvalidInputError, InvalidTypeError, PluginError
from ._protocol import Vectors

PROBE_TEXT = "commonplace dimension probe"
_MAX_NAME_CHARS = 300

EmbedFunction = Callable[[list[str]], Any]
AsyncEmbedFunction = Callable[[list[str]], Awaitable[Any]]


class CallableEmbedder:
    """Wrap ``fn(texts) -> vectors`` as an :class:`~commonplace.embedders.Embedder`.

    ``fn`` takes a list of texts and returns one vector per text (a list of lists
    or an array). ``name`` is pinned in every store the embedder writes to, so it
    must identify the model *and its version*: change it whenever the vectors would
    change. ``dim`` is the vectors' length; when it is left out, it is measured by
    embedding one probe text. ``afn`` is an optional async version of ``fn``, used
    by :meth:`aembed` (which otherwise runs ``fn`` in a worker thread). Rows are
    L2-normalised on the way out.
    """

    def __init__(
        self,
        fn: EmbedFunction,
        *,
        name: str,
        dim: int | None = None,
        afn: AsyncEmbedFunction | None = None,
    ) -> None:
        if not callable(fn):
            raise InvalidTypeError(
                f"CallableEmbedder needs a function texts -> vectors, not {type(fn).__name__}"
            )
        if afn is not None and not callable(afn):
            raise InvalidTypeError("afn must be an async function texts -> vectors, or None")
        self._fn = fn
        self._afn = afn
        self._name = checked_name(name)
        if dim is None:
            self._dim = 0
            measured = _width(self._call([PROBE_TEXT]), 1, self._name)
            self._dim = checked_dim(f"the dim of {self._name!r} (measured)", measured)
        else:
            self._dim = checked_dim("dim", dim)

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        """An ``(len(texts), dim)`` float32 array of unit rows (``fn`` is not called for none)."""
        batch = list(texts)
        if not batch:
            return np.zeros((0, self._dim), np.float32)
        return self._checked(self._call(batch), len(batch))

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        """:meth:`embed` for async code: ``afn`` when given, else ``fn`` in a worker thread."""
        batch = list(texts)
        if not batch:
            return np.zeros((0, self._dim), np.float32)
        if self._afn is None:
            return await asyncio.to_thread(self.embed, batch)
        return self._checked(await self._afn(batch), len(batch))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self._name!r}, dim={self._dim})"

    def _call(self, batch: list[str]) -> Any:
        return self._fn(batch)

    def _checked(self, raw: Any, rows: int) -> Vectors:
        try:
            vectors = np.asarray(raw, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise PluginError(
                f"the embedding function of {self._name!r} returned {type(raw).__name__}, not "
                f"one vector of numbers per text ({exc}); return a list of lists or an array"
            ) from None
        if vectors.shape != (rows, self._dim):
            raise PluginError(
                f"the embedding function of {self._name!r} returned shape {vectors.shape} for "
                f"{rows} texts, expected {(rows, self._dim)}; it must return one vector of "
                f"length {self._dim} per text, in order"
            )
        if not np.all(np.isfinite(vectors)):
            raise PluginError(f"the embedding function of {self._name!r} returned NaN or inf")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(vectors / norms, dtype=np.float32)


def checked_name(name: object) -> str:
    """A model name fit to be pinned: one line of printable text."""
    if not isinstance(name, str):
        raise InvalidTypeError(f"name must be a str naming the model, not {type(name).__name__}")
    if not name.strip() or len(name) > _MAX_NAME_CHARS or not name.isprintable():
        raise InvalidInputError(
            f"name must be 1 to {_MAX_NAME_CHARS} printable characters on one line naming the "
            f"model and its version (for example 'my-model-v2'), not {name!r}"
        )
    return name


def _width(raw: Any, rows: int, name: str) -> int:
    """The length of the vectors ``raw`` holds (one per text)."""
    try:
        vectors = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError):
        vectors = np.zeros(0, np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != rows or vectors.shape[1] == 0:
        raise PluginError(
            f"cannot tell the dimension of {name!r}: embedding {rows} probe text returned "
            f"{type(raw).__name__} of shape {vectors.shape}; the function must return one "
            "vector per text (or pass dim=...)"
        )
    return int(vectors.shape[1])
