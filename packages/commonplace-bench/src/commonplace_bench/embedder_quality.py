"""How well does commonplace's default hashing embedder retrieve notes, next to real models?

Run ``python -m commonplace_bench.embedder_quality`` (see ``docs/embedders.md``). It
builds the seeded retrieval set, embeds it with the hashing default and with every
offline model that is installed (MiniLM-L6-v2 int8 ONNX, WordLlama), prints recall@1,
recall@5 and MRR per query group plus throughput, and rewrites ``docs/embedders.md``.
A model that is not installed is skipped with the pip command to install it, rather
than downloaded: nothing here touches the network.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from commonplace import HashingEmbedder
from commonplace.embedders import Embedder

from .checks import paraphrase_sanity, torch_reference_cosine
from .metrics import (
    OVERALL,
    EmbedderResult,
    Scores,
    embed_unit,
    interleaved_throughput,
    ranks,
    score,
)
from .models import MiniLMOnnxEmbedder, ModelNotInstalledError, WordLlamaEmbedder
from .report import render_doc, render_tables
from .retrieval_set import GROUPS, RetrievalSet, build_retrieval_set

__all__ = ["EmbedderResult", "evaluate", "load_embedders", "main", "rank_scores"]


def rank_scores(embedder: Embedder, retrieval_set: RetrievalSet) -> dict[str, Scores]:
    """Rank every note for every query; scores per group and ``overall``."""
    queries = retrieval_set.queries
    note_vectors = embed_unit(embedder, retrieval_set.notes)
    query_vectors = embed_unit(embedder, [q.text for q in queries])
    rank_list = ranks(query_vectors, note_vectors, [q.relevant for q in queries])
    scores: dict[str, Scores] = {
        group: score([r for r, q in zip(rank_list, queries, strict=True) if q.group == group])
        for group in GROUPS
    }
    scores[OVERALL] = score(rank_list)
    return scores


def evaluate(
    embedders: Sequence[tuple[str, Embedder]],
    retrieval_set: RetrievalSet,
    *,
    timing_runs: int = 3,
    min_seconds: float = 1.0,
) -> list[EmbedderResult]:
    """Score each ``(label, embedder)`` on the set, then time them all, interleaved."""
    scores = [rank_scores(embedder, retrieval_set) for _, embedder in embedders]
    texts = [*retrieval_set.notes, *(q.text for q in retrieval_set.queries)]
    speeds = interleaved_throughput(
        [embedder for _, embedder in embedders], texts, runs=timing_runs, min_seconds=min_seconds
    )
    return [
        EmbedderResult(
            label=label,
            name=embedder.name,
            dim=embedder.dim,
            scores=group_scores,
            texts_per_second=speed.wall,
            texts_per_cpu_second=speed.cpu,
        )
        for (label, embedder), group_scores, speed in zip(embedders, scores, speeds, strict=True)
    ]


_MODELS: tuple[tuple[str, Callable[[], Embedder]], ...] = (
    ("MiniLM-L6-v2 int8", MiniLMOnnxEmbedder),
    ("WordLlama", WordLlamaEmbedder),
)


def load_embedders() -> tuple[list[tuple[str, Embedder, list[str]]], list[str]]:
    """The hashing default plus each installed model that passes its sanity check.

    Returns ``(label, embedder, check notes)`` triples and messages about skipped models.
    """
    loaded: list[tuple[str, Embedder, list[str]]] = [("hashing (default)", HashingEmbedder(), [])]
    skipped: list[str] = []
    for label, factory in _MODELS:
        try:
            embedder = factory()
        except ModelNotInstalledError as exc:
            skipped.append(f"{label}: skipped, {exc}")
            continue
        sanity = paraphrase_sanity(embedder)
        if not sanity.passed:
            raise SystemExit(f"{label} fails the paraphrase sanity check ({sanity.describe()})")
        checks = [f"paraphrase sanity check {sanity.describe()}"]
        if isinstance(embedder, MiniLMOnnxEmbedder):
            cosine = torch_reference_cosine(embedder)
            checks.append(
                "torch reference not installed, comparison skipped"
                if cosine is None
                else f"lowest cosine against the float torch model: {cosine:.4f}"
            )
            if cosine is not None and cosine <= 0.95:
                raise SystemExit(f"{label} disagrees with the torch reference (cos {cosine:.4f})")
        loaded.append((label, embedder, checks))
    return loaded, skipped


def _load_average() -> float | None:
    """The 1-minute load average, so the doc says how busy the machine was."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # not on every platform
        return None


def main(argv: Sequence[str] | None = None) -> int:
    """Benchmark, print the markdown tables, and (unless --no-write) rewrite the doc."""
    parser = argparse.ArgumentParser(prog="python -m commonplace_bench.embedder_quality")
    parser.add_argument("--seed", type=int, default=20240601, help="retrieval set seed")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per embedder")
    parser.add_argument(
        "--output", type=Path, default=Path("docs/embedders.md"), help="doc to rewrite"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)

    retrieval_set = build_retrieval_set(seed=args.seed)
    embedders, skipped = load_embedders()
    for message in skipped:
        print(message, file=sys.stderr)
    load_average = _load_average()
    results = evaluate(
        [(label, embedder) for label, embedder, _ in embedders],
        retrieval_set,
        timing_runs=args.runs,
    )
    results = [
        dataclasses.replace(result, checks=tuple(checks))
        for result, (_, _, checks) in zip(results, embedders, strict=True)
    ]
    print(render_tables(results))
    if not args.no_write:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(
            render_doc(
                results,
                retrieval_set,
                runs=args.runs,
                load_average=load_average,
                skipped=skipped,
            ),
            encoding="utf-8",
        )
        print(f"\nwrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
