"""The default note writer's quality on the labelled set: floors, so regressions fail.

The set is ``tests/data/labelled_turns.jsonl`` and the scoring lives in
``commonplace_bench.writer_quality`` (see docs/writer-quality.md). The floors sit a
little below what the rules score today; raise them when the rules get better. A rule
change that lowers a score below its floor is a regression, or a label to discuss:
never lower a floor to make a change pass without saying why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from commonplace.write import RuleNoteWriter
from commonplace_bench.writer_quality import (
    EMOTIONS,
    EVENTS,
    MODALITIES,
    SPLITS,
    LabelledTurn,
    Report,
    evaluate,
    load_turns,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "labelled_turns.jsonl"

# On the whole set (every split).
FLOORS = {
    "noise F1": 0.96,
    "modality accuracy": 0.94,
    "entity F1": 0.92,
    "emotion F1": 0.89,
    "event F1": 0.91,
    "key F1": 0.86,
    "value F1": 0.84,
}
# On the turns written after all tuning: lower, and the real measure of the rules.
HOLDOUT_FLOORS = {
    "noise F1": 0.88,
    "modality accuracy": 0.9,
    "entity F1": 0.82,
    "emotion F1": 0.78,
    "event F1": 0.82,
    "key F1": 0.7,
    "value F1": 0.6,
}


@pytest.fixture(scope="module")
def turns() -> list[LabelledTurn]:
    return load_turns(DATA)


@pytest.fixture(scope="module")
def report(turns: list[LabelledTurn]) -> Report:
    return evaluate(RuleNoteWriter(), turns)


def test_the_labelled_set_is_big_varied_and_consistent(turns: list[LabelledTurn]) -> None:
    assert len(turns) >= 220
    assert {t.split for t in turns} <= set(SPLITS)
    notes = [t for t in turns if not t.is_noise]
    assert sum(t.is_noise for t in turns) >= 30
    assert {t.modality for t in notes} == set(MODALITIES)
    assert all(sum(t.modality == m for t in notes) >= 10 for m in MODALITIES)
    assert {t.emotion for t in turns} - {None} == set(EMOTIONS)
    assert {t.event for t in turns} - {None} == set(EVENTS)
    assert sum(t.key is not None for t in turns) >= 50
    assert len({t.text for t in turns}) == len(turns)


@pytest.mark.parametrize("metric", sorted(FLOORS))
def test_quality_stays_above_its_floor(report: Report, metric: str) -> None:
    assert report.headline()[metric] >= FLOORS[metric]


@pytest.mark.parametrize("metric", sorted(HOLDOUT_FLOORS))
def test_held_out_quality_stays_above_its_floor(turns: list[LabelledTurn], metric: str) -> None:
    held_out = evaluate(RuleNoteWriter(), [t for t in turns if t.split == "holdout"])
    assert held_out.turns >= 40
    assert held_out.headline()[metric] >= HOLDOUT_FLOORS[metric]


def test_jokes_questions_and_hypotheticals_never_state_facts() -> None:
    """The scoring itself: non-statements carry no key and no event, whatever they say."""
    turns = [
        LabelledTurn(
            id="j1", text="lol I live in a castle on the moon", is_noise=False, modality="joke"
        ),
        LabelledTurn(
            id="j2", text="what if I moved to Bali", is_noise=False, modality="hypothetical"
        ),
        LabelledTurn(
            id="j3",
            text="Did I tell you I live in Lisbon?",
            is_noise=False,
            modality="question",
            entities=("Lisbon",),
        ),
    ]
    scored = evaluate(RuleNoteWriter(), turns)
    assert scored.accuracy["modality"] == 1.0
    assert scored.counts["key"]["micro"].fp == 0
    assert scored.counts["event"]["micro"].fp == 0
