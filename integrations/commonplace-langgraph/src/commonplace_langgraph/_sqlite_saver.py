"""The built-in checkpoint storage: LangGraph's checkpoint contract on SQLite tables.

The layout follows ``InMemorySaver`` and the Postgres saver rather than ``SqliteSaver``:
channel values are stored once per (channel, version) in ``langgraph_blobs`` and a
checkpoint row only lists the versions it uses. A chat thread's message list is then
stored once per change instead of once per checkpoint, which matters for the long
threads a memory layer is meant for. Deleting checkpoints (``prune``,
``delete_for_runs``) collects the blobs no remaining checkpoint refers to.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from commonplace.errors import InvalidInputError, InvalidTypeError

from ._db import Database, chunks
from ._scope import thread_id as checked_thread_id
from ._text import SURROGATE_FIX, has_surrogates

CHECKPOINT_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS langgraph_checkpoints (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        parent_checkpoint_id TEXT,
        run_id TEXT,
        type TEXT NOT NULL,
        checkpoint BLOB NOT NULL,
        metadata_type TEXT NOT NULL,
        metadata BLOB NOT NULL,
        channel_versions TEXT NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
    ) WITHOUT ROWID""",
    """CREATE INDEX IF NOT EXISTS langgraph_checkpoints_run
        ON langgraph_checkpoints (run_id) WHERE run_id IS NOT NULL""",
    """CREATE TABLE IF NOT EXISTS langgraph_blobs (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        channel TEXT NOT NULL,
        version TEXT NOT NULL,
        type TEXT NOT NULL,
        blob BLOB,
        PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS langgraph_writes (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        channel TEXT NOT NULL,
        type TEXT NOT NULL,
        value BLOB,
        task_path TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
    ) WITHOUT ROWID""",
)

_TABLES = ("langgraph_checkpoints", "langgraph_blobs", "langgraph_writes")
_STRATEGIES = ("keep_latest", "delete")
_ROW = (
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, "
    "metadata_type, metadata"
)

# A blob is garbage once no checkpoint of its thread and namespace lists its version.
_COLLECT_BLOBS = """
DELETE FROM langgraph_blobs AS b
WHERE b.thread_id = ? AND b.checkpoint_ns = ? AND NOT EXISTS (
    SELECT 1 FROM langgraph_checkpoints AS c, json_each(c.channel_versions) AS j
    WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns
      AND j.key = b.channel AND j.value = b.version
)"""


class SQLiteCheckpoints(BaseCheckpointSaver[str]):
    """A complete checkpoint saver on the adapter's SQLite tables (sync and async)."""

    def __init__(self, db: Database, *, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        self._db = db

    # -- reading ------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        thread_id, checkpoint_ns = _thread(config), _namespace(config)
        checkpoint_id = get_checkpoint_id(config)
        with self._db.reading() as db:
            if checkpoint_id:
                row = db.execute(
                    f"SELECT {_ROW} FROM langgraph_checkpoints "
                    "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                    (thread_id, checkpoint_ns, str(checkpoint_id)),
                ).fetchone()
            else:
                row = db.execute(
                    f"SELECT {_ROW} FROM langgraph_checkpoints "
                    "WHERE thread_id = ? AND checkpoint_ns = ? "
                    "ORDER BY checkpoint_id DESC LIMIT 1",
                    (thread_id, checkpoint_ns),
                ).fetchone()
            if row is None:
                return None
            return self._tuple(db, row)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise InvalidTypeError(f"limit must be an int or None, not {type(limit).__name__}")
        if filter is not None and not isinstance(filter, dict):
            raise InvalidTypeError(f"filter must be a dict or None, not {type(filter).__name__}")
        wheres: list[str] = []
        params: list[Any] = []
        if config is not None:
            wheres.append("thread_id = ?")
            params.append(_thread(config))
            if (ns := config["configurable"].get("checkpoint_ns")) is not None:
                wheres.append("checkpoint_ns = ?")
                params.append(str(ns))
            if checkpoint_id := get_checkpoint_id(config):
                wheres.append("checkpoint_id = ?")
                params.append(str(checkpoint_id))
        if before is not None and (before_id := get_checkpoint_id(before)):
            wheres.append("checkpoint_id < ?")
            params.append(str(before_id))
        where = ("WHERE " + " AND ".join(wheres)) if wheres else ""
        sql = f"SELECT {_ROW} FROM langgraph_checkpoints {where} ORDER BY checkpoint_id DESC"
        if limit is not None and not filter:
            sql += " LIMIT ?"
            params.append(max(limit, 0))
        # Rows are read up front so no lock is held while the caller consumes the iterator.
        with self._db.reading() as db:
            rows = db.execute(sql, params).fetchall()
        remaining = limit
        for row in rows:
            if remaining is not None and remaining <= 0:
                return
            metadata = self.serde.loads_typed((row[6], row[7]))
            if filter and not all(metadata.get(k) == v for k, v in filter.items()):
                continue
            with self._db.reading() as db:
                item = self._tuple(db, row, metadata=metadata)
            if remaining is not None:
                remaining -= 1
            yield item

    def _tuple(
        self, db: Any, row: Sequence[Any], *, metadata: CheckpointMetadata | None = None
    ) -> CheckpointTuple:
        thread_id, checkpoint_ns, checkpoint_id, parent_id, type_, blob, md_type, md = row
        checkpoint: Checkpoint = self.serde.loads_typed((type_, blob))
        versions = checkpoint.get("channel_versions", {})
        values: dict[str, Any] = {}
        pairs = [(str(k), str(v)) for k, v in versions.items()]
        for start in range(0, len(pairs), 200):
            part = pairs[start : start + 200]
            marks = ",".join("(?, ?)" for _ in part)
            for channel, b_type, b_value in db.execute(
                "SELECT channel, type, blob FROM langgraph_blobs "
                f"WHERE thread_id = ? AND checkpoint_ns = ? AND (channel, version) IN "
                f"(VALUES {marks})",
                (thread_id, checkpoint_ns, *[x for pair in part for x in pair]),
            ):
                if b_type != "empty":
                    values[channel] = self.serde.loads_typed((b_type, b_value))
        writes = db.execute(
            "SELECT task_id, channel, type, value, task_path, idx FROM langgraph_writes "
            "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (thread_id, checkpoint_ns, checkpoint_id),
        ).fetchall()
        pending: list[PendingWrite] = [
            (task_id, channel, self.serde.loads_typed((w_type, w_value)))
            for task_id, channel, w_type, w_value, _, _ in sorted(
                writes, key=lambda w: writes_sort_key(w[4], w[0], w[5])
            )
        ]
        return CheckpointTuple(
            config=_config(thread_id, checkpoint_ns, checkpoint_id),
            checkpoint={**checkpoint, "channel_values": values},
            metadata=metadata if metadata is not None else self.serde.loads_typed((md_type, md)),
            parent_config=_config(thread_id, checkpoint_ns, parent_id) if parent_id else None,
            pending_writes=pending,
        )

    # -- writing ------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        thread_id, checkpoint_ns = _thread(config), _namespace(config)
        stripped = cast(dict[str, Any], checkpoint.copy())
        values: dict[str, Any] = stripped.pop("channel_values", {}) or {}
        blobs = []
        for channel, version in new_versions.items():
            b_type, b_value = (
                self.serde.dumps_typed(values[channel]) if channel in values else ("empty", b"")
            )
            blobs.append((thread_id, checkpoint_ns, channel, str(version), b_type, b_value))
        full_metadata = get_checkpoint_metadata(config, metadata)
        md_type, md_blob = self.serde.dumps_typed(full_metadata)
        cp_type, cp_blob = self.serde.dumps_typed(stripped)
        run_id = full_metadata.get("run_id")
        channel_versions = json.dumps(
            {str(k): str(v) for k, v in checkpoint.get("channel_versions", {}).items()}
        )
        with self._db.transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO langgraph_blobs "
                "(thread_id, checkpoint_ns, channel, version, type, blob) VALUES (?,?,?,?,?,?)",
                blobs,
            )
            db.execute(
                "INSERT OR REPLACE INTO langgraph_checkpoints (thread_id, checkpoint_ns, "
                "checkpoint_id, parent_checkpoint_id, run_id, type, checkpoint, metadata_type, "
                "metadata, channel_versions) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    thread_id,
                    checkpoint_ns,
                    str(checkpoint["id"]),
                    config["configurable"].get("checkpoint_id"),
                    None if run_id is None else str(run_id),
                    cp_type,
                    cp_blob,
                    md_type,
                    md_blob,
                    channel_versions,
                ),
            )
        return _config(thread_id, checkpoint_ns, str(checkpoint["id"]))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        thread_id, checkpoint_ns = _thread(config), _namespace(config)
        checkpoint_id = str(config["configurable"]["checkpoint_id"])
        # Special channels (error, interrupt ...) have fixed negative indexes and replace
        # an earlier write; ordinary writes are idempotent per (task, index), as in LangGraph.
        verb = "REPLACE" if all(c in WRITES_IDX_MAP for c, _ in writes) else "IGNORE"
        rows = []
        for idx, (channel, value) in enumerate(writes):
            w_type, w_value = self.serde.dumps_typed(value)
            rows.append(
                (
                    thread_id,
                    checkpoint_ns,
                    checkpoint_id,
                    str(task_id),
                    WRITES_IDX_MAP.get(channel, idx),
                    channel,
                    w_type,
                    w_value,
                    task_path,
                )
            )
        with self._db.transaction() as db:
            db.executemany(
                f"INSERT OR {verb} INTO langgraph_writes (thread_id, checkpoint_ns, "
                "checkpoint_id, task_id, idx, channel, type, value, task_path) "
                "VALUES (?,?,?,?,?,?,?,?,?)",
                rows,
            )

    # -- thread maintenance -------------------------------------------------------------

    def delete_thread(self, thread_id: str) -> None:
        with self._db.transaction() as db:
            for table in _TABLES:
                db.execute(f"DELETE FROM {table} WHERE thread_id = ?", (str(thread_id),))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        source, target = str(source_thread_id), str(target_thread_id)
        with self._db.transaction() as db:
            # The whole history is copied (every checkpoint, blob and write), so the copy
            # can time-travel and rebuild delta channels exactly as the source can.
            db.execute(
                "INSERT OR REPLACE INTO langgraph_checkpoints SELECT ?, checkpoint_ns, "
                "checkpoint_id, parent_checkpoint_id, run_id, type, checkpoint, metadata_type, "
                "metadata, channel_versions FROM langgraph_checkpoints WHERE thread_id = ?",
                (target, source),
            )
            db.execute(
                "INSERT OR REPLACE INTO langgraph_blobs SELECT ?, checkpoint_ns, channel, "
                "version, type, blob FROM langgraph_blobs WHERE thread_id = ?",
                (target, source),
            )
            db.execute(
                "INSERT OR REPLACE INTO langgraph_writes SELECT ?, checkpoint_ns, "
                "checkpoint_id, task_id, idx, channel, type, value, task_path "
                "FROM langgraph_writes WHERE thread_id = ?",
                (target, source),
            )

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        if isinstance(run_ids, str):
            raise InvalidTypeError("run_ids must be a sequence of run ids, not one str")
        ids = [str(r) for r in run_ids]
        if not ids:
            return
        with self._db.transaction() as db:
            doomed = []
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                doomed += db.execute(
                    "SELECT thread_id, checkpoint_ns, checkpoint_id FROM langgraph_checkpoints "
                    f"WHERE run_id IN ({marks})",
                    chunk,
                ).fetchall()
            self._delete_checkpoints(db, doomed)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        if strategy not in _STRATEGIES:
            raise InvalidInputError(
                f"unknown prune strategy {strategy!r}; use one of {', '.join(_STRATEGIES)}"
            )
        if isinstance(thread_ids, str):
            raise InvalidTypeError("thread_ids must be a sequence of thread ids, not one str")
        if strategy == "delete":
            for thread_id in thread_ids:
                self.delete_thread(thread_id)
            return
        with self._db.transaction() as db:
            for thread_id in thread_ids:
                doomed = db.execute(
                    "SELECT thread_id, checkpoint_ns, checkpoint_id "
                    "FROM langgraph_checkpoints AS c "
                    "WHERE thread_id = ? AND checkpoint_id < (SELECT max(checkpoint_id) FROM "
                    "langgraph_checkpoints AS l WHERE l.thread_id = c.thread_id "
                    "AND l.checkpoint_ns = c.checkpoint_ns)",
                    (str(thread_id),),
                ).fetchall()
                self._delete_checkpoints(db, doomed)

    @staticmethod
    def _delete_checkpoints(db: Any, keys: Sequence[tuple[str, str, str]]) -> None:
        for key in keys:
            db.execute(
                "DELETE FROM langgraph_checkpoints "
                "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                key,
            )
            db.execute(
                "DELETE FROM langgraph_writes "
                "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                key,
            )
        for thread_id, checkpoint_ns in {(k[0], k[1]) for k in keys}:
            db.execute(_COLLECT_BLOBS, (thread_id, checkpoint_ns))

    def get_next_version(self, current: str | None, channel: None) -> str:
        # InMemorySaver's scheme: a zero-padded counter (so versions sort as strings) and
        # a random fraction (so two forks of one checkpoint never share a version).
        raw: object = current  # LangGraph may hand back an int version from older data
        if raw is None:
            current_v = 0
        elif isinstance(raw, int):
            current_v = raw
        else:
            current_v = int(str(raw).split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"

    # -- async: the same work on a worker thread -------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        items = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in items:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(lambda: self.prune(thread_ids, strategy=strategy))


def _thread(config: RunnableConfig) -> str:
    configurable = config.get("configurable") or {}
    if configurable.get("thread_id") is None:
        raise InvalidInputError(
            "a checkpointer needs config['configurable']['thread_id']; "
            "invoke the graph with {'configurable': {'thread_id': ...}}"
        )
    return checked_thread_id(configurable["thread_id"])


def _namespace(config: RunnableConfig) -> str:
    namespace = str(config["configurable"].get("checkpoint_ns") or "")
    if has_surrogates(namespace):
        raise InvalidInputError(
            f"config['configurable']['checkpoint_ns'] holds lone surrogates; {SURROGATE_FIX}"
        )
    return namespace


def _config(thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": checkpoint_ns,
            "checkpoint_id": checkpoint_id,
        }
    }
