"""The benchmarks' progress bars: on stderr for a terminal, counting every run, else silent.

The harness counts each workload with each embedder and each scale run; the LoCoMo runner
counts the questions. Their results (the harness's JSON, LoCoMo's tables on stdout) are
the same with a bar or without.
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

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


class TerminalStream(io.StringIO):
    def isatty(self) -> bool:
        return True


def bar_totals(drawn: str) -> list[tuple[int, int]]:
    finals = [line.rsplit("\r", 1)[-1] for line in drawn.split("\n") if line.strip()]
    found = [re.search(r"(\d+)/(\d+)", line) for line in finals]
    return [(int(m.group(1)), int(m.group(2))) for m in found if m]


def test_the_harness_counts_every_run_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = TerminalStream()
    monkeypatch.setattr(sys, "stderr", terminal)
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
    assert "benchmarks" in terminal.getvalue()
    assert bar_totals(terminal.getvalue()) == [(runs, runs)]
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
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "locomo10.json"
    data.write_text(json.dumps([SAMPLE]), encoding="utf-8")
    argv = [str(data), "--embedder", "hashing"]
    assert locomo.main(argv) == 0
    quiet = capsys.readouterr()
    assert quiet.err == "" and "| commonplace@1500 |" in quiet.out
    terminal = TerminalStream()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert locomo.main(argv) == 0
    assert capsys.readouterr().out == quiet.out  # the tables alone on stdout
    assert "LoCoMo" in terminal.getvalue() and bar_totals(terminal.getvalue()) == [(2, 2)]
    refused = TerminalStream()
    monkeypatch.setattr(sys, "stderr", refused)
    assert locomo.main([*argv, "--no-progress"]) == 0
    assert refused.getvalue() == ""
