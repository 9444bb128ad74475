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

import numpy as np

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
    return float(_recency(np.asarray(days, np.float64), half_life_days))


def frequency(count: int, *, cap: int) -> float:
    """``log(1 + n) / log(1 + cap)``, capped at 1."""
    return float(_frequency(np.asarray(count, np.float64), cap))


def _recency(days: np.ndarray, half_life_days: float) -> np.ndarray:
    out: np.ndarray = np.exp(-math.log(2) / half_life_days * np.maximum(0.0, days))
    return out


def _frequency(counts: np.ndarray, cap: int) -> np.ndarray:
    out: np.ndarray = np.minimum(1.0, np.log1p(np.maximum(0.0, counts)) / math.log1p(cap))
    return out


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
    pool = score_pool(candidates, query=query, now=now, config=config, signals=signals, best=best)
    return [pool.score(i) for i in range(len(candidates))]


class PoolScores:
    """The scores of a whole pool, computed together as arrays; a :class:`Score` is made
    only for the candidates a recall keeps (most of a pool is never shown).

    ``totals[i]`` is candidate ``i``'s total, ``semantic[i]`` its blended relevance and
    ``best`` the best relevance the pool was gated against (None for an empty pool)."""

    def __init__(
        self,
        candidates: Sequence[Candidate],
        rows: np.ndarray,
        extra: dict[str, np.ndarray],
        best: float | None,
    ) -> None:
        self._candidates = candidates
        self._rows = rows  # one per candidate, in the order Score takes them
        self._extra = extra
        self.totals: np.ndarray = rows[:, 0]
        self.semantic: np.ndarray = rows[:, 1]
        self.best = best

    def score(self, i: int, *, total: float | None = None) -> Score:
        """Candidate ``i``'s score (with ``total`` in place of its own, when given)."""
        row = self._rows[i].tolist()
        own, semantic, rec, freq, imp, gate, imp_gate, access, tier, modality = row
        candidate = self._candidates[i]
        return Score(
            own if total is None else total,
            semantic,
            rec,
            freq,
            imp,
            gate,
            {name: float(values[i]) for name, values in self._extra.items()},
            importance_gate=imp_gate,
            cosine=candidate.similarity,
            keyword=candidate.keyword,
            accessibility=access,
            tier_factor=tier,
            modality_factor=modality,
        )


def score_pool(
    candidates: Sequence[Candidate],
    *,
    query: str,
    now: datetime,
    config: Config,
    signals: Sequence[ScoreSignal] = (),
    best: float | None = None,
) -> PoolScores:
    """Every candidate's signals and total at once (what :func:`score_candidates` gives
    one by one): a handful of array operations, whatever the pool's size."""
    n = len(candidates)
    w = config.weights
    alpha = config.keyword_weight
    records = [c.record for c in candidates]
    sims = np.fromiter((c.similarity for c in candidates), np.float64, n)
    keyword = np.fromiter((c.keyword for c in candidates), np.float64, n)
    semantic = (1 - alpha) * np.clip(sims, 0.0, 1.0) + alpha * np.clip(keyword, 0.0, 1.0)
    if n:
        top = float(semantic.max())
        best = top if best is None else max(best, top)
    at = now.timestamp()
    days = np.fromiter(
        ((at - r.last_access.timestamp()) / _SECONDS_PER_DAY for r in records), np.float64, n
    )
    rec = _recency(days, config.half_life_days)
    # retrievals and confirmed uses both count as "often recalled"
    counts = np.fromiter((r.access_count + r.used_count for r in records), np.float64, n)
    freq = _frequency(counts, config.frequency_cap)
    imp = np.clip(np.fromiter((r.tags.importance for r in records), np.float64, n), 0.0, 1.0)
    stated = np.fromiter((r.tags.importance_stated for r in records), bool, n)
    importance_plateau = max(config.importance_plateau, config.relevance_plateau)
    gate = _gates(semantic, best, config, plateau=config.relevance_plateau)
    importance_gate = _gates(semantic, best, config, plateau=importance_plateau)
    extra = {
        s.name: np.array([_extra(s, c, query=query, now=now) for c in candidates]) for s in signals
    }
    lift = w.recency * rec + w.frequency * freq + np.where(stated, 0.0, w.importance * imp)
    for s in signals:
        lift = lift + s.weight * extra[s.name]
    stated_lift = np.where(stated, w.stated_importance * imp, 0.0)
    unused = np.fromiter((max(0, r.ignored_count - r.used_count) for r in records), np.float64, n)
    # sinks with every ignore, but never below a floor: relevance must still win
    accessibility = np.maximum(_MIN_ACCESSIBILITY, 1.0 / (1.0 + config.ignore_penalty * unused))
    cold = np.fromiter((r.tier is Tier.COLD for r in records), bool, n)
    tier_factor = np.where(cold, config.cold_factor, 1.0)
    # what the user asked is kept, but a statement that answers it must come first
    asked = np.fromiter((r.tags.modality is Modality.QUESTION for r in records), bool, n)
    modality_factor = np.where(asked, config.question_factor, 1.0)
    weighted = w.semantic * semantic + gate * lift + importance_gate * stated_lift
    total = weighted * accessibility * tier_factor * modality_factor
    # one row per candidate, in the order Score takes them
    columns = (total, semantic, rec, freq, imp, gate, importance_gate)
    rows = np.stack([*columns, accessibility, tier_factor, modality_factor], axis=1)
    return PoolScores(candidates, rows, extra, best)


def _gates(
    semantic: np.ndarray, best: float | None, config: Config, *, plateau: float
) -> np.ndarray:
    """How much of the contextual lift each candidate gets (see the module docstring)."""
    if best is None:
        return np.zeros_like(semantic)
    below = best - semantic - plateau
    if config.relevance_margin <= 0:
        fade = np.zeros_like(semantic)
    elif math.isinf(config.relevance_margin):
        fade = np.ones_like(semantic)
    else:
        fade = np.maximum(0.0, 1.0 - below / config.relevance_margin)
    gates = np.where(below <= 0, 1.0, fade)
    return np.where(semantic < config.relevance_floor, 0.0, gates)


def _extra(signal: ScoreSignal, candidate: Candidate, *, query: str, now: datetime) -> float:
    value = signal.score(candidate, query=query, now=now)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise PluginError(
            f"score signal {signal.name!r} returned {value!r}; it must return a float in [0, 1]"
        )
    return min(1.0, max(0.0, float(value)))
