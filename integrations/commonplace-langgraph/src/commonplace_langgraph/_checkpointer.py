"""CommonplaceSaver: a LangGraph checkpointer that also gives the graph long-term memory.

It is always a thin layer over a real saver: its own SQLite tables in the memory's file
by default, or any saver the user already runs (Postgres, SQLite, in-memory ...). Every
call goes to that saver unchanged; after a checkpoint is stored, the human messages in it
that this thread has not seen yet are written to memory as user turns. Nothing else is
ever written to memory from here, so an assistant reply can never become a note.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Generator,
    Iterator,
    Mapping,
    Sequence,
)
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from commonplace import Memory
from commonplace.errors import InvalidInputError, InvalidTypeError
from commonplace.validation import checked_user_names

from ._db import Database, adapter_path
from ._scope import ScopeRule
from ._sqlite_saver import CHECKPOINT_SCHEMA, SQLiteCheckpoints
from ._tap import LEDGER_SCHEMA, Tap

# The operations a wrapped saver may lack (each also has an ``a``-prefixed async twin).
_OPTIONAL = ("delete_for_runs", "copy_thread", "prune")


class CommonplaceSaver(BaseCheckpointSaver[Any]):
    """A checkpointer that persists checkpoints and taps human messages into memory.

    ``CommonplaceSaver(memory)`` keeps checkpoints in the memory's SQLite file (or in the
    SQLite file at ``path``); ``CommonplaceSaver(memory, saver=other)`` keeps them in
    ``other`` and only adds the tap. ``messages_key`` is the state key holding the
    conversation; ``user_key`` the ``configurable`` key naming the user (without it,
    memory is per thread); ``agent`` an agent id added to every scope; ``user_names``
    names a human message may carry and still be the user's (any other named one is
    tapped as evidence only, never a note).
    """

    def __init__(
        self,
        memory: Memory,
        *,
        saver: BaseCheckpointSaver[Any] | None = None,
        path: str | Path | None = None,
        serde: SerializerProtocol | None = None,
        messages_key: str = "messages",
        user_key: str = "user_id",
        agent: str | None = None,
        user_names: Sequence[str] = (),
    ) -> None:
        if not isinstance(memory, Memory):
            raise InvalidTypeError(
                f"memory must be a commonplace.Memory, not {type(memory).__name__}"
            )
        if saver is not None and not isinstance(saver, BaseCheckpointSaver):
            raise InvalidTypeError(
                f"saver must be a LangGraph BaseCheckpointSaver, not {type(saver).__name__}"
            )
        if saver is not None and serde is not None:
            raise InvalidInputError(
                "serde belongs to the wrapped saver; configure it there, not here"
            )
        rule = ScopeRule(user_key=user_key, agent=agent, user_names=checked_user_names(user_names))
        schema = LEDGER_SCHEMA if saver is not None else (*CHECKPOINT_SCHEMA, *LEDGER_SCHEMA)
        self._schema = schema
        self._db = Database(adapter_path(memory, path), schema=schema)
        try:
            inner = saver if saver is not None else SQLiteCheckpoints(self._db, serde=serde)
            super().__init__(serde=inner.serde)
            self._inner: BaseCheckpointSaver[Any] = inner
            self._tap = Tap(memory, self._db, rule=rule, messages_key=messages_key)
        except BaseException:
            self._db.close()
            raise
        self.memory = memory
        self._owns_memory = False

    @classmethod
    def from_conn_string(cls, conn_string: str | None = None, **options: Any) -> SaverOpening:
        """Open a Memory at ``conn_string`` and a saver on it, both closed on exit.

        As with LangGraph's ``SqliteSaver.from_conn_string`` / ``AsyncSqliteSaver``'s, use
        it with ``with`` or with ``async with``::

            with CommonplaceSaver.from_conn_string("sqlite:///memory.db") as checkpointer:
                graph = builder.compile(checkpointer=checkpointer)

        ``conn_string`` is a commonplace store URL or an SQLite file path (``":memory:"``
        too); without it, the default store. ``options`` go to :class:`CommonplaceSaver`.
        """
        return SaverOpening(cls, conn_string, options)

    @classmethod
    def from_url(cls, url: str | None = None, **options: Any) -> SaverOpening:
        """The same as :meth:`from_conn_string`."""
        return SaverOpening(cls, url, options)

    def setup(self) -> SetupDone:
        """Create the saver's tables if they are missing (a new saver already has them).

        Safe to call again. As with LangGraph's savers, ``saver.setup()`` and ``await
        saver.setup()`` both work; a wrapped saver with an async ``setup`` (an
        ``AsyncSqliteSaver``, say) is set up when awaited.
        """
        self._db.create(self._schema)
        inner = getattr(self._inner, "setup", None)
        if not callable(inner) or isinstance(self._inner, SQLiteCheckpoints):
            return SetupDone(None)
        if inspect.iscoroutinefunction(inner):
            return SetupDone(inner)
        inner()
        return SetupDone(None)

    def close(self) -> None:
        """Close the adapter's tables (and the memory, when ``from_url`` opened it)."""
        self._db.close()
        if self._owns_memory:
            self.memory.close()

    def __enter__(self) -> CommonplaceSaver:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> CommonplaceSaver:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def saver(self) -> BaseCheckpointSaver[Any]:
        """The saver that actually stores the checkpoints."""
        return self._inner

    @property
    def config_specs(self) -> list[Any]:
        return list(self._inner.config_specs)

    def tapped(self, thread_id: str) -> dict[str, str | None]:
        """Message id -> episode id of the human messages written to memory from a thread."""
        return self._tap.tapped(thread_id)

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> CommonplaceSaver:
        # compile() narrows deserialisation to the graph's types; the saver that does
        # the deserialising is the inner one, so it must get the allowlist too.
        inner = self._inner.with_allowlist(extra_allowlist)
        if inner is self._inner:
            return self
        clone = copy.copy(self)
        clone._inner = inner
        clone.serde = inner.serde
        return clone

    # -- sync API -------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._inner.get_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        return self._inner.list(config, filter=filter, before=before, limit=limit)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        stored = self._inner.put(config, checkpoint, metadata, new_versions)
        if self._tap.wants(new_versions):
            self._tap(config, checkpoint["channel_values"])
        return stored

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._inner.put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints. Its memories stay: forgetting is ``memory.forget``."""
        self._inner.delete_thread(thread_id)
        self._tap.forget_thread(thread_id)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._require("copy_thread")
        self._inner.copy_thread(source_thread_id, target_thread_id)
        self._tap.copy_thread(source_thread_id, target_thread_id)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._require("delete_for_runs")
        self._inner.delete_for_runs(run_ids)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._require("prune")
        self._inner.prune(thread_ids, strategy=strategy)
        if strategy == "delete":
            for thread_id in thread_ids:
                self._tap.forget_thread(thread_id)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return self._inner.get_delta_channel_history(config=config, channels=channels)

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self._inner.get_next_version(current, channel)

    # -- async API: the wrapped saver's own async methods, the tap on a worker thread ----

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._inner.aget_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        async for item in self._inner.alist(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        stored = await self._inner.aput(config, checkpoint, metadata, new_versions)
        if self._tap.wants(new_versions):
            await asyncio.to_thread(self._tap, config, checkpoint["channel_values"])
        return stored

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._inner.aput_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self._inner.adelete_thread(thread_id)
        await asyncio.to_thread(self._tap.forget_thread, thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._require("acopy_thread")
        await self._inner.acopy_thread(source_thread_id, target_thread_id)
        await asyncio.to_thread(self._tap.copy_thread, source_thread_id, target_thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._require("adelete_for_runs")
        await self._inner.adelete_for_runs(run_ids)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._require("aprune")
        await self._inner.aprune(thread_ids, strategy=strategy)
        if strategy == "delete":
            for thread_id in thread_ids:
                await asyncio.to_thread(self._tap.forget_thread, thread_id)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return await self._inner.aget_delta_channel_history(config=config, channels=channels)

    def supports(self, operation: str) -> bool:
        """Whether the saver underneath implements an operation (``prune``, ``aprune`` ...)."""
        if operation.removeprefix("a") not in _OPTIONAL and operation not in _OPTIONAL:
            return True
        return _overrides(type(self._inner), operation)

    def _require(self, operation: str) -> None:
        if not self.supports(operation):
            raise NotImplementedError(
                f"the wrapped {type(self._inner).__name__} does not implement {operation}; "
                "use CommonplaceSaver's own tables (no saver=...) or a saver that does"
            )


def _overrides(cls: type, method: str) -> bool:
    return getattr(cls, method, None) is not getattr(BaseCheckpointSaver, method, None)


class SaverOpening:
    """What :meth:`CommonplaceSaver.from_conn_string` returns: a sync and async context manager."""

    def __init__(
        self, cls: type[CommonplaceSaver], url: str | None, options: Mapping[str, Any]
    ) -> None:
        if url is not None and not isinstance(url, str):
            raise InvalidTypeError(
                f"conn_string must be a store URL or a file path, not {type(url).__name__}"
            )
        self._cls = cls
        self._url = url
        self._options = dict(options)
        self._saver: CommonplaceSaver | None = None

    def _open(self) -> CommonplaceSaver:
        if self._saver is not None:
            raise InvalidInputError("this from_conn_string(...) was entered already; call it again")
        memory = Memory(self._url)
        try:
            saver = self._cls(memory, **self._options)
        except BaseException:
            memory.close()
            raise
        saver._owns_memory = True
        self._saver = saver
        return saver

    def _close(self) -> None:
        if self._saver is not None:
            self._saver.close()

    def __enter__(self) -> CommonplaceSaver:
        return self._open()

    def __exit__(self, *exc_info: object) -> None:
        self._close()

    async def __aenter__(self) -> CommonplaceSaver:
        return self._open()

    async def __aexit__(self, *exc_info: object) -> None:
        self._close()


class SetupDone:
    """The result of :meth:`CommonplaceSaver.setup`: already done, and awaitable."""

    def __init__(self, pending: Callable[[], Awaitable[Any]] | None) -> None:
        self._pending = pending

    def __await__(self) -> Generator[Any, None, None]:
        if self._pending is not None:
            yield from self._pending().__await__()
