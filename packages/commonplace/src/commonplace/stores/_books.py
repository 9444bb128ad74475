"""What the core keeps beside the records, on a backend's ledger: :class:`Books` (counters
and the use log, the audit log, recall logs, conflicts, disputes, cards), a part of
:class:`~commonplace.stores.Store` (``store.books``) written once for every backend.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import datetime

from .._scope import Scope
from ._entries import (
    AUDIT,
    CARD,
    CONFLICT,
    DISPUTE,
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
    RecallLog,
    RecordUpdate,
    WriteBatch,
)


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
