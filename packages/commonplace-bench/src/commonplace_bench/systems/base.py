"""What every memory system in the comparison offers the harness, and shared helpers.

A workload talks to every system through :class:`System`: it writes turns (or, for
the NLM-style set, memories with injected signals), asks queries at a simulated
time with a token budget, and may say which hit an answer used. What comes back is
the ranked texts the system retrieved and the context it would hand the model, with
its size in ``cl100k_base`` tokens, so every system is judged on the same things.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from commonplace import count_tokens
from commonplace.embedders import Embedder, Vectors

__all__ = [
    "Memo",
    "Metered",
    "Retrieved",
    "System",
    "Turn",
    "folder_bytes",
    "line",
    "pack",
]


@dataclass(frozen=True, slots=True)
class Turn:
    """One chat message: who said it, what, when, and a unique message key."""

    role: str  # "user" or "assistant"
    text: str
    at: datetime
    key: str


@dataclass(frozen=True, slots=True)
class Memo:
    """A memory with signals injected as metadata, the way NLM's benchmark sets them up."""

    text: str
    created_at: datetime
    frequency: int = 0
    importance: float | None = None


@dataclass(frozen=True, slots=True)
class Retrieved:
    """Ranked retrieved texts, best first, and the context the model would read."""

    hits: tuple[str, ...]
    context: str
    tokens: int
    handle: Any = None  # a system's own reference (a commonplace Recall), for feedback
    profile_tokens: int | None = None  # commonplace's profile card, when it has one


class Metered:
    """An embedder wrapper that counts the calls and texts one system asks for.

    Vectors come from a shared cache (each text is embedded once per run, whatever
    system asks), but the counts are what that system would cost with a real model.
    """

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.calls = 0
        self.texts = 0

    @property
    def uncounted(self) -> Embedder:
        """The wrapped embedder, for a caller that counts calls elsewhere."""
        return self._inner

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        self.texts += len(texts)
        return self._inner.embed(texts)


class System(abc.ABC):
    """One memory system under test, living in its own folder."""

    #: a short display name, set by the factory (includes the pool where it matters)
    label: str = ""
    #: whether ``query(as_of=...)`` is answered (else the workload reports n/a)
    supports_as_of: bool = False

    def __init__(self, folder: Path, embedder: Embedder) -> None:
        self.folder = folder
        self.embedder = Metered(embedder)
        self.llm_calls = 0  # no system here calls an LLM in the configuration measured

    @abc.abstractmethod
    def add(self, turns: Sequence[Turn]) -> None:
        """Store a batch of turns (one exchange, or a block of history)."""

    def add_memos(self, memos: Sequence[Memo]) -> None:
        """Store memories with injected signals; systems without such signals ignore them."""
        self.add([Turn("user", m.text, m.created_at, f"memo-{n}") for n, m in enumerate(memos)])

    @abc.abstractmethod
    def query(
        self,
        text: str,
        *,
        at: datetime,
        top_k: int,
        budget: int,
        as_of: datetime | None = None,
    ) -> Retrieved:
        """Retrieve for ``text`` at simulated time ``at``; the context fits ``budget``."""

    def feedback(self, retrieved: Retrieved, used: Sequence[int]) -> None:  # noqa: B027
        """Say which hits (indices into ``retrieved.hits``) the answer used (if supported)."""

    def maintain(self, *, at: datetime) -> None:  # noqa: B027
        """The system's scheduled housekeeping, if it has any (commonplace's sleep)."""

    def embed_counts(self) -> tuple[int, int]:
        """(calls, texts) this system asked its embedder for so far."""
        return self.embedder.calls, self.embedder.texts

    def disk_bytes(self) -> int:
        return folder_bytes(self.folder) if self.folder.exists() else 0

    def close(self) -> None:  # noqa: B027
        """Release files and processes."""


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


HEADER = "Relevant earlier messages:"


def pack(lines: Sequence[str], budget: int, *, header: str = HEADER) -> tuple[str, int]:
    """Greedily keep whole lines, best first, while the block fits ``budget`` tokens.

    How a plain retriever's results become context: the header, then one line per
    hit in rank order, skipping a line that would overflow (a shorter one may fit).
    """
    spent = count_tokens(header + "\n")
    kept: list[str] = []
    for line in lines:
        cost = count_tokens(line + "\n")
        if spent + cost <= budget:
            kept.append(line)
            spent += cost
    if not kept:
        return "", 0
    text = "\n".join([header, *kept])
    return text, count_tokens(text)


def line(role: str | None, text: str, at: datetime | None) -> str:
    """One retrieved message as a context line: ``- [date] role: text`` (flattened)."""
    flat = " ".join(text.split())
    when = f"[{at:%Y-%m-%d}] " if at is not None else ""
    who = f"{role}: " if role else ""
    return f"- {when}{who}{flat}"
