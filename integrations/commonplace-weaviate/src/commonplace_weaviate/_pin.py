"""The embedder pin, and the checks a store's vectors must pass against it.

The pin (the embedder's name and dimension) is kept in the ``Note`` collection's
description, beside the name of the live named vector (``default`` until a
re-embed swaps it, see ``_reembed``) and the state of a re-embed in progress.
Writes check their vectors against the pinned dimension; searches and writes use
the live vector.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from commonplace.embedders import Vectors
from commonplace.errors import EmbedderMismatchError, InvalidInputError
from commonplace.stores import EmbedderPin

from . import _schema as S
from ._connection import Connection
from ._url import Settings


class PinnedVectors(Connection):
    """The embedder pin, the vector checks against it, and the live vector's name."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self._pin_lock = threading.Lock()
        self._pin: EmbedderPin | None = None
        self._vector: str | None = None  # the named vector searches use (see reembed_*)

    def read_pin(self) -> EmbedderPin | None:
        config = self._call(lambda: self._col(S.NOTE).config.get(), "read the embedder pin")
        body = S.read_description(config.description) or {}
        embedder = body.get("embedder")
        if not isinstance(embedder, Mapping) or "name" not in embedder:
            return None
        return EmbedderPin(name=str(embedder["name"]), dim=int(embedder["dim"]))

    def write_pin(self, pin: EmbedderPin, *, replace: bool = False) -> None:
        with self._pin_lock:
            current = self.read_pin()
            if current is not None and not replace:
                if current == pin:
                    return
                raise EmbedderMismatchError(
                    f"this store is pinned to the embedder {current.name!r} (dim {current.dim}),"
                    f" not {pin.name!r} (dim {pin.dim}); open it with the pinned embedder or "
                    "re-embed the store"
                )
            body = self._note_body()  # keeps the live vector's name and a re-embed's state
            body["embedder"] = {**(body.get("embedder") or {}), "name": pin.name, "dim": pin.dim}
            text = json.dumps(body, sort_keys=True)
            self._call(
                lambda: self._col(S.NOTE).config.update(description=text), "pin the embedder"
            )
            # Re-read: another process may have pinned a different model at the same time.
            after = self.read_pin()
            if after != pin:
                raise EmbedderMismatchError(
                    f"another client pinned this store to {after!r} while this one pinned "
                    f"{pin!r}; open it with the pinned embedder"
                )
            self._pin = pin

    def _note_body(self) -> dict[str, Any]:
        config = self._call(lambda: self._col(S.NOTE).config.get(), "read the embedder pin")
        body = S.read_description(config.description)
        return dict(body) if body is not None else json.loads(S.description(S.NOTE))

    def _live_vector(self) -> str:
        """The named vector that holds the pinned model's vectors (``default`` at first)."""
        if self._vector is None:
            embedder = self._note_body().get("embedder")
            name = embedder.get("vector") if isinstance(embedder, Mapping) else None
            self._vector = str(name or "default")
        return self._vector

    def _dim(self) -> int | None:
        if self._pin is None:
            self._pin = self.read_pin()
        return None if self._pin is None else self._pin.dim

    def _checked_vectors(
        self, vectors: Vectors | None, rows: int, what: str
    ) -> np.ndarray[Any, np.dtype[np.float32]] | None:
        if rows == 0:
            return None
        if vectors is None or len(vectors) != rows:
            raise InvalidInputError(f"{what} needs exactly one vector per record")
        matrix = np.asarray(vectors, np.float32).reshape(rows, -1)
        dim = self._dim()
        if dim is not None and matrix.shape[1] != dim:
            raise InvalidInputError(
                f"{what} got vectors of dimension {matrix.shape[1]}, but this store is pinned "
                f"to dimension {dim}; embed with the pinned embedder"
            )
        if not np.all(np.isfinite(matrix)):
            raise InvalidInputError(f"{what} got NaN or infinite vector values")
        return matrix
