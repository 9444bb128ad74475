"""The everyday-updates workload: its judge reads a context as a model would, and the
systems it compares are told apart by it (a store that keeps raw turns shows the old value
as current; commonplace shows it as past). Real systems, the hashing embedder."""

from __future__ import annotations

from pathlib import Path

from commonplace import HashingEmbedder
from commonplace_bench.embedding import CachedEmbedder
from commonplace_bench.harness import system_specs
from commonplace_bench.workloads import everyday_updates as E
from commonplace_bench.workloads.common import SIZES, RunContext

CASE = E.Case(
    "t1",
    "ending",
    "dev",
    ("I ride a Brompton to work.",),
    "sold the Brompton, got a Cannondale road bike instead",
    "Brompton",
    "Cannondale",
    "what bike do I ride?",
    "what bike did I ride before?",
)


def test_a_line_showing_the_old_value_as_current_is_stale_and_a_marked_one_is_not() -> None:
    context = "\n".join(
        [
            "- The user rides a Brompton to work. (until 21 January 2025; then: Cannondale)",
            "- The user sold the Brompton, got a Cannondale road bike instead.",
            "- The user likes a Brompton. (disagrees with nt_1)",
        ]
    )
    assert E.stale_lines(context, CASE) == []
    assert E.stale_lines("- [2025-01-06] user: I ride a Brompton to work.", CASE) == [
        "- [2025-01-06] user: I ride a Brompton to work."
    ]


def test_a_script_is_two_weeks_of_chat_around_the_update_and_the_same_every_time() -> None:
    play = E.script(CASE, seed=3)
    assert play == E.script(CASE, seed=3)
    texts = [t.text for t in play.turns if t.role == "user"]
    assert texts[0] == CASE.old[0] and CASE.update in texts
    assert play.between < play.updated_at < play.asked_at
    assert not any("Brompton" in t or "Cannondale" in t for t in texts[1:-4] if t != CASE.update)


def test_raw_turns_show_the_old_value_and_commonplace_shows_it_as_past(tmp_path: Path) -> None:
    specs, _, _ = system_specs(["llamaindex", "nlm"], None, tmp_path)
    ctx = RunContext(SIZES["tiny"], tmp_path, specs)
    embedder = CachedEmbedder(HashingEmbedder())
    play = E.script(CASE, seed=1)
    verdicts = {}
    for key in ("rag", "commonplace"):
        system = ctx.build(key, embedder)
        try:
            for start in range(0, len(play.turns), 2):
                system.add(play.turns[start : start + 2])
            verdicts[key] = E.judge(system, CASE, play)
        finally:
            system.close()
    assert verdicts["rag"]["stale"] is True  # the old turn, unmarked
    assert verdicts["commonplace"] == {"stale": False, "new": True, "past": True, "as_of": True}


def test_the_cases_are_as_the_issue_asks() -> None:
    cases = E.load()
    updates = [c for c in cases if c.cls != "lookalike"]
    assert len(updates) >= 60 and len(cases) - len(updates) >= 20
    assert {c.cls for c in updates} == set(E.CLASSES[:-1])
    for case in cases:  # a value the question names would be found by its words alone
        assert case.old_value.lower() not in case.question.lower(), case.id
        assert case.new_value.lower() not in case.question.lower(), case.id
