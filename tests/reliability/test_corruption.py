"""Damaged and mismatched stores: a clear error that names the fix, and nothing overwritten.

tests/core/test_sqlite_store.py covers the basic cases (garbage, another application's
database, a newer schema, a truncated file, another embedder). This extends them: a
store truncated at every kind of offset, pages overwritten with garbage at random
(hypothesis), a damaged write-ahead log, a damaged embedder pin, an embedder of the same
name with another dimension. Whatever the damage, the only errors are commonplace's, and
a store that refuses leaves its file exactly as it was.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from reliability_support import BUSY, SEED, SIZES, T0, marker, profile, tally, url_of

from commonplace import HashingEmbedder, Kind, ManualClock, Memory
from commonplace.errors import (
    CommonplaceError,
    CorruptStoreError,
    EmbedderMismatchError,
    SchemaVersionError,
    StoreError,
)

PAGE = 4096


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed store of a few hundred records, with summaries, links, cards and logs."""
    path = tmp_path_factory.mktemp("healthy") / "m.db"
    rng = random.Random(SEED)
    clock = ManualClock(T0)  # the same bytes on every run, so a failing example replays
    with Memory(url_of(path), config=BUSY, clock=clock) as memory:
        for n in range(240):
            clock.advance(minutes=7)
            who = rng.choice(["sister Mia", "friend Tom", "boss Karen"])
            memory.write(f"My {who} likes thing {marker(n)}.", scope=rng.choice(["ana", "bob"]))
            if n % 40 == 0:
                found = memory.recall(who, scope="ana")
                if found.included:
                    memory.feedback(found.id, used=list(found.included[:1]))
        memory.consolidate(scope="ana")
    assert not Path(f"{path}-wal").exists()  # closed cleanly: one self-contained file
    return path


def files(path: Path) -> dict[str, bytes]:
    """The store on disk: the database and its log (the -shm index is only a cache)."""
    out = {}
    for suffix in ("", "-wal", "-journal"):
        extra = Path(f"{path}{suffix}")
        if extra.exists() and (suffix == "" or extra.stat().st_size):
            out[suffix or "db"] = extra.read_bytes()
    return out


def use(path: Path) -> bool:
    """Open a damaged store and use it, step by step. Each step may work, or raise one of
    commonplace's errors (any other exception fails the test). Opening and counting only
    read: when one refuses, the files must be exactly as they were. (A recall, a write or a
    consolidation ends with several transactions: one that committed before the damage was
    met stays, as it would on a healthy store.) True if a step refused."""
    memory: Memory | None = None

    def open_it() -> None:
        nonlocal memory
        memory = Memory(url_of(path), config=BUSY)

    steps: list[tuple[bool, Callable[[], Any]]] = [
        (True, open_it),
        (True, lambda: memory and memory.count(Kind.NOTE)),
        (False, lambda: memory and memory.recall("sister Mia likes", scope="ana")),
        (False, lambda: memory and memory.write("My cousin Luis bakes bread.", scope="ana")),
        (False, lambda: memory and memory.consolidate(scope="ana")),
    ]
    try:
        for atomic, step in steps:
            before = files(path)
            try:
                step()
            except CommonplaceError as exc:
                assert not atomic or files(path) == before, f"refused ({exc}); files changed"
                return True
        return False
    finally:
        if memory is not None:
            memory.close()


def truncation_points(size: int) -> list[int]:
    pages = size // PAGE
    points = {
        1,
        50,
        99,
        100,
        101,
        PAGE - 1,
        PAGE,
        PAGE + 1,
        2 * PAGE,
        size // 2,
        size - PAGE,
        size - 1,
    }
    points |= {p * PAGE + d for p in range(2, pages, max(1, pages // 8)) for d in (0, 1, 2048)}
    return sorted(p for p in points if 0 < p < size)


def test_a_store_truncated_anywhere_is_refused_and_left_alone(
    healthy: Path, tmp_path: Path
) -> None:
    size = healthy.stat().st_size
    for point in truncation_points(size):
        path = tmp_path / f"cut-{point}.db"
        path.write_bytes(healthy.read_bytes()[:point])
        assert use(path), f"a store cut at byte {point} of {size} was used as if healthy"
        tally("truncated stores refused")


def test_pages_of_garbage_give_only_commonplace_errors(healthy: Path) -> None:
    size = healthy.stat().st_size

    @given(
        damage=st.lists(
            st.tuples(
                st.integers(0, size - 1),
                st.integers(1, PAGE),
                st.sampled_from([b"\x00", b"\xff", b"garbage!", bytes(range(256))]),
            ),
            min_size=1,
            max_size=3,
        )
    )
    @profile(SIZES.fuzz_examples // 2)
    def run(damage: list[tuple[int, int, bytes]]) -> None:
        with tempfile.TemporaryDirectory(prefix="cp-damage-") as folder:
            path = Path(folder) / "m.db"
            data = bytearray(healthy.read_bytes())
            for offset, length, pattern in damage:
                chunk = (pattern * (length // len(pattern) + 1))[:length]
                data[offset : offset + length] = chunk[: size - offset]
            path.write_bytes(bytes(data))
            if use(path):
                tally("damaged stores refused")
            else:
                tally("damaged stores still usable")

    run()


def test_a_damaged_write_ahead_log_is_ignored_and_the_store_opens(
    healthy: Path, tmp_path: Path
) -> None:
    path = tmp_path / "m.db"
    shutil.copy(healthy, path)
    with Memory(url_of(path), config=BUSY) as memory:
        notes = memory.count(Kind.NOTE)
    Path(f"{path}-wal").write_bytes(os.urandom(3 * PAGE + 32))  # not a valid log
    with Memory(url_of(path), config=BUSY) as memory:
        assert memory.count(Kind.NOTE) == notes
        memory.write("My cousin Luis bakes bread.", scope="ana")
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.parametrize(
    ("key", "value"),
    [("embedder.dim", "not a number"), ("embedder.dim", "-3"), ("embedder.name", "")],
)
def test_a_damaged_embedder_pin_is_a_clear_error(
    healthy: Path, tmp_path: Path, key: str, value: str
) -> None:
    path = tmp_path / "m.db"
    shutil.copy(healthy, path)
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises((CorruptStoreError, EmbedderMismatchError), match="embedder"):
        Memory(url_of(path))
    assert path.read_bytes() == before


def test_another_dimension_of_the_same_model_is_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.db"
    with Memory(url_of(path), embedder=HashingEmbedder(dim=64)) as memory:
        memory.write("My sister Mia plays chess.", scope="ana")
    before = path.read_bytes()
    for other in (HashingEmbedder(dim=128), HashingEmbedder(dim=256)):
        with pytest.raises(EmbedderMismatchError, match="re-embed"):
            Memory(url_of(path), embedder=other)
        assert path.read_bytes() == before
    with Memory(url_of(path)) as memory:  # the pinned model is found again by name
        assert memory.embedder.dim == 64 and memory.count(Kind.NOTE) == 1


def test_a_newer_schema_with_a_pending_log_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    keep = Memory(url_of(path), config=BUSY)  # holds the log open: frames stay in -wal
    keep.write("My sister Mia plays chess.", scope="ana")
    other = sqlite3.connect(path)
    other.execute("PRAGMA user_version = 99")
    other.commit()
    other.close()
    before = files(path)
    assert "-wal" in before
    with pytest.raises(SchemaVersionError, match="upgrade commonplace"):
        Memory(url_of(path))
    assert files(path) == before
    keep.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone() == (99,)


def test_an_empty_file_becomes_a_new_store(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    path.touch()
    with Memory(url_of(path), config=BUSY) as memory:
        memory.write("My sister Mia plays chess.", scope="ana")
        assert memory.count(Kind.NOTE) == 1


def test_a_store_missing_its_tables_is_a_store_error(healthy: Path, tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    shutil.copy(healthy, path)
    db = sqlite3.connect(path)
    db.execute("DROP TABLE links")
    db.commit()
    db.close()
    assert use(path)
    with pytest.raises(StoreError, match="links"), Memory(url_of(path), config=BUSY) as memory:
        memory.write("My sister Mia plays chess.", scope="ana")


def test_a_write_sqlite_rolled_back_itself_says_what_happened_and_what_to_do(
    tmp_path: Path,
) -> None:
    """When SQLite rolls a transaction back on its own (an I/O error on the journal, as
    when the -wal file is deleted under a running store), the error names the cause and
    the fix instead of "cannot commit - no transaction is active", and nothing is kept."""
    path = tmp_path / "wal.db"
    with Memory(url_of(path), embedder=HashingEmbedder()) as memory:
        memory.write("I live in Lisbon.", scope="ana")
        backend: Any = memory.backend
        with pytest.raises(StoreError) as caught, backend._transaction() as db:
            db.execute("DELETE FROM records")
            db.execute("ROLLBACK")  # what SQLite does itself after such an I/O error
        message = str(caught.value)
        assert "rolled back" in message and "open the store again" in message, message
        assert memory.count(Kind.NOTE) == 1  # nothing of the failed call, nothing lost
        memory.write("I like green tea.", scope="ana")  # and the store goes on working
        assert memory.count(Kind.NOTE) == 2
