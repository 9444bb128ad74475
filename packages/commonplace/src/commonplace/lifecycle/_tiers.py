"""Tier rules: hot is earned by use, capped by tokens; disuse and supersession sink.

Each rule is a function of the store and a time, so every one of them can be
tested with simulated time. The order matters: promotion first, then the hot
cap, then demotion for disuse.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from .._config import TierRules
from .._records import Kind, Record, Tier
from .._scope import Scope
from .._tokens import count_tokens
from ..errors import NotFoundError
from ..stores import AuditEntry, RecordQuery, Store

_DERIVED = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE)


def tier_actions(
    backend: Store, rules: TierRules, *, scope: Scope, now: datetime
) -> list[tuple[AuditEntry, Callable[[], None]]]:
    """The tier changes due at ``now``, each with the call that applies it."""
    planned: list[tuple[AuditEntry, Callable[[], None]]] = []

    def plan(record: Record, tier: Tier, rule: str, detail: str) -> None:
        entry = AuditEntry(now, record.scope, f"to_{tier.value}", rule, record.id, detail)
        planned.append((entry, lambda: backend.update_records([record.id], at=now, tier=tier)))

    window = now - timedelta(days=rules.promote_window_days)
    warm = list(
        backend.iter_records(
            RecordQuery(scope=scope, kinds=_DERIVED, tiers=(Tier.WARM,), superseded=False)
        )
    )
    uses = backend.books.uses_since([r.id for r in warm], window)
    for record in warm:
        if record.pinned:
            plan(record, Tier.HOT, "pinned", "pinned records are hot")
        elif uses.get(record.id, 0) >= rules.promote_uses:
            plan(
                record,
                Tier.HOT,
                "promote_by_use",
                f"used in {uses[record.id]} recalls within {rules.promote_window_days:g} days",
            )
    promoted = {e.record_id for e, _ in planned}
    hot = [
        r for r in backend.iter_records(RecordQuery(scope=scope, kinds=_DERIVED, tiers=(Tier.HOT,)))
    ]
    hot += [r for r in warm if r.id in promoted]
    planned += _over_budget(hot, backend, rules, now)
    demoted = {e.record_id for e, _ in planned if e.action != "to_hot"}
    stale = now - timedelta(days=rules.demote_after_days)
    for record in hot:
        if (
            record.id not in demoted
            and record.id not in promoted
            and not record.pinned
            and record.last_access < stale
        ):
            plan(
                record,
                Tier.WARM,
                "demote_unused",
                f"not retrieved since {record.last_access:%Y-%m-%d}",
            )
    for record in warm:
        if record.id not in promoted and not record.pinned and record.last_access < stale:
            plan(
                record,
                Tier.COLD,
                "demote_unused",
                f"not retrieved since {record.last_access:%Y-%m-%d}",
            )
    return planned


def _over_budget(
    hot: list[Record], backend: Store, rules: TierRules, now: datetime
) -> list[tuple[AuditEntry, Callable[[], None]]]:
    """Demote the weakest hot records until the rest fit the hot token budget."""
    window = now - timedelta(days=rules.promote_window_days)
    uses = backend.books.uses_since([r.id for r in hot], window)
    # pinned first, then most recent uses, then most recent access: the tail is the weakest
    ranked = sorted(hot, key=lambda r: (r.pinned, uses.get(r.id, 0), r.last_access), reverse=True)
    out: list[tuple[AuditEntry, Callable[[], None]]] = []
    spent = 0
    for record in ranked:
        cost = count_tokens(record.text)
        if spent + cost <= rules.hot_budget_tokens or record.pinned:
            spent += cost
            continue
        entry = AuditEntry(
            now,
            record.scope,
            "to_warm",
            "hot_budget",
            record.id,
            f"hot records exceed {rules.hot_budget_tokens} tokens",
        )
        out.append((entry, _demote(backend, record.id, now)))
    return out


def _demote(backend: Store, record_id: str, now: datetime) -> Callable[[], None]:
    return lambda: backend.update_records([record_id], at=now, tier=Tier.WARM)


def pin(backend: Store, record: Record, *, pinned: bool, now: datetime) -> Record:
    """Pin a record (hot: always injected, never demoted by the hot budget or decayed) or
    unpin it (warm, where the tier rules take it from), with an audit entry."""
    tier = Tier.HOT if pinned else Tier.WARM
    backend.update_records([record.id], at=now, pinned=pinned, tier=tier)
    rule, detail = ("pin", "pinned by the application") if pinned else ("unpin", "unpinned")
    backend.books.append_audit(
        [AuditEntry(now, record.scope, f"to_{tier.value}", rule, record.id, detail)]
    )
    found = backend.get_record(record.id)
    if found is None:  # deleted by a concurrent forget between the two calls
        raise NotFoundError(f"record {record.id!r} was removed while it was being pinned")
    return found
