"""Scoring: the four built-in signals, extra signals from plugins, and the gate.

``total = (w_semantic * semantic + gate * Σ w_s * signal_s + importance_gate *
w_stated * stated importance) * accessibility * tier_factor * modality_factor``
where the sum runs over the contextual signals (recency, frequency, the
importance the note writer guessed, and any extra ones from plugins),
``semantic`` blends cosine similarity with the BM25 keyword match, and the last
term is there only for notes whose importance the application stated.

The gate is what keeps the rerank honest with a realistic candidate pool:
contextual signals may reorder records that are about as relevant as the best
candidate, but they cannot lift an unrelated record just because it is fresh
or popular. A candidate whose similarity is below ``relevance_floor`` gets no
lift at all; within ``relevance_plateau`` of the best similarity in the pool it
gets the whole lift; further below, the lift fades linearly to zero over
``relevance_margin``.

Importance the application stated (``put_note(importance=...)``) has its own,
wider plateau (``importance_plateau``). It describes the note, not the moment, and
a vague note ("the boiler was looked at") often matches a question more closely
than the specific one that answers it, so it may pick between notes further
apart. Recency may not: letting it reorder that far ranks what was said last over
what was asked about, which real conversations punish (docs/locomo.md). Nor may
the importance the rule writer guesses: it favours the first, plainly keyed
statement of a fact over the colloquial update that replaced it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

from .._config import Config
from .._records import Modality, Tier
from ..errors import PluginError
from ..stores import Candidate

_SECONDS_PER_DAY = 86_400.0
_MIN_ACCESSIBILITY = 0.5


@runtime_checkable
class ScoreSignal(Protocol):
    """An extra signal contributed through ``commonplace_score_signals``.

    ``score`` returns a value in [0, 1] for one candidate; it is weighted by
    ``weight`` and gated like the built-in contextual signals.
    """

    @property
    def name(self) -> str: ...

    @property
    def weight(self) -> float: ...

    def score(self, candidate: Candidate, *, query: str, now: datetime) -> float: ...


@dataclass(frozen=True, slots=True)
class Score:
    """A candidate's score and every signal that went into it.

    ``semantic`` is the relevance the gate and the semantic weight use: the
    cosine similarity blended with the keyword match (``cosine`` and
    ``keyword`` hold the two parts). ``accessibility`` (< 1 for records that
    were retrieved and ignored), ``tier_factor`` (< 1 for cold records) and
    ``modality_factor`` (< 1 for the user's questions, which a statement that
    answers them must outrank) multiply the weighted sum. ``gate`` scales the
    lift of recency, frequency, guessed importance and extra signals,
    ``importance_gate`` that of stated importance.
    """

    total: float
    semantic: float
    recency: float
    frequency: float
    importance: float
    gate: float
    extra: Mapping[str, float] = field(default_factory=dict)
    importance_gate: float = 0.0
    cosine: float = 0.0
    keyword: float = 0.0
    accessibility: float = 1.0
    tier_factor: float = 1.0
    modality_factor: float = 1.0

    def breakdown(self) -> dict[str, float]:
        """Every signal by name, the gate, the multipliers and the total."""
        out = {
            "semantic": self.semantic,
            "cosine": self.cosine,
            "keyword": self.keyword,
            "recency": self.recency,
            "frequency": self.frequency,
            "importance": self.importance,
            **self.extra,
            "gate": self.gate,
            "importance_gate": self.importance_gate,
            "accessibility": self.accessibility,
            "tier_factor": self.tier_factor,
            "modality_factor": self.modality_factor,
            "total": self.total,
        }
        return {name: round(value, 4) for name, value in out.items()}


def recency(days: float, *, half_life_days: float) -> float:
    """``exp(-ln 2 / half_life * days)``: 1 when fresh, 0.5 after one half-life."""
    return math.exp(-math.log(2) / half_life_days * max(0.0, days))


def frequency(count: int, *, cap: int) -> float:
    """``log(1 + n) / log(1 + cap)``, capped at 1."""
    return min(1.0, math.log1p(max(0, count)) / math.log1p(cap))


def score_candidates(
    candidates: Sequence[Candidate],
    *,
    query: str,
    now: datetime,
    config: Config,
    signals: Sequence[ScoreSignal] = (),
    best: float | None = None,
) -> list[Score]:
    """Scores in the order of ``candidates``. ``best`` is the best relevance of the pool
    they are judged against, when that is not theirs alone (records shown without being
    searched for must not be gated against each other only)."""
    if not candidates:
        return []
    w = config.weights
    alpha = config.keyword_weight
    relevance = [
        (1 - alpha) * min(1.0, max(0.0, c.similarity)) + alpha * min(1.0, max(0.0, c.keyword))
        for c in candidates
    ]
    best = max(relevance) if best is None else max(best, *relevance)
    importance_plateau = max(config.importance_plateau, config.relevance_plateau)
    scores = []
    for candidate, semantic in zip(candidates, relevance):
        record = candidate.record
        days = (now - record.last_access).total_seconds() / _SECONDS_PER_DAY
        rec = recency(days, half_life_days=config.half_life_days)
        # retrievals and confirmed uses both count as "often recalled"
        freq = frequency(record.access_count + record.used_count, cap=config.frequency_cap)
        imp = min(1.0, max(0.0, record.importance))
        gate = _gate(semantic, best, config, plateau=config.relevance_plateau)
        importance_gate = _gate(semantic, best, config, plateau=importance_plateau)
        extra = {s.name: _extra(s, candidate, query=query, now=now) for s in signals}
        stated = record.tags.importance_stated
        lift = w.recency * rec + w.frequency * freq + (0.0 if stated else w.importance * imp)
        lift += sum(s.weight * extra[s.name] for s in signals)
        stated_lift = w.stated_importance * imp if stated else 0.0
        unused = max(0, record.ignored_count - record.used_count)
        # sinks with every ignore, but never below a floor: relevance must still win
        accessibility = max(_MIN_ACCESSIBILITY, 1.0 / (1.0 + config.ignore_penalty * unused))
        tier_factor = config.cold_factor if record.tier is Tier.COLD else 1.0
        # what the user asked is kept, but a statement that answers it must come first
        asked = record.tags.modality is Modality.QUESTION
        modality_factor = config.question_factor if asked else 1.0
        weighted = w.semantic * semantic + gate * lift + importance_gate * stated_lift
        total = weighted * accessibility * tier_factor * modality_factor
        scores.append(
            Score(
                total,
                semantic,
                rec,
                freq,
                imp,
                gate,
                extra,
                importance_gate=importance_gate,
                cosine=candidate.similarity,
                keyword=candidate.keyword,
                accessibility=accessibility,
                tier_factor=tier_factor,
                modality_factor=modality_factor,
            )
        )
    return scores


def _gate(similarity: float, best: float, config: Config, *, plateau: float) -> float:
    if similarity < config.relevance_floor:
        return 0.0
    below = best - similarity - plateau
    if below <= 0:
        return 1.0
    if config.relevance_margin <= 0:
        return 0.0
    return max(0.0, 1.0 - below / config.relevance_margin)


def _extra(signal: ScoreSignal, candidate: Candidate, *, query: str, now: datetime) -> float:
    value = signal.score(candidate, query=query, now=now)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise PluginError(
            f"score signal {signal.name!r} returned {value!r}; it must return a float in [0, 1]"
        )
    return min(1.0, max(0.0, float(value)))
