"""The ledger: the audit log, recall logs, conflicts and cards.

Small bookkeeping kept in single-tenant collections (see ``_schema``) and
selected by their scope properties rather than by tenant. Recall logs, conflicts
and cards are written under fixed ids, so a retried write lands on the same
object; audit entries are only ever appended.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from commonplace import Scope
from commonplace.stores import AuditEntry, Card, Conflict, RecallLog

from . import _schema as S
from ._connection import MAX_RESULTS
from ._mapping import as_utc, object_uuid, parse_date, scope_filter, scope_of, scope_props
from ._tenants import Tenants
from ._url import Settings


class Ledger(Tenants):
    """The bookkeeping of the Backend protocol: audit, recalls, conflicts, cards."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self._recall_lock = threading.Lock()

    def append_audit(self, entries: Sequence[AuditEntry]) -> None:
        from weaviate.classes.data import DataObject

        objects = [
            DataObject(
                uuid=uuid.uuid4(),
                properties={
                    "at": as_utc(e.at),
                    **scope_props(e.scope),
                    "action": e.action,
                    "rule": e.rule,
                    "record_id": e.record_id,
                    "detail": e.detail,
                    "seq": self._seq.next(),
                },
            )
            for e in entries
        ]
        self._insert(S.AUDIT, None, objects, "audit entries", [e.record_id for e in entries])

    def audit_log(self, scope: Scope | None, *, limit: int) -> list[AuditEntry]:
        from weaviate.classes.query import Sort

        found = self._call(
            lambda: self._col(S.AUDIT).query.fetch_objects(
                filters=scope_filter(scope),
                sort=Sort.by_property("seq", ascending=False),
                limit=max(1, min(limit, MAX_RESULTS)),
            ),
            "read the audit log",
        ).objects
        return [
            AuditEntry(
                parse_date(p["at"]) or datetime.min,
                scope_of(p),
                str(p["action"]),
                str(p["rule"]),
                str(p["record_id"]),
                str(p.get("detail") or ""),
            )
            for p in (o.properties for o in found)
        ][: max(0, limit)]

    def log_recall(self, log: RecallLog) -> None:
        from weaviate.classes.data import DataObject

        props: dict[str, Any] = {
            "recall_id": log.id,
            **scope_props(log.scope),
            "at": as_utc(log.at),
            "item_ids": list(log.item_ids),
            "shown_ids": list(log.shown_ids),
        }
        if log.feedback_at is not None:
            props["feedback_at"] = as_utc(log.feedback_at)
        self._insert(
            S.RECALL,
            None,
            [DataObject(uuid=object_uuid("recall", log.id), properties=props)],
            "recall logs",
            [log.id],
        )

    def get_recall(self, recall_id: str) -> RecallLog | None:
        obj: Any = self._call(
            lambda: self._col(S.RECALL).query.fetch_object_by_id(object_uuid("recall", recall_id)),
            "read a recall log",
        )
        if obj is None:
            return None
        p = obj.properties
        return RecallLog(
            str(p["recall_id"]),
            scope_of(p),
            parse_date(p["at"]) or datetime.min,
            tuple(str(i) for i in (p.get("item_ids") or ())),
            parse_date(p.get("feedback_at")),
            tuple(str(i) for i in (p.get("shown_ids") or ())),
        )

    def mark_recall_feedback(self, recall_id: str, *, at: datetime) -> bool:
        # Serialised in this process; across processes two simultaneous marks may both win.
        with self._recall_lock:
            log = self.get_recall(recall_id)
            if log is None or log.feedback_at is not None:
                return False
            return self._patch(
                S.RECALL,
                None,
                object_uuid("recall", recall_id),
                {"feedback_at": as_utc(at)},
                "mark recall feedback",
            )

    def add_conflict(self, conflict: Conflict) -> None:
        from weaviate.classes.data import DataObject

        key = object_uuid("conflict", conflict.id)
        if (
            self._call(
                lambda: self._col(S.CONFLICT).query.fetch_object_by_id(key), "read a conflict"
            )
            is not None
        ):
            return
        props: dict[str, Any] = {
            "conflict_id": conflict.id,
            **scope_props(conflict.scope),
            "entity": conflict.entity,
            "reason": conflict.reason,
            "record_ids": list(conflict.record_ids),
            "created_at": as_utc(conflict.created_at),
        }
        if conflict.resolved_at is not None:
            props["resolved_at"] = as_utc(conflict.resolved_at)
        if conflict.resolution is not None:
            props["resolution"] = conflict.resolution
        self._insert(
            S.CONFLICT, None, [DataObject(uuid=key, properties=props)], "conflicts", [conflict.id]
        )

    def conflicts(self, scope: Scope | None, *, open_only: bool) -> list[Conflict]:
        from weaviate.classes.query import Filter, Sort

        where = scope_filter(scope)
        if open_only:
            unresolved = Filter.by_property("resolved_at").is_none(True)
            where = unresolved if where is None else where & unresolved
        found = self._call(
            lambda: self._col(S.CONFLICT).query.fetch_objects(
                filters=where, sort=Sort.by_property("created_at"), limit=MAX_RESULTS
            ),
            "read conflicts",
        ).objects
        return [
            Conflict(
                str(p["conflict_id"]),
                scope_of(p),
                str(p["entity"]),
                str(p["reason"]),
                tuple(str(i) for i in (p.get("record_ids") or ())),
                parse_date(p["created_at"]) or datetime.min,
                parse_date(p.get("resolved_at")),
                p.get("resolution"),
            )
            for p in (o.properties for o in found)
        ]

    def resolve_conflict(self, conflict_id: str, *, resolution: str, at: datetime) -> None:
        self._patch(
            S.CONFLICT,
            None,
            object_uuid("conflict", conflict_id),
            {"resolved_at": as_utc(at), "resolution": resolution},
            "resolve a conflict",
        )

    def get_card(self, scope: Scope, kind: str) -> Card | None:
        obj = self._call(
            lambda: self._col(S.CARD).query.fetch_object_by_id(
                object_uuid("card", *scope.parts(), kind)
            ),
            "read a card",
        )
        if obj is None or scope_of(obj.properties) != scope:
            return None
        p = obj.properties
        return Card(
            scope,
            kind,
            str(p["text"]),
            parse_date(p["updated_at"]) or datetime.min,
            _json(p.get("data")),
        )

    def put_card(self, card: Card) -> None:

        from weaviate.classes.data import DataObject

        props = {
            **scope_props(card.scope),
            "kind": card.kind,
            "text": card.text,
            "data": json.dumps(dict(card.data), ensure_ascii=False),
            "updated_at": as_utc(card.updated_at),
        }
        self._insert(
            S.CARD,
            None,
            [
                DataObject(
                    uuid=object_uuid("card", *card.scope.parts(), card.kind), properties=props
                )
            ],
            "cards",
            [f"{card.scope} {card.kind}"],
        )


def _json(text: Any) -> dict[str, Any]:

    value = json.loads(text or "{}")
    return value if isinstance(value, dict) else {}
