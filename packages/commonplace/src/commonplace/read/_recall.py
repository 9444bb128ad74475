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
    """One retrieved record, how it scored, and what the recall says about it.

    ``note`` explains anything unusual: "until 6 April 2026; then: 8001" for a
    superseded fact (shown as past, with what replaced it), "linked from nt_..." for a
    record reached along a link, "disagrees with nt_..." for a flagged record.
    ``section`` is where the compiled context shows it: ``"hot"`` (always
    remembered), ``"recent"`` (the last notes) or ``"relevant"`` (found for the
    query); ``""`` for a search result the budget left out. ``excerpt`` is the
    sentence of the note's own turn that the context quotes beside it, when that turn
    holds words of the question the note's text lacks (the writer dropped them).
    """

    record: Record
    score: Score
    note: str | None = None
    section: str = "relevant"
    excerpt: str | None = None

    def to_json(self) -> dict[str, Any]:
        r = self.record
        return {
            "id": r.id,
            "kind": r.kind.value,
            "tier": r.tier.value,
            "text": r.text,
            "provenance": list(r.provenance),
            "tags": r.tags.to_json(turn_terms=False),
            "score": self.score.breakdown(),
            "note": self.note,
            "section": self.section,
            "excerpt": self.excerpt,
        }


@dataclass(frozen=True, slots=True)
class Disagreement:
    """Two records that cannot both be true, and why they were flagged."""

    first: str
    second: str
    reason: str


@dataclass(frozen=True, slots=True)
class Recall:
    """The memory compiled for one query.

    ``items`` are the records the compiled context shows (hot, recent and
    relevant ones alike), best first, each with its section, score breakdown
    and provenance: whatever the context shows is an item, however few notes
    there are (below ``search_min_notes`` nothing is searched: ``searched`` is
    False and the notes are shown as recent notes). ``hot`` the records always
    injected; ``recent`` the last few notes; ``profile``
    and ``summary`` the scope's profile card and rolling summary;
    ``disagreements`` the pairs flagged as contradicting each other. ``text``
    is the compiled context (what ``render()`` returns), ``tokens`` its size
    in ``cl100k_base`` tokens, ``included`` the ids of the records that fit
    the budget. ``retrieved`` are the few best relevant records the search put
    forward (at most ``top_k``, 10 without it): feedback counts each as used or
    ignored, and those about as relevant as the best (``score.gate == 1``) count as
    accessed (a near miss shown on every recall must not look fresh); the rest of
    the budget is filled with other relevant notes, shown but not counted. ``id``
    names this recall for :meth:`Memory.feedback`.
    """

    id: str
    query: str
    scope: Scope
    at: datetime
    items: tuple[RecallItem, ...]
    recent: tuple[Record, ...]
    text: str
    tokens: int
    included: tuple[str, ...]
    hot: tuple[Record, ...] = ()
    profile: str = ""
    summary: str = ""
    disagreements: tuple[Disagreement, ...] = ()
    searched: bool = True
    as_of: datetime | None = None
    retrieved: tuple[str, ...] = ()

    def render(self) -> str:
        """The compiled context, as the text an LLM would see."""
        return self.text

    def messages(self) -> list[dict[str, str]]:
        """The compiled context as one system message (empty when nothing was recalled)."""
        return [{"role": "system", "content": self.text}] if self.text else []

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "query": self.query,
            "scope": {
                "user": self.scope.user,
                "agent": self.scope.agent,
                "thread": self.scope.thread,
            },
            "at": self.at.isoformat(),
            "as_of": None if self.as_of is None else self.as_of.isoformat(),
            "searched": self.searched,
            "items": [item.to_json() for item in self.items],
            "hot": [r.id for r in self.hot],
            "recent": [r.id for r in self.recent],
            "disagreements": [[d.first, d.second, d.reason] for d in self.disagreements],
            "included": list(self.included),
            "retrieved": list(self.retrieved),
            "tokens": self.tokens,
            "text": self.text,
        }
