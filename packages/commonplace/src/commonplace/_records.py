"""The records memory is made of, and their authority order.

Episodes are the evidence: raw turns, immutable, idempotent by content hash.
Everything else is derived from them and carries provenance back to them:
notes (one per worthwhile user turn), summaries (consolidated from notes) and
procedures (patterns that earned promotion). Lower kinds never outrank the
evidence they were derived from.
"""

from __future__ import annotations

import enum
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ._scope import Scope
from ._text import head


class Kind(str, enum.Enum):
    """What a record is, in authority order (episode is the most authoritative)."""

    EPISODE = "episode"
    NOTE = "note"
    SUMMARY = "summary"
    PROCEDURE = "procedure"

    @property
    def authority(self) -> int:
        """0 for episodes, growing as a kind is further from the evidence."""
        return _AUTHORITY[self]


_AUTHORITY = {Kind.EPISODE: 0, Kind.NOTE: 1, Kind.SUMMARY: 2, Kind.PROCEDURE: 3}


class Tier(str, enum.Enum):
    """How readily a record is injected: hot always, warm on a match, cold sinks."""

    HOT = "hot"
    WARM = "warm"
    COLD = "cold"


class Status(str, enum.Enum):
    """Whether a derived record is in use."""

    ACTIVE = "active"
    INVALID = "invalid"
    DELETED = "deleted"


class Role(str, enum.Enum):
    """Who spoke a turn. Only ``user`` turns can ever become notes."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


class Modality(str, enum.Enum):
    """How a user turn was meant."""

    STATEMENT = "statement"
    QUESTION = "question"
    JOKE = "joke"
    HYPOTHETICAL = "hypothetical"
    QUOTE = "quote"


@dataclass(frozen=True, slots=True)
class FactKey:
    """The subject and predicate of a fact that can later change (``user``, ``city``)."""

    subject: str
    predicate: str


@dataclass(frozen=True, slots=True)
class Tags:
    """What the note writer understood of a turn.

    ``key`` and ``value`` are set when the turn states a fact that can later
    change (the user's city, a server's port); ``event`` names a major life
    event (``layoff``, ``move``, ``birth`` ...) when the turn reports one.
    ``importance_stated`` is True when the application stated the importance
    (``Memory.put_note(importance=...)``) rather than the note writer guessing it.
    ``turn_terms`` holds the content words of the turn that the note's text left out
    (the write path fills it in), so keyword search finds the note by them.
    """

    modality: Modality = Modality.STATEMENT
    entities: tuple[str, ...] = ()
    emotion: str | None = None
    importance: float = 0.5
    key: FactKey | None = None
    value: str | None = None
    event: str | None = None
    importance_stated: bool = False
    turn_terms: str = ""

    def to_json(self, *, turn_terms: bool = True) -> dict[str, Any]:
        """The tags as plain data (what stores keep). ``turn_terms=False`` leaves out the
        words kept only for the keyword index, as every output meant for people does."""
        # written only when set, so that older stores and their JSON read the same
        optional: dict[str, Any] = {"importance_stated": True} if self.importance_stated else {}
        if self.turn_terms and turn_terms:
            optional["turn_terms"] = self.turn_terms
        return {
            "modality": self.modality.value,
            "entities": list(self.entities),
            "emotion": self.emotion,
            "importance": self.importance,
            "key": None if self.key is None else [self.key.subject, self.key.predicate],
            "value": self.value,
            "event": self.event,
            **optional,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Tags:
        key = data.get("key")
        return cls(
            modality=Modality(data.get("modality", "statement")),
            entities=tuple(data.get("entities", ())),
            emotion=data.get("emotion"),
            importance=float(data.get("importance", 0.5)),
            key=None if not key else FactKey(str(key[0]), str(key[1])),
            value=data.get("value"),
            event=data.get("event"),
            importance_stated=bool(data.get("importance_stated", False)),
            turn_terms=str(data.get("turn_terms", "")),
        )


@dataclass(frozen=True, slots=True)
class Episode:
    """One raw turn, exactly as it arrived. Never edited."""

    id: str
    scope: Scope
    role: Role
    text: str
    at: datetime
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> Kind:
        return Kind.EPISODE


@dataclass(frozen=True, slots=True)
class Record:
    """A derived record (note, summary or procedure) with its provenance.

    ``access_count`` counts recalls that retrieved it; ``used_count`` and
    ``ignored_count`` count recalls whose answer used it or not (feedback).
    ``valid_from``/``valid_to`` bound the time a fact held; ``superseded_by``
    names the record that replaced it. ``status`` is ``active``, ``invalid``
    (a summary whose source changed) or ``deleted`` (soft-deleted by decay),
    ``status_since`` when it last changed. ``data`` carries what only one kind
    has: a summary's coverage map, a procedure's confirmations.
    """

    id: str
    kind: Kind
    scope: Scope
    text: str
    tags: Tags
    provenance: tuple[str, ...]
    created_at: datetime
    last_access: datetime
    access_count: int = 0
    tier: Tier = Tier.WARM
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    used_count: int = 0
    ignored_count: int = 0
    pinned: bool = False
    status: Status = field(default_factory=lambda: Status.ACTIVE)
    status_since: datetime | None = None
    tier_since: datetime | None = None
    data: Mapping[str, Any] = field(default_factory=dict)

    def valid_at(self, when: datetime) -> bool:
        """Whether this record held at ``when`` (written by then, not yet superseded)."""
        start = self.valid_from or self.created_at
        return start <= when and (self.valid_to is None or when < self.valid_to)

    @property
    def importance(self) -> float:
        return self.tags.importance


def episode_id(
    scope: Scope,
    role: Role,
    text: str,
    key: str | None = None,
    *,
    at: datetime | None,
    said_by: str | None = None,
) -> str:
    """Content-addressed id: the same turn in the same scope is the same episode.

    A turn is its scope, role, time and words: a retried write of it is one episode, and
    the same words said at another time ("Long shift again today." on two days) are
    another. With a ``key`` (a message id from the caller's framework) the key replaces
    the words and the time, so the same words said twice as two messages are two
    episodes, and the same message sent twice, whenever it is sent, is still one.
    Without one, the same words sent by someone other than the user (``said_by``) are
    another turn than the user's. ``at=None`` gives the id an unkeyed turn had before its
    time was part of it (stores written then keep those ids, as ``write/_ids.py`` looks
    them up).
    """
    digest = hashlib.sha256()
    if key is not None:
        parts: tuple[str, ...] = (role.value, "\x01key", key)
    else:
        parts = (role.value,)
        if said_by is not None:
            parts += ("\x01said_by", said_by)
        if at is not None:
            # one instant, however it was written: the time in UTC to the microsecond
            parts += ("\x01at", at.astimezone(timezone.utc).isoformat())
        parts += (text,)
    for part in (*scope.parts(), *parts):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return "ep_" + digest.hexdigest()[:24]


def note_id(source_episode_id: str) -> str:
    """A note is derived from one episode, so its id is derived from that episode's."""
    return "nt_" + hashlib.sha256(source_episode_id.encode()).hexdigest()[:24]


_USER_REFERENCE = re.compile(r"\bthe user(?:'s|’s)?\s*", re.IGNORECASE)


def embedded_text(note_text: str, tags: Tags | None = None) -> str:
    """What gets embedded for a record found by its own text: the text, minus "the user",
    plus its key tags.

    "The user" carries no information (every note is about the user) but would
    make every note look alike to an embedder; the life event and the fact's
    predicate are the writer's normalised words for what the turn was about
    ("laid off" -> "layoff"), which queries tend to use.
    """
    stripped = _USER_REFERENCE.sub("", note_text).strip() or note_text
    if tags is None:
        return stripped
    extra = [tags.event.replace("_", " ")] if tags.event else []
    if tags.key is not None:
        extra.append(tags.key.predicate)
    return " ".join([stripped, *extra])


def search_text(note_text: str, tags: Tags | None = None) -> str:
    """What a record's keyword index holds: its embedded text, plus the words of its turn
    that the note's text left out (``Tags.turn_terms``), so that a keyword search finds a
    note by what was said, as its vector does."""
    text = embedded_text(note_text, tags)
    return f"{text} {tags.turn_terms}" if tags is not None and tags.turn_terms else text


def index_text(text: str, tags: Tags | None = None, *, evidence: str | None = None) -> str:
    """What gets embedded for a record: for a note, the turn it was written from.

    A note is compact and a rule writer drops words; the turn holds all of them. So a
    note is found by what was said (its evidence, plus the writer's normalised tags) and
    shown as the note. A record without evidence of its own (a summary, a procedure) is
    found by its text.
    """
    if evidence is None:
        return embedded_text(text, tags)
    evidence = head(evidence)
    return embedded_text(evidence, tags) if tags is not None else evidence
