"""Small builders for backend tests: episodes, notes and unit vectors at fixed times."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from .._records import Episode, Kind, Record, Role, Status, Tags, Tier, episode_id, note_id
from .._scope import Scope
from ..embedders import Vectors
from ..stores import EmbedderPin

DIM = 8
PIN = EmbedderPin(name="commonplace-conformance-v1", dim=DIM)
T0 = datetime(2026, 1, 5, 9, 0, 0, 250_001, tzinfo=timezone.utc)


def unit(*weights: float, dim: int = DIM) -> Vectors:
    """A unit float32 vector from its first few components (the rest are zero)."""
    vector = np.zeros(dim, np.float32)
    vector[: len(weights)] = weights
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def rows(*vectors: Vectors) -> Vectors:
    return np.stack(vectors).astype(np.float32)


def episode(
    scope: Scope,
    text: str,
    *,
    role: Role = Role.USER,
    at: datetime = T0,
    meta: Mapping[str, Any] | None = None,
) -> Episode:
    """An episode with its content-addressed id, as the Memory facade would make it."""
    return Episode(
        id=episode_id(scope, role, text, at=at),
        scope=scope,
        role=role,
        text=text,
        at=at,
        meta=dict(meta or {}),
    )


def note(
    source: Episode,
    text: str | None = None,
    *,
    tags: Tags | None = None,
    at: datetime | None = None,
    kind: Kind = Kind.NOTE,
    record_id: str | None = None,
    provenance: Sequence[str] | None = None,
    tier: Tier = Tier.WARM,
    status: Status = Status.ACTIVE,
    data: Mapping[str, Any] | None = None,
    valid_from: datetime | None = None,
) -> Record:
    """A derived record of ``source`` (a note by default, with the note id of its episode)."""
    when = at or source.at
    return Record(
        id=record_id or note_id(source.id),
        kind=kind,
        scope=source.scope,
        text=text or f"The user said: {source.text}",
        tags=tags or Tags(),
        provenance=tuple(provenance if provenance is not None else (source.id,)),
        created_at=when,
        last_access=when,
        tier=tier,
        status=status,
        data=dict(data or {}),
        valid_from=valid_from,
    )


def later(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)
