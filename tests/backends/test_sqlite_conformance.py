"""The backend conformance suite against the embedded SQLite store (real files)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from commonplace.stores import SQLiteBackend
from commonplace.testing.conformance import *  # noqa: F403


@pytest.fixture
def backend_factory(tmp_path: Path) -> Iterator[Callable[[], SQLiteBackend]]:
    opened: list[SQLiteBackend] = []

    def make() -> SQLiteBackend:
        backend = SQLiteBackend(tmp_path / f"store-{len(opened)}.db")
        opened.append(backend)
        return backend

    yield make
    for backend in opened:
        backend.close()
