"""The SQLite store's ledger: the audit log, recall logs, conflicts and cards.

Bookkeeping about the records rather than the records themselves: each kind is a table of
its own, written and read whole, never searched, so it is apart from the record store. Only
forgetting crosses over: ``delete_scope`` there clears what these tables say about the
records it removes through ``_delete_traces`` here.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime

from .._clock import to_epoch
from .._scope import Scope
from ._protocol import AuditEntry, Card, Conflict, RecallLog
from ._sqlite_connection import SQLiteConnection
from ._sqlite_rows import (
    chunks,
    decoding,
    marks,
    maybe_datetime,
    maybe_epoch,
    scope_clause,
    scope_from_parts,
)


class SQLiteLedger(SQLiteConnection):
    """The audit log, recall logs, conflicts and cards, for
    :class:`~commonplace.stores.SQLiteBackend`."""

    # -- the audit log ------------------------------------------------------------------

    def append_audit(self, entries: Sequence[AuditEntry]) -> None:
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO audit (at, scope_user, scope_agent, scope_thread, action, rule, "
                "record_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (to_epoch(e.at), *e.scope.parts(), e.action, e.rule, e.record_id, e.detail)
                    for e in entries
                ],
            )

    def audit_log(self, scope: Scope | None, *, limit: int) -> list[AuditEntry]:
        where, params = scope_clause(scope)
        with self._reading() as db:
            rows = db.execute(
                "SELECT at, scope_user, scope_agent, scope_thread, action, rule, record_id, "
                f"detail FROM audit WHERE {where} ORDER BY seq DESC LIMIT ?",
                (*params, limit),
            ).fetchall()
        with decoding("audit entry"):
            return [
                AuditEntry(
                    maybe_datetime(at) or datetime.min,
                    scope_from_parts(u, a, t),
                    action,
                    rule,
                    rid,
                    detail,
                )
                for at, u, a, t, action, rule, rid, detail in rows
            ]

    # -- recall logs --------------------------------------------------------------------

    def log_recall(self, log: RecallLog) -> None:
        ids = {"retrieved": list(log.item_ids), "shown": list(log.shown_ids)}
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO recalls (id, scope_user, scope_agent, scope_thread, at, "
                "item_ids, feedback_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    log.id,
                    *log.scope.parts(),
                    to_epoch(log.at),
                    json.dumps(ids),
                    maybe_epoch(log.feedback_at),
                ),
            )

    def get_recall(self, recall_id: str) -> RecallLog | None:
        with self._reading() as db:
            row = db.execute(
                "SELECT id, scope_user, scope_agent, scope_thread, at, item_ids, feedback_at "
                "FROM recalls WHERE id = ?",
                (recall_id,),
            ).fetchone()
        if row is None:
            return None
        rid, u, a, t, at, items, feedback = row
        with decoding("recall log"):
            ids = json.loads(items)
            return RecallLog(
                rid,
                scope_from_parts(u, a, t),
                maybe_datetime(at) or datetime.min,
                tuple(ids["retrieved"]),
                maybe_datetime(feedback),
                tuple(ids["shown"]),
            )

    def mark_recall_feedback(self, recall_id: str, *, at: datetime) -> bool:
        with self._transaction() as db:
            return (
                db.execute(
                    "UPDATE recalls SET feedback_at = ? WHERE id = ? AND feedback_at IS NULL",
                    (to_epoch(at), recall_id),
                ).rowcount
                == 1
            )

    # -- conflicts ----------------------------------------------------------------------

    def add_conflict(self, conflict: Conflict) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO conflicts (id, scope_user, scope_agent, scope_thread, "
                "entity, reason, record_ids, created_at, resolved_at, resolution) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    conflict.id,
                    *conflict.scope.parts(),
                    conflict.entity,
                    conflict.reason,
                    json.dumps(list(conflict.record_ids)),
                    to_epoch(conflict.created_at),
                    maybe_epoch(conflict.resolved_at),
                    conflict.resolution,
                ),
            )

    def conflicts(self, scope: Scope | None, *, open_only: bool) -> list[Conflict]:
        where, params = scope_clause(scope)
        extra = " AND resolved_at IS NULL" if open_only else ""
        with self._reading() as db:
            rows = db.execute(
                "SELECT id, scope_user, scope_agent, scope_thread, entity, reason, record_ids, "
                f"created_at, resolved_at, resolution FROM conflicts WHERE {where}{extra} "
                "ORDER BY created_at",
                params,
            ).fetchall()
        with decoding("conflict"):
            return [
                Conflict(
                    cid,
                    scope_from_parts(u, a, t),
                    entity,
                    reason,
                    tuple(json.loads(ids)),
                    maybe_datetime(created) or datetime.min,
                    maybe_datetime(resolved),
                    resolution,
                )
                for cid, u, a, t, entity, reason, ids, created, resolved, resolution in rows
            ]

    def resolve_conflict(self, conflict_id: str, *, resolution: str, at: datetime) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE conflicts SET resolved_at = ?, resolution = ? WHERE id = ?",
                (to_epoch(at), resolution, conflict_id),
            )

    # -- cards --------------------------------------------------------------------------

    def get_card(self, scope: Scope, kind: str) -> Card | None:
        with self._reading() as db:
            row = db.execute(
                "SELECT text, data, updated_at FROM cards WHERE scope_user = ? AND "
                "scope_agent = ? AND scope_thread = ? AND kind = ?",
                (*scope.parts(), kind),
            ).fetchone()
        if row is None:
            return None
        text, data, updated = row
        with decoding("card"):
            return Card(
                scope, kind, text, maybe_datetime(updated) or datetime.min, json.loads(data)
            )

    def put_card(self, card: Card) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO cards (scope_user, scope_agent, scope_thread, kind, "
                "text, data, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    *card.scope.parts(),
                    card.kind,
                    card.text,
                    json.dumps(dict(card.data), ensure_ascii=False),
                    to_epoch(card.updated_at),
                ),
            )

    # -- forgetting ---------------------------------------------------------------------
    # Called by the record store's ``delete_scope``, in its transaction.

    def _delete_traces(
        self, db: sqlite3.Connection, doomed: set[str], note_scopes: set[tuple[str, str, str]]
    ) -> int:
        """Outside a forgotten scope: audit entries and conflicts naming a removed record,
        and the cards of broader scopes, which were written from its notes."""
        audit = 0
        for chunk in chunks(list(doomed)):
            audit += db.execute(
                f"DELETE FROM audit WHERE record_id IN ({marks(len(chunk))})", chunk
            ).rowcount
        stale = [
            cid
            for cid, ids in db.execute("SELECT id, record_ids FROM conflicts")
            if doomed & _ids_in(ids)
        ]
        for chunk in chunks(stale):
            db.execute(f"DELETE FROM conflicts WHERE id IN ({marks(len(chunk))})", chunk)
        # a card is written from the notes its scope owns (``Scope.owns``): only those are
        # stale; a card of the agent's anonymous runs never held a user's notes
        for user, agent, thread in note_scopes:
            note_scope = scope_from_parts(user, agent, thread)
            cards = db.execute(
                "SELECT scope_user, scope_agent, scope_thread FROM cards WHERE scope_user = ? "
                "AND scope_agent IN ('', ?) AND scope_thread IN ('', ?)",
                (user, agent, thread),
            ).fetchall()
            for parts in cards:
                if any(parts) and scope_from_parts(*parts).owns(note_scope):
                    db.execute(
                        "DELETE FROM cards WHERE scope_user = ? AND scope_agent = ? "
                        "AND scope_thread = ?",
                        parts,
                    )
        return audit


def _ids_in(encoded: str) -> set[str]:
    with decoding("conflict"):
        return set(json.loads(encoded))
