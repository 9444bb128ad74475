"""The ledger entries the core keeps, and how each is coded: audit entries, recall
logs, conflicts, disputes, cards and the ids of forgotten turns.

One home for each kind's key and fields, so the write path (which puts its entries in
the batch it commits) and :class:`~commonplace.stores.Store` (which reads them back and
writes the lifecycle's) code them alike.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any

from .._scope import Scope
from ..errors import CorruptStoreError
from ._protocol import AuditEntry, Card, Conflict, LedgerEntry


class LedgerKind(str, Enum):
    """The kinds of ledger entry the core writes (a copy carries over whatever kinds a
    ledger holds, these or a plugin's own)."""

    AUDIT = "audit"
    """One thing the lifecycle did; refs: the record."""
    RECALL = "recall"
    """What one recall retrieved and showed; key: the recall id."""
    RECALL_FEEDBACK = "recall_feedback"
    """That a recall was answered (written if absent, so it counts once); key: its id."""
    CONFLICT = "conflict"
    """An entity conflict; refs: the records it names."""
    CARD = "card"
    """A profile card or rolling summary; key: its kind and exact scope."""
    USE = "use"
    """One use of a record, with its time; refs: the record."""
    FORGOTTEN = "forgotten"
    """The id of a turn forgotten on request (no content), so a replay is not stored."""
    DISPUTE = "dispute"
    """Two statements that may not both hold (a change not sure enough to replace the
    older one); key: the pair; refs: the newer and the older record."""


AUDIT = LedgerKind.AUDIT.value
RECALL = LedgerKind.RECALL.value
RECALL_FEEDBACK = LedgerKind.RECALL_FEEDBACK.value
CONFLICT = LedgerKind.CONFLICT.value
CARD = LedgerKind.CARD.value
USE = LedgerKind.USE.value
FORGOTTEN = LedgerKind.FORGOTTEN.value
DISPUTE = LedgerKind.DISPUTE.value


def audit_entries(entries: Sequence[AuditEntry], *, keyed: bool = False) -> list[LedgerEntry]:
    """Audit entries as ledger entries. ``keyed``: each key derived from what the entry
    says (a write batch sent twice writes it once), else a fresh one."""
    out = []
    for e in entries:
        data = {"action": e.action, "rule": e.rule, "record_id": e.record_id, "detail": e.detail}
        if keyed:
            said = json.dumps([e.at.isoformat(), *e.scope.parts(), data], ensure_ascii=False)
            key = "au_" + hashlib.sha256(said.encode()).hexdigest()[:32]
        else:
            key = uuid.uuid4().hex
        out.append(LedgerEntry(AUDIT, key, e.scope, e.at, data, refs=(e.record_id,)))
    return out


def audit_entry(entry: LedgerEntry) -> AuditEntry:
    d = fields_of(entry, "action", "rule", "record_id", "detail")
    return AuditEntry(
        entry.at, scope_of(entry), d["action"], d["rule"], d["record_id"], d["detail"]
    )


def card_entry(card: Card) -> LedgerEntry:
    data = {"kind": card.kind, "text": card.text, "data": dict(card.data)}
    return LedgerEntry(CARD, card_key(card.scope, card.kind), card.scope, card.updated_at, data)


def card_of(entry: LedgerEntry | None, scope: Scope, kind: str) -> Card | None:
    if entry is None:
        return None
    d = fields_of(entry, "text", "data")
    return Card(scope, kind, d["text"], entry.at, dict(d["data"]))


def card_key(scope: Scope, kind: str) -> str:
    # compact, like SQLite's json_array, which wrote the keys of stores made before the ledger
    return json.dumps([kind, *scope.parts()], ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Dispute:
    """A newer statement flagged against an older one it may change, and why."""

    newer: str
    older: str
    scope: Scope
    at: datetime
    reason: str


def dispute_entry(d: Dispute) -> LedgerEntry:
    return LedgerEntry(
        DISPUTE,
        f"{d.newer}:{d.older}",
        d.scope,
        d.at,
        {"newer": d.newer, "older": d.older, "reason": d.reason},
        refs=(d.newer, d.older),
    )


def dispute_of(e: LedgerEntry) -> Dispute:
    d = fields_of(e, "newer", "older", "reason")
    return Dispute(str(d["newer"]), str(d["older"]), scope_of(e), e.at, str(d["reason"]))


def disputes_in(entries: Iterable[LedgerEntry]) -> tuple[Dispute, ...]:
    """Dispute entries decoded, oldest first."""
    found = [dispute_of(e) for e in entries]
    return tuple(sorted(found, key=lambda d: (d.at, d.newer, d.older)))


def conflict_entry(c: Conflict) -> LedgerEntry:
    data = {
        "entity": c.entity,
        "reason": c.reason,
        "record_ids": list(c.record_ids),
        "resolved_at": None if c.resolved_at is None else c.resolved_at.isoformat(),
        "resolution": c.resolution,
    }
    return LedgerEntry(CONFLICT, c.id, c.scope, c.created_at, data, refs=tuple(c.record_ids))


def conflict_of(e: LedgerEntry) -> Conflict:
    d = fields_of(e, "entity", "reason", "record_ids", "resolved_at", "resolution")
    try:
        resolved = None if d["resolved_at"] is None else datetime.fromisoformat(d["resolved_at"])
    except (TypeError, ValueError):
        raise damaged(e) from None
    return Conflict(
        e.key,
        scope_of(e),
        d["entity"],
        d["reason"],
        tuple(d["record_ids"]),
        e.at,
        resolved,
        d["resolution"],
    )


def fields_of(entry: LedgerEntry, *names: str) -> dict[str, Any]:
    missing = [n for n in names if n not in entry.data]
    if missing:
        raise damaged(entry)
    return {n: entry.data[n] for n in names}


def scope_of(entry: LedgerEntry) -> Scope:
    if entry.scope is None:
        raise damaged(entry)
    return entry.scope


def damaged(entry: LedgerEntry) -> CorruptStoreError:
    return CorruptStoreError(
        f"the ledger entry {entry.kind}/{entry.key} is damaged ({dict(entry.data)!r}); "
        "restore the store from a backup"
    )
