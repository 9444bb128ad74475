"""The lifecycle jobs a Memory runs: each returns a report and writes the audit log."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

import pluggy

from .._config import Config
from .._scope import Scope
from ..embedders._protocol import Embedder
from ..stores import AuditEntry, Store
from ._consolidate import consolidate
from ._decay import DecayContext, DecayRule, ForgetSmart, default_rules, run_rules
from ._procedures import update_procedures
from ._report import LifecycleReport
from ._tiers import tier_actions


class Lifecycle:
    """Tiers, consolidation, procedures and decay over one backend."""

    def __init__(
        self, *, store: Store, embedder: Embedder, config: Config, hooks: pluggy.HookRelay
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._config = config
        self._hooks = hooks

    def tiers(self, *, scope: Scope, now: datetime, dry_run: bool) -> LifecycleReport:
        return self._timed(
            dry_run,
            lambda: self._apply(
                tier_actions(self._store, self._config.tiers, scope=scope, now=now), dry_run
            ),
        )

    def consolidate(self, *, scope: Scope, now: datetime, dry_run: bool) -> LifecycleReport:
        def run() -> list[AuditEntry]:
            rules = self._config.consolidation
            return consolidate(
                self._store,
                embedder=self._embedder,
                hooks=self._hooks,
                rules=rules,
                scope=scope,
                now=now,
                dry_run=dry_run,
            ) + update_procedures(
                self._store,
                embedder=self._embedder,
                rules=rules,
                scope=scope,
                now=now,
                dry_run=dry_run,
            )

        return self._timed(dry_run, run, audit=True)

    def decay(
        self,
        *,
        scope: Scope | None,
        now: datetime,
        dry_run: bool,
        rules: list[DecayRule] | None = None,
    ) -> LifecycleReport:
        def run() -> list[AuditEntry]:
            chosen = (
                rules
                if rules is not None
                else default_rules(self._config.decay)
                + [
                    rule
                    for contributed in self._hooks.commonplace_decay_rules()
                    for rule in contributed or ()
                ]
            )
            context = DecayContext(self._store, self._config.decay, scope, now)
            entries = run_rules(context, chosen, dry_run=dry_run)
            if rules is None and not dry_run:
                self._store.links.decay_links(factor=self._config.decay.link_decay, at=now)
                pruned = self._store.links.prune_links(
                    min_weight=self._config.decay.link_min_weight
                )
                if pruned:
                    entries.append(
                        AuditEntry(
                            now,
                            scope or Scope(user="*"),
                            "prune_links",
                            "weak_links",
                            "-",
                            f"{pruned} links pruned",
                        )
                    )
            return entries

        return self._timed(dry_run, run, audit=True)

    def forget_smart(
        self,
        *,
        scope: Scope,
        now: datetime,
        days: float,
        max_frequency: int,
        max_importance: float,
        dry_run: bool,
    ) -> LifecycleReport:
        rule = ForgetSmart(days, max_frequency, max_importance)
        return self.decay(scope=scope, now=now, dry_run=dry_run, rules=[rule])

    def _apply(
        self, planned: list[tuple[AuditEntry, Callable[[], None]]], dry_run: bool
    ) -> list[AuditEntry]:
        if not dry_run:
            for _, apply in planned:
                apply()
            if planned:
                self._store.books.append_audit([e for e, _ in planned])
        return [e for e, _ in planned]

    def _timed(
        self, dry_run: bool, run: Callable[[], list[AuditEntry]], *, audit: bool = False
    ) -> LifecycleReport:
        start = time.perf_counter()
        entries = run()
        if audit and entries and not dry_run:
            self._store.books.append_audit(entries)
        return LifecycleReport(tuple(entries), dry_run, time.perf_counter() - start)
