"""Fixtures shared by every test: real SQLite files and simulated time.

New stores in the suite use the hashing embedder unless a test asks for the default
(``monkeypatch.delenv("COMMONPLACE_EMBEDDER")``): most tests are about the store, the
writer and the rerank, whose assertions were written for exact wording, and the hashing
embedder is about 40 times faster than the semantic default on this machine. The default
itself is exercised by tests/core/test_default_embedder.py, the README test and the demo
test. Child processes inherit the setting.
"""

from __future__ import annotations

import io
import os
import re
import sqlite3
import sys
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from commonplace import Config, ManualClock, Memory

os.environ.setdefault("COMMONPLACE_EMBEDDER", "hashing")

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return "sqlite:///" + str(tmp_path / "memory.db")


# Ranking tests work with a handful of notes, so search is on from the first note
# (by default it waits for Config.search_min_notes notes; tests of that rule use their own).
SEARCH_ALWAYS = Config(search_min_notes=0)


@pytest.fixture
def memory(db_url: str, clock: ManualClock) -> Iterator[Memory]:
    with Memory(db_url, clock=clock, config=SEARCH_ALWAYS) as m:
        yield m


class TerminalStream(io.StringIO):
    """A stream that says it is a terminal, as a console's stderr does (or that holds what
    a real pseudo-terminal showed): what progress bars draw there."""

    def isatty(self) -> bool:
        return True

    def bars(self) -> list[tuple[str, int, int]]:
        """Each closed bar's name and the last ``n/total`` it drew (tqdm ends a bar with a
        newline, and draws each state after a carriage return)."""
        found = []
        for line in self.getvalue().replace("\r\n", "\n").split("\n"):
            last = re.match(r"(.+?):\s.*?(\d+)/(\d+)", line.rsplit("\r", 1)[-1])
            if last:
                found.append((last.group(1), int(last.group(2)), int(last.group(3))))
        return found


@pytest.fixture
def old_sqlite_file() -> Callable[[Path, int], sqlite3.Connection]:
    """A SQLite store file at an older schema version, made by that version's own
    migrations; returns an autocommit connection to put rows in it by hand (close it
    before opening the store)."""
    from commonplace.stores._sqlite_schema import APPLICATION_ID, MIGRATIONS

    def make(path: Path, version: int) -> sqlite3.Connection:
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("BEGIN")
        for migrate in MIGRATIONS[:version]:
            migrate(db)
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute(f"PRAGMA user_version = {version}")
        db.execute("COMMIT")
        return db

    return make


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Callable[..., TerminalStream]:
    """Call it for a fresh terminal, made stderr too unless ``as_stderr=False``; what a bar
    draws there is in it (``.bars()``)."""

    def make(*, as_stderr: bool = True) -> TerminalStream:
        stream = TerminalStream()
        if as_stderr:
            monkeypatch.setattr(sys, "stderr", stream)
        return stream

    return make
