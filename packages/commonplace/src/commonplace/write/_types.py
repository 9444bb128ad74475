"""What flows through the write path: a turn in, a note draft or a skip out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from .._records import Record, Role, Tags
from .._scope import Scope, coerce_scope
from .._validate import (
    MAX_TURN_CHARS,
    checked_key,
    checked_meta,
    checked_role,
    checked_speaker,
    checked_text,
    checked_time,
)


@dataclass(frozen=True, slots=True)
class Turn:
    """One validated turn of a conversation, as the write path sees it.

    ``speaker`` names who said it when several people share a conversation (given to
    :meth:`Memory.write`, or read from a leading "Name: " in the text); the note then
    names them instead of "the user". It changes nothing about scopes.

    ``said_by`` names who sent a message that is not the user's although its role is
    (another agent, a tool or a model handing work on as a human message, another person
    in a group chat): the firewall keeps such a turn as evidence, an episode with that
    name in its ``meta``, never a note. :func:`commonplace.said_by` gives the value from a
    message's name, the configured user and the names an application declared as theirs.

    A Turn validates itself when built, however it is built (:meth:`Memory.turn`, by
    hand, by an integration, with ``dataclasses.replace``): a value :meth:`Memory.write`
    would refuse is refused here with the same error and message, and what it accepts is
    normalised the same way (a role or scope given as text, ``at`` in UTC, ``meta`` as
    plain JSON data). Only the length limit of a Memory's ``Config.max_turn_chars`` is
    checked later, by :meth:`Memory.write_many`, as a Turn belongs to no Memory.
    """

    text: str
    role: Role
    scope: Scope
    at: datetime
    meta: Mapping[str, Any] = field(default_factory=dict)
    key: str | None = None
    speaker: str | None = None
    said_by: str | None = None

    def __post_init__(self) -> None:
        # in the order Memory.write checks them, so the first fault found is the same one
        checked = {
            "text": checked_text(self.text, limit=MAX_TURN_CHARS, what="turn"),
            "role": checked_role(self.role),
            "scope": coerce_scope(self.scope),
            "at": checked_time("at", self.at),
            "meta": checked_meta(self.meta),
            "key": checked_key(self.key),
            "speaker": checked_speaker(self.speaker),
            "said_by": checked_speaker(self.said_by, what="said_by"),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)  # frozen: normalised once, here


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
    when there is none, ``skipped`` says why. ``superseded`` names the records the
    new note replaced (a newer value of the same fact), ``disputed`` those it was
    flagged against (a change not sure enough to replace them).
    """

    episode_id: str
    created: bool
    note: Record | None = None
    skipped: str | None = None
    superseded: tuple[str, ...] = ()
    disputed: tuple[str, ...] = ()


Verdict = Literal["replaces", "disputes"]
VERDICTS: tuple[Verdict, ...] = ("replaces", "disputes")


@dataclass(frozen=True, slots=True)
class UpdateCandidate:
    """An older statement a new note may change: a stored note of the same owner (or an
    earlier note of the same batch), and its cosine similarity to the new note."""

    record: Record
    similarity: float


@dataclass(frozen=True, slots=True)
class UpdateDecision:
    """What a new note does to one older statement, and why (shown by ``explain`` and the
    audit log). ``replaces``: the old statement held until the new note's time and is
    shown as past from then on. ``disputes``: the two may not both hold, and neither is
    sure; both stay current and every recall that shows either marks both."""

    record_id: str
    verdict: Verdict
    reason: str
