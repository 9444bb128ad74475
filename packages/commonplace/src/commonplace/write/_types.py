"""What flows through the write path: a turn in, a note draft or a skip out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .._records import Record, Role, Tags
from .._scope import Scope


@dataclass(frozen=True, slots=True)
class Turn:
    """One validated turn of a conversation, as the write path sees it.

    ``speaker`` names who said it when several people share a conversation (given to
    :meth:`Memory.write`, or read from a leading "Name: " in the text); the note then
    names them instead of "the user". It changes nothing about scopes.
    """

    text: str
    role: Role
    scope: Scope
    at: datetime
    meta: Mapping[str, Any] = field(default_factory=dict)
    key: str | None = None
    speaker: str | None = None


@dataclass(frozen=True, slots=True)
class NoteDraft:
    """What a note writer proposes: one sentence about the user's turn, with tags."""

    text: str
    tags: Tags = field(default_factory=Tags)


@dataclass(frozen=True, slots=True)
class Skip:
    """A note writer's decision that a turn is not worth a note, and why."""

    reason: str


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What one write stored.

    ``created`` is False when the same turn was already stored in this scope
    (nothing was written again). ``note`` is the turn's note, new or existing;
    when there is none, ``skipped`` says why.
    """

    episode_id: str
    created: bool
    note: Record | None = None
    skipped: str | None = None
