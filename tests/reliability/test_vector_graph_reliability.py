"""The kill and isolation tests again, with every scope of more than a few vectors searched
through an HNSW graph (saved beside the file as the store's vector cache): a kill while a
graph is built, merged or saved loses nothing acknowledged, and a graph never lets a scope
see another's records."""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

import pytest
import test_crash_safety
import test_isolation
from reliability_support import url_of

from commonplace import Kind, Memory

GRAPHS = {"COMMONPLACE_ANN_ROWS": "6"}  # a scope of six vectors moves into a graph
EVERY_SCOPE = {"COMMONPLACE_ANN_ROWS": "1"}  # the isolation stores are small: all in graphs


def test_kills_lose_nothing_while_graphs_are_built_and_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMMONPLACE_ANN_ROWS", GRAPHS["COMMONPLACE_ANN_ROWS"])
    test_crash_safety.test_sigkill_at_random_moments_loses_nothing_acknowledged(tmp_path)
    saved = sorted(p.suffix for p in (tmp_path / "memory.db.vectors").iterdir())
    assert ".json" in saved and ".usearch" in saved  # graphs were really in play
    with Memory(url_of(tmp_path / "memory.db")) as memory:  # and a saved one is used again
        memory.recall("Mia chess", scope="ana")
        graphs = list(memory.backend._index.graphs())  # type: ignore[attr-defined]
        assert graphs and memory.count(Kind.NOTE) > 0


def test_no_scope_reaches_another_through_a_graph() -> None:
    with mock.patch.dict(os.environ, EVERY_SCOPE):
        test_isolation.test_no_call_ever_returns_or_touches_another_scope()
