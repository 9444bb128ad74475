"""The commonplace Memory behind an adapter: handed in, or opened lazily from its URL."""

from __future__ import annotations

import threading
import weakref
from typing import Any

from commonplace import Memory
from commonplace.errors import InvalidInputError, InvalidTypeError


class StoreHandle:
    """A live :class:`commonplace.Memory` shared by an adapter and every copy of it.

    LlamaIndex copies its components (a workflow ``Context`` deep-copies state for an
    edit) and writes them out as JSON (``Context.to_dict``). An open SQLite store can do
    neither, so an adapter keeps only the store's URL as data and reaches the store
    through this handle: copies share the handle, and an adapter rebuilt from JSON gets a
    fresh handle that opens the store from the URL on first use. A store opened here is
    owned here and closed by :meth:`close` (or when the handle is garbage-collected); a
    store handed in belongs to the caller and is never closed by the adapter.
    """

    def __init__(self, *, memory: Memory | None = None, url: str | None = None) -> None:
        if memory is not None and not isinstance(memory, Memory):
            raise InvalidTypeError(
                f"memory must be a commonplace.Memory, not {type(memory).__name__}"
            )
        if memory is None and url is None:
            raise InvalidInputError(
                "pass memory=commonplace.Memory(...) or url='sqlite:///path/to/memory.db'"
            )
        if url is not None and not isinstance(url, str):
            raise InvalidTypeError(f"url must be a str, not {type(url).__name__}")
        if memory is not None and url is not None and url != memory.url:
            raise InvalidInputError(
                f"memory is open on {memory.url!r} but url={url!r} was also given; pass one"
            )
        if memory is None and url is not None and _in_memory(url):
            # Reopening ":memory:" by URL would silently give an empty store, which is
            # exactly what happens to an adapter restored from a serialised Context.
            raise InvalidInputError(
                f"{url!r} is an in-memory store and cannot be reopened by URL; pass "
                "memory=commonplace.Memory(':memory:') to share one, or use a file store "
                "(sqlite:///path/to/memory.db) if the adapter must survive serialisation"
            )
        self._memory = memory
        self.url: str = memory.url if memory is not None else str(url)
        self._lock = threading.Lock()
        self._finalizer: weakref.finalize[Any, Any] | None = None

    def get(self) -> Memory:
        """The store, opened on first use when only the URL is known."""
        memory = self._memory
        if memory is not None:
            return memory
        with self._lock:
            if self._memory is None:
                opened = Memory(self.url)
                self._finalizer = weakref.finalize(self, opened.close)
                self._memory = opened
            return self._memory

    def bind(self, memory: Memory) -> None:
        """Use ``memory`` from now on (e.g. one with the plugins a restored adapter lacks)."""
        if not isinstance(memory, Memory):
            raise InvalidTypeError(
                f"bind() takes a commonplace.Memory, not {type(memory).__name__}"
            )
        with self._lock:
            self._close_owned()
            self._memory = memory
            self.url = memory.url

    def close(self) -> None:
        """Close the store if this handle opened it; a store handed in is left open."""
        with self._lock:
            self._close_owned()

    def _close_owned(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # closes the store it opened, once
            self._finalizer = None
            self._memory = None

    # A live store is shared, never copied: see the class docstring.
    def __copy__(self) -> StoreHandle:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> StoreHandle:
        return self

    def __repr__(self) -> str:
        return f"StoreHandle({self.url!r})"


def _in_memory(url: str) -> bool:
    return url.strip().lower().endswith(":memory:")
