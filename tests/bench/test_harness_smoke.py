"""Smoke test of the comparison harness: every workload at tiny size, so it never rots.

Only what the tests session installs is used: the hashing embedder, commonplace,
plain RAG, LangGraph and LlamaIndex, and NLM's formula re-implementation (the real
package and MiniLM are optional and must be reported as not run). No timing is
asserted; the checks are about plumbing and about the few properties that must hold
at any size (commonplace never recalls what the assistant invented).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonplace_bench import harness
from commonplace_bench.embedding import EMBEDDERS
from commonplace_bench.harness import checkout_commit
from commonplace_bench.page import render_page
from commonplace_bench.plots import make_plots
from commonplace_bench.workloads import history, long_horizon, nlm_set, poisoning, supersession
from commonplace_bench.workloads.common import SIZES, leaks

TINY = SIZES["tiny"]


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    return harness.run(
        sizes=TINY,
        embedder_keys=["minilm", "hashing"],
        workloads=list(harness.WORKLOADS),
        skip=["minilm"],
        nlm_python=None,
        scale=True,
        log=lambda message: None,
    )


def test_every_workload_ran_on_every_system(results: dict[str, Any]) -> None:
    assert set(results["workloads"]) == set(harness.WORKLOADS)
    labels = set(results["systems"].values())
    assert {"commonplace", "plain RAG", "LangGraph InMemoryStore", "LlamaIndex Memory"} <= labels
    for name, per_embedder in results["workloads"].items():
        assert set(per_embedder) == {"hashing"}, name
    poisoned = results["workloads"]["poisoning"]["hashing"]["systems"]
    assert set(poisoned) == labels
    horizon = results["workloads"]["long_horizon"]["hashing"]["systems"]
    assert set(horizon) == labels
    for row in horizon.values():
        assert set(row["evidence_recall"]) == {str(b) for b in long_horizon.BUDGETS}
        assert row["llm_calls_per_turn"] == 0
    json.dumps(results)  # everything the page is built from is plain JSON


def test_optional_parts_are_reported_not_run(results: dict[str, Any]) -> None:
    not_run = results["not_run"]
    assert "skipped" in not_run[EMBEDDERS["minilm"]]
    assert "re-implemented" in not_run["NLM 1.1.1"]
    assert results["systems"]["nlm"] == "NLM formula (re-implementation)"


def test_commonplace_never_recalls_assistant_inventions(results: dict[str, Any]) -> None:
    poisoned = results["workloads"]["poisoning"]["hashing"]["systems"]
    assert poisoned["commonplace"]["poisoned_context"] == 0.0
    assert poisoned["commonplace"]["assistant_in_top5"] == 0.0


def test_scores_are_fractions(results: dict[str, Any]) -> None:
    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{path}/{key}")
        elif isinstance(node, float) and any(
            part in path for part in ("/top1/", "/at5/", "evidence_recall", "poisoned")
        ):
            assert 0.0 <= node <= 1.0, path

    walk(results["workloads"], "")


def test_scale_measures_both_stores(results: dict[str, Any]) -> None:
    (run,) = results["scale"]["runs"]
    assert run["notes"] == TINY.scale_sizes[0]
    for system in ("commonplace", "plain RAG"):
        assert run[system]["recall_ms"]["excluded"]["p50"] > 0
        assert run[system]["write_per_s"] > 0


def test_page_renders_with_and_without_plots(results: dict[str, Any], tmp_path: Path) -> None:
    output = tmp_path / "benchmarks.md"
    images, note = make_plots(results, tmp_path / "benchmarks")
    page = render_page(results, images=images, plot_note=note, output=output)
    assert page.startswith("# Benchmarks")
    # the page names the commit it measured (None only outside a git checkout)
    assert results["commit"] == checkout_commit()
    assert results["commit"] is None or f"from commit `{results['commit']}`" in page
    for title in ("## Headline", "### Not run", "## 1a.", "## 1b.", "## 2.", "## 3.", "## 4."):
        assert title in page
    for table in (t for t in page.split("\n\n") if t.startswith("| ")):
        # every row of a table has as many cells as its header
        widths = {row.count("|") for row in table.splitlines()}
        assert len(widths) == 1, table
    assert "## 5. Scale" in page
    assert "NLM formula (re-implementation)" in page
    for name in images.values():
        assert (tmp_path / "benchmarks" / name).stat().st_size > 0
        assert f"benchmarks/{name}" in page
    bare = render_page(results, images={}, plot_note="plots not drawn", output=output)
    assert "plots not drawn" in bare and "![" not in bare


def test_the_command_line_writes_the_page(tmp_path: Path) -> None:
    output = tmp_path / "docs" / "benchmarks.md"
    code = harness.main(
        [
            "--tiny",
            "--skip",
            "minilm,nlm,history,long_horizon,scale",
            "--nlm-python",
            "",
            "--no-plots",
            "--output",
            str(output),
        ]
    )
    assert code == 0
    page = output.read_text(encoding="utf-8")
    assert "skipped on the command line" in page
    saved = json.loads((tmp_path / "docs" / "benchmarks" / "results.json").read_text())
    assert set(saved["workloads"]) == {"nlm_set", "supersession", "everyday_updates", "poisoning"}
    assert "2b. Everyday updates and look-alikes" in page


@pytest.mark.parametrize("mode", sorted(SIZES))
def test_workloads_build_at_every_size(mode: str) -> None:
    """Building a workload is cheap; every published size must build for several seeds."""
    z = SIZES[mode]
    for seed in (1, 2, 3):
        nlm_set.build(seed)
        history.build(seed, fillers=z.history_fillers)
        supersession.build(seed, facts=z.supersession_facts, exchanges=z.supersession_exchanges)
        cases = min(z.poisoning_cases, poisoning.MAX_CASES)
        poisoning.build(seed, cases=cases, exchanges=z.poisoning_exchanges)
        long_horizon.build(seed, turns=z.horizon_turns)


def test_workloads_are_seeded_and_do_not_leak_answers() -> None:
    assert nlm_set.build(3) == nlm_set.build(3)
    memos, cases = nlm_set.build(3)
    assert len(memos) == 100 and len(cases) == 30
    first = history.build(2, fillers=10)
    assert first == history.build(2, fillers=10)
    assert all(not leaks(c.query, c.target) for c in first.cases)
    turns, questions = supersession.build(1, facts=5, exchanges=3)
    assert all(q.expected in q.values for q in questions)
    turns, cases = poisoning.build(1, cases=4, exchanges=2)
    user_text = " ".join(t.text for t in turns if t.role == "user")
    for case in cases:  # an invented detail is never something the user said
        assert not any(word in user_text for word in case.invented)
    horizon = long_horizon.build(1, turns=60)
    assert len(horizon.turns) == 120
    assert all(not leaks(q, v) for q, v, _ in horizon.facts)
