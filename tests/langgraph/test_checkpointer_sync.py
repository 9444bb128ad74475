"""The checkpointer's sync API (the conformance suite only drives the async one)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import Checkpoint, CheckpointMetadata
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.types import ERROR
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph

from commonplace import Memory
from commonplace.errors import InvalidInputError, InvalidTypeError, StoreClosedError
from commonplace_langgraph import CommonplaceSaver


def checkpoint(values: dict[str, Any], versions: dict[str, Any]) -> Checkpoint:
    return Checkpoint(
        v=1,
        id=str(uuid6(clock_seq=-1)),
        ts="2026-01-05T09:00:00+00:00",
        channel_values=values,
        channel_versions=versions,
        versions_seen={},
        updated_channels=None,
    )


def meta(step: int, **extra: Any) -> CheckpointMetadata:
    return {"source": "loop", "step": step, "parents": {}, **extra}  # type: ignore[typeddict-item]


def config(thread: str, ns: str = "", checkpoint_id: str | None = None) -> Any:
    c: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ns}
    if checkpoint_id:
        c["checkpoint_id"] = checkpoint_id
    return {"configurable": c}


def chain(
    saver: CommonplaceSaver, thread: str, n: int, *, ns: str = "", run: str = ""
) -> list[Any]:
    stored: list[Any] = []
    for step in range(n):
        parent = stored[-1]["configurable"]["checkpoint_id"] if stored else None
        cp = checkpoint({"step": step, "big": "x" * 10}, {"step": step + 1, "big": 1})
        new: dict[str, str | int | float] = (
            {"step": step + 1, "big": 1} if step == 0 else {"step": step + 1}
        )
        stored.append(
            saver.put(config(thread, ns, parent), cp, meta(step, run_id=run or f"r{step}"), new)
        )
    return stored


def test_put_get_and_list_round_trip(saver: CommonplaceSaver) -> None:
    stored = chain(saver, "t1", 3)
    latest = saver.get_tuple(config("t1"))
    assert latest is not None
    assert latest.config == stored[-1]
    assert latest.checkpoint["channel_values"] == {"step": 2, "big": "x" * 10}
    assert latest.parent_config == stored[1]
    first = saver.get_tuple(stored[0])
    assert first is not None and first.checkpoint["channel_values"]["step"] == 0
    assert first.parent_config is None
    ids = [t.config["configurable"]["checkpoint_id"] for t in saver.list(config("t1"))]
    assert ids == [s["configurable"]["checkpoint_id"] for s in reversed(stored)]
    assert [t.metadata["step"] for t in saver.list(config("t1"), filter={"step": 1})] == [1]
    assert len(list(saver.list(config("t1"), limit=2))) == 2
    before = list(saver.list(config("t1"), before=stored[2]))
    assert [t.metadata["step"] for t in before] == [1, 0]
    assert len(list(saver.list(None))) == 3
    assert saver.get_tuple(config("nobody")) is None
    assert saver.get_tuple(config("t1", checkpoint_id=str(uuid4()))) is None


def test_put_writes_are_idempotent_and_ordered(saver: CommonplaceSaver) -> None:
    (stored,) = chain(saver, "t1", 1)
    saver.put_writes(stored, [("b", 2), ("a", 1)], "task-2", task_path="~b")
    saver.put_writes(stored, [("b", 2), ("a", 1)], "task-2", task_path="~b")
    saver.put_writes(stored, [("c", 3)], "task-1", task_path="~a")
    saver.put_writes(stored, [(ERROR, "boom")], "task-1", task_path="~a")
    saver.put_writes(stored, [(ERROR, "boom again")], "task-1", task_path="~a")
    tup = saver.get_tuple(stored)
    assert tup is not None and tup.pending_writes is not None
    assert [(w[1], w[2]) for w in tup.pending_writes] == [
        (ERROR, "boom again"),
        ("c", 3),
        ("b", 2),
        ("a", 1),
    ]


def test_a_channel_value_is_stored_once_per_version(
    saver: CommonplaceSaver, memory: Memory
) -> None:
    chain(saver, "t1", 5)
    path = memory.url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        big = db.execute(
            "SELECT count(*) FROM langgraph_blobs WHERE thread_id = 't1' AND channel = 'big'"
        ).fetchone()[0]
    assert big == 1  # five checkpoints share the unchanged value


def test_delete_copy_prune_and_delete_for_runs(saver: CommonplaceSaver, memory: Memory) -> None:
    chain(saver, "a", 3)
    chain(saver, "a", 2, ns="child:1")
    chain(saver, "b", 2, run="shared")
    saver.copy_thread("a", "c")
    assert [t.checkpoint["id"] for t in saver.list(config("c", ""))] == [
        t.checkpoint["id"] for t in saver.list(config("a", ""))
    ]
    saver.prune(["a"], strategy="keep_latest")
    assert len(list(saver.list(config("a", "")))) == 1
    assert len(list(saver.list(config("a", "child:1")))) == 1
    assert len(list(saver.list(config("c", "")))) == 3  # the copy is its own thread
    survivor = saver.get_tuple(config("a"))
    assert survivor is not None and survivor.checkpoint["channel_values"]["big"] == "x" * 10
    path = memory.url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        orphans = db.execute(
            "SELECT count(*) FROM langgraph_blobs WHERE thread_id = 'a' AND channel = 'step'"
        ).fetchone()[0]
    assert orphans == 2  # one per namespace: the pruned versions were collected
    saver.delete_for_runs(["shared"])
    assert list(saver.list(config("b"))) == []
    saver.prune(["c"], strategy="delete")
    assert list(saver.list(config("c"))) == []
    saver.delete_thread("a")
    assert list(saver.list(None)) == []
    saver.delete_thread("never-existed")
    saver.delete_for_runs([])


def test_bad_calls_get_clear_errors(saver: CommonplaceSaver) -> None:
    with pytest.raises(InvalidInputError, match="prune strategy"):
        saver.prune(["t"], strategy="keep_some")
    with pytest.raises(InvalidTypeError, match="sequence"):
        saver.prune("t1")
    with pytest.raises(InvalidTypeError, match="sequence"):
        saver.delete_for_runs("run-1")
    with pytest.raises(InvalidInputError, match="thread_id"):
        saver.put({"configurable": {}}, checkpoint({}, {}), meta(0), {})
    with pytest.raises(InvalidTypeError, match="Memory"):
        CommonplaceSaver("sqlite:///x.db")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="BaseCheckpointSaver"):
        CommonplaceSaver(saver.memory, saver=object())  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="serde"):
        CommonplaceSaver(saver.memory, saver=InMemorySaver(), serde=InMemorySaver().serde)


def test_checkpoints_survive_reopening(
    db_url: str, reopen: Callable[[], Memory], memory: Memory
) -> None:
    with CommonplaceSaver(memory) as first:
        stored = chain(first, "t1", 2)
    with pytest.raises(StoreClosedError):
        first.get_tuple(config("t1"))
    second_memory = reopen()
    with second_memory, CommonplaceSaver(second_memory) as second:
        tup = second.get_tuple(config("t1"))
        assert tup is not None and tup.config == stored[-1]


def _chat_graph(saver: Any) -> Any:
    def model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("Noted.")]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_edge(START, "model")
    builder.add_edge("model", END)
    return builder.compile(checkpointer=saver)


def test_wrapping_a_sync_only_sqlite_saver(tmp_path: Path, memory: Memory) -> None:
    conn = sqlite3.connect(str(tmp_path / "lg.db"), check_same_thread=False)
    try:
        with CommonplaceSaver(memory, saver=SqliteSaver(conn)) as saver:
            graph = _chat_graph(saver)
            cfg = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
            graph.invoke({"messages": [HumanMessage("My sister Rita is a nurse.")]}, cfg)
            assert len(graph.get_state(cfg).values["messages"]) == 2
            assert len(saver.tapped("t1")) == 1
            assert memory.count("note", scope="ana") == 1
            with pytest.raises(NotImplementedError, match="does not implement prune"):
                saver.prune(["t1"])
            saver.delete_thread("t1")
            assert graph.get_state(cfg).values == {}
            assert saver.tapped("t1") == {}
            assert memory.count("note", scope="ana") == 1  # memories outlive the thread
    finally:
        conn.close()


def test_checkpoints_can_live_in_a_file_of_their_own(tmp_path: Path) -> None:
    with Memory(":memory:") as memory:
        with CommonplaceSaver(memory, path=tmp_path / "checkpoints.db") as saver:
            chain(saver, "t1", 1)
        with CommonplaceSaver(memory, path=tmp_path / "checkpoints.db") as again:
            assert again.get_tuple(config("t1")) is not None


def test_from_url_opens_and_closes_its_own_memory(tmp_path: Path) -> None:
    url = "sqlite:///" + str(tmp_path / "owned.db")
    with CommonplaceSaver.from_url(url) as saver:
        graph = _chat_graph(saver)
        cfg = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
        graph.invoke({"messages": [HumanMessage("My sister Rita is a nurse.")]}, cfg)
        memory = saver.memory
    with pytest.raises(StoreClosedError):
        memory.count("note")
    with Memory(url) as reopened:
        assert reopened.count("note", scope="ana") == 1
