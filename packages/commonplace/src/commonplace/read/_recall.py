"""What a recall returns: ranked items with their breakdown, and the compiled context."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .._records import Record
from .._scope import Scope
from ._signals import Score


@dataclass(frozen=True, slots=True)
class RecallItem:
    """One retrieved record and how it scored."""

    record: Record
    score: Score

    def to_json(self) -> dict[str, Any]:
        r = self.record
        return {
            "id": r.id,
            "kind": r.kind.value,
            "tier": r.tier.value,
            "text": r.text,
            "provenance": list(r.provenance),
            "tags": r.tags.to_json(),
            "score": self.score.breakdown(),
        }


@dataclass(frozen=True, slots=True)
class Recall:
    """The memory compiled for one query.

    ``items`` are the retrieved records, best first, each with its score
    breakdown; ``recent`` the last few notes; ``text`` the compiled context
    (what ``render()`` returns) and ``tokens`` its size in ``cl100k_base``
    tokens; ``included`` the ids of the records that fit the budget.
    """

    query: str
    scope: Scope
    at: datetime
    items: tuple[RecallItem, ...]
    recent: tuple[Record, ...]
    text: str
    tokens: int
    included: tuple[str, ...]

    def render(self) -> str:
        """The compiled context, as the text an LLM would see."""
        return self.text

    def messages(self) -> list[dict[str, str]]:
        """The compiled context as one system message (empty when nothing was recalled)."""
        return [{"role": "system", "content": self.text}] if self.text else []

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "scope": {
                "user": self.scope.user,
                "agent": self.scope.agent,
                "thread": self.scope.thread,
            },
            "at": self.at.isoformat(),
            "items": [item.to_json() for item in self.items],
            "recent": [r.id for r in self.recent],
            "included": list(self.included),
            "tokens": self.tokens,
            "text": self.text,
        }
