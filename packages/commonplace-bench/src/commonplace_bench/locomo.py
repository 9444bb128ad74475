"""LoCoMo: evidence recall on real multi-session conversations, against plain RAG.

LoCoMo (Maharana et al., ACL 2024) holds long chats between two people over many
sessions; every question is annotated with the turns (``dia_id``) that answer it. The
data is CC BY-NC and is never shipped with commonplace: get ``data/locomo10.json`` from
the authors' repository (``snap-research/LoCoMo``) and pass its path.

Each turn is written as the design's workload says,
``memory.write(f"{speaker}: {text}", role="user", scope=sample_id, at=...)`` (the
session's date plus 30 s per turn; a shared photo's caption appended as
``[shares a photo: ...]``). Every category 1-4 question is then asked a day after the
last session with ``recall(question, budget_tokens=B)``. A question's evidence recall is
the share of its evidence turns whose episode is in the provenance of a record the
compiled context shows (a record the context does not show earns nothing); "answer
words" is the share of the gold answer's content words present in the context, a check
on content that provenance alone cannot give. Plain RAG embeds the raw turns with the
same embedder and packs the best ones, whole, into the same budget; hybrid search ranks
them by BM25 and cosine similarity fused by reciprocal rank (``commonplace_bench.hybrid``)
and packs them the same way.

``python -m commonplace_bench.locomo PATH [--embedder default|hashing|minilm]
[--budget 1500] [--rag-budgets 1500,3000] [--hybrid-budgets 1500,3000] [--convs N]
[--json OUT] [--no-progress]``
prints one table per conversation and one for all, as Markdown; while it runs, a bar on
stderr counts the questions asked when stderr is a terminal.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from commonplace import Memory, count_tokens
from commonplace.embedders import Embedder
from commonplace.progress import ProgressBar, checked_progress

from .hybrid import BM25, fused_order

__all__ = [
    "CATEGORIES",
    "Conversation",
    "Question",
    "QuestionResult",
    "load",
    "main",
    "run_commonplace",
    "run_rag",
    "table",
]

#: LoCoMo's question categories that have evidence (5, adversarial, has none to find)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_TURN_SPACING = timedelta(seconds=30)
_STOP = frozenset(
    "a an the of to in on at for and or is was were be been it its this that with by from as "
    "i you he she they we my your his her their our me him them did do does what when where "
    "who why how which".split()
)


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str  # "Speaker: text [shares a photo: ...]", as written to memory
    at: datetime


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    answer: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]

    @property
    def asked_at(self) -> datetime:
        """A day after the last session, when every question is asked."""
        return self.turns[-1].at + timedelta(days=1)


@dataclass(frozen=True, slots=True)
class QuestionResult:
    category: int
    evidence: float  # share of the evidence turns the context traces back to
    tokens: int
    answer_words: float | None


def _when(text: str) -> datetime:
    # "1:56 pm on 8 May, 2023"
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def _turns(conversation: dict[str, Any]) -> Iterator[Turn]:
    n = 1
    while f"session_{n}" in conversation:
        start = _when(conversation[f"session_{n}_date_time"])
        for i, turn in enumerate(conversation[f"session_{n}"]):
            text = str(turn["text"])
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            speaker = str(turn["speaker"])
            yield Turn(
                str(turn["dia_id"]), speaker, f"{speaker}: {text}", start + i * _TURN_SPACING
            )
        n += 1


def load(path: str | Path, *, limit: int | None = None) -> list[Conversation]:
    """The conversations of a ``locomo10.json``-shaped file, with their answerable questions."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    for sample in data[:limit]:
        questions = tuple(
            Question(
                str(q["question"]), str(q.get("answer", "")), tuple(q["evidence"]), q["category"]
            )
            for q in sample["qa"]
            if q.get("category") in CATEGORIES and q.get("evidence")
        )
        out.append(
            Conversation(str(sample["sample_id"]), tuple(_turns(sample["conversation"])), questions)
        )
    return out


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP}


def _answer_words(question: Question, context: str) -> float | None:
    wanted = _words(question.answer)
    return len(wanted & _words(context)) / len(wanted) if wanted else None


def _evidence(question: Question, found: set[str]) -> float:
    wanted = set(question.evidence)
    return len(wanted & found) / len(wanted)


def run_commonplace(
    conversation: Conversation,
    *,
    embedder: Embedder | None,
    budget: int,
    top_k: int | None = None,
) -> list[QuestionResult]:
    """Write the conversation into a fresh in-memory store and ask every question."""
    extra: dict[str, Any] = {} if embedder is None else {"embedder": embedder}
    with Memory("sqlite:///:memory:", **extra) as memory:
        scope = conversation.sample_id
        turns = [memory.turn(t.text, role="user", scope=scope, at=t.at) for t in conversation.turns]
        results = memory.write_many(turns)
        dia_of = {r.episode_id: t.dia_id for r, t in zip(results, conversation.turns)}
        out = []
        for question in conversation.questions:
            recall = memory.recall(
                question.text,
                scope=scope,
                at=conversation.asked_at,
                budget_tokens=budget,
                top_k=top_k,
            )
            shown = set(recall.included)
            found = {
                dia_of[source]
                for item in recall.items
                if item.record.id in shown
                for source in item.record.provenance
                if source in dia_of
            }
            out.append(
                QuestionResult(
                    question.category,
                    _evidence(question, found),
                    recall.tokens,
                    _answer_words(question, recall.render()),
                )
            )
        return out


def run_rag(
    conversation: Conversation,
    *,
    embedder: Embedder,
    budgets: Sequence[int],
    hybrid: bool = False,
) -> dict[int, list[QuestionResult]]:
    """Plain top-k over the raw turns: the best turns, whole, until the budget is spent.

    With ``hybrid`` the turns are ranked by BM25 and cosine similarity fused by reciprocal
    rank (``commonplace_bench.hybrid``) instead of by cosine similarity alone."""
    texts = [t.text for t in conversation.turns]
    costs = [count_tokens(t) for t in texts]
    matrix = _unit(np.asarray(embedder.embed(texts), np.float32))
    queries = _unit(
        np.asarray(embedder.embed([q.text for q in conversation.questions]), np.float32)
    )
    keywords = BM25(texts) if hybrid else None
    out: dict[int, list[QuestionResult]] = {b: [] for b in budgets}
    for question, vector in zip(conversation.questions, queries):
        similarity = matrix @ vector
        if keywords is None:
            order = np.argsort(-similarity, kind="stable")
        else:
            order = fused_order(similarity, keywords.scores(question.text))
        for budget in budgets:
            used, found, shown = 0, set(), []
            for j in order:
                if used + costs[j] > budget:
                    break
                used += costs[j]
                found.add(conversation.turns[j].dia_id)
                shown.append(texts[j])
            out[budget].append(
                QuestionResult(
                    question.category,
                    _evidence(question, found),
                    used,
                    _answer_words(question, "\n".join(shown)),
                )
            )
    return out


def _unit(matrix: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: np.ndarray[Any, Any] = matrix / norms
    return unit


def summarise(results: Sequence[QuestionResult]) -> dict[str, float]:
    """Evidence recall per category and overall, mean tokens and answer words."""
    out: dict[str, float] = {}
    for category, name in CATEGORIES.items():
        values = [r.evidence for r in results if r.category == category]
        if values:
            out[name] = float(np.mean(values))
    out["all"] = float(np.mean([r.evidence for r in results])) if results else 0.0
    out["tokens"] = float(np.mean([r.tokens for r in results])) if results else 0.0
    answers = [r.answer_words for r in results if r.answer_words is not None]
    out["answer words"] = float(np.mean(answers)) if answers else 0.0
    return out


def table(rows: dict[str, dict[str, float]]) -> str:
    """A Markdown table, one row per system."""
    columns = [*CATEGORIES.values(), "all", "tokens", "answer words"]
    lines = ["| system | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    for name, row in rows.items():
        cells = [
            "-" if c not in row else (f"{row[c]:.0f}" if c == "tokens" else f"{row[c]:.3f}")
            for c in columns
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _embedder(key: str) -> Embedder | None:
    if key == "default":
        return None
    if key == "hashing":
        from commonplace import HashingEmbedder

        return HashingEmbedder()
    if key == "minilm":
        from .models import MiniLMOnnxEmbedder

        return MiniLMOnnxEmbedder()
    raise SystemExit(f"unknown embedder {key!r}; use default, hashing or minilm")


def evaluate(
    conversations: Sequence[Conversation],
    *,
    embedder_key: str = "default",
    budget: int = 1500,
    rag_budgets: Sequence[int] = (1500, 3000),
    hybrid_budgets: Sequence[int] = (1500, 3000),
    top_k: int | None = None,
    progress: bool | None = None,
) -> dict[str, dict[str, dict[str, float]]]:
    """Tables per conversation and for all of them: scope -> system -> metric -> value.

    ``progress`` counts the conversations' questions on a bar on stderr as commonplace
    answers them (None: only when stderr is a terminal; see ``commonplace.progress``)."""
    checked_progress(progress)
    embedder = _embedder(embedder_key)
    every: dict[str, list[QuestionResult]] = defaultdict(list)
    tables: dict[str, dict[str, dict[str, float]]] = {}
    with ProgressBar(
        desc="LoCoMo",
        unit="question",
        total=sum(len(c.questions) for c in conversations),
        progress=progress,
    ) as bar:
        for conversation in conversations:
            tables[conversation.sample_id] = _evaluate_one(
                conversation, embedder, budget, rag_budgets, hybrid_budgets, top_k, every
            )
            bar.update(len(conversation.questions))
    tables["all"] = {name: summarise(r) for name, r in every.items()}
    return tables


def _evaluate_one(
    conversation: Conversation,
    embedder: Embedder | None,
    budget: int,
    rag_budgets: Sequence[int],
    hybrid_budgets: Sequence[int],
    top_k: int | None,
    every: dict[str, list[QuestionResult]],
) -> dict[str, dict[str, float]]:
    """One conversation's table, its results added to ``every``."""
    systems: dict[str, list[QuestionResult]] = {}
    systems[f"commonplace@{budget}"] = run_commonplace(
        conversation, embedder=embedder, budget=budget, top_k=top_k
    )
    if embedder is None:  # plain RAG needs the same model the Memory picked
        with Memory("sqlite:///:memory:") as memory:
            rag_embedder: Embedder = memory.embedder
    else:
        rag_embedder = embedder
    for b, results in run_rag(conversation, embedder=rag_embedder, budgets=rag_budgets).items():
        systems[f"rag@{b}"] = results
    if hybrid_budgets:
        fused = run_rag(conversation, embedder=rag_embedder, budgets=hybrid_budgets, hybrid=True)
        for b, results in fused.items():
            systems[f"hybrid@{b}"] = results
    for name, results in systems.items():
        every[name].extend(results)
    return {name: summarise(r) for name, r in systems.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m commonplace_bench.locomo", description=__doc__.split("\n")[0]
    )
    parser.add_argument("path", help="a locomo10.json-shaped file (never shipped: CC BY-NC)")
    parser.add_argument("--embedder", default="default", help="default | hashing | minilm")
    parser.add_argument("--budget", type=int, default=1500)
    parser.add_argument("--rag-budgets", default="1500,3000")
    parser.add_argument(
        "--hybrid-budgets",
        default="1500,3000",
        help="budgets of the hybrid baseline (BM25 + dense, reciprocal rank fusion); '' for none",
    )
    parser.add_argument("--convs", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--top-k", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (there is none anyway when stderr is not a terminal)",
    )
    args = parser.parse_args(argv)
    conversations = load(args.path, limit=args.convs)
    tables = evaluate(
        conversations,
        embedder_key=args.embedder,
        budget=args.budget,
        rag_budgets=[int(b) for b in args.rag_budgets.split(",")],
        hybrid_budgets=[int(b) for b in args.hybrid_budgets.split(",") if b.strip()],
        top_k=args.top_k,
        progress=False if args.no_progress else None,
    )
    for scope, rows in tables.items():
        count = sum(len(c.questions) for c in conversations if scope in ("all", c.sample_id))
        print(f"\n{scope} ({count} questions, embedder {args.embedder}):\n")
        print(table(rows))
    if args.json is not None:
        args.json.write_text(json.dumps(tables, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
