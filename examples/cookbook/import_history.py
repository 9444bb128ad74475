"""Import an existing chat history into memory, in batches, safely re-runnable.

Use this when you adopt commonplace with conversations already on file (a support
system's export, an app's message table): each batch is one transaction, each message
keeps its original time and id, and running the import again stores nothing twice, so an
interrupted import is finished by running it again.

    python examples/cookbook/import_history.py
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from commonplace import Memory, Turn

BATCH_SIZE = 4
START = datetime(2025, 9, 1, 18, 0, tzinfo=timezone.utc)
LINES = [
    ("user", "Hi, I'm Marta and I run a small bakery in Coimbra."),
    ("assistant", "Nice to meet you, Marta! How can I help with the bakery?"),
    ("user", "I want a weekly schedule for my two employees, Rui and Sofia."),
    ("assistant", "Sure. Which days is the bakery open?"),
    ("user", "The bakery is open Tuesday to Sunday, from 7am to 3pm."),
    ("user", "thanks"),
    ("user", "Sofia can't work on Sundays, she studies at the university."),
    ("assistant", "Noted, I will keep Sofia off the Sunday shift."),
    ("user", "Our best seller is the pastel de nata."),
    ("user", "I'm allergic to hazelnuts, so no hazelnut recipes please."),
]


@dataclass(frozen=True)
class Message:
    """One message of the export: what most chat stores keep."""

    id: str
    role: str
    text: str
    at: datetime


HISTORY = [
    Message(f"m{n:03}", role, text, START + timedelta(minutes=5 * n))
    for n, (role, text) in enumerate(LINES)
]


def batches(items: Sequence[Message], size: int) -> Iterator[Sequence[Message]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def import_history(memory: Memory, user: str, history: Sequence[Message]) -> int:
    """Write the history in batches; returns how many turns were new."""
    new = 0
    total = (len(history) + BATCH_SIZE - 1) // BATCH_SIZE
    for number, chunk in enumerate(batches(history, BATCH_SIZE), 1):
        # turn() checks every message before anything is written; write_many stores the
        # whole batch in one transaction (all of it, or none). key= is the message id, so
        # a message imported again is recognised, and two identical "ok"s stay two.
        turns: list[Turn] = [
            memory.turn(m.text, role=m.role, scope=user, at=m.at, key=m.id) for m in chunk
        ]
        results = memory.write_many(turns)
        created = sum(r.created for r in results)
        notes = sum(r.created and r.note is not None for r in results)
        new += created
        print(f"  batch {number}/{total}: {len(turns)} turns, {created} new, {notes} new notes")
    return new


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:  # removed afterwards, with the store
        url = f"sqlite:///{Path(folder) / 'memory.db'}"
        runs = []
        for run in (1, 2):  # the second run stands for an import restarted after a crash
            print(f"import run {run}:")
            with Memory(url) as memory:
                new = import_history(memory, "marta", HISTORY)
                held = memory.count("episode", scope="marta"), memory.count("note", scope="marta")
            print(f"  -> {new} new turns; the store holds {held[0]} episodes, {held[1]} notes")
            runs.append((new, held))

        with Memory(url) as memory:
            context = memory.recall("which days can Sofia work?", scope="marta").render()
            print("\n" + context)

    (first_new, first_held), (second_new, second_held) = runs
    assert first_new == first_held[0] == len(HISTORY)  # every message once, both roles
    assert second_new == 0 and second_held == first_held  # the re-run stored nothing
    assert "Sunday" in context  # and the imported history is memory like any other
    print(f"import_history: {first_new} turns imported once; the second run added 0")


if __name__ == "__main__":
    main()
