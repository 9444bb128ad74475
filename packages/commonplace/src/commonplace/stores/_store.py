"""The core's view of a backend: the protocol's small surface, plus everything derived
from it, written once for every backend.

A :class:`Backend` stores and finds; :class:`Store` holds what the core decided about
storing: which summaries a supersession invalidates, what a record's provenance makes
derived from it, that a forgotten turn stays forgotten, and how audit entries, recall logs,
conflicts, cards and the use log are kept as ledger entries. It uses a backend's optional
capabilities (:class:`NearestNotes`, :class:`LinkGraph`, :class:`Reembedding`,
:class:`BatchReads`, :class:`AccessLog`) when it has them and falls back, or says clearly
what is missing, when it has not.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np

from .._records import Episode, Kind, Record, Status, Tags, Tier
from .._scope import Scope, owner_scope
from .._text import content_terms
from ..embedders._protocol import Vectors
from ..errors import InvalidInputError, UnsupportedError
from ._entries import (
    AUDIT,
    CARD,
    CONFLICT,
    DISPUTE,
    FORGOTTEN,
    RECALL,
    RECALL_FEEDBACK,
    USE,
    Dispute,
    audit_entries,
    audit_entry,
    card_entry,
    card_key,
    card_of,
    conflict_entry,
    conflict_of,
    dispute_entry,
    dispute_of,
    fields_of,
    scope_of,
)
from ._protocol import (
    AccessLog,
    AuditEntry,
    Backend,
    BatchAnswer,
    BatchReads,
    Card,
    Conflict,
    EmbedderPin,
    Hit,
    LedgerEntry,
    Link,
    LinkGraph,
    NearestNotes,
    ReadBatch,
    RecallLog,
    RecordQuery,
    Reembedding,
    ReembedState,
    SearchQuery,
    TurnWrite,
    WriteBatch,
)

ALL_KINDS = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE)
"""Every kind of derived record."""
ALL_STATUSES = tuple(Status)


@dataclass(frozen=True, slots=True)
class Reads(BatchAnswer):
    """What :meth:`Store.read_batch` read: a :class:`BatchAnswer` with, per card asked,
    the card (decoded from its ledger entry) or None, and the ``disputes`` read (if any)
    decoded, oldest first, as :meth:`Store.disputes_of` gives them."""

    cards: tuple[Card | None, ...] = ()
    dispute_list: tuple[Dispute, ...] = ()


class Store:
    """A backend, seen the way the write, read and lifecycle code uses it."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.ledger = backend.ledger

    @property
    def url(self) -> str:
        return self.backend.url

    def close(self) -> None:
        self.backend.close()

    def read_pin(self) -> EmbedderPin | None:
        return self.backend.read_pin()

    def write_pin(self, pin: EmbedderPin, *, replace: bool = False) -> None:
        self.backend.write_pin(pin, replace=replace)

    # -- episodes -----------------------------------------------------------------------

    def existing_episode_ids(self, ids: Collection[str]) -> set[str]:
        """Ids stored, or stored once and forgotten (a replay must not bring those back)."""
        if not ids:
            return set()
        found = {e.id for e in self.backend.get_episodes(ids)}
        return found | self._forgotten(set(ids) - found)

    def _forgotten(self, ids: Collection[str]) -> set[str]:
        return {e.key for e in self.ledger.list(FORGOTTEN, refs=ids)} if ids else set()

    def write_turns(self, turns: Sequence[TurnWrite], vectors: Vectors | None) -> list[bool]:
        """:meth:`apply` of a batch of only these turns."""
        return self.apply(WriteBatch(turns, vectors))

    def apply(self, batch: WriteBatch) -> list[bool]:
        """Commit a batch (see :meth:`Backend.apply`), leaving out forgotten turns,
        invalidating the active summaries built on what a new note supersedes, and
        dropping links for a backend that keeps none."""
        turns = list(batch.turns)
        vectors = batch.vectors
        forgotten = self._forgotten({t.episode.id for t in turns})
        keep = [t.episode.id not in forgotten for t in turns]
        if forgotten and vectors is not None:
            with_note = [k for t, k in zip(turns, keep) if t.note is not None]
            vectors = np.asarray(vectors)[np.asarray(with_note, bool)]
        linked = isinstance(self.backend, LinkGraph)
        sent = [
            self._with_invalidations(t if linked or not t.links else replace(t, links=()))
            for t, k in zip(turns, keep)
            if k
        ]
        if not sent and not batch.entries:
            return [False] * len(turns)
        fresh = iter(self.backend.apply(WriteBatch(sent, vectors, batch.entries)))
        return [next(fresh) if k else False for k in keep]

    def _with_invalidations(self, turn: TurnWrite) -> TurnWrite:
        if not turn.supersedes:
            return turn
        summaries = self.backend.iter_records(
            RecordQuery(kinds=(Kind.SUMMARY,), sources=turn.supersedes)
        )
        # a summary built on a superseded fact no longer holds
        return replace(turn, invalidates=tuple(dict.fromkeys(r.id for r in summaries)))

    def get_episode(self, episode_id: str) -> Episode | None:
        found = self.backend.get_episodes([episode_id])
        return found[0] if found else None

    def get_episodes(self, episode_ids: Collection[str]) -> list[Episode]:
        return self.backend.get_episodes(episode_ids)

    def recent_episodes(
        self, scope: Scope | None, *, limit: int, before: str | None = None
    ) -> list[Episode]:
        return self.backend.recent_episodes(scope, limit=limit, before=before)

    # -- records ------------------------------------------------------------------------

    def add_records(self, records: Sequence[Record], vectors: Vectors) -> None:
        self.backend.put_records(records, vectors)

    def replace_records(self, records: Sequence[Record], vectors: Vectors) -> None:
        self.backend.put_records(records, vectors, replace=True)

    def get_record(self, record_id: str, *, any_status: bool = False) -> Record | None:
        for record in self.backend.get_records([record_id]):
            if any_status or record.status is Status.ACTIVE:
                return record
        return None

    def get_records(self, record_ids: Collection[str]) -> list[Record]:
        return self.backend.get_records(record_ids)

    def iter_records(self, query: RecordQuery, *, batch: int = 1000) -> Iterator[Record]:
        return self.backend.iter_records(query, batch=batch)

    def recent_records(self, scope: Scope, *, kinds: Collection[Kind], limit: int) -> list[Record]:
        """The newest active records of the given kinds visible in ``scope``."""
        query = RecordQuery(scope=scope, kinds=kinds, newest_first=True, limit=limit)
        return list(self.backend.iter_records(query, batch=limit))

    def count(self, scope: Scope | None, kind: Kind) -> int:
        return self.backend.count(scope, kind)

    def read_batch(
        self,
        *,
        listings: Sequence[RecordQuery] = (),
        search: SearchQuery | None = None,
        cards: Sequence[tuple[Scope, str]] = (),
        vectors: bool = False,
        link_seeds: int = 0,
        link_min_weight: float = 0.0,
        disputes: bool = False,
        turns: int = 0,
        turn_seeds: int = 0,
    ) -> Reads:
        """Reads that do not depend on one another, in one call when the backend has
        :class:`BatchReads` (else one by one): what ``iter_records`` gives per listing,
        ``search``, ``get_card`` per (scope, kind), with ``vectors`` the vectors of the
        listed records the backend read with them (none one by one: a caller reads the
        rest with ``get_vectors``), and with ``link_seeds`` ``links_of`` about that many
        of the best hits; with ``disputes`` and ``turns`` perhaps the disputes of what it
        read and the turns of the best hits (see :class:`ReadBatch`)."""
        batch = ReadBatch(
            listings=tuple(listings),
            search=search,
            entries=tuple((CARD, card_key(scope, kind)) for scope, kind in cards),
            vectors=vectors,
            link_seeds=link_seeds if isinstance(self.backend, LinkGraph) else 0,
            link_min_weight=link_min_weight,
            disputes=disputes,
            turns=turns,
            turn_seeds=turn_seeds,
        )
        if isinstance(self.backend, BatchReads):
            answer = self.backend.read_batch(batch)
        else:
            answer = _one_by_one(self.backend, batch)
        return Reads(
            answer.listings,
            answer.hits,
            answer.entries,
            answer.vectors,
            answer.linked,
            answer.links,
            answer.disputes,
            answer.disputed,
            answer.episodes,
            answer.turns_read,
            cards=tuple(card_of(e, scope, kind) for e, (scope, kind) in zip(answer.entries, cards)),
            dispute_list=_disputes(answer.disputes),
        )

    def get_vectors(self, record_ids: Sequence[str]) -> Vectors:
        return self.backend.get_vectors(record_ids)

    def derived_from(self, source_ids: Collection[str]) -> list[str]:
        """Ids of every record whose provenance names one of ``source_ids``."""
        if not source_ids:
            return []
        query = RecordQuery(kinds=ALL_KINDS, statuses=ALL_STATUSES, sources=source_ids)
        return list(dict.fromkeys(r.id for r in self.backend.iter_records(query)))

    # -- search -------------------------------------------------------------------------

    def search(
        self,
        scope: Scope,
        vector: Vectors,
        *,
        text: str | None,
        limit: int,
        kinds: Collection[Kind] = ALL_KINDS,
    ) -> list[Hit]:
        return self.backend.search(scope, vector, text=text, limit=limit, kinds=kinds)

    def nearest(
        self, scope: Scope, vectors: Vectors, *, min_similarity: float | None = None
    ) -> list[tuple[str, float] | None]:
        """For each row, the nearest active note visible in ``scope``, or None (also when
        it is less similar than ``min_similarity``)."""
        if isinstance(self.backend, NearestNotes):
            found = self.backend.nearest(scope, vectors, min_similarity=min_similarity)
        else:
            found = []
            for row in np.asarray(vectors, np.float32).reshape(len(vectors), -1):
                hits = self.backend.search(scope, row, text=None, limit=1, kinds=(Kind.NOTE,))
                found.append((hits[0].record.id, hits[0].similarity) if hits else None)
        if min_similarity is None:
            return found
        # the bound's one home: a backend may use it to do less, or ignore it
        return [hit if hit is not None and hit[1] >= min_similarity else None for hit in found]

    # -- counters and updates -------------------------------------------------------------

    def touch(self, record_ids: Collection[str], *, at: datetime) -> None:
        if record_ids:
            self.backend.update_records(record_ids, at=at, counter="access")

    def record_feedback(
        self, *, used: Collection[str], ignored: Collection[str], at: datetime
    ) -> None:
        """Count a use or an ignore for each record, and log the uses with their time."""
        if used:
            self.backend.update_records(used, at=at, counter="used")
            self.ledger.put(
                [LedgerEntry(USE, uuid.uuid4().hex, None, at, refs=(rid,)) for rid in used]
            )
        if ignored:
            self.backend.update_records(ignored, at=at, counter="ignored")

    def uses_since(self, record_ids: Collection[str], since: datetime) -> dict[str, int]:
        """How many logged uses each record had at or after ``since``."""
        if not record_ids:
            return {}
        wanted = set(record_ids)
        counts: Counter[str] = Counter()
        for entry in self.ledger.list(USE, refs=wanted, since=since):
            counts.update(r for r in entry.refs if r in wanted)
        return dict(counts)

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
        tags: Tags | None = None,
    ) -> None:
        self.backend.update_records(
            record_ids,
            at=at,
            tier=tier,
            status=status,
            pinned=pinned,
            valid_to=valid_to,
            superseded_by=superseded_by,
            tags=tags,
        )

    # -- removing -----------------------------------------------------------------------

    def delete_records(self, record_ids: Collection[str], *, erase: bool = False) -> list[str]:
        """Remove records for good, with their provenance, links, vectors, use log and
        disputes (a dispute with a forgotten note says nothing any more)."""
        if not record_ids:
            return []
        removed = self.backend.delete(records=record_ids, erase=erase)["records"]
        self._drop_entries(USE, refs=removed)
        self._drop_entries(DISPUTE, refs=removed)
        return removed

    def delete_episodes(self, episode_ids: Collection[str], *, erase: bool = False) -> list[str]:
        """Remove episodes for good (only the right to be forgotten does this).

        Their ids are kept in the ledger first (ids only, no content), so a replayed turn
        is not stored again: ``existing_episode_ids`` reports them and ``write_turns``
        skips them.
        """
        found = self.backend.get_episodes(episode_ids)
        if not found:
            return []
        self.ledger.put(
            [LedgerEntry(FORGOTTEN, e.id, e.scope, e.at, refs=(e.id,)) for e in found],
            replace=False,
        )
        return self.backend.delete(episodes=[e.id for e in found], erase=erase)["episodes"]

    def erase(
        self, record_ids: Collection[str], episode_ids: Collection[str]
    ) -> dict[str, list[str]]:
        """Remove records and episodes for good, as a forget the user asked for does: the
        ids of the episodes are kept first (as :meth:`delete_episodes` keeps them), the
        use log and disputes of the records go, then the backend deletes both in one call
        with ``erase`` (nothing of them stays in its files: see :meth:`Backend.delete`)."""
        found = self.backend.get_episodes(episode_ids) if episode_ids else []
        if found:
            self.ledger.put(
                [LedgerEntry(FORGOTTEN, e.id, e.scope, e.at, refs=(e.id,)) for e in found],
                replace=False,
            )
        # the ledger first: erasing the rows last also erases what its deletes freed
        self._drop_entries(USE, refs=record_ids)
        self._drop_entries(DISPUTE, refs=record_ids)
        if not record_ids and not found:
            return {"records": [], "episodes": []}
        return self.backend.delete(records=record_ids, episodes=[e.id for e in found], erase=True)

    def _drop_entries(
        self, kind: str, *, refs: Collection[str] | None = None, scope: Scope | None = None
    ) -> int:
        if refs is not None and not refs:
            return 0
        keys = [e.key for e in self.ledger.list(kind, refs=refs, scope=scope)]
        return self.ledger.delete(kind, keys) if keys else 0

    def forget_traces(self, doomed: Collection[str], note_scopes: Collection[Scope]) -> int:
        """Outside a forgotten scope: the audit entries, conflicts and use log naming a
        removed record, and the cards of broader scopes (written from its notes).
        Returns how many audit entries went."""
        audit = self._drop_entries(AUDIT, refs=doomed)
        self._drop_entries(CONFLICT, refs=doomed)
        self._drop_entries(DISPUTE, refs=doomed)
        self._drop_entries(USE, refs=doomed)
        # a card is written from the notes its scope owns (``Scope.owns``): only those are
        # stale; a card of the agent's anonymous runs never held a user's notes
        stale = [
            e.key
            for e in self.ledger.list(CARD)
            if e.scope is not None and any(e.scope.owns(s) for s in note_scopes)
        ]
        if stale:
            self.ledger.delete(CARD, stale)
        return audit

    def drop_cards(self, cards: Collection[tuple[Scope, str]]) -> None:
        """These cards, each a (scope, kind) (the caller rewrites them)."""
        if cards:
            self.ledger.delete(CARD, [card_key(scope, kind) for scope, kind in cards])

    def erase_mentions(
        self, removed: Collection[str], terms: Collection[str], owners: Collection[Scope]
    ) -> int:
        """After a forget, the logs keep ids, not words. A recall log loses its question
        when it retrieved a removed id (found by its refs, in any scope), or when it is of
        one of ``owners`` (see :func:`owner_of`) and retrieved or showed a removed id or
        asked with one of ``terms`` (content terms, see ``content_terms``). An audit entry
        loses its detail when it is about a removed id, or of one of ``owners`` and its
        detail names a removed id or holds one of ``terms``. Conflicts naming a removed
        record go. Returns how many entries lost text."""
        removed, terms = set(removed), frozenset(terms)
        self._drop_entries(CONFLICT, refs=removed)
        found: dict[tuple[str, str], LedgerEntry] = {}
        for kind in (RECALL, AUDIT):
            # a recall log names what its search retrieved in its refs (see log_recall);
            # logs written before it did are read with their owner's below
            if removed:
                found.update(((e.kind, e.key), e) for e in self.ledger.list(kind, refs=removed))
            for owner in owners:
                found.update(
                    ((e.kind, e.key), e)
                    for e in self.ledger.list(kind, scope=owner)
                    if e.scope is not None and owner_of(e.scope) == owner
                )
        changed = []
        for entry in found.values():
            field = "query" if entry.kind == RECALL else "detail"
            text = str(entry.data.get(field) or "")
            named = set(entry.refs)
            named |= set(entry.data.get("retrieved", ())) | set(entry.data.get("shown", ()))
            if text and (
                named & removed or any(i in text for i in removed) or content_terms(text) & terms
            ):
                changed.append(replace(entry, data={**entry.data, field: ""}))
        if changed:
            self.ledger.put(changed)
        return len(changed)

    def forget_scope_entries(self, scope: Scope) -> dict[str, int]:
        """Every ledger entry of ``scope`` but the ids of forgotten turns; counts per kind."""
        counts = {
            "audit": self._drop_entries(AUDIT, scope=scope),
            "recalls": self._drop_entries(RECALL, scope=scope),
            "conflicts": self._drop_entries(CONFLICT, scope=scope),
            "cards": self._drop_entries(CARD, scope=scope),
        }
        self._drop_entries(RECALL_FEEDBACK, scope=scope)
        self._drop_entries(DISPUTE, scope=scope)
        return counts

    # -- links (optional) ------------------------------------------------------------------

    def reinforce_links(
        self, pairs: Sequence[tuple[str, str, str]], *, delta: float, at: datetime
    ) -> None:
        if isinstance(self.backend, LinkGraph):
            self.backend.reinforce_links(pairs, delta=delta, at=at)

    def links_of(self, record_ids: Collection[str], *, min_weight: float) -> list[Link]:
        if isinstance(self.backend, LinkGraph):
            return self.backend.links_of(record_ids, min_weight=min_weight)
        return []

    def decay_links(self, *, factor: float, at: datetime) -> None:
        if isinstance(self.backend, LinkGraph):
            self.backend.decay_links(factor=factor, at=at)

    def prune_links(self, *, min_weight: float) -> int:
        if isinstance(self.backend, LinkGraph):
            return self.backend.prune_links(min_weight=min_weight)
        return 0

    # -- re-embedding (optional) -----------------------------------------------------------

    def _reembedding(self) -> Reembedding:
        if not isinstance(self.backend, Reembedding):
            raise UnsupportedError(
                f"{type(self.backend).__name__} cannot re-embed in place; copy the store "
                "into a new one with the new model: commonplace.stores.copy(backend, "
                "new_backend, embedder=new_model)"
            )
        return self.backend

    def reembed_state(self) -> ReembedState | None:
        if not isinstance(self.backend, Reembedding):
            return None
        return self.backend.reembed_state()

    def reembed_pending(self, target: EmbedderPin, *, limit: int) -> list[Record]:
        return self._reembedding().reembed_pending(target, limit=limit)

    def reembed_stage(
        self, target: EmbedderPin, record_ids: Sequence[str], vectors: Vectors
    ) -> None:
        """Stage new vectors, checked first: one finite row of the target's dimension per id."""
        backend = self._reembedding()
        matrix = np.asarray(vectors, np.float32)
        if matrix.shape != (len(record_ids), target.dim):
            raise InvalidInputError(
                f"reembed_stage got vectors of shape {matrix.shape} for {len(record_ids)} ids; "
                f"it needs one row of {target.dim} (the target's dimension) per id"
            )
        if not np.all(np.isfinite(matrix)):
            raise InvalidInputError("reembed_stage got NaN or infinite vector values")
        backend.reembed_stage(target, record_ids, matrix)

    def reembed_finish(self, target: EmbedderPin) -> int | None:
        return self._reembedding().reembed_finish(target)

    # -- the audit log ----------------------------------------------------------------------

    def append_audit(self, entries: Sequence[AuditEntry]) -> None:
        self.ledger.put(audit_entries(entries))

    def audit_log(self, scope: Scope | None, *, limit: int) -> list[AuditEntry]:
        """The newest entries first."""
        return [audit_entry(e) for e in self.ledger.list(AUDIT, scope=scope, limit=limit)]

    # -- recall logs ------------------------------------------------------------------------

    def log_recall(self, log: RecallLog, *, accessed: Collection[str] = ()) -> None:
        """Keep what a recall (``log.id``: its new id) returned, and count an access of each
        of ``accessed`` at its time (:meth:`touch`): one call when the backend has
        :class:`AccessLog`."""
        data = {
            "retrieved": list(log.item_ids),
            "shown": list(log.shown_ids),
            "query": log.query,
            "scores": {rid: dict(b) for rid, b in log.scores.items()},
        }
        # what its search found, so that forgetting one of them finds the log in any scope
        # (``erase_mentions``); not what it only showed (recent and hot records, the same
        # ones log after log): 40 more refs would add 0.4 ms to a recall, these 10 add 0.09
        entry = LedgerEntry(RECALL, log.id, log.scope, log.at, data, refs=tuple(log.item_ids))
        if isinstance(self.backend, AccessLog):
            self.backend.touch_and_put(accessed, at=log.at, entries=[entry])
        else:
            self.touch(accessed, at=log.at)
            self.ledger.put([entry])
        if log.feedback_at is not None:
            self.ledger.put(
                [LedgerEntry(RECALL_FEEDBACK, log.id, log.scope, log.feedback_at)], replace=False
            )

    def get_recall(self, recall_id: str) -> RecallLog | None:
        entry = self.ledger.get(RECALL, recall_id)
        if entry is None:
            return None
        d = fields_of(entry, "retrieved", "shown")
        answered = self.ledger.get(RECALL_FEEDBACK, recall_id)
        return RecallLog(
            entry.key,
            scope_of(entry),
            entry.at,
            tuple(d["retrieved"]),
            None if answered is None else answered.at,
            tuple(d["shown"]),
            str(entry.data.get("query", "")),  # logs from before 0.1 keep neither
            dict(entry.data.get("scores", {})),
        )

    def mark_recall_feedback(self, recall_id: str, *, at: datetime) -> bool:
        """Mark a recall as answered; False if it already had feedback (or is unknown).

        The mark is an entry written only if absent, so two concurrent answers cannot
        both count."""
        entry = self.ledger.get(RECALL, recall_id)
        if entry is None:
            return False
        mark = LedgerEntry(RECALL_FEEDBACK, recall_id, entry.scope, at)
        return self.ledger.put([mark], replace=False) == [True]

    # -- conflicts --------------------------------------------------------------------------

    def add_conflict(self, conflict: Conflict) -> None:
        self.ledger.put([conflict_entry(conflict)], replace=False)

    def conflicts(self, scope: Scope | None, *, open_only: bool) -> list[Conflict]:
        """Oldest first."""
        found = [conflict_of(e) for e in self.ledger.list(CONFLICT, scope=scope)]
        found = [c for c in found if not open_only or c.resolved_at is None]
        return sorted(found, key=lambda c: (c.created_at, c.id))

    def resolve_conflict(self, conflict_id: str, *, resolution: str, at: datetime) -> None:
        entry = self.ledger.get(CONFLICT, conflict_id)
        if entry is not None:
            done = replace(conflict_of(entry), resolved_at=at, resolution=resolution)
            self.ledger.put([conflict_entry(done)])

    # -- disputes ---------------------------------------------------------------------------

    def add_disputes(self, disputes: Sequence[Dispute]) -> None:
        """Keep each pair once (the first reason given stays)."""
        if disputes:
            self.ledger.put([dispute_entry(d) for d in disputes], replace=False)

    def disputes_of(self, record_ids: Collection[str]) -> list[Dispute]:
        """The disputes naming any of these records, oldest first."""
        if not record_ids:
            return []
        return list(_disputes(self.ledger.list(DISPUTE, refs=record_ids)))

    # -- cards ------------------------------------------------------------------------------

    def get_card(self, scope: Scope, kind: str) -> Card | None:
        return card_of(self.ledger.get(CARD, card_key(scope, kind)), scope, kind)

    def put_card(self, card: Card) -> None:
        self.ledger.put([card_entry(card)])


def _disputes(entries: Iterable[LedgerEntry]) -> tuple[Dispute, ...]:
    """Dispute entries decoded, oldest first."""
    found = [dispute_of(e) for e in entries]
    return tuple(sorted(found, key=lambda d: (d.at, d.newer, d.older)))


def owner_of(scope: Scope) -> Scope:
    """Whose a scope's entries are, across its agents and threads: the user's when it has
    one (the user's own words, in any thread), else its agent's (or itself)."""
    return Scope(user=scope.user) if scope.user is not None else owner_scope(scope)


def _one_by_one(backend: Backend, batch: ReadBatch) -> BatchAnswer:
    """A :class:`ReadBatch` answered with one call per read (a backend without
    :class:`BatchReads`)."""
    listings = tuple(
        list(backend.iter_records(q, batch=max(1, min(q.limit or 1000, 1000))))
        for q in batch.listings
    )
    search = batch.search
    hits = (
        backend.search(
            search.scope, search.vector, text=search.text, limit=search.limit, kinds=search.kinds
        )
        if search is not None
        else []
    )
    entries = tuple(backend.ledger.get(kind, key) for kind, key in batch.entries)
    # no vectors: one by one they cost a call of their own, for records the caller may not
    # need them for (it reads those it does)
    linked: frozenset[str] = frozenset()
    links: list[Link] = []
    if batch.link_seeds > 0 and hits and isinstance(backend, LinkGraph):
        best = sorted(hits, key=lambda h: -h.similarity)[: batch.link_seeds]
        linked = frozenset(h.record.id for h in best)
        links = backend.links_of(linked, min_weight=batch.link_min_weight)
    return BatchAnswer(listings, hits, entries, {}, linked, links)
