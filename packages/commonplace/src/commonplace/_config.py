"""Settings of a Memory, validated once when it is built."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from ._validate import MAX_DAYS, checked_int, checked_number
from .errors import InvalidTypeError


@dataclass(frozen=True, slots=True, kw_only=True)
class Weights:
    """Weights of the four built-in signals; extra signals carry their own.

    ``importance`` weighs the importance the note writer guessed; ``stated_importance``
    the importance the application stated (``Memory.put_note(importance=...)``), which
    says what a note is worth for a fact and so counts for more.
    """

    semantic: float = 0.5
    recency: float = 0.2
    frequency: float = 0.2
    importance: float = 0.1
    stated_importance: float = 0.3

    def __post_init__(self) -> None:
        for f in fields(self):
            _check_number(f"weights.{f.name}", getattr(self, f.name), low=0.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class TierRules:
    """When records move between hot, warm and cold.

    A warm record is promoted to hot once it was used in ``promote_uses``
    recalls within ``promote_window_days`` (or when pinned). Hot records are
    always injected, so together they must fit ``hot_budget_tokens``; the
    weakest (fewest recent uses, then oldest access) is demoted when they do
    not. Records not retrieved for ``demote_after_days`` go back to warm (hot)
    or cold (warm). Superseded records go cold at once.
    """

    promote_uses: int = 5
    promote_window_days: float = 14.0
    hot_budget_tokens: int = 200
    demote_after_days: float = 30.0

    def __post_init__(self) -> None:
        _check_int("tiers.promote_uses", self.promote_uses, low=1)
        _check_number("tiers.promote_window_days", self.promote_window_days, low=0.0, high=MAX_DAYS)
        _check_int("tiers.hot_budget_tokens", self.hot_budget_tokens, low=0)
        _check_number("tiers.demote_after_days", self.demote_after_days, low=0.0, high=MAX_DAYS)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsolidationRules:
    """Which notes are distilled into summaries, and when."""

    min_cluster_size: int = 3
    min_age_days: float = 1.0
    max_sentences: int = 5
    procedure_confirmations: int = 3

    def __post_init__(self) -> None:
        _check_int("consolidation.min_cluster_size", self.min_cluster_size, low=2)
        _check_number("consolidation.min_age_days", self.min_age_days, low=0.0, high=MAX_DAYS)
        _check_int("consolidation.max_sentences", self.max_sentences, low=1)
        _check_int("consolidation.procedure_confirmations", self.procedure_confirmations, low=1)


@dataclass(frozen=True, slots=True, kw_only=True)
class DecayRules:
    """What forgetting may remove, and after how long. Episodes are never decayed.

    ``forget_*`` describe the notes ``forget_smart`` removes by default: older
    than ``forget_after_days``, used at most ``forget_max_frequency`` times,
    with importance at most ``forget_max_importance``, never pinned, never
    confirmed (a note that was used, or is hot, counts as confirmed).
    """

    procedure_unmatched_days: float = 90.0
    conflict_days: float = 60.0
    invalid_summary_days: float = 30.0
    forget_after_days: float = 180.0
    forget_max_frequency: int = 0
    forget_max_importance: float = 0.35
    link_decay: float = 0.9
    link_min_weight: float = 0.05

    def __post_init__(self) -> None:
        for name in (
            "procedure_unmatched_days",
            "conflict_days",
            "invalid_summary_days",
            "forget_after_days",
        ):
            _check_number(f"decay.{name}", getattr(self, name), low=0.0, high=MAX_DAYS)
        _check_int("decay.forget_max_frequency", self.forget_max_frequency, low=0)
        _check_number("decay.forget_max_importance", self.forget_max_importance, low=0.0, high=1.0)
        _check_number("decay.link_decay", self.link_decay, low=0.0, high=1.0)
        _check_number("decay.link_min_weight", self.link_min_weight, low=0.0, high=1.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileRules:
    """The profile card and the rolling summary: how often, how big."""

    rewrite_every: int = 5
    card_tokens: int = 120
    summary_tokens: int = 120

    def __post_init__(self) -> None:
        _check_int("profile.rewrite_every", self.rewrite_every, low=1)
        _check_int("profile.card_tokens", self.card_tokens, low=16)
        _check_int("profile.summary_tokens", self.summary_tokens, low=16)


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Every tunable of a Memory. Build one with keywords; all have defaults.

    Recall: ``half_life_days`` and ``frequency_cap`` shape the recency and
    frequency signals; ``pool_min`` and ``pool_factor`` size the candidate
    pool as ``max(top_k * pool_factor, pool_min)`` when a recall gives ``top_k``;
    without it the pool is what the token budget can show (a note's line is about 30
    tokens), and at least ``pool_min``. ``relevance_floor`` is the
    relevance under which a candidate gets no help from recency, frequency or
    importance. Within ``relevance_plateau`` of the best candidate's relevance
    that help is whole (two notes about the same thing differ by a few points of
    cosine, and which one holds is what the signals are for); below it, the help
    fades to nothing over ``relevance_margin`` (so fresh or popular but unrelated
    records cannot be pulled in); ``relevance_floor=-1`` with
    ``relevance_margin=float("inf")`` gives the ungated NLM formula.
    ``importance_plateau`` is the wider plateau of stated importance: an
    importance the application set says what a note is worth (a specific fact
    against a vague one about the same thing, which the vague one often matches
    more closely), not when it was said, so it may pick between notes further
    apart than fresh or popular ones may (it is never narrower than
    ``relevance_plateau``). The writer's guessed importance is gated like recency.
    ``keyword_weight`` blends the BM25 keyword match into relevance.
    ``search_min_notes``: below this many notes in a scope recall does not
    search at all (every note is shown as a recent note). ``cold_factor``
    sinks cold records; ``question_factor`` sinks the user's own questions below
    the statements that answer them; ``ignore_penalty`` sinks records retrieved
    and not used. ``link_expand`` is how many linked records one hop may add and
    ``link_min_weight`` how strong a link must be to be followed.

    Write: ``supersede`` turns on supersession by subject and predicate;
    ``merge_similarity`` is the cosine similarity above which a new note is a
    near-duplicate of an existing one and strengthens it instead.
    """

    weights: Weights = field(default_factory=Weights)
    half_life_days: float = 90.0
    frequency_cap: int = 100
    pool_min: int = 50
    pool_factor: int = 10
    relevance_floor: float = 0.1
    relevance_plateau: float = 0.0
    importance_plateau: float = 0.15
    relevance_margin: float = 0.2
    keyword_weight: float = 0.3
    search_min_notes: int = 4
    cold_factor: float = 0.5
    question_factor: float = 0.5
    ignore_penalty: float = 0.15
    link_expand: int = 3
    link_min_weight: float = 0.3
    budget_tokens: int = 1500
    recent_notes: int = 3
    max_turn_chars: int = 20_000
    max_query_chars: int = 4_000
    touch_on_recall: bool = True
    supersede: bool = True
    merge_similarity: float = 0.97
    tiers: TierRules = field(default_factory=TierRules)
    consolidation: ConsolidationRules = field(default_factory=ConsolidationRules)
    decay: DecayRules = field(default_factory=DecayRules)
    profile: ProfileRules = field(default_factory=ProfileRules)

    def __post_init__(self) -> None:
        for name, kind in (
            ("weights", Weights),
            ("tiers", TierRules),
            ("consolidation", ConsolidationRules),
            ("decay", DecayRules),
            ("profile", ProfileRules),
        ):
            if not isinstance(getattr(self, name), kind):
                raise InvalidTypeError(f"config.{name} must be a commonplace.{kind.__name__}")
        _check_number("half_life_days", self.half_life_days, low=1e-6)
        _check_int("frequency_cap", self.frequency_cap, low=1)
        _check_int("pool_min", self.pool_min, low=1)
        _check_int("pool_factor", self.pool_factor, low=1)
        _check_number("relevance_floor", self.relevance_floor, low=-1.0, high=1.0)
        _check_number("relevance_plateau", self.relevance_plateau, low=0.0, high=1.0)
        _check_number("importance_plateau", self.importance_plateau, low=0.0, high=1.0)
        if self.relevance_margin != math.inf:
            _check_number("relevance_margin", self.relevance_margin, low=0.0)
        _check_number("keyword_weight", self.keyword_weight, low=0.0, high=1.0)
        _check_int("search_min_notes", self.search_min_notes, low=0)
        _check_number("cold_factor", self.cold_factor, low=0.0, high=1.0)
        _check_number("question_factor", self.question_factor, low=0.0, high=1.0)
        _check_number("ignore_penalty", self.ignore_penalty, low=0.0)
        _check_int("link_expand", self.link_expand, low=0)
        _check_number("link_min_weight", self.link_min_weight, low=0.0, high=1.0)
        _check_int("budget_tokens", self.budget_tokens, low=16)
        _check_int("recent_notes", self.recent_notes, low=0)
        _check_int("max_turn_chars", self.max_turn_chars, low=1)
        _check_int("max_query_chars", self.max_query_chars, low=1)
        for flag in ("touch_on_recall", "supersede"):
            if not isinstance(getattr(self, flag), bool):
                raise InvalidTypeError(f"config.{flag} must be a bool")
        _check_number("merge_similarity", self.merge_similarity, low=0.0, high=1.0)

    def pool_size(self, top_k: int) -> int:
        return max(top_k * self.pool_factor, self.pool_min)


def _check_number(name: str, value: object, *, low: float, high: float = math.inf) -> None:
    checked_number(f"config {name}", value, low=low, high=high)


def _check_int(name: str, value: object, *, low: int, high: int = 2**31 - 1) -> None:
    # the high bound keeps every count and limit SQL-sized
    checked_int(f"config {name}", value, low=low, high=high)
