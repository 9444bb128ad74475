"""LangGraph's official checkpointer conformance suite, run in the normal test suite.

``langgraph-checkpoint-conformance`` is meant to be driven by ``validate()`` on a
registered async factory that yields a fresh saver per capability; it detects the
extended capabilities a saver overrides and runs their specs too.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance import validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES
from langgraph.checkpoint.conformance.initializer import RegisteredCheckpointer
from langgraph.checkpoint.conformance.report import CapabilityReport
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from commonplace import Memory
from commonplace_langgraph import CommonplaceSaver

EVERY = {c.value for c in ALL_CAPABILITIES}


def run_suite(
    name: str, make: Callable[[], AsyncGenerator[BaseCheckpointSaver[Any], None]], skip: set[str]
) -> CapabilityReport:
    registered = RegisteredCheckpointer(name=name, factory=make, skip_capabilities=skip)
    report = asyncio.run(validate(registered))
    failures = {k: r.failures for k, r in report.results.items() if r.failures}
    assert report.passed_all_base(), failures
    assert report.passed_all(), failures
    return report


def passed(report: CapabilityReport) -> set[str]:
    return {name for name, result in report.results.items() if result.passed is True}


def test_own_tables_in_the_memory_file_pass_every_capability(tmp_path: Path) -> None:
    async def make() -> AsyncGenerator[BaseCheckpointSaver[Any], None]:
        path = "sqlite:///" + str(tmp_path / "memory.db")
        with Memory(path) as memory, CommonplaceSaver(memory) as saver:
            yield saver

    report = run_suite("CommonplaceSaver", make, skip=set())
    assert passed(report) == EVERY


def test_own_tables_for_an_in_memory_memory_pass_every_capability() -> None:
    async def make() -> AsyncGenerator[BaseCheckpointSaver[Any], None]:
        with Memory(":memory:") as memory, CommonplaceSaver(memory) as saver:
            yield saver

    report = run_suite("CommonplaceSaver(:memory:)", make, skip=set())
    assert passed(report) == EVERY


@pytest.mark.parametrize("inner", ["InMemorySaver", "AsyncSqliteSaver"])
def test_wrapping_another_saver_passes_what_that_saver_implements(
    inner: str, tmp_path: Path
) -> None:
    async def make() -> AsyncGenerator[BaseCheckpointSaver[Any], None]:
        with Memory("sqlite:///" + str(tmp_path / "memory.db")) as memory:
            if inner == "InMemorySaver":
                with CommonplaceSaver(memory, saver=InMemorySaver()) as saver:
                    yield saver
            else:
                path = str(tmp_path / "checkpoints.db")
                async with AsyncSqliteSaver.from_conn_string(path) as wrapped:
                    with CommonplaceSaver(memory, saver=wrapped) as saver:
                        yield saver

    # The extended operations the wrapped saver lacks are refused by CommonplaceSaver with
    # a clear NotImplementedError, so they are not claimed for it.
    wrapped_type = InMemorySaver if inner == "InMemorySaver" else AsyncSqliteSaver
    lacking = {
        op
        for op in ("delete_for_runs", "copy_thread", "prune")
        if getattr(wrapped_type, "a" + op) is getattr(BaseCheckpointSaver, "a" + op)
    }
    report = run_suite(f"CommonplaceSaver({inner})", make, skip=lacking)
    assert passed(report) == EVERY - lacking
    assert {"put", "put_writes", "get_tuple", "list", "delete_thread"} <= passed(report)
