"""Settings of a Memory, validated once when it is built."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from .errors import InvalidInputError, InvalidTypeError


@dataclass(frozen=True, slots=True, kw_only=True)
class Weights:
    """Weights of the four built-in signals; extra signals carry their own."""

    semantic: float = 0.5
    recency: float = 0.2
    frequency: float = 0.2
    importance: float = 0.1

    def __post_init__(self) -> None:
        for f in fields(self):
            _check_number(f"weights.{f.name}", getattr(self, f.name), low=0.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Every tunable of a Memory. Build one with keywords; all have defaults.

    ``half_life_days`` and ``frequency_cap`` shape the recency and frequency
    signals; ``pool_min`` and ``pool_factor`` size the candidate pool as
    ``max(top_k * pool_factor, pool_min)``; ``relevance_floor`` is the cosine
    similarity under which a candidate gets no help from recency, frequency or
    importance, and ``relevance_margin`` how far below the best candidate's
    similarity that help fades to nothing (so fresh or popular but unrelated
    records cannot be pulled in). ``relevance_floor=-1`` with
    ``relevance_margin=float("inf")`` gives the ungated NLM formula.
    """

    weights: Weights = field(default_factory=Weights)
    half_life_days: float = 90.0
    frequency_cap: int = 100
    pool_min: int = 50
    pool_factor: int = 10
    relevance_floor: float = 0.1
    relevance_margin: float = 0.2
    budget_tokens: int = 1500
    recent_notes: int = 3
    max_turn_chars: int = 20_000
    max_query_chars: int = 4_000
    touch_on_recall: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.weights, Weights):
            raise InvalidTypeError("config.weights must be a commonplace.Weights")
        _check_number("half_life_days", self.half_life_days, low=1e-6)
        _check_int("frequency_cap", self.frequency_cap, low=1)
        _check_int("pool_min", self.pool_min, low=1)
        _check_int("pool_factor", self.pool_factor, low=1)
        _check_number("relevance_floor", self.relevance_floor, low=-1.0, high=1.0)
        if self.relevance_margin != math.inf:
            _check_number("relevance_margin", self.relevance_margin, low=0.0)
        _check_int("budget_tokens", self.budget_tokens, low=16)
        _check_int("recent_notes", self.recent_notes, low=0)
        _check_int("max_turn_chars", self.max_turn_chars, low=1)
        _check_int("max_query_chars", self.max_query_chars, low=1)
        if not isinstance(self.touch_on_recall, bool):
            raise InvalidTypeError("config.touch_on_recall must be a bool")

    def pool_size(self, top_k: int) -> int:
        return max(top_k * self.pool_factor, self.pool_min)


def _check_number(name: str, value: object, *, low: float, high: float = math.inf) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidTypeError(f"config {name} must be a number, not {type(value).__name__}")
    if not math.isfinite(value) or not low <= value <= high:
        raise InvalidInputError(f"config {name}={value!r} is out of range [{low}, {high}]")


def _check_int(name: str, value: object, *, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"config {name} must be an int, not {type(value).__name__}")
    if value < low:
        raise InvalidInputError(f"config {name}={value!r} must be at least {low}")
