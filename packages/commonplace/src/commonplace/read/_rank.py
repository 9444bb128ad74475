"""A recall's second stage: the candidates scored and ordered, and the best of them kept.

:meth:`Ranker.rank` takes the :class:`Candidates` of a :class:`Request` and gives a
:class:`Ranking`. The pool is scored as arrays, all at once (``score_pool`` of
``_signals.py``: the four signals, the gate, the multipliers); two rules the score
alone cannot keep are applied on top (a superseded record never outranks what replaced
it, a summary never outranks a note it was derived from); the candidates relevant
enough (``relevance_floor``) are kept best first, the first ``top_k`` of them with what
superseded any of them, and no more than the budget could show. The hot and recent
records, shown without being searched for, are scored against the query all the same,
gated against the best relevance the search found.

No store is read here but for the vectors of records that came without one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .._config import Config
from .._records import Record
from ..stores import Candidate, Store
from ._candidates import Candidates, Request, as_candidates, keyword_match
from ._context import record_line_cost
from ._recall import RecallItem
from ._signals import PoolScores, ScoreSignal, score_candidates, score_pool

# relevant items kept past the budget: lines shorter than the one that did not fit
_LOOKAHEAD = 8


@dataclass(frozen=True, slots=True)
class Ranking:
    """What the rank stage gives the compile stage.

    ``relevant`` are the pool's records relevant enough to show, best first, hot
    records left out (they are shown as hot), as many as the budget could show and
    ``_LOOKAHEAD`` more: what the compile stage packs, and nothing else of the pool.
    ``unsearched`` are the hot and recent records not among them, scored, by id.
    ``best`` is the best relevance the search found (None when nothing was searched):
    any record scored later in the recall is gated against it too.
    """

    relevant: tuple[RecallItem, ...]
    unsearched: Mapping[str, RecallItem]
    best: float | None


class Ranker:
    """The rank stage: scores, gates and orders what the candidates stage read."""

    def __init__(self, *, store: Store, config: Config, signals: Sequence[ScoreSignal]) -> None:
        self._store = store
        self._config = config
        self._signals = tuple(signals)

    def rank(self, request: Request, found: Candidates) -> Ranking:
        """The :class:`Ranking` of ``found``'s pool (empty when nothing was searched) and
        the scores of its hot and recent records."""
        relevant: list[RecallItem] = []
        best: float | None = None
        if found.searched:
            ranked = self._ranked(request, found)
            best = ranked.best
            # a hot record is shown as hot: only the others compete for the budget
            hot = {r.id for r in found.hot}
            chosen = [
                n
                for n in ranked.relevant(top_k=request.top_k, floor=self._config.relevance_floor)
                if ranked.record(n).id not in hot
            ]
            fitting = _within_budget([ranked.record(n) for n in chosen], request.budget)
            relevant = [ranked.item(n) for n in chosen[:fitting]]
        # what is shown without being searched for is scored against the query all the same
        # (only what the budget kept is left out: the rest of the pool is never shown)
        have = {i.record.id for i in relevant}
        unsearched = [r for r in (*found.hot, *found.recent) if r.id not in have]
        scored = self.score(unsearched, request, found, best=best)
        return Ranking(tuple(relevant), {i.record.id: i for i in scored}, best)

    def score(
        self, records: Sequence[Record], request: Request, found: Candidates, *, best: float | None
    ) -> list[RecallItem]:
        """Score records shown without a search (hot and recent ones, the other side of a
        dispute), gated against the best relevance the search found (``best``)."""
        candidates = [
            Candidate(c.record, c.similarity, keyword_match(request.query, c.record))
            for c in as_candidates(self._store, list(records), found.vector, found.vectors)
        ]
        scores = score_candidates(
            candidates,
            query=request.query,
            now=request.now,
            config=self._config,
            signals=self._signals,
            best=best,
        )
        return [RecallItem(c.record, s) for c, s in zip(candidates, scores)]

    def _ranked(self, request: Request, found: Candidates) -> _Ranked:
        """The pool scored as arrays, with the order rules of :func:`_keep_order` applied
        to the totals. Not as of a date: the pool is then what held at that date, and a
        record superseded since was not superseded yet."""
        scores = score_pool(
            found.pool,
            query=request.query,
            now=request.now,
            config=self._config,
            signals=self._signals,
        )
        totals = scores.totals.copy()
        if request.as_of is None:
            _keep_order(found.pool, totals)
        return _Ranked(found.pool, scores, totals, found.link_notes)


def _keep_order(pool: Sequence[Candidate], totals: np.ndarray) -> None:
    """Two rules the score alone cannot break: a superseded record never outranks
    the record that superseded it, and a summary never outranks a note it was
    derived from. A record that would is scored just below the one it must follow
    (``totals`` is lowered in place).

    A loop, not array operations: a record's ceiling is read after the records before it
    in the loop were lowered, so one lowering may cause the next (arrays would read every
    ceiling first, and give other numbers)."""
    at = {c.record.id: n for n, c in enumerate(pool)}
    for n in sorted(range(len(pool)), key=lambda n: pool[n].record.kind.authority):
        record = pool[n].record
        above = [at[s] for s in record.provenance if s in at and s != record.id]
        if record.superseded_by is not None and record.superseded_by in at:
            above.append(at[record.superseded_by])
        if above:
            ceiling = min(float(totals[a]) for a in above)
            if totals[n] >= ceiling:
                totals[n] = ceiling * 0.999


class _Ranked:
    """A scored pool, best first; its items are made only for what a recall keeps."""

    def __init__(
        self,
        pool: Sequence[Candidate],
        scores: PoolScores,
        totals: np.ndarray,
        notes: Mapping[str, str],
    ) -> None:
        self._pool = pool
        self._scores = scores
        self._totals = totals
        self._notes = notes
        self._order = np.argsort(-totals, kind="stable").tolist()
        self._at = {c.record.id: n for n, c in enumerate(pool)}
        self.best = scores.best

    def item(self, n: int) -> RecallItem:
        record = self._pool[n].record
        score = self._scores.score(n, total=float(self._totals[n]))
        return RecallItem(record, score, self._notes.get(record.id))

    def record(self, n: int) -> Record:
        return self._pool[n].record

    def relevant(self, *, top_k: int | None, floor: float) -> list[int]:
        """The candidates relevant enough to show, best first (the first ``top_k``), with
        what superseded any of them: a superseded record is never shown without what
        replaced it (the current value joins, scored as it is)."""
        semantic = self._scores.semantic
        chosen = [n for n in self._order if semantic[n] >= floor]
        if top_k is not None:
            chosen = chosen[:top_k]
        shown = set(chosen)
        for n in list(chosen):
            successor = self._at.get(self._pool[n].record.superseded_by or "")
            if successor is not None and successor not in shown:
                chosen.append(successor)
                shown.add(successor)
        chosen.sort(key=lambda n: -self._totals[n])
        return chosen


def _within_budget(relevant: list[Record], budget: int) -> int:
    """How many of the best relevant records to consider: as many as the budget could
    show and a few more. The rest of the pool is never packed, so nothing more is spent
    on it (flags, excerpts, lines). A line costs at least its text's tokens; past the
    budget, ``_LOOKAHEAD`` more stay, so a short line may still fill what a long one
    left free."""
    spent = 0
    for n, record in enumerate(relevant):
        if spent >= budget:
            return min(len(relevant), n + _LOOKAHEAD)
        spent += record_line_cost(record.text)
    return len(relevant)
