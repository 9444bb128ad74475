"""The backend protocol: records in, candidates out, one transaction per batch.

A backend stores episodes and derived records for many scopes and answers
nearest-neighbour queries within a scope. Everything else (writing notes,
scoring, compiling context) happens above it, in the Memory facade, so a new
backend only has this small surface to implement and the shared conformance
suite to pass.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from .._records import Episode, Kind, Record
from .._scope import Scope
from ..embedders import Vectors


@dataclass(frozen=True, slots=True)
class EmbedderPin:
    """The embedding model a store's vectors were made with."""

    name: str
    dim: int


@dataclass(frozen=True, slots=True)
class TurnWrite:
    """One turn to store: its episode and, for a worthwhile user turn, its note."""

    episode: Episode
    note: Record | None = None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A record found near a query vector, with its cosine similarity."""

    record: Record
    similarity: float


@runtime_checkable
class Backend(Protocol):
    """What the Memory facade needs from a store."""

    @property
    def url(self) -> str: ...

    def read_pin(self) -> EmbedderPin | None:
        """The pinned embedder, or None for a store that holds no vectors yet."""
        ...

    def write_pin(self, pin: EmbedderPin) -> None:
        """Pin the embedder; only called on a store with no pin."""
        ...

    def existing_episode_ids(self, ids: Collection[str]) -> set[str]:
        """Which of ``ids`` are already stored."""
        ...

    def write_turns(self, turns: Sequence[TurnWrite], vectors: Vectors | None) -> list[bool]:
        """Store turns atomically: all or nothing.

        ``vectors`` holds one row per turn that has a note, in order. Returns, per
        turn, whether its episode was new; a turn whose episode already existed
        writes nothing (idempotency by content hash).
        """
        ...

    def get_episode(self, episode_id: str) -> Episode | None: ...

    def get_record(self, record_id: str) -> Record | None: ...

    def search(self, scope: Scope, vector: Vectors, *, limit: int) -> list[Candidate]:
        """Up to ``limit`` active records visible in ``scope``, nearest first."""
        ...

    def recent_records(self, scope: Scope, *, kinds: Collection[Kind], limit: int) -> list[Record]:
        """The newest active records of the given kinds visible in ``scope``."""
        ...

    def count(self, scope: Scope | None, kind: Kind) -> int:
        """How many active records (or episodes) of ``kind`` exist, in ``scope`` or in all."""
        ...

    def touch(self, record_ids: Collection[str], *, at: datetime) -> None:
        """Count one more access for each record and set its last access to ``at``."""
        ...

    def close(self) -> None: ...
