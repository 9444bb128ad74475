"""What the core keeps beside the records, on a backend's ledger: :class:`Books` (counters
and the use log, the audit log, recall logs, conflicts, disputes, cards) and
:class:`Erasure` (removing records and episodes for good, with every entry naming them).

Both are parts of :class:`~commonplace.stores.Store` (``store.books``, ``store.erasure``),
written once for every backend.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import datetime

from .._records import Episode
from .._scope import Scope, owner_scope
from .._text import content_terms
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
    disputes_in,
    fields_of,
    scope_of,
)
from ._protocol import (
    AuditEntry,
    Backend,
    Card,
    Conflict,
    LedgerEntry,
    ReadBatch,
    RecallLog,
    RecordUpdate,
    WriteBatch,
)


def owner_of(scope: Scope) -> Scope:
    """Whose a scope's entries are, across its agents and threads: the user's when it has
    one (the user's own words, in any thread), else its agent's (or itself)."""
    return Scope(user=scope.user) if scope.user is not None else owner_scope(scope)


class Books:
    """Counters and the use log, the audit log, recall logs, conflicts, disputes and cards:
    kept as ledger entries, the same way on every backend (``store.books``)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._ledger = backend.ledger

    def touch(self, record_ids: Collection[str], *, at: datetime) -> None:
        if record_ids:
            self.backend.apply(WriteBatch(updates=[RecordUpdate(record_ids, at, counter="access")]))

    def record_feedback(
        self, *, used: Collection[str], ignored: Collection[str], at: datetime
    ) -> None:
        """Count a use or an ignore for each record, and log the uses with their time: one
        batch."""
        updates = [
            RecordUpdate(ids, at, counter=c)
            for ids, c in ((used, "used"), (ignored, "ignored"))
            if ids
        ]
        uses = [LedgerEntry(USE, uuid.uuid4().hex, None, at, refs=(rid,)) for rid in used]
        if updates:
            self.backend.apply(WriteBatch(entries=uses, updates=updates))

    def uses_since(self, record_ids: Collection[str], since: datetime) -> dict[str, int]:
        """How many logged uses each record had at or after ``since``."""
        if not record_ids:
            return {}
        wanted = set(record_ids)
        counts: Counter[str] = Counter()
        for entry in self._ledger.list(USE, refs=wanted, since=since):
            counts.update(r for r in entry.refs if r in wanted)
        return dict(counts)

    def append_audit(self, entries: Sequence[AuditEntry]) -> None:
        self._ledger.put(audit_entries(entries))

    def audit_log(self, scope: Scope | None, *, limit: int) -> list[AuditEntry]:
        """The newest entries first."""
        return [audit_entry(e) for e in self._ledger.list(AUDIT, scope=scope, limit=limit)]

    def log_recall(self, log: RecallLog, *, accessed: Collection[str] = ()) -> None:
        """Keep what a recall (``log.id``: its new id) returned, and count an access of each
        of ``accessed`` at its time (:meth:`touch`), in one batch."""
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
        touched = [RecordUpdate(accessed, log.at, counter="access")] if accessed else []
        self.backend.apply(WriteBatch(new_entries=[entry], updates=touched))
        if log.feedback_at is not None:
            self._ledger.put(
                [LedgerEntry(RECALL_FEEDBACK, log.id, log.scope, log.feedback_at)], replace=False
            )

    def get_recall(self, recall_id: str) -> RecallLog | None:
        entry = self._ledger.get(RECALL, recall_id)
        if entry is None:
            return None
        d = fields_of(entry, "retrieved", "shown")
        answered = self._ledger.get(RECALL_FEEDBACK, recall_id)
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
        entry = self._ledger.get(RECALL, recall_id)
        if entry is None:
            return False
        mark = LedgerEntry(RECALL_FEEDBACK, recall_id, entry.scope, at)
        return self._ledger.put([mark], replace=False) == [True]

    def add_conflict(self, conflict: Conflict) -> None:
        self._ledger.put([conflict_entry(conflict)], replace=False)

    def conflicts(self, scope: Scope | None, *, open_only: bool) -> list[Conflict]:
        """Oldest first."""
        found = [conflict_of(e) for e in self._ledger.list(CONFLICT, scope=scope)]
        found = [c for c in found if not open_only or c.resolved_at is None]
        return sorted(found, key=lambda c: (c.created_at, c.id))

    def resolve_conflict(self, conflict_id: str, *, resolution: str, at: datetime) -> None:
        entry = self._ledger.get(CONFLICT, conflict_id)
        if entry is not None:
            done = replace(conflict_of(entry), resolved_at=at, resolution=resolution)
            self._ledger.put([conflict_entry(done)])

    def add_disputes(self, disputes: Sequence[Dispute]) -> None:
        """Keep each pair once (the first reason given stays)."""
        if disputes:
            self._ledger.put([dispute_entry(d) for d in disputes], replace=False)

    def disputes_of(self, record_ids: Collection[str]) -> list[Dispute]:
        """The disputes naming any of these records, oldest first."""
        if not record_ids:
            return []
        return list(disputes_in(self._ledger.list(DISPUTE, refs=record_ids)))

    def get_card(self, scope: Scope, kind: str) -> Card | None:
        return card_of(self._ledger.get(CARD, card_key(scope, kind)), scope, kind)

    def put_card(self, card: Card) -> None:
        self._ledger.put([card_entry(card)])


class Erasure:
    """Removing records and episodes for good, and what the ledger says of them
    (``store.erasure``): a forgotten turn's id stays, so a replay is not stored again."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._ledger = backend.ledger

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
        found = _episodes(self.backend, episode_ids)
        if not found:
            return []
        self._ledger.put(
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
        found = _episodes(self.backend, episode_ids)
        if found:
            self._ledger.put(
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
        keys = [e.key for e in self._ledger.list(kind, refs=refs, scope=scope)]
        return self._ledger.delete(kind, keys) if keys else 0

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
            for e in self._ledger.list(CARD)
            if e.scope is not None and any(e.scope.owns(s) for s in note_scopes)
        ]
        if stale:
            self._ledger.delete(CARD, stale)
        return audit

    def drop_cards(self, cards: Collection[tuple[Scope, str]]) -> None:
        """These cards, each a (scope, kind) (the caller rewrites them)."""
        if cards:
            self._ledger.delete(CARD, [card_key(scope, kind) for scope, kind in cards])

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
                found.update(((e.kind, e.key), e) for e in self._ledger.list(kind, refs=removed))
            for owner in owners:
                found.update(
                    ((e.kind, e.key), e)
                    for e in self._ledger.list(kind, scope=owner)
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
            self._ledger.put(changed)
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


def _episodes(backend: Backend, episode_ids: Collection[str]) -> list[Episode]:
    if not episode_ids:
        return []
    return backend.read(ReadBatch(episode_ids=episode_ids)).found_episodes
