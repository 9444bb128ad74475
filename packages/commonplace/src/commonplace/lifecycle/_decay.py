"""Forgetting on purpose: decay rules as data, each with a dry run and an audit trail.

A rule looks at the store and proposes actions; the engine applies them (or,
in a dry run, only reports them) and writes each to the audit log with the
rule's name and reason. The engine, not the rule, enforces the two promises no
rule can break: episodes are never removed by decay, and neither are confirmed
notes (used, pinned or hot).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from .._config import DecayRules
from .._records import Kind, Record, Status, Tier
from .._scope import Scope
from ..errors import PluginError
from ..stores import AuditEntry, RecordQuery, Store

DELETE = "delete"
SOFT_DELETE = "soft_delete"
RESOLVE_CONFLICT = "resolve_conflict"


@dataclass(frozen=True, slots=True)
class DecayAction:
    """One thing a rule wants done: delete or soft-delete a record, or resolve a conflict."""

    target: str
    action: str
    reason: str
    scope: Scope


@dataclass(frozen=True, slots=True)
class DecayContext:
    """What a rule may look at."""

    backend: Store
    rules: DecayRules
    scope: Scope | None
    now: datetime


@runtime_checkable
class DecayRule(Protocol):
    """A forgetting rule. Contribute more through ``commonplace_decay_rules``."""

    @property
    def name(self) -> str: ...

    def plan(self, context: DecayContext) -> Sequence[DecayAction]: ...


class UnmatchedProcedures:
    """Procedure candidates that never earned promotion and stopped matching."""

    name = "procedure_unmatched"

    def plan(self, context: DecayContext) -> Sequence[DecayAction]:
        cutoff = context.now - timedelta(days=context.rules.procedure_unmatched_days)
        out = []
        for record in context.backend.iter_records(
            RecordQuery(scope=context.scope, kinds=(Kind.PROCEDURE,))
        ):
            last = datetime.fromisoformat(
                str(record.data.get("last_matched", record.created_at.isoformat()))
            )
            if not record.data.get("promoted") and last < cutoff:
                out.append(
                    DecayAction(record.id, DELETE, f"unmatched since {last:%Y-%m-%d}", record.scope)
                )
        return out


class ExpiredConflicts:
    """Entity conflicts nobody resolved: after a while the two are separate entities."""

    name = "conflict_timeout"

    def plan(self, context: DecayContext) -> Sequence[DecayAction]:
        cutoff = context.now - timedelta(days=context.rules.conflict_days)
        return [
            DecayAction(
                c.id,
                RESOLVE_CONFLICT,
                f"open since {c.created_at:%Y-%m-%d}; resolved as separate entities",
                c.scope,
            )
            for c in context.backend.books.conflicts(context.scope, open_only=True)
            if c.created_at < cutoff
        ]


class InvalidSummaries:
    """Summaries invalid for long enough are soft-deleted."""

    name = "invalid_summary"

    def plan(self, context: DecayContext) -> Sequence[DecayAction]:
        cutoff = context.now - timedelta(days=context.rules.invalid_summary_days)
        return [
            DecayAction(r.id, SOFT_DELETE, f"invalid since {r.status_since:%Y-%m-%d}", r.scope)
            for r in context.backend.iter_records(
                RecordQuery(scope=context.scope, kinds=(Kind.SUMMARY,), statuses=(Status.INVALID,))
            )
            if r.status_since is not None and r.status_since < cutoff
        ]


@dataclass(frozen=True, slots=True)
class ForgetSmart:
    """Unconfirmed notes that are old, rarely used and unimportant (NLM's forget_smart)."""

    days: float
    max_frequency: int
    max_importance: float
    name: str = "forget_smart"

    def plan(self, context: DecayContext) -> Sequence[DecayAction]:
        cutoff = context.now - timedelta(days=self.days)
        return [
            DecayAction(
                r.id,
                DELETE,
                f"written {r.created_at:%Y-%m-%d}, retrieved {r.access_count} "
                f"times, importance {r.importance:.2f}",
                r.scope,
            )
            for r in context.backend.iter_records(
                RecordQuery(scope=context.scope, created_before=cutoff)
            )
            if r.access_count <= self.max_frequency
            and r.importance <= self.max_importance
            and not confirmed(r)
        ]


def confirmed(record: Record) -> bool:
    """A confirmed note is one the user's use or choice vouched for: decay never takes it."""
    return record.used_count > 0 or record.pinned or record.tier is Tier.HOT


def default_rules(rules: DecayRules) -> list[DecayRule]:
    return [
        UnmatchedProcedures(),
        ExpiredConflicts(),
        InvalidSummaries(),
        ForgetSmart(
            rules.forget_after_days, rules.forget_max_frequency, rules.forget_max_importance
        ),
    ]


def run_rules(
    context: DecayContext, rules: Sequence[DecayRule], *, dry_run: bool
) -> list[AuditEntry]:
    backend, now = context.backend, context.now
    entries: list[AuditEntry] = []
    for rule in rules:
        if not isinstance(rule, DecayRule):
            raise PluginError(f"{rule!r} is not a decay rule (needs name and plan(context))")
        for action in rule.plan(context):
            entry = AuditEntry(
                now, action.scope, action.action, rule.name, action.target, action.reason
            )
            if action.action == RESOLVE_CONFLICT:
                if not dry_run:
                    backend.books.resolve_conflict(
                        action.target, resolution="separate entities", at=now
                    )
                entries.append(entry)
                continue
            record = backend.get_record(action.target, any_status=True)
            if record is None:
                continue  # an episode, or already gone: decay never removes episodes
            if record.kind is Kind.NOTE and confirmed(record):
                continue  # confirmed notes are never forgotten by decay
            if not dry_run:
                if action.action == DELETE:
                    backend.erasure.delete_records([record.id])
                elif action.action == SOFT_DELETE:
                    backend.update_records([record.id], at=now, status=Status.DELETED)
                else:
                    raise PluginError(
                        f"rule {rule.name!r} asked for unknown action "
                        f"{action.action!r}; use delete or soft_delete"
                    )
            entries.append(entry)
    return entries
