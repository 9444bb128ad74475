"""The backend protocol: one batch in, one batch out.

A backend stores episodes and derived records for many scopes, answers
nearest-neighbour and keyword queries within a scope, and keeps a small ledger
of keyed entries. Writes come as one :class:`WriteBatch` (:meth:`Backend.apply`: one
transaction), reads as one :class:`ReadBatch` (:meth:`Backend.read`). That is the whole
required surface, ten members of :class:`Backend` and five of :class:`Ledger`; a
newcomer implements them and runs the conformance suite (``commonplace.testing``).

Everything that decides anything happens above it: which summaries a
supersession invalidates, how well a keyword hit matches, what a forgotten scope
takes with it, and how audit entries, recall logs, conflicts and cards are kept
in the ledger are written once, in :class:`~commonplace.stores.Store`, in
``read/`` and in ``lifecycle/``. A backend may also offer the optional
capabilities below (:class:`NearestNotes`, :class:`LinkGraph`,
:class:`Reembedding`); the conformance suite tests the ones it has.

Every method that writes is atomic where the store has transactions and safe to
send again where it has not. Counters are updated with relative increments so
concurrent writers never lose an update.
"""

from __future__ import annotations

import builtins
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from .._records import Episode, Kind, Record, Status, Tags, Tier
from .._scope import Scope
from ..embedders._protocol import Vectors


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
    they get ``valid_to`` = the episode's time, ``superseded_by`` = the note and
    tier cold. ``invalidates`` lists records (the summaries built on what was
    superseded, chosen by the core) whose status becomes invalid as of the episode.
    ``superseded_at`` is for a note that arrives late (an old turn imported after
    a newer one that replaced it): ``(newer id, newer time)``, and the note is
    stored already superseded by the newer record, as of that time.
    ``links`` are (a, b, kind, delta) link reinforcements the new note brings (applied
    at the episode's time by a backend with :class:`LinkGraph`, dropped by one without),
    and ``entries`` ledger entries it brings (its conflicts, disputes and audit entries:
    keys derived from what they say, so each is written once, an entry already there
    staying as it is).
    Nothing but the episode is applied when the episode already existed.
    """

    episode: Episode
    note: Record | None = None
    merge_into: str | None = None
    merged_tags: Tags | None = None
    supersedes: tuple[str, ...] = ()
    superseded_at: tuple[str, datetime] | None = None
    invalidates: tuple[str, ...] = ()
    links: tuple[tuple[str, str, str, float], ...] = ()
    entries: tuple[LedgerEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class RecordUpdate:
    """Fields to set on records (:attr:`WriteBatch.updates`): the given ones on every
    listed record (tier and status also stamp their time, ``at``). ``counter`` (one of
    :data:`COUNTERS`) adds one to that count of each, atomically; an access or a use also
    moves the last access to ``at``."""

    record_ids: Collection[str]
    at: datetime
    tier: Tier | None = None
    status: Status | None = None
    pinned: bool | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    tags: Tags | None = None
    counter: str | None = None

    def changes(self) -> dict[str, Any]:
        """What it sets and counts, as keywords (``tier=...``, ``counter=...``; unset ones
        None)."""
        return {
            "tier": self.tier,
            "status": self.status,
            "pinned": self.pinned,
            "valid_to": self.valid_to,
            "superseded_by": self.superseded_by,
            "tags": self.tags,
            "counter": self.counter,
        }


@dataclass(frozen=True, slots=True)
class WriteBatch:
    """Everything one write decided, committed at once by :meth:`Backend.apply`.

    ``turns`` in order, ``vectors`` one row per turn with a note (in order). ``records``
    are derived records (notes, summaries, procedures) to insert with their
    ``record_vectors`` (one row each): their ids must be new unless ``replace_records``
    (then a record with the same id, and its provenance, is replaced, and reading it back
    gives the given counters). ``updates`` change stored records (applied after the
    turns and records, in order). ``pin`` pins the embedder
    (:class:`~commonplace.errors.EmbedderMismatchError` if another is pinned, unless
    ``replace_pin``: only during a re-embed). ``entries`` are ledger entries that replace
    any with the same (kind, key), such as the profile cards the batch's notes rewrote;
    ``new_entries`` entries whose keys were never written (a recall's log, under its fresh
    id): the backend need not look for one to replace.

    A backend applies all of it or none of it (one transaction), or, without
    transactions, writes the turns' episodes last, so that a batch cut short is sent again
    whole, and everything in it is safe to send twice (a counter aside: an update sent
    twice counts twice).
    """

    turns: Sequence[TurnWrite] = ()
    vectors: Vectors | None = None
    entries: Sequence[LedgerEntry] = ()
    records: Sequence[Record] = ()
    record_vectors: Vectors | None = None
    replace_records: bool = False
    updates: Sequence[RecordUpdate] = ()
    pin: EmbedderPin | None = None
    replace_pin: bool = False
    new_entries: Sequence[LedgerEntry] = ()

    def links_of_new(
        self, fresh: Sequence[bool]
    ) -> dict[tuple[float, datetime], list[tuple[str, str, str]]]:
        """The link reinforcements of the turns that are new (``fresh``, per turn), as
        ``reinforce_links`` pairs grouped by (delta, time): one call each, usually two."""
        out: dict[tuple[float, datetime], list[tuple[str, str, str]]] = {}
        for turn, new in zip(self.turns, fresh):
            for a, b, kind, delta in turn.links if new else ():
                out.setdefault((delta, turn.episode.at), []).append((a, b, kind))
        return out

    def entries_of_new(self, fresh: Sequence[bool]) -> list[LedgerEntry]:
        """The ledger entries the new turns bring (written once: one already there stays)."""
        return [e for turn, new in zip(self.turns, fresh) if new for e in turn.entries]


@dataclass(frozen=True, slots=True)
class Hit:
    """A record a backend found for a query: its cosine similarity to the query vector,
    and whether the keyword index found it too (how well it matches is the core's call)."""

    record: Record
    similarity: float
    keyword: bool = False


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
    an answer may have used. ``query`` is the question, and ``scores`` the
    per-signal breakdown (:meth:`Score.breakdown`) of each retrieved record,
    so a person can see later why a recall put a note forward (both empty in
    logs written before they were kept).
    """

    id: str
    scope: Scope
    at: datetime
    item_ids: tuple[str, ...]
    feedback_at: datetime | None = None
    shown_ids: tuple[str, ...] = ()
    query: str = ""
    scores: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


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
    """Which records to list, in which order. Unset fields do not filter.

    ``sources`` keeps the records whose provenance names one of these ids (what was
    derived from them). ``newest_first`` walks from the newest record back, and
    ``limit`` stops after that many.
    """

    scope: Scope | None = None
    kinds: Collection[Kind] = (Kind.NOTE,)
    statuses: Collection[Status] = (Status.ACTIVE,)
    tiers: Collection[Tier] | None = None
    subject: str | None = None
    predicate: str | None = None
    entity: str | None = None
    superseded: bool | None = None
    created_before: datetime | None = None
    sources: Collection[str] | None = None
    newest_first: bool = False
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A :meth:`Backend.search` call, as data (the search of a :class:`ReadBatch`)."""

    scope: Scope
    vector: Vectors
    text: str | None
    limit: int
    kinds: Collection[Kind] = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE)


@dataclass(frozen=True, slots=True)
class ReadBatch:
    """Reads that do not depend on one another, asked together (:meth:`Backend.read`).

    ``listings`` are :meth:`Backend.iter_records` queries, ``search`` at most one search
    (:class:`SearchQuery`), ``entries`` ledger entries by (kind, key), ``record_ids``
    records by id (whatever their status), ``vector_ids`` the stored vectors of these
    records, ``episode_ids`` episodes by id. ``vectors`` invites the backend to send the
    listed records' stored vectors along when it reads them with the records anyway (a
    store across a network saves a request; the caller reads any it lacks itself). With
    ``link_seeds``, a backend with :class:`LinkGraph` also reads the links (of at least
    ``link_min_weight``) of about that many of the search's best hits by similarity, those
    a recall spreads activation from. With ``disputes`` it may also read the ledger's
    disputes naming any record it returns, and with ``turns`` the episodes of the last
    ``turns`` ids of the provenance of about ``turn_seeds`` of the search's best hits by
    similarity (the turns a recall quotes excerpts from): what a recall reads next, read
    while the search's second round is, by a backend that reads in rounds.
    """

    listings: Sequence[RecordQuery] = ()
    search: SearchQuery | None = None
    entries: Sequence[tuple[str, str]] = ()
    vectors: bool = False
    link_seeds: int = 0
    link_min_weight: float = 0.0
    disputes: bool = False
    turns: int = 0
    turn_seeds: int = 0
    record_ids: Collection[str] = ()
    vector_ids: Sequence[str] = ()
    episode_ids: Collection[str] = ()


@dataclass(frozen=True, slots=True)
class BatchAnswer:
    """What a :class:`ReadBatch` reads: per listing its records (in ``iter_records``
    order), the search's hits (none without a search: each active record visible in the
    search's scope, up to its limit per method, nearest by vector and, with a text, by
    keyword over ``search_text``, merged, each with its cosine similarity, keyword hits
    marked), per entry the entry or None, the vectors sent along (by id, for some or all
    of the listed records; none unless asked), and ``links``: what
    ``links_of(linked, min_weight=link_min_weight)`` gives, ``linked`` being the hits whose
    links were read (empty unless asked). ``disputes`` are the ledger's dispute entries
    naming any of the ``disputed`` records (what ``ledger.list(DISPUTE, refs=disputed)``
    gives), ``episodes`` the episodes of ``turns_read``; both empty when the backend did
    not read them (a caller reads what it needs itself). ``records`` are the stored
    records of ``record_ids`` (in no particular order), ``record_vectors`` the vectors of
    ``vector_ids`` (in order, zeros for unknown ids; None when none were asked) and
    ``found_episodes`` the stored episodes of ``episode_ids`` (in no particular order)."""

    listings: tuple[list[Record], ...]
    hits: list[Hit]
    entries: tuple[LedgerEntry | None, ...]
    vectors: Mapping[str, Vectors] = field(default_factory=dict)
    linked: frozenset[str] = frozenset()
    links: list[Link] = field(default_factory=list)
    disputes: tuple[LedgerEntry, ...] = ()
    disputed: frozenset[str] = frozenset()
    episodes: tuple[Episode, ...] = ()
    turns_read: frozenset[str] = frozenset()
    records: list[Record] = field(default_factory=list)
    record_vectors: Vectors | None = None
    found_episodes: list[Episode] = field(default_factory=list)


COUNTERS = ("access", "used", "ignored")
"""What ``RecordUpdate.counter`` counts: an access (``touch``; moves the last
access), a use (moves the last access too) and an ignore."""


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One keyed entry of a backend's ledger.

    ``kind`` and ``key`` name it (one entry per pair); ``scope`` is whose it is (None:
    nobody's in particular, found by no scope filter);
    ``refs`` are the record or episode ids it is about (what forgetting them must
    take along); ``data`` is any JSON object.
    """

    kind: str
    key: str
    scope: Scope | None
    at: datetime
    data: Mapping[str, Any] = field(default_factory=dict)
    refs: tuple[str, ...] = ()


@runtime_checkable
class Ledger(Protocol):
    """Keyed entries beside the records: the core keeps its audit log, recall logs,
    conflicts, cards, use log and the ids of forgotten turns here (``commonplace.stores``
    ``Store`` is the one implementation of those on top of this)."""

    def put(self, entries: Sequence[LedgerEntry], *, replace: bool = True) -> builtins.list[bool]:
        """Store entries atomically, replacing any with the same (kind, key) when
        ``replace``, else leaving those alone; per entry, whether it was written."""
        ...

    def get(self, kind: str, key: str) -> LedgerEntry | None: ...

    def list(
        self,
        kind: str,
        *,
        scope: Scope | None = None,
        refs: Collection[str] | None = None,
        since: datetime | None = None,
        limit: int | None = None,
    ) -> builtins.list[LedgerEntry]:
        """Entries of ``kind``, the last first written first: those visible in ``scope``
        (its set fields match), naming one of ``refs``, and at or after ``since``, when
        given. A replaced entry keeps its place."""
        ...

    def delete(self, kind: str, keys: Collection[str]) -> int:
        """Remove these entries for good; how many there were."""
        ...

    def kinds(self) -> builtins.list[str]:
        """Every kind that has an entry (what a copy must carry over)."""
        ...


@runtime_checkable
class Backend(Protocol):
    """What the core needs from a store: ten members, writes in one batch and reads in one
    batch (with the ledger's five, fifteen in all)."""

    @property
    def url(self) -> str: ...

    @property
    def ledger(self) -> Ledger:
        """The store's ledger (its own storage: forgetting a scope must reach it)."""
        ...

    def close(self) -> None: ...

    def read_pin(self) -> EmbedderPin | None:
        """The pinned embedder, or None for a store that holds no vectors yet."""
        ...

    # -- writing ----------------------------------------------------------------------
    def apply(self, batch: WriteBatch) -> list[bool]:
        """Commit a :class:`WriteBatch` at once: the pin, its turns (with their notes,
        links and entries), its records and updates and its entries, all or nothing.

        Returns, per turn, whether its episode was new; a turn whose episode
        already existed writes nothing (idempotency by the turn: the core's ids hold its
        scope, role, time and words, or its key).
        """
        ...

    # -- reading ----------------------------------------------------------------------
    def read(self, batch: ReadBatch) -> BatchAnswer:
        """Everything a :class:`ReadBatch` asks, in one call: each read as it stands at
        some moment during the call (one read transaction where the store has them; a
        store across a network sends the reads that do not depend on each other at
        once)."""
        ...

    def iter_records(self, query: RecordQuery, *, batch: int = 1000) -> Iterator[Record]:
        """Every record matching ``query``, oldest first (or newest, if it asks)."""
        ...

    def recent_episodes(
        self, scope: Scope | None, *, limit: int, before: str | None = None
    ) -> list[Episode]:
        """Episodes visible in ``scope`` (all with None), newest stored first; with
        ``before`` (an episode id), only those stored before that one (paging)."""
        ...

    def count(self, scope: Scope | None, kind: Kind) -> int:
        """Active records (or episodes) of ``kind``, in ``scope`` or in all."""
        ...

    # -- removing -----------------------------------------------------------------------
    def delete(
        self,
        *,
        records: Collection[str] = (),
        episodes: Collection[str] = (),
        erase: bool = False,
    ) -> dict[str, list[str]]:
        """Remove records (with their provenance, links and vectors) and episodes for
        good; the ids removed, under ``"records"`` and ``"episodes"``. With ``erase``,
        nothing of them may stay readable in the store's files, indexes included."""
        ...


# -- optional capabilities: the core uses them when a backend has them ---------------


@runtime_checkable
class NearestNotes(Protocol):
    """A faster nearest-note lookup for the write path (else: one search per row)."""

    def nearest(
        self, scope: Scope, vectors: Vectors, *, min_similarity: float | None = None
    ) -> list[tuple[str, float] | None]:
        """For each row of ``vectors``, the id and cosine similarity of the nearest active
        note visible in ``scope`` (None when there is none). One call per write batch.

        ``min_similarity`` is a hint: no caller keeps a best less similar than it (the
        write path asks only for near copies), so a backend may answer None for one and
        skip the work of naming it. ``Store.nearest`` holds every answer to the bound."""
        ...


@runtime_checkable
class LinkGraph(Protocol):
    """Weighted co-use links between records (without them, recall spreads no activation)."""

    def reinforce_links(
        self, pairs: Sequence[tuple[str, str, str]], *, delta: float, at: datetime
    ) -> None:
        """Add ``delta`` (capped at 1) to each (a, b, kind) link, creating missing ones."""
        ...

    def links_of(self, record_ids: Collection[str], *, min_weight: float) -> list[Link]: ...

    def decay_links(self, *, factor: float, at: datetime) -> None: ...

    def prune_links(self, *, min_weight: float) -> int: ...


@runtime_checkable
class Reembedding(Protocol):
    """Moving the store to another embedder in place (``commonplace.embedders.reembed``).

    New vectors are staged beside the live ones, so until ``reembed_finish`` the store
    searches, writes and opens with its old model; progress is the staged vectors. A
    backend without it is re-embedded by copying (``commonplace.stores.copy``).
    """

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
