"""Bulk import: a long history written a batch at a time, with a progress bar.

A transformer embeds a few dozen texts a second on a small machine, so importing a chat
export of 100k turns takes the better part of an hour whatever the store does. What an
import owes its user is batching (the embedder, the note writer's checks and SQLite each
pay per call far more than per text) and a bar that says how far it has got. Each batch
is one :meth:`~commonplace.Memory.write_many`: stored whole or not at all, so a run
stopped part way keeps the batches it finished, and running it again stores only what is
missing (a turn already stored is stored once).

With ``workers``, the rule writer drafts the next batch's notes in worker processes while
this one stores a batch: drafting is pure Python, about a third of a write, and held to
one core by the GIL, so on a machine with a core to spare the import runs that much
faster. The drafts are the ones this process would make (the rule writer is a function of
the turn alone); the pipeline checks them as it checks the hook's.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from .._progress import ProgressBar, checked_progress
from .._records import Role
from .._validate import checked_int
from ..errors import CommonplaceError, InvalidTypeError
from ._rules import RuleNoteWriter
from ._types import NoteDraft, Skip, Turn, WriteResult

DEFAULT_BATCH = 256
_MAX_BATCH = 100_000
MAX_WORKERS = 64

Drafts = list[NoteDraft | Skip | None]
#: writes a batch; the second argument is its drafts, when a worker made them
WriteBatch = Callable[[Sequence[Turn], Drafts | None], list[WriteResult]]


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
    write_many: WriteBatch,
    turns: object,  # Iterable[Turn], checked here
    *,
    check: Callable[[Turn], object],
    batch: int,
    progress: bool | None,
    workers: int = 0,
) -> ImportReport:
    """Write ``turns`` through ``write_many``, ``batch`` at a time. Every turn is read and
    checked (its type, then ``check``: what ``write_many`` would refuse it for) before the
    first batch is written, so a bad one changes nothing. With ``workers``, that many
    processes draft each batch's notes with the rule writer while the one before it is
    stored (the caller checks that the rule writer is this Memory's note writer)."""
    checked_int("batch", batch, low=1, high=_MAX_BATCH)
    checked_int("workers", workers, low=0, high=MAX_WORKERS)
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
    chunks = [cast("list[Turn]", given[s : s + batch]) for s in range(0, len(given), batch)]
    started = time.perf_counter()
    stored = notes = skipped = batches = 0
    # one batch leaves nothing to draft ahead of: a worker would only cost its start
    drafting = _drafted_ahead(chunks, workers) if workers and len(chunks) > 1 else None
    with (
        ProgressBar(desc="importing", unit="turn", total=len(given), progress=progress) as bar,
        drafting or _nothing_drafted(len(chunks)) as drafts,
    ):
        for chunk, drafted in zip(chunks, drafts):
            for result in write_many(chunk, drafted):
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


@contextmanager
def _nothing_drafted(count: int) -> Iterator[Iterator[None]]:
    yield iter([None] * count)


@contextmanager
def _drafted_ahead(chunks: list[list[Turn]], workers: int) -> Iterator[Iterator[Drafts]]:
    """Each chunk's drafts, in order, the next chunk's drafted while the caller stores one.
    The pool is a fresh one of spawned processes (a fork would copy this process's open
    store and threads), stopped when the import ends, however it ends."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        yield _each_drafted(pool, chunks, workers)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _each_drafted(
    pool: ProcessPoolExecutor, chunks: list[list[Turn]], workers: int
) -> Iterator[Drafts]:
    def submit(chunk: list[Turn]) -> list[Future[Drafts]]:
        size = -(-len(chunk) // workers)  # one part per worker
        parts = [chunk[at : at + size] for at in range(0, len(chunk), size)]
        return [pool.submit(draft_by_rules, part) for part in parts]

    try:
        ahead = submit(chunks[0])
        for n in range(len(chunks)):
            current, ahead = ahead, submit(chunks[n + 1]) if n + 1 < len(chunks) else []
            yield [draft for part in current for draft in part.result()]
    except BrokenProcessPool as exc:  # raised by a result or by the next submit
        raise CommonplaceError(
            f"a drafting worker stopped ({exc}); the batches before this one were "
            "stored: run the import again (it stores only what is missing), with "
            "workers=0 to draft in this process"
        ) from exc


def draft_by_rules(turns: Sequence[Turn]) -> Drafts:
    """What the rule writer drafts for each user turn (None for the others, which never
    become notes). A worker's task: a function of the turns alone, so any process gives
    the same drafts."""
    writer = RuleNoteWriter()
    return [
        writer.write(turn) if turn.role is Role.USER and turn.said_by is None else None
        for turn in turns
    ]
