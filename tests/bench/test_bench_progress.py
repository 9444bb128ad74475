"""The benchmarks' progress bars: on stderr for a terminal, counting every run, else silent.

The harness counts each workload with each embedder and each scale run; the LoCoMo runner
counts the questions. Their results (the harness's JSON, LoCoMo's tables on stdout) are
the same with a bar or without.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from commonplace_bench import harness, locomo
from commonplace_bench.workloads.common import SIZES

# a LoCoMo-shaped conversation of this suite's own (the real data is never committed)
SAMPLE = {
    "sample_id": "mini-1",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I started learning the cello."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "I adopted a greyhound called Pepper."},
        ],
    },
    "qa": [
        {"question": "Which instrument?", "answer": "cello", "evidence": ["D1:1"], "category": 4},
        {"question": "The dog's name?", "answer": "Pepper", "evidence": ["D1:2"], "category": 4},
    ],
}


Terminal = Callable[..., Any]  # the ``terminal`` fixture (tests/conftest.py)


def test_the_harness_counts_every_run_on_a_terminal(terminal: Terminal) -> None:
    stderr = terminal()
    messages: list[str] = []
    results = harness.run(
        sizes=SIZES["tiny"],
        embedder_keys=["hashing"],
        workloads=["supersession", "poisoning"],
        skip=["poisoning"],
        nlm_python=None,
        scale=True,
        scale_sizes=[200],
        log=messages.append,
    )
    assert set(results["workloads"]) == {"supersession"} and results["scale"]["runs"]
    runs = 1 + SIZES["tiny"].scale_repeats  # one workload with one embedder, the scale runs
    assert stderr.bars() == [("benchmarks", runs, runs)]
    assert any("Supersession" in m for m in messages) and "scale ..." in messages
    json.dumps(results)


def test_the_harness_is_silent_without_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    harness.run(
        sizes=SIZES["tiny"],
        embedder_keys=["hashing"],
        workloads=["supersession"],
        skip=[],
        nlm_python=None,
        scale=False,
        log=lambda message: None,
    )
    assert capsys.readouterr() == ("", "")


def test_locomo_counts_the_questions_and_prints_the_same_tables(
    tmp_path: Path, terminal: Terminal, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "locomo10.json"
    data.write_text(json.dumps([SAMPLE]), encoding="utf-8")
    argv = [str(data), "--embedder", "hashing"]
    assert locomo.main(argv) == 0
    quiet = capsys.readouterr()
    assert quiet.err == "" and "| commonplace@1500 |" in quiet.out
    stderr = terminal()
    assert locomo.main(argv) == 0
    assert capsys.readouterr().out == quiet.out  # the tables alone on stdout
    assert stderr.bars() == [("LoCoMo", 2, 2)]
    refused = terminal()
    assert locomo.main([*argv, "--no-progress"]) == 0
    assert refused.getvalue() == ""
