"""CommonplaceSaver follows langgraph-checkpoint-sqlite's conventions: from_conn_string as
a sync and an async context manager, setup(), and message ids as the core's key."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph

from commonplace import Memory, Scope
from commonplace.errors import InvalidTypeError, StoreClosedError
from commonplace_langgraph import CommonplaceSaver

ANA: RunnableConfig = {"configurable": {"thread_id": "t1", "user_id": "ana"}}


def echo(saver: CommonplaceSaver) -> Any:
    def model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("I see.")]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_edge(START, "model")
    builder.add_edge("model", END)
    return builder.compile(checkpointer=saver)


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def test_from_conn_string_with_with(tmp_path: Path) -> None:
    url = "sqlite:///" + str(tmp_path / "memory.db")
    with CommonplaceSaver.from_conn_string(url) as saver:
        echo(saver).invoke({"messages": [HumanMessage("My sister Rita is a nurse.")]}, ANA)
        memory = saver.memory
        assert memory.count("note", scope="ana") == 1
    with pytest.raises(StoreClosedError):
        memory.count("note", scope="ana")  # the memory it opened is closed with it
    with CommonplaceSaver.from_conn_string(str(tmp_path / "memory.db")) as again:  # a path
        assert again.memory.count("note", scope="ana") == 1
        assert len(list(again.list(ANA))) == 3


def test_from_conn_string_with_async_with(tmp_path: Path) -> None:
    url = "sqlite:///" + str(tmp_path / "memory.db")

    async def run() -> tuple[int, int]:
        async with CommonplaceSaver.from_conn_string(url) as saver:
            graph = echo(saver)
            await graph.ainvoke({"messages": [HumanMessage("My dog is called Bolt.")]}, ANA)
            state = await graph.aget_state(ANA)
            return len(state.values["messages"]), saver.memory.count("note", scope="ana")

    assert asyncio.run(run()) == (2, 1)
    with CommonplaceSaver.from_conn_string(url) as saver:  # persisted, and reopened
        assert len(echo(saver).get_state(ANA).values["messages"]) == 2


def test_from_conn_string_refuses_what_is_no_url() -> None:
    with pytest.raises(InvalidTypeError, match="conn_string"):
        CommonplaceSaver.from_conn_string(42)  # type: ignore[arg-type]


def test_setup_sync_and_awaited(memory: Memory, db_url: str, tmp_path: Path) -> None:
    path = Path(db_url.removeprefix("sqlite:///"))
    with CommonplaceSaver(memory) as saver:
        with sqlite3.connect(path) as db:
            db.execute("DROP TABLE langgraph_writes")
        saver.setup()  # puts back what is missing, keeps what is there
        assert {"langgraph_checkpoints", "langgraph_writes", "langgraph_tapped"} <= tables(path)
        asyncio.run(_await(saver.setup()))
        echo(saver).invoke({"messages": [HumanMessage("I play the cello.")]}, ANA)

    async def wrapped() -> set[str]:
        inner_path = tmp_path / "checkpoints.db"
        async with AsyncSqliteSaver.from_conn_string(str(inner_path)) as inner:
            saver = CommonplaceSaver(memory, saver=inner)
            await saver.setup()  # the wrapped saver's own async setup runs too
            saver.close()
        return tables(inner_path)

    assert {"checkpoints", "writes"} <= asyncio.run(wrapped())


async def _await(awaitable: Any) -> None:
    await awaitable


def test_two_identical_messages_in_one_thread_are_two_episodes(saver: CommonplaceSaver) -> None:
    graph = echo(saver)
    graph.invoke({"messages": [HumanMessage("I am tired.")]}, ANA)
    graph.invoke({"messages": [HumanMessage("I am tired.")]}, ANA)
    assert len(saver.tapped("t1")) == 2
    assert saver.memory.count("episode", scope=Scope(user="ana", thread="t1")) == 2
    # the same message id written again (a replayed checkpoint) is still one episode
    graph.invoke(None, list(graph.get_state_history(ANA))[-2].config)
    assert saver.memory.count("episode", scope=Scope(user="ana", thread="t1")) == 2


@pytest.mark.parametrize("form", ["relative", "absolute", "plain"])
def test_the_tables_go_in_the_file_the_memory_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    """The adapter asks the memory's backend for its file instead of reading the URL a
    second time, so every URL form the core accepts lands in the same file."""
    monkeypatch.chdir(tmp_path)
    url = {
        "relative": "sqlite:///memory.db",
        "absolute": "sqlite:///" + str(tmp_path / "memory.db"),
        "plain": "memory.db",
    }[form]
    with Memory(url) as memory, CommonplaceSaver(memory) as saver:
        saver.put(
            {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}},
            empty_checkpoint(),
            {"source": "input", "step": -1, "parents": {}},
            {},
        )
    with sqlite3.connect(tmp_path / "memory.db") as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        (rows,) = db.execute("SELECT count(*) FROM langgraph_checkpoints").fetchone()
    assert {"records", "langgraph_checkpoints"} <= tables and rows == 1
