"""The right to be forgotten: ``Memory.forget_scope`` leaves no trace of the scope behind.

A store is filled with everything a scope can leave: episodes (user and assistant),
notes, merges, supersessions, links, uses, recall logs, feedback, pins, conflicts,
summaries and procedures (some written for the scope, some for the user across threads),
profile cards and rolling summaries, audit entries. Every turn of the forgotten scope
carries a marker word. After ``forget_scope``, every cell of every table of the store
(full-text index included) is scanned for those markers and must hold none of them,
while every other scope keeps all it had except what was derived from the forgotten one.

The store is reached through a ``ForgetStore`` fixture, parametrised by backend: SQLite
today; the Weaviate backend joins by adding a parameter whose ``scan`` lists every object
of every collection and tenant (see ``forget_store`` below).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from reliability_support import BUSY, T0, Hit, marker, scan, tally, url_of

from commonplace import Kind, ManualClock, Memory, Scope

FORGOTTEN = Scope(user="ana", thread="t1")
INSIDE = (FORGOTTEN, Scope(user="ana", agent="coach", thread="t1"))  # both visible in it
OUTSIDE = (
    Scope(user="ana", thread="t2"),
    Scope(user="ana"),
    Scope(user="bob", thread="t1"),
    Scope(user="bob"),
)


@dataclass
class ForgetStore:
    """A Memory on some backend, and a way to read every stored value back."""

    memory: Memory
    scan: Callable[[list[str]], list[Hit]]  # every place holding one of these words
    raw: Callable[[], bytes]  # the store's bytes at rest (b"" when not applicable)


@pytest.fixture(params=["sqlite"])
def forget_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ForgetStore]:
    """Each backend that can be scanned end to end. To add Weaviate: a "weaviate" param
    opening ``Memory("weaviate://...")`` on a test server, with a ``scan`` that walks every
    object of every collection in every tenant and returns the places holding a word."""
    assert request.param == "sqlite"
    path = tmp_path / "m.db"
    with Memory(url_of(path), config=BUSY, clock=ManualClock(T0)) as memory:

        def raw() -> bytes:
            return b"".join(
                Path(f"{path}{s}").read_bytes() for s in ("", "-wal") if Path(f"{path}{s}").exists()
            )

        yield ForgetStore(memory, lambda words: scan(path, words), raw)


def fill(memory: Memory) -> dict[Scope, list[str]]:
    """Write everything a scope can leave behind; the markers written per scope."""
    words: dict[Scope, list[str]] = {}
    n = 0

    def say(scope: Scope, text: str, role: str = "user") -> None:
        nonlocal n
        n += 1
        words.setdefault(scope, []).append(marker(n))
        memory.write(f"{text} {marker(n)}.", scope=scope, role=role)

    for scope in (*INSIDE, *OUTSIDE):
        say(scope, "My sister Mia plays chess")
        say(scope, "My sister Mia bakes bread")
        say(scope, "My coworker Mia studies law")  # two people named Mia: a conflict
        say(scope, "I live in Lisbon")
        say(scope, "I live in Porto")  # supersedes Lisbon
        say(scope, "Can you draft my weekly report")
        say(scope, "Please draft my weekly report again")  # a procedure candidate
        say(scope, "Sounds good, I will remember Mia", role="assistant")
    for scope in (*INSIDE, *OUTSIDE):
        found = memory.recall("sister Mia chess bread", scope=scope)
        if found.included:
            memory.feedback(found.id, used=list(found.included[:2]))  # uses and co-use links
            memory.pin(found.included[0], scope=scope)
    for scope in (Scope(user="ana"), FORGOTTEN, Scope(user="bob")):
        memory.consolidate(scope=scope)  # summaries per thread and across threads
        memory.sleep(scope=scope)
        memory.rewrite_profile(scope=scope)  # profile cards and rolling summaries
        memory.recall("Mia", scope=scope)  # a recall log that shows the forgotten notes
    return words


def test_forget_scope_leaves_no_trace_of_it(forget_store: ForgetStore) -> None:
    memory = forget_store.memory
    words = fill(memory)
    gone = [w for s in INSIDE for w in words[s]]
    kept = [w for s in OUTSIDE for w in words[s]]
    assert forget_store.scan(gone), "the forgotten scope's words were never stored"
    episodes_before = memory.count(Kind.EPISODE)

    counts = memory.forget_scope(FORGOTTEN)

    hits = forget_store.scan(gone)
    assert hits == [], "traces left:\n" + "\n".join(map(str, hits[:10]))
    # every other scope keeps all its turns and their notes
    assert memory.count(Kind.EPISODE) == episodes_before - sum(len(words[s]) for s in INSIDE)
    found = {h.needle for h in forget_store.scan(kept) if h.table == "episodes"}
    assert found == set(kept)
    for scope in OUTSIDE:
        assert memory.count(Kind.NOTE, scope=scope) > 0
    # nothing of it comes back, and the store works on
    for scope in (Scope(user="ana"), *OUTSIDE):
        text = memory.recall(
            "sister Mia chess bread coworker Lisbon Porto report", scope=scope
        ).text
        assert not [w for w in gone if w in text]
    memory.consolidate(scope="ana")
    memory.rewrite_profile(scope="ana")
    assert forget_store.scan(gone) == []
    tally("forget_scope: values scanned clean", len(gone))
    assert counts["episodes"] == sum(len(words[s]) for s in INSIDE)


def test_forgotten_text_is_gone_from_the_file_bytes(forget_store: ForgetStore) -> None:
    """Not only from the tables: deleted content is zeroed and the log is checkpointed,
    so the words are not left in free pages or old log frames either."""
    memory = forget_store.memory
    words = fill(memory)
    gone = [w for s in INSIDE for w in words[s]]
    assert any(w.encode() in forget_store.raw() for w in gone)
    memory.forget_scope(FORGOTTEN)
    raw = forget_store.raw()
    assert [w for w in gone if w.encode() in raw] == []


def test_forgetting_one_user_never_touches_another(tmp_path: Path) -> None:
    """The conformance suite checks this per table; here through the Memory, end to end."""
    path = tmp_path / "m.db"
    with Memory(url_of(path), config=BUSY) as memory:
        for user in ("ana", "bob", "ana2", "an", "ana%"):
            for i in range(3):
                memory.write(f"My friend Tom plays chess {user} {i}.", scope=user)
        before = _rows(path, exclude_user="ana")
        memory.forget_scope("ana")
        assert _rows(path, exclude_user="ana") == before
        assert memory.count(Kind.EPISODE, scope="ana") == 0


def _rows(path: Path, *, exclude_user: str) -> dict[str, list[tuple[object, ...]]]:
    db = sqlite3.connect(path)
    try:
        return {
            table: sorted(
                db.execute(f"SELECT * FROM {table} WHERE scope_user != ?", (exclude_user,)),
                key=repr,
            )
            for table in ("episodes", "records", "ledger")
        }
    finally:
        db.close()
