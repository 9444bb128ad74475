"""The backend protocol: records in, candidates out, one transaction per batch.

A backend stores episodes and derived records for many scopes, answers
nearest-neighbour and keyword queries within a scope, and keeps the small
bookkeeping the lifecycle needs (uses, links, an audit log, recall logs,
conflicts, the profile cards). Everything that decides anything (writing
notes, scoring, tiers, consolidation, decay) happens above it, so a new
backend has only this surface to implement and the shared conformance suite
(``commonplace.testing``) to pass.

Every method that writes is atomic. Counters are updated with relative
increments on the server side so concurrent writers never lose an update.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from .._records import Episode, Kind, Record, Status, Tags, Tier
from .._scope import Scope
from ..embedders import Vectors


@dataclass(frozen=True, slots=True)
class EmbedderPin:
    """The embedding model a store's vectors were made with."""

    name: str
    dim: int


@dataclass(frozen=True, slots=True)
class ReembedState:
    """A re-embed in progress: the model it moves the store to, and how far it got.

    ``staged`` records already hold a vector of ``target`` (beside their live one),
    ``pending`` records still need one.
    """

    target: EmbedderPin
    staged: int
    pending: int


@dataclass(frozen=True, slots=True)
class TurnWrite:
    """One turn to store, and what it changes, all applied in one transaction.

    ``note`` is the turn's new note. Or, when the note is a near-duplicate of
    an existing one, ``merge_into`` names that record: the episode joins its
    provenance, its last access moves to the episode's time (its access count
    does not change: frequency is earned by use, never by merges) and its tags
    become ``merged_tags``. ``supersedes`` lists the records the new note replaces:
    they get ``valid_to`` = the episode's time, ``superseded_by`` = the note,
    tier cold, and every active summary derived from them becomes invalid.
    ``superseded_at`` is for a note that arrives late (an old turn imported after
    a newer one that replaced it): ``(newer id, newer time)``, and the note is
    stored already superseded by the newer record, as of that time.
    Nothing but the episode is applied when the episode already existed.
    """

    episode: Episode
    note: Record | None = None
    merge_into: str | None = None
    merged_tags: Tags | None = None
    supersedes: tuple[str, ...] = ()
    superseded_at: tuple[str, datetime] | None = None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A record found for a query: its cosine similarity and keyword match in [0, 1]."""

    record: Record
    similarity: float
    keyword: float = 0.0


@dataclass(frozen=True, slots=True)
class Link:
    """A weighted association between two records (stored once per unordered pair)."""

    a: str
    b: str
    kind: str
    weight: float
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One thing the lifecycle did (or would do, in a dry run), and why."""

    at: datetime
    scope: Scope
    action: str
    rule: str
    record_id: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Conflict:
    """An entity-resolution conflict waiting for a decision."""

    id: str
    scope: Scope
    entity: str
    reason: str
    record_ids: tuple[str, ...]
    created_at: datetime
    resolved_at: datetime | None = None
    resolution: str | None = None


@dataclass(frozen=True, slots=True)
class RecallLog:
    """What one recall returned, kept so feedback can refer to it later.

    ``item_ids`` are the records the search retrieved as relevant (the ones
    feedback counts as used or ignored); ``shown_ids`` every record the
    compiled context showed (recent notes and hot records too), any of which
    an answer may have used.
    """

    id: str
    scope: Scope
    at: datetime
    item_ids: tuple[str, ...]
    feedback_at: datetime | None = None
    shown_ids: tuple[str, ...] = ()


PROFILE_CARD = "profile"
"""The :class:`Card` kind of a user's profile card."""
ROLLING_SUMMARY = "rolling"
"""The :class:`Card` kind of a thread's rolling summary."""


@dataclass(frozen=True, slots=True)
class Card:
    """A bounded, rewritten text per scope: the profile card (kind ``PROFILE_CARD``, per
    user) or a thread's rolling summary (kind ``ROLLING_SUMMARY``)."""

    scope: Scope
    kind: str
    text: str
    updated_at: datetime
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RecordQuery:
    """Which records to list. Unset fields do not filter."""

    scope: Scope | None = None
    kinds: Collection[Kind] = (Kind.NOTE,)
    statuses: Collection[Status] = (Status.ACTIVE,)
    tiers: Collection[Tier] | None = None
    subject: str | None = None
    predicate: str | None = None
    entity: str | None = None
    superseded: bool | None = None
    created_before: datetime | None = None


@runtime_checkable
class Backend(Protocol):
    """What the Memory facade needs from a store."""

    @property
    def url(self) -> str: ...

    # -- the embedder pin -----------------------------------------------------------
    def read_pin(self) -> EmbedderPin | None:
        """The pinned embedder, or None for a store that holds no vectors yet."""
        ...

    def write_pin(self, pin: EmbedderPin, *, replace: bool = False) -> None:
        """Pin the embedder; ``replace`` only during a re-embed."""
        ...

    # -- re-embedding (commonplace.embedders.reembed) ------------------------------------
    # New vectors are staged beside the live ones, so until reembed_finish the store
    # searches, writes and opens with its old model; progress is the staged vectors.
    def reembed_state(self) -> ReembedState | None:
        """The re-embed in progress (started and not finished), or None."""
        ...

    def reembed_pending(self, target: EmbedderPin, *, limit: int) -> list[Record]:
        """Start, or go on with, a re-embed to ``target``: up to ``limit`` records (any
        kind, any status) that hold a live vector and no staged one for ``target``.

        Starting a re-embed to another target abandons the unfinished one (its staged
        vectors are dropped). A record deleted or replaced meanwhile loses its staged
        vector (a replaced one is pending again).
        """
        ...

    def reembed_stage(
        self, target: EmbedderPin, record_ids: Sequence[str], vectors: Vectors
    ) -> None:
        """Keep ``vectors`` (one row of ``target.dim`` per id) as these records' vectors
        for ``target``, beside the live ones; atomic where the store has transactions,
        safe to send again otherwise. Ids that no longer exist are skipped."""
        ...

    def reembed_finish(self, target: EmbedderPin) -> int | None:
        """Make the staged vectors live and pin ``target`` in one step, once every record
        holding a vector has one staged (counted by the store); return how many records
        that is. None, with nothing changed, while some record still needs one."""
        ...

    # -- episodes and records ---------------------------------------------------------
    def existing_episode_ids(self, ids: Collection[str]) -> set[str]: ...

    def write_turns(self, turns: Sequence[TurnWrite], vectors: Vectors | None) -> list[bool]:
        """Store turns atomically. ``vectors`` has one row per turn with a note, in order.

        Returns, per turn, whether its episode was new; a turn whose episode
        already existed writes nothing (idempotency by content hash).
        """
        ...

    def add_records(self, records: Sequence[Record], vectors: Vectors) -> None:
        """Insert derived records (summaries, procedures) atomically; ids must be new."""
        ...

    def replace_records(self, records: Sequence[Record], vectors: Vectors) -> None:
        """Insert records, replacing any with the same id (and its provenance), atomically."""
        ...

    def get_episode(self, episode_id: str) -> Episode | None: ...

    def get_episodes(
        self, scope: Scope, *, limit: int, before_seq: int | None = None
    ) -> list[Episode]:
        """Episodes visible in ``scope``, newest first."""
        ...

    def get_record(self, record_id: str, *, any_status: bool = False) -> Record | None: ...

    def get_records(self, record_ids: Collection[str]) -> list[Record]:
        """The records with these ids, whatever their status, in no particular order."""
        ...

    def iter_records(self, query: RecordQuery, *, batch: int = 1000) -> Iterator[Record]:
        """Every record matching ``query``, oldest first."""
        ...

    def count(self, scope: Scope | None, kind: Kind) -> int:
        """Active records (or episodes) of ``kind``, in ``scope`` or in all."""
        ...

    def get_vectors(self, record_ids: Sequence[str]) -> Vectors:
        """The stored vectors of these records, in order."""
        ...

    # -- search -------------------------------------------------------------------------
    def search(
        self,
        scope: Scope,
        vector: Vectors,
        *,
        text: str | None,
        limit: int,
        kinds: Collection[Kind] = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE),
    ) -> list[Candidate]:
        """Up to ``limit`` active records per method (vector, and keyword when ``text``
        is given), merged: each with its cosine similarity and normalised keyword score."""
        ...

    def nearest(self, scope: Scope, vectors: Vectors) -> list[tuple[str, float] | None]:
        """For each row of ``vectors``, the id and cosine similarity of the nearest active
        note visible in ``scope`` (None when there is none). One call per write batch."""
        ...

    def recent_records(self, scope: Scope, *, kinds: Collection[Kind], limit: int) -> list[Record]:
        """The newest active records of the given kinds visible in ``scope``."""
        ...

    # -- updates ------------------------------------------------------------------------
    def touch(self, record_ids: Collection[str], *, at: datetime) -> None:
        """Count one more access for each record and set its last access to ``at``."""
        ...

    def record_feedback(
        self, *, used: Collection[str], ignored: Collection[str], at: datetime
    ) -> None:
        """Count a use or an ignore for each record and log the uses with their time."""
        ...

    def uses_since(self, record_ids: Collection[str], since: datetime) -> dict[str, int]:
        """How many logged uses each record had at or after ``since``."""
        ...

    def update_records(
        self,
        record_ids: Collection[str],
        *,
        at: datetime,
        tier: Tier | None = None,
        status: Status | None = None,
        pinned: bool | None = None,
        valid_to: datetime | None = None,
        superseded_by: str | None = None,
        tags: Any = None,
    ) -> None:
        """Set the given fields on every listed record (tier/status also stamp their time)."""
        ...

    def delete_records(self, record_ids: Collection[str]) -> list[str]:
        """Remove records for good with their provenance, links and vectors."""
        ...

    def delete_episodes(self, episode_ids: Collection[str]) -> list[str]:
        """Remove episodes for good (only the right to be forgotten does this).

        Their ids are remembered (ids only, no content) so that a replayed turn is
        not stored again: ``existing_episode_ids`` reports them and ``write_turns``
        skips them.
        """
        ...

    def derived_from(self, source_ids: Collection[str]) -> list[str]:
        """Ids of every record whose provenance names one of ``source_ids``."""
        ...

    def delete_scope(self, scope: Scope) -> dict[str, int]:
        """Remove everything visible in ``scope`` and every trace of it elsewhere: records
        derived from its records (summaries, procedures, transitively), audit entries and
        conflicts that name a removed record, and the cards of broader scopes (written from
        its notes; the Memory rewrites them). Nothing of it may stay readable in the store,
        indexes included. Returns counts per table."""
        ...

    # -- links ----------------------------------------------------------------------------
    def reinforce_links(
        self, pairs: Sequence[tuple[str, str, str]], *, delta: float, at: datetime
    ) -> None:
        """Add ``delta`` (capped at 1) to each (a, b, kind) link, creating missing ones."""
        ...

    def links_of(self, record_ids: Collection[str], *, min_weight: float) -> list[Link]: ...

    def decay_links(self, *, factor: float, at: datetime) -> None: ...

    def prune_links(self, *, min_weight: float) -> int: ...

    # -- bookkeeping ----------------------------------------------------------------------
    def append_audit(self, entries: Sequence[AuditEntry]) -> None: ...

    def audit_log(self, scope: Scope | None, *, limit: int) -> list[AuditEntry]: ...

    def log_recall(self, log: RecallLog) -> None: ...

    def get_recall(self, recall_id: str) -> RecallLog | None: ...

    def mark_recall_feedback(self, recall_id: str, *, at: datetime) -> bool:
        """Mark a recall as answered; False if it already had feedback."""
        ...

    def add_conflict(self, conflict: Conflict) -> None: ...

    def conflicts(self, scope: Scope | None, *, open_only: bool) -> list[Conflict]: ...

    def resolve_conflict(self, conflict_id: str, *, resolution: str, at: datetime) -> None: ...

    def get_card(self, scope: Scope, kind: str) -> Card | None: ...

    def put_card(self, card: Card) -> None: ...

    def close(self) -> None: ...
