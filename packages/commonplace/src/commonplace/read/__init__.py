"""The read path: query -> candidates -> four-signal rerank -> budgeted context."""

from ._recall import Recall, RecallItem
from ._signals import Score, ScoreSignal, frequency, recency, score_candidates

__all__ = [
    "Recall",
    "RecallItem",
    "Score",
    "ScoreSignal",
    "frequency",
    "recency",
    "score_candidates",
]
