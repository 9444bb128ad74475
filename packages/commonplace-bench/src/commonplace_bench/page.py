"""Markdown of docs/benchmarks.md, generated whole from results.json.

Every sentence with a number is filled from the results, and comparison words
("above", "below") are chosen by them, so a rerun cannot leave prose that
contradicts its tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .workloads import (
    everyday_updates,
    history,
    long_horizon,
    nlm_set,
    poisoning,
    scaling,
    supersession,
)

__all__ = ["findings", "headline", "render_page"]

COMMAND = "nox -s bench"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def _num(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "n/a"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "n/a"
    return _times(a / b)


def _times(x: float) -> str:
    return f"{x:.0f}x" if x >= 10 else f"{x:.2g}x"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> list[str]:
    align = align or "l" + "r" * (len(header) - 1)
    marks = ["---" if a == "l" else "---:" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _doc(module: Any) -> str:
    """A workload module's docstring minus its first line, as page prose."""
    text = (module.__doc__ or "").strip().split("\n", 1)
    return text[1].strip() if len(text) > 1 else ""


def _find(table: dict[str, Any], prefix: str, pool: str | None = None) -> str | None:
    for label in table:
        if label.startswith(prefix) and (pool is None or label.endswith(pool)):
            return label
    return None


def _main_embedder(results: dict[str, Any]) -> str:
    return "minilm" if "minilm" in results.get("embedders", {}) else "hashing"


def headline(results: dict[str, Any]) -> list[str]:
    """The bullet list at the top: quality vs RAG and NLM, tokens per turn, latency."""
    key = _main_embedder(results)
    label = results["embedders"].get(key, {}).get("label", key)
    out: list[str] = []
    w = results.get("workloads", {})
    hist = w.get("history", {}).get(key)
    if hist:
        top1 = hist["top1"]
        cp = top1.get(_find(top1, "commonplace") or "", {}).get("overall")
        rag = top1.get(_find(top1, "plain RAG") or "", {}).get("overall")
        nlm_label = _find(top1, "NLM", "pool 50")
        nlm = top1.get(nlm_label or "", {}).get("overall")
        out.append(
            f"**Quality at a realistic pool** (history-derived signals, {label}, top-1 over all "
            f"categories): commonplace {_pct(cp)}, plain RAG {_pct(rag)} "
            f"({_ratio(cp, rag)}), {nlm_label or 'NLM'} {_pct(nlm)} ({_ratio(cp, nlm)})."
        )
    nlms = w.get("nlm_set", {}).get(key)
    if nlms:
        t = nlms["top1"]
        parts = []
        for name in (
            _find(t, "commonplace", "pool 2"),
            _find(t, "commonplace", "pool 50"),
            _find(t, "NLM", "pool 2"),
            _find(t, "NLM", "pool 50"),
            _find(t, "plain RAG"),
        ):
            if name:
                parts.append(f"{name} {_pct(t[name]['overall'])}")
        out.append("**NLM's own set** (injected signals, top-1): " + ", ".join(parts) + ".")
    sup = w.get("supersession", {}).get(key)
    if sup:
        s = sup["systems"]
        parts = [f"{name} {_pct(v['current'])}" for name, v in s.items()]
        as_of = [f"{name} {_pct(v['as_of'])}" for name, v in s.items() if v["as_of"] is not None]
        out.append(
            "**Supersession**: current value ranked first for "
            + ", ".join(parts)
            + "; as-of: "
            + ", ".join(as_of)
            + "."
        )
    poi = w.get("poisoning", {}).get(key)
    if poi:
        s = poi["systems"]
        out.append(
            "**Self-poisoning** (contexts holding a detail the assistant invented): "
            + ", ".join(f"{name} {_pct(v['poisoned_context'])}" for name, v in s.items())
            + "."
        )
    lh = w.get("long_horizon", {}).get(key)
    if lh:
        s = lh["systems"]
        cp_label = _find(s, "commonplace")
        rag_label = _find(s, "plain RAG")
        if cp_label and rag_label:
            cp, rag = s[cp_label], s[rag_label]
            out.append(
                f"**Long horizon** ({lh['user_turns']:,} user turns): evidence recall at 1,500 "
                f"tokens {_pct(cp['evidence_recall']['1500'])} for commonplace vs "
                f"{_pct(rag['evidence_recall']['1500'])} for plain RAG, with a median compiled "
                f"context of {cp['tokens_median']:.0f} tokens per turn vs "
                f"{rag['tokens_median']:.0f} ({_ratio(cp['tokens_median'], rag['tokens_median'])}"
                f"); {cp['embed_calls_per_turn']:.2f} embedding calls and "
                f"{cp['llm_calls_per_turn']:.0f} LLM calls per turn."
            )
    scale = results.get("scale", {}).get("runs")
    if scale:
        largest = max(scale, key=lambda r: r["notes"])
        cp = largest["commonplace"]
        rag = largest.get("plain RAG", {})
        mode = " (store and recall path only)" if largest.get("store_only") else ""
        rag_p50 = rag.get("recall_ms", {}).get("excluded", {}).get("p50")
        out.append(
            f"**Recall latency at the largest size measured** ({largest['notes']:,} notes{mode}, "
            f"hashing embedder): p50 {_num(cp['recall_ms']['excluded']['p50'])} ms with the "
            f"query embedding excluded, {_num(cp['recall_ms']['included']['p50'])} ms included; "
            f"{_ratio(cp['recall_ms']['excluded']['p50'], rag_p50)} "
            f"brute-force numpy RAG's p50 in the same run. Writes: "
            f"{_num(cp['write_per_s'])} turns/s."
        )
    return [f"- {line}" for line in out]


def findings(results: dict[str, Any]) -> list[str]:
    """Where commonplace loses or a baseline's behaviour explains a number, said plainly."""
    key = _main_embedder(results)
    w = results.get("workloads", {})
    out: list[str] = []
    hist = w.get("history", {}).get(key)
    if hist:
        top1 = hist["top1"]
        cp = top1.get(_find(top1, "commonplace") or "", {})
        losses = []
        for category in history.CATEGORIES:
            better = [
                name
                for name, v in top1.items()
                if not name.startswith("commonplace") and v[category] > cp.get(category, 0)
            ]
            if better:
                losses.append(f"{category} ({', '.join(better)})")
        if losses:
            out.append(
                "On history-derived signals commonplace's top-1 is beaten on "
                + "; ".join(losses)
                + "."
            )
        n2, n50 = _find(top1, "NLM", "pool 2"), _find(top1, "NLM", "pool 50")
        if n2 and n50 and top1[n2]["overall"] > top1[n50]["overall"]:
            out.append(
                f"NLM's formula does better with a pool of 2 ({_pct(top1[n2]['overall'])}) than "
                f"with its default pool of 50 ({_pct(top1[n50]['overall'])}): with more "
                "candidates, fresh, popular or specific but unrelated records outscore the "
                "relevant one."
            )
    lh = w.get("long_horizon", {}).get(key)
    if lh:
        s = lh["systems"]
        cp_label, rag_label = _find(s, "commonplace"), _find(s, "plain RAG")
        if cp_label and rag_label:
            low = str(min(lh["budgets"]))
            cp_low = s[cp_label]["evidence_recall"][low]
            rag_low = s[rag_label]["evidence_recall"][low]
            if cp_low < rag_low:
                out.append(
                    f"At {low} tokens commonplace's context holds fewer planted facts than plain "
                    f"RAG's ({_pct(cp_low)} vs {_pct(rag_low)}): its compiled block puts the "
                    "profile card, the rolling summary and the recent notes ahead of the "
                    "relevant notes, which leaves them little room in a small budget."
                )
    sup = w.get("supersession", {}).get(key)
    if sup:
        cp_label = _find(sup["systems"], "commonplace")
        stale = sup["systems"][cp_label]["current_stale"] if cp_label else 0
        if stale:
            out.append(
                f"commonplace still ranks an outdated value first for {_pct(stale)} of the "
                "current-value questions: where the rule-based note writer does not recognise "
                "an update as the same fact (no subject and predicate for it), nothing is "
                "superseded and the old and new notes compete on relevance alone."
            )
    if not out:
        return []
    return ["### Where it loses, and why", "", *[f"- {line}" for line in out], ""]


def render_page(
    results: dict[str, Any], *, images: dict[str, str], plot_note: str, output: Path
) -> str:
    figures = output.with_suffix("").name
    m = results["machine"]
    lines = [
        "# Benchmarks: commonplace next to the alternatives",
        "",
        f"Generated by `{COMMAND}` (`python -m commonplace_bench`) on {results['generated']} "
        + (f"from commit `{results['commit']}` " if results.get("commit") else "")
        + f"in {results['seconds'].get('total', 0) / 60:.1f} minutes, mode `{results['mode']}`; "
        "do not edit by hand. Every number below is in "
        f"[`{figures}/results.json`]({figures}/results.json).",
        "",
        "## Headline",
        "",
        *headline(results),
        "",
        *findings(results),
        "## How to rerun",
        "",
        "```sh",
        "nox -s bench                       # everything, from scratch (NLM in its own venv)",
        "nox -s bench -- --skip nlm         # without the heavy baseline",
        "python -m commonplace_bench --quick   # smaller sizes, a few minutes",
        "python -m commonplace_bench.systems.nlm_system setup /tmp/nlm-venv   # NLM's venv",
        "python -m commonplace_bench --from-results docs/benchmarks/results.json  # re-render",
        "```",
        "",
        "`--skip` takes a system (`commonplace`, `rag`, `langgraph`, `llamaindex`, `nlm`), an "
        "embedder (`minilm`, `hashing`), a workload or `scale`. `--store-only-sizes 1000000` "
        "adds sizes measured on the store and recall path alone. A missing package is "
        "reported under *Not run*, never installed or downloaded by the run.",
        "",
        "## Setup",
        "",
        f"- Machine: {m['cores']} cores ({m['cpu']}), {m.get('memory_gib')} GiB, "
        f"{m['system']}, Python {m['python']}; 1-minute load average "
        f"{_num(m.get('load_at_start'), 2)} "
        "at the start (the machine is shared, so read timings as ratios measured in the same "
        "run).",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()) + ".",
        "- Embedders: "
        + "; ".join(
            f"{e['label']} (`{e['name']}`" + (f", {e['checks'][0]}" if e["checks"] else "") + ")"
            for e in results.get("embedders", {}).values()
        )
        + ". Every system in a run gets the same vectors (one shared cache); each counts "
        "the embedding calls it makes. "
        + (
            "Quality numbers use MiniLM; the hashing embedder's numbers follow each table."
            if "minilm" in results.get("embedders", {})
            else "MiniLM did not run (see *Not run*): every number is the hashing embedder's."
        ),
        f"- Sizes (`{results['mode']}`): "
        + ", ".join(f"{k} {v}" for k, v in results["sizes"].items() if k != "name")
        + f"; seed {results['seed']}.",
        "",
        "### Systems",
        "",
        *_table(
            ["system", "how it is run"],
            [[label, note] for label, note in results.get("system_notes", {}).items()],
            "ll",
        ),
        "",
        "No system here calls an LLM on its write or read path in the configuration "
        "measured (commonplace's note writer is rule-based; NLM's importance is its CPU "
        "heuristic; LlamaIndex's fact-extraction block and mem0-style extractors, which "
        "would, are left out).",
        "",
    ]
    if results.get("not_run"):
        lines += ["### Not run", ""]
        lines += [f"- **{name}**: {why}" for name, why in results["not_run"].items()]
        lines += [""]
    if plot_note:
        lines += [f"*{plot_note}.*", ""]
    w = results.get("workloads", {})
    embedders = results.get("embedders", {})
    sections = (
        ("nlm_set", "1a. NLM-style set, at pool 2 and pool 50", nlm_set, _nlm_set_tables),
        ("history", "1b. Signals from the memory's own history", history, _history_tables),
        ("supersession", "2. Supersession and as-of", supersession, _supersession_tables),
        (
            "everyday_updates",
            "2b. Everyday updates and look-alikes",
            everyday_updates,
            everyday_updates.table,
        ),
        ("poisoning", "3. Self-poisoning", poisoning, _poisoning_tables),
        ("long_horizon", "4. Long horizon", long_horizon, _horizon_tables),
    )
    for key, title, module, tables in sections:
        if key not in w:
            continue
        lines += [f"## {title}", "", _doc(module), ""]
        for embedder_key, data in w[key].items():
            label = embedders.get(embedder_key, {}).get("label", embedder_key)
            lines += [f"**{label}**", "", *tables(data), ""]
        if key in images:
            lines += [f"![{title}]({figures}/{images[key]})", ""]
        if key == "long_horizon" and "tokens" in images:
            lines += [f"![context tokens per turn]({figures}/{images['tokens']})", ""]
    if results.get("scale"):
        lines += ["## 5. Scale", "", _doc(scaling), "", *_scale_tables(results["scale"]), ""]
        if "scale" in images:
            lines += [f"![scale]({figures}/{images['scale']})", ""]
    lines += _left_out(results)
    return "\n".join(lines).rstrip() + "\n"


def _nlm_set_tables(data: dict[str, Any]) -> list[str]:
    cats = ["temporal", "frequency", "importance", "overall"]
    rows = [[name, *(_pct(v[c]) for c in cats)] for name, v in data["top1"].items()]
    return [
        f"top-1 accuracy, mean of {data['seeds']} seeded sets of {data['memories']} memories "
        f"and {data['queries']} queries:",
        "",
        *_table(["system", *cats], rows),
    ]


def _history_tables(data: dict[str, Any]) -> list[str]:
    cats = [*history.CATEGORIES, "overall"]
    rows = []
    for name, v in data["top1"].items():
        five = data["at5"][name]
        pool2 = name.endswith("pool 2")
        rows.append([name, *(f"{_pct(v[c])} / {'—' if pool2 else _pct(five[c])}" for c in cats)])
    return [
        f"top-1 / recall@5, mean of {data['seeds']} seeded histories of about "
        f"{data['turns_per_seed']:,} turns and {data['queries_per_seed']} final questions "
        "each (a pool of 2 has no recall@5):",
        "",
        *_table(["system", *cats], rows),
    ]


def _supersession_tables(data: dict[str, Any]) -> list[str]:
    rows = [
        [
            name,
            _pct(v["current"]),
            _pct(v["current_stale"]),
            _pct(max(0.0, 1.0 - v["current"] - v["current_stale"])),
            _pct(v["as_of"]),
            _pct(v["as_of_stale"]),
        ]
        for name, v in data["systems"].items()
    ]
    return [
        f"{data['facts']} facts over {data['turns']:,} turns; {data['current_questions']} "
        f"current and {data['as_of_questions']} as-of questions:",
        "",
        *_table(
            [
                "system",
                "current value first",
                "a stale value first",
                "no value in the top 5",
                "as-of right",
                "as-of wrong value",
            ],
            rows,
        ),
    ]


def _poisoning_tables(data: dict[str, Any]) -> list[str]:
    rows = [
        [
            name,
            _pct(v["poisoned_context"]),
            _pct(v["assistant_in_top5"]),
            _pct(v["truth_in_context"]),
        ]
        for name, v in data["systems"].items()
    ]
    return [
        f"{data['cases']} invented details in {data['turns']:,} turns; the user stated the real "
        f"value in {data['with_truth']} cases:",
        "",
        *_table(
            [
                "system",
                "context holds an invented detail",
                "an assistant turn in the top 5",
                "real value in context",
            ],
            rows,
        ),
    ]


def _horizon_tables(data: dict[str, Any]) -> list[str]:
    budgets = data["budgets"]
    recall_rows = [
        [name, *(_pct(v["evidence_recall"][str(b)]) for b in budgets), _pct(v["stale_in_context"])]
        for name, v in data["systems"].items()
    ]
    cost_rows = [
        [
            name,
            f"{v['tokens_median']:.0f}",
            f"{v['tokens_p95']:.0f}",
            f"{v['embed_calls_per_turn']:.2f}",
            f"{v['embed_texts_per_turn']:.2f}",
            f"{v['llm_calls_per_turn']:.0f}",
            f"{v['ms_per_turn']:.1f}",
            "n/a" if v["time_vs_rag"] is None else _times(v["time_vs_rag"]),
            f"{v['disk_mib']:.1f}",
        ]
        for name, v in data["systems"].items()
    ]
    profile = data.get("profile_series") or []
    card = ""
    if profile:
        sizes = [t for _, t in profile]
        card = (
            f"commonplace's profile card: {sizes[0]} tokens at turn {profile[0][0]}, "
            f"{max(sizes)} at most, {sizes[-1]} at turn {profile[-1][0]} (cap 120)."
        )
    return [
        f"{data['user_turns']:,} user turns (and as many replies), {data['planted']} planted "
        f"facts ({data['changed']} changed later); evidence recall = the current value is in "
        "the context given that budget; the last column: an outdated value is also there.",
        "",
        *_table(["system", *(f"{b} tokens" for b in budgets), "stale value shown"], recall_rows),
        "",
        f"Cost per user turn (recall every {data['recall_every']} turns at 1,500 tokens):",
        "",
        *_table(
            [
                "system",
                "context tokens (median)",
                "p95",
                "embedding calls",
                "texts embedded",
                "LLM calls",
                "ms per turn",
                "time vs plain RAG",
                "store MiB",
            ],
            cost_rows,
        ),
        "",
        card,
    ]


def _scale_tables(scale: dict[str, Any]) -> list[str]:
    rows = []
    for run in sorted(scale["runs"], key=lambda r: (r["notes"], r.get("store_only", False))):
        size = f"{run['notes']:,}" + (" (store only)" if run.get("store_only") else "")
        for system in ("commonplace", "plain RAG", "LangGraph"):
            v = run.get(system)
            if not v:
                continue
            ms = v.get("recall_ms", {})
            ex = ms.get("excluded", {})
            inc = ms.get("included", {})
            vs = v.get("vs_rag_p50", {})
            ram = v["ram_bytes_per_note"]
            overhead = ram - 4 * run["dim"]
            rows.append(
                [
                    size,
                    system,
                    _num(v["write_per_s"], 0),
                    _num(v["build_s"]),
                    f"{_num(ex.get('p50'), 2)} / {_num(ex.get('p95'), 2)}" if ex else "n/a",
                    f"{_num(inc.get('p50'), 2)} / {_num(inc.get('p95'), 2)}" if inc else "n/a",
                    f"{_times(vs['excluded'])} / {_times(vs['included'])}" if vs else "",
                    _num(ram, 0),
                    _num(overhead, 0),
                    _num(v["disk_bytes_per_note"], 0),
                ]
            )
    return [
        f"Latency over {scale['queries']} queries (LangGraph: the first 50); sizes up to 10,000 "
        "are medians of repeated "
        "runs (each in a fresh process); RAM is RSS growth per note and 'overhead' is it "
        "minus the vector (dim x 4 bytes).",
        "",
        *_table(
            [
                "notes",
                "system",
                "writes/s",
                "build s",
                "p50 / p95 ms, embed excluded",
                "p50 / p95 ms, embed included",
                "p50 vs RAG (excl / incl)",
                "RAM B/note",
                "overhead B/note",
                "disk B/note",
            ],
            rows,
            "llrrrrrrrr",
        ),
    ]


def _left_out(results: dict[str, Any]) -> list[str]:
    scale_sizes = [r["notes"] for r in results.get("scale", {}).get("runs", [])]
    million = any(s >= 1_000_000 for s in scale_sizes)
    return [
        "## What is left out, and why",
        "",
        "- **Weaviate**: the scale-out backend needs a server and is benchmarked by its own "
        "package; this page measures the embedded default only.",
        "- **LLM-based memory** (mem0, Zep, LlamaIndex's fact-extraction block, commonplace's "
        "LLM note writer): they need a model at write time, and this run is offline; their "
        "model calls per turn would be at least one.",
        "- **Answer quality**: no LLM answers the questions; every metric is about what "
        "reaches the context (retrieval and compiled context), which is what memory controls.",
        "- **1M notes**: "
        + (
            "measured on the store and recall path alone (see Scale)."
            if million
            else "not in the default run, to keep it well under 20 minutes on 2 shared cores; "
            "`--store-only-sizes 1000000` measures it on the store and recall path alone."
        ),
        "- **NLM's published dataset**: its texts are not copied; the set above reproduces its "
        "structure and settings with this benchmark's own generated texts.",
        "",
    ]
