"""Bulk import: a long history written a batch at a time, with a progress bar.

A transformer embeds a few dozen texts a second on a small machine, so importing a chat
export of 100k turns takes the better part of an hour whatever the store does. What an
import owes its user is batching (the embedder, the note writer's checks and SQLite each
pay per call far more than per text) and a bar that says how far it has got. Each batch
is one :meth:`~commonplace.Memory.write_many`: stored whole or not at all, so a run
stopped part way keeps the batches it finished, and running it again stores only what is
missing (a turn already stored is stored once).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from .._progress import ProgressBar, checked_progress
from .._validate import checked_int
from ..errors import InvalidTypeError
from ._types import Turn, WriteResult

DEFAULT_BATCH = 256
_MAX_BATCH = 100_000


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What :meth:`~commonplace.Memory.import_turns` stored.

    ``turns`` were given; ``stored`` of them were new (the others were stored before, by
    an earlier run, say); of the new ones, ``notes`` got a note (a new one, or an existing
    note they confirm) and ``skipped`` got none (assistant replies among them: they never
    become memory). ``seconds`` is the wall time of the whole import.
    """

    turns: int
    stored: int
    notes: int
    skipped: int
    batches: int
    seconds: float

    @property
    def rate(self) -> float:
        """Turns per second (0 for an empty import)."""
        return self.turns / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "stored": self.stored,
            "notes": self.notes,
            "skipped": self.skipped,
            "batches": self.batches,
            "seconds": round(self.seconds, 3),
            "turns_per_second": round(self.rate, 1),
        }


def import_in_batches(
    write_many: Callable[[Sequence[Turn]], list[WriteResult]],
    turns: object,  # Iterable[Turn], checked here
    *,
    check: Callable[[Turn], object],
    batch: int,
    progress: bool | None,
) -> ImportReport:
    """Write ``turns`` through ``write_many``, ``batch`` at a time. Every turn is read and
    checked (its type, then ``check``: what ``write_many`` would refuse it for) before the
    first batch is written, so a bad one changes nothing."""
    checked_int("batch", batch, low=1, high=_MAX_BATCH)
    checked_progress(progress)
    if isinstance(turns, (str, bytes)) or not isinstance(turns, Iterable):
        raise InvalidTypeError(
            f"import_turns takes an iterable of Turn, not {type(turns).__name__}; "
            "build each with Memory.turn()"
        )
    given: list[object] = list(turns)
    for n, item in enumerate(given):
        if not isinstance(item, Turn):
            raise InvalidTypeError(
                f"import_turns takes Turns: item {n} is a {type(item).__name__}; build each "
                "with Memory.turn() (nothing was written)"
            )
        check(item)
    started = time.perf_counter()
    stored = notes = skipped = batches = 0
    with ProgressBar(desc="importing", unit="turn", total=len(given), progress=progress) as bar:
        for start in range(0, len(given), batch):
            chunk = cast("list[Turn]", given[start : start + batch])  # checked above
            for result in write_many(chunk):
                if result.created:
                    stored += 1
                    notes += result.note is not None
                    skipped += result.skipped is not None
            batches += 1
            bar.update(len(chunk))
    return ImportReport(
        turns=len(given),
        stored=stored,
        notes=notes,
        skipped=skipped,
        batches=batches,
        seconds=time.perf_counter() - started,
    )
