"""What a lifecycle run did (or, in a dry run, would do)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..stores import AuditEntry


@dataclass(frozen=True, slots=True)
class LifecycleReport:
    """Every action of a run, each with the rule that caused it and why.

    In a dry run nothing was changed and nothing was written to the audit log;
    the actions say what a real run would do.
    """

    actions: tuple[AuditEntry, ...] = ()
    dry_run: bool = False
    seconds: float = 0.0
    details: dict[str, int] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """How many actions of each kind (``promote``, ``delete`` ...)."""
        return dict(Counter(a.action for a in self.actions))

    def by_rule(self, rule: str) -> list[AuditEntry]:
        return [a for a in self.actions if a.rule == rule]
