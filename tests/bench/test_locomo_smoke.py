"""The LoCoMo workload, small: on a conversation written here, and on the dev split.

LoCoMo is CC BY-NC and never committed. ``nox -s tests`` points ``COMMONPLACE_LOCOMO`` at
the development split beside the checkout (``../shared/datasets/locomo-dev``) when it is
there; the workload then runs on its first conversation with the hashing embedder and
must keep its lead: commonplace at 1,500 tokens traces back to at least as much of the
evidence as plain RAG does at 3,000. Without the variable only the file written here runs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from commonplace_bench import locomo

SESSION_1 = [
    ("Ana", "Hey Ben! Good to see you! How have you been?"),
    ("Ben", "Hey Ana! Good to see you too! I adopted a greyhound called Pepper last week."),
    ("Ana", "Wow, that's so cool! I started learning the cello in January."),
    ("Ben", "Thanks! Pepper loves the beach. What made you pick the cello?"),
]
SESSION_2 = [
    ("Ana", "Hi Ben! I played my first cello recital at the town hall on Saturday."),
    ("Ben", "Congrats! I took Pepper to the vet for her vaccines yesterday."),
    ("Ana", "Thanks so much!"),
]
QUESTIONS = [
    ("What is the name of Ben's dog?", "Pepper", ["D1:2"], 4),
    ("Which instrument does Ana play?", "cello", ["D1:3", "D2:1"], 1),
    ("When did Ben take Pepper to the vet?", "the day before the second session", ["D2:2"], 2),
]


def _write_sample(path: Path) -> Path:
    def session(turns: list[tuple[str, str]], n: int) -> list[dict[str, str]]:
        return [
            {"speaker": s, "dia_id": f"D{n}:{i}", "text": t} for i, (s, t) in enumerate(turns, 1)
        ]

    sample = {
        "sample_id": "mini-1",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": session(SESSION_1, 1),
            "session_2_date_time": "10:05 am on 20 May, 2023",
            "session_2": session(SESSION_2, 2),
        },
        "qa": [
            {"question": q, "answer": a, "evidence": e, "category": c} for q, a, e, c in QUESTIONS
        ]
        + [{"question": "Is Ben a cat person?", "adversarial_answer": "no", "category": 5}],
    }
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


def test_the_workload_reads_writes_and_scores_a_locomo_shaped_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _write_sample(tmp_path / "locomo10.json")
    (conversation,) = locomo.load(data)
    assert len(conversation.turns) == 7 and len(conversation.questions) == 3  # no category 5
    assert conversation.turns[4].text.startswith("Ana: ") and conversation.asked_at.day == 21
    out = tmp_path / "out.json"
    assert locomo.main([str(data), "--embedder", "hashing", "--json", str(out)]) == 0
    tables = json.loads(out.read_text(encoding="utf-8"))
    ours = tables["all"]["commonplace@1500"]
    assert ours["all"] == 1.0  # every evidence turn of this small chat is traced back
    assert 0 < ours["tokens"] < 1500 and ours["answer words"] > 0.5
    assert set(tables["all"]) == {
        "commonplace@1500",
        "rag@1500",
        "rag@3000",
        "hybrid@1500",
        "hybrid@3000",
    }
    assert "| commonplace@1500 |" in capsys.readouterr().out


DEV = os.environ.get("COMMONPLACE_LOCOMO")


@pytest.mark.parametrize("path", [DEV] if DEV else [])
def test_on_the_dev_split_commonplace_at_1500_keeps_up_with_rag_at_3000(path: str) -> None:
    conversations = locomo.load(path, limit=1)
    tables = locomo.evaluate(conversations, embedder_key="hashing", hybrid_budgets=())
    rows = tables["all"]
    assert rows["commonplace@1500"]["all"] >= rows["rag@3000"]["all"]
    assert rows["commonplace@1500"]["tokens"] <= 1500
    for category in locomo.CATEGORIES.values():
        if category in rows["rag@1500"]:
            assert rows["commonplace@1500"][category] >= rows["rag@1500"][category]
