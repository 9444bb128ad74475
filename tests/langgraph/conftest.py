"""Fixtures for the LangGraph adapter: real SQLite files, real graphs, a scripted model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage
from lg_helpers import ScriptedModel

from commonplace import ManualClock, Memory
from commonplace_langgraph import CommonplaceSaver, CommonplaceStore
from commonplace_langgraph._scope import forget_warnings


@pytest.fixture(autouse=True)
def _warn_again() -> None:
    """Each test sees the no-user warning for its own threads (it is said once per thread)."""
    forget_warnings()


@pytest.fixture
def scripted() -> Callable[..., ScriptedModel]:
    def make(*replies: str | AIMessage) -> ScriptedModel:
        messages = [r if isinstance(r, AIMessage) else AIMessage(content=r) for r in replies]
        return ScriptedModel(messages=iter(messages))

    return make


@pytest.fixture
def saver(memory: Memory) -> Iterator[CommonplaceSaver]:
    with CommonplaceSaver(memory) as s:
        yield s


@pytest.fixture
def store(memory: Memory) -> Iterator[CommonplaceStore]:
    with CommonplaceStore(memory) as s:
        yield s


@pytest.fixture
def reopen(db_url: str, clock: ManualClock) -> Callable[[], Memory]:
    """A second Memory on the same file (close it yourself)."""

    def make() -> Memory:
        return Memory(db_url, clock=clock)

    return make


@pytest.fixture
def tmp_db(tmp_path: Path) -> Callable[[str], str]:
    def make(name: str) -> str:
        return "sqlite:///" + str(tmp_path / name)

    return make
