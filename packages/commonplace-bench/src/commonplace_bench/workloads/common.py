"""What the workloads share: run sizes, the systems to build, and the scoring rules."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from commonplace.embedders import Embedder

from ..systems.base import System

__all__ = [
    "SIZES",
    "START",
    "Case",
    "RunContext",
    "Sizes",
    "SystemSpec",
    "at5",
    "contains",
    "leaks",
    "mean",
    "summarise",
    "top1",
    "words",
]

START = datetime(2025, 1, 6, 9, 0, tzinfo=timezone.utc)


@dataclass(frozen=True, slots=True)
class Sizes:
    """How big each workload is; ``full`` is what the published page uses."""

    name: str
    nlm_set_seeds: int
    history_seeds: int
    history_fillers: int
    supersession_facts: int
    supersession_exchanges: int
    poisoning_cases: int
    poisoning_exchanges: int
    horizon_turns: int
    horizon_recall_every: int
    horizon_sleep_every: int
    scale_sizes: tuple[int, ...]
    scale_queries: int
    scale_repeats: int


SIZES = {
    "full": Sizes("full", 2, 2, 300, 16, 200, 14, 120, 1000, 4, 100, (10_000, 100_000), 150, 3),
    "quick": Sizes("quick", 1, 1, 150, 10, 80, 8, 40, 300, 3, 100, (2_000, 10_000), 100, 2),
    "tiny": Sizes("tiny", 1, 1, 20, 3, 6, 3, 6, 30, 5, 10, (200,), 10, 1),
}


@dataclass(frozen=True, slots=True)
class SystemSpec:
    """One system the harness can build: ``make(folder, embedder, pool)``."""

    key: str
    label: str
    make: Callable[..., System]  # make(folder, embedder, pool=None, **options)
    note: str = ""  # how it is set up, for the page


@dataclass
class RunContext:
    """What a workload needs from the harness."""

    sizes: Sizes
    folder: Path
    specs: dict[str, SystemSpec]
    log: Callable[[str], None] = print
    seed: int = 1
    timings: dict[str, float] = field(default_factory=dict)

    def build(
        self, key: str, embedder: Embedder, *, pool: int | None = None, **options: Any
    ) -> System:
        spec = self.specs[key]
        folder = self.folder / f"{key}-{pool}-{time.monotonic_ns()}"
        system = spec.make(folder, embedder, pool=pool, **options)
        system.label = spec.label if pool is None else f"{spec.label} @ pool {pool}"
        return system


@dataclass(frozen=True, slots=True)
class Case:
    """A question asked at the end of a workload: the right answer and its rival.

    ``target`` must appear in the right record; ``rival`` in the record that a naive
    ranking prefers (an older value, a vague or less used twin); empty when none.
    """

    category: str
    query: str
    target: str
    rival: str = ""


_WORD = re.compile(r"[\w'’.:-]+")


def words(text: str) -> set[str]:
    return {w.strip(".,:;!?'’").lower() for w in _WORD.findall(text)} - {""}


def leaks(query: str, target: str) -> bool:
    """Whether the query contains a word of the target that is not a stop word."""
    stop = {
        *("the", "a", "an", "of", "in", "on", "at", "to", "is", "my", "i", "and", "for"),
        *("do", "da", "de", "o", "e", "we", "our", "me", "it", "up", "out", "now"),
    }
    return bool((words(target) - stop) & words(query))


def contains(text: str, fragment: str) -> bool:
    """Case-insensitive match of ``fragment`` on word boundaries."""
    if not fragment:
        return False
    pattern = r"(?<![\w])" + re.escape(fragment.lower()) + r"(?![\w])"
    return re.search(pattern, text.lower()) is not None


def mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0


def top1(hits: Sequence[str], case: Case) -> bool:
    """The first hit holds the target and not its rival."""
    return bool(hits) and contains(hits[0], case.target) and not contains(hits[0], case.rival)


def at5(hits: Sequence[str], case: Case) -> bool:
    return any(contains(h, case.target) for h in hits[:5])


def summarise(per: dict[str, list[float]]) -> dict[str, Any]:
    """Mean per category plus ``overall`` (over all cases, not over categories)."""
    out: dict[str, Any] = {cat: mean(values) for cat, values in per.items()}
    out["overall"] = mean(v for values in per.values() for v in values)
    return out
