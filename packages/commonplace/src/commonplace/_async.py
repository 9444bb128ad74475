"""The async twins of Memory's methods: the sync method, run in a worker thread.

Every store call of commonplace is synchronous and made under the backend's own lock
(SQLite's connection lock, the Weaviate client's), so an async method needs no second
implementation: it runs its sync twin with :func:`asyncio.to_thread`, which keeps the
event loop free while the store embeds, searches and writes, and copies the caller's
context variables into the worker. The twin has the sync method's signature and
validation, and raises the same errors.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


def in_worker_thread(
    method: Callable[Concatenate[S, P], R],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """An ``async def`` twin of ``method`` that runs it in a worker thread."""

    @functools.wraps(method)
    async def twin(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(method, self, *args, **kwargs)

    twin.__name__ = "a" + method.__name__
    twin.__qualname__ = twin.__qualname__.rsplit(".", 1)[0] + "." + twin.__name__
    twin.__doc__ = (
        f"Async :meth:`{method.__name__}`: the same arguments, result and errors, run in a "
        "worker thread so the event loop never waits on the store."
    )
    return twin
