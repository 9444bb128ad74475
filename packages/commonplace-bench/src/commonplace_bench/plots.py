"""The PNG figures of docs/benchmarks.md, drawn with matplotlib's Agg backend.

matplotlib is optional (the ``plots`` extra): without it :func:`make_plots` draws
nothing and says so, and the page keeps its tables. Every figure carries a footer
with the machine, the versions and how its numbers were aggregated.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

__all__ = ["make_plots"]

_ORDER = ("commonplace", "plain RAG", "LangGraph", "LlamaIndex", "NLM")
_COLOURS = {
    "commonplace": "#1b7837",
    "plain RAG": "#762a83",
    "LangGraph": "#2166ac",
    "LlamaIndex": "#e08214",
    "NLM": "#b2182b",
}


def _colour(label: str, n: int) -> str:
    for prefix, colour in _COLOURS.items():
        if label.startswith(prefix):
            if "pool 2" in label:
                return colour + "88"  # the same hue, lighter
            return colour
    return f"C{n % 10}"


_STYLES = {"LangGraph": "--", "LlamaIndex": "-.", "NLM": ":"}


def _style(label: str) -> str:
    """Line style per system, so that systems with identical numbers stay visible."""
    for prefix, style in _STYLES.items():
        if label.startswith(prefix):
            return style
    return "-"


def _footer(results: dict[str, Any], how: str) -> str:
    m = results["machine"]
    v = results["versions"]
    return (
        f"{m['cpu']} ({m['cores']} cores), Python {m['python']}, commonplace "
        f"{v.get('commonplace')}, langgraph {v.get('langgraph')}, llama-index-core "
        f"{v.get('llama-index-core')}, {results['generated']}. {how}"
    )


def make_plots(results: dict[str, Any], folder: Path) -> tuple[dict[str, str], str]:
    """Draw every figure the results allow; ``{name: file name}`` and a note."""
    if importlib.util.find_spec("matplotlib") is None:
        return {}, "plots not drawn: matplotlib is not installed (pip install matplotlib)"
    import matplotlib

    matplotlib.use("Agg")
    folder.mkdir(parents=True, exist_ok=True)
    images: dict[str, str] = {}
    workloads = results.get("workloads", {})
    embedder = "minilm" if any("minilm" in w for w in workloads.values()) else "hashing"
    label = results.get("embedders", {}).get(embedder, {}).get("label", embedder)
    seeds = results["sizes"]
    drawers = (
        ("nlm_set", _nlm_set, f"means of {seeds['nlm_set_seeds']} seeded sets"),
        ("history", _history, f"means of {seeds['history_seeds']} seeded histories"),
        ("supersession", _supersession, "one seeded history"),
        ("poisoning", _poisoning, f"means of {seeds['history_seeds']} seeded transcripts"),
        ("long_horizon", _long_horizon, "one seeded persona, the systems in lockstep"),
    )
    for name, draw, how in drawers:
        data = workloads.get(name, {}).get(embedder)
        if not data:
            continue
        figure = draw(data, label)
        _save(figure, folder / f"{name}.png", _footer(results, how), images, name)
    if "long_horizon" in workloads and embedder in workloads["long_horizon"]:
        data = workloads["long_horizon"][embedder]
        figure = _tokens_over_time(data, label)
        _save(figure, folder / "context_tokens.png", _footer(results, how), images, "tokens")
    if results.get("scale", {}).get("runs"):
        scale = results["scale"]
        runs = ", ".join(
            f"{r['notes']:,} notes: {r.get('repeats', 1)} run(s)"
            for r in sorted(scale["runs"], key=lambda r: r["notes"])
        )
        how = (
            f"p50/p95 of {scale['queries']} queries per size (LangGraph: 50), each size in a "
            f"fresh process; medians over runs ({runs})"
        )
        figure = _scale(scale)
        _save(figure, folder / "scale.png", _footer(results, how), images, "scale")
    return images, ""


def _save(figure: Any, path: Path, footer: str, images: dict[str, str], name: str) -> None:
    import textwrap

    figure.text(0.01, 0.005, "\n".join(textwrap.wrap(footer, 150)), fontsize=6.5, color="#555")
    figure.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(figure)
    images[name] = path.name


def _bars(ax: Any, table: dict[str, dict[str, float]], categories: list[str], title: str) -> None:
    labels = list(table)
    width = 0.8 / max(1, len(labels))
    for n, system in enumerate(labels):
        values = [100 * (table[system].get(c) or 0.0) for c in categories]
        xs = [i + (n - (len(labels) - 1) / 2) * width for i in range(len(categories))]
        ax.bar(xs, values, width, label=system, color=_colour(system, n))
    ax.set_xticks(range(len(categories)), [c.replace("_", " ") for c in categories])
    ax.set_ylim(0, 105)
    ax.set_ylabel("%")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)


def _figure(width: float = 10, height: float = 5.0) -> tuple[Any, Any]:
    import matplotlib.pyplot as plt

    figure, ax = plt.subplots(figsize=(width, height))
    figure.subplots_adjust(bottom=0.29, top=0.92, left=0.08, right=0.98)
    return figure, ax


def _legend(ax: Any) -> None:
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, frameon=False)


def _nlm_set(data: dict[str, Any], label: str) -> Any:
    figure, ax = _figure()
    _bars(
        ax,
        data["top1"],
        ["temporal", "frequency", "importance", "overall"],
        f"NLM-style set: top-1 ({label})",
    )
    _legend(ax)
    return figure


def _history(data: dict[str, Any], label: str) -> Any:
    figure, ax = _figure()
    categories = ["temporal", "supersession", "frequency", "importance", "relevance", "overall"]
    _bars(ax, data["top1"], categories, f"History-derived signals: top-1 ({label})")
    _legend(ax)
    return figure


def _supersession(data: dict[str, Any], label: str) -> Any:
    figure, ax = _figure()
    table = {
        s: {"current value first": v["current"], "as-of value first": v["as_of"]}
        for s, v in data["systems"].items()
    }
    _bars(
        ax,
        table,
        ["current value first", "as-of value first"],
        f"Supersession ({label}); no bar = not supported",
    )
    _legend(ax)
    return figure


def _poisoning(data: dict[str, Any], label: str) -> Any:
    figure, ax = _figure()
    table = {
        s: {
            "invented detail in context": v["poisoned_context"],
            "assistant turn in top 5": v["assistant_in_top5"],
            "true value in context": v["truth_in_context"],
        }
        for s, v in data["systems"].items()
    }
    _bars(ax, table, list(next(iter(table.values()))), f"Self-poisoning ({label})")
    _legend(ax)
    return figure


def _long_horizon(data: dict[str, Any], label: str) -> Any:
    figure, ax = _figure()
    for n, (system, values) in enumerate(data["systems"].items()):
        budgets = data["budgets"]
        ax.plot(
            budgets,
            [100 * values["evidence_recall"][str(b)] for b in budgets],
            marker="o",
            label=system,
            color=_colour(system, n),
            linestyle=_style(system),
        )
    ax.set_xlabel("context budget (tokens)")
    ax.set_ylabel("planted facts whose current value is in the context (%)")
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    ax.set_title(
        f"Long horizon: evidence recall vs budget, {data['user_turns']:,} user turns ({label})",
        fontsize=10,
    )
    _legend(ax)
    return figure


def _tokens_over_time(data: dict[str, Any], label: str) -> Any:
    figure, ax = _figure()
    for n, (system, values) in enumerate(data["systems"].items()):
        series = values["tokens_series"]
        if series:
            xs, ys = zip(*_smooth(series))
            ax.plot(
                xs,
                ys,
                label=f"{system}: context",
                color=_colour(system, n),
                linestyle=_style(system),
            )
    if data.get("profile_series"):
        xs, ys = zip(*data["profile_series"])
        ax.plot(xs, ys, label="commonplace: profile card", color="#a6dba0", linewidth=2.5)
    ax.set_xlabel("user turn")
    ax.set_ylabel("tokens (rolling median)")
    ax.grid(alpha=0.3)
    ax.set_title(f"Compiled context per turn at a 1,500-token budget ({label})", fontsize=10)
    _legend(ax)
    return figure


def _smooth(series: list[Any], window: int = 9) -> list[tuple[int, float]]:
    import statistics

    out = []
    for i in range(len(series)):
        chunk = [v for _, v in series[max(0, i - window // 2) : i + window // 2 + 1]]
        out.append((series[i][0], statistics.median(chunk)))
    return out


def _scale(scale: dict[str, Any]) -> Any:
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.6))
    figure.subplots_adjust(bottom=0.2, wspace=0.3)
    runs = sorted(scale["runs"], key=lambda r: r["notes"])
    for n, system in enumerate(("commonplace", "plain RAG", "LangGraph")):
        points = [(r["notes"], r[system], r.get("store_only")) for r in runs if system in r]
        points = [p for p in points if "recall_ms" in p[1]]
        if not points:
            continue
        colour = _colour(system, n)
        for kind, style in (("excluded", "-"), ("included", ":")):
            xy = [(x, v["recall_ms"][kind]["p50"]) for x, v, _ in points if kind in v["recall_ms"]]
            if xy:
                xs, ys = zip(*xy)
                left.plot(
                    xs, ys, style, marker="o", color=colour, label=f"{system} p50, embed {kind}"
                )
        xy95 = [
            (x, v["recall_ms"]["excluded"]["p95"])
            for x, v, _ in points
            if "excluded" in v["recall_ms"]
        ]
        if xy95:
            xs, ys = zip(*xy95)
            left.plot(xs, ys, "--", color=colour, alpha=0.5, label=f"{system} p95, embed excluded")
        ram = [(x, v["ram_bytes_per_note"]) for x, v, _ in points]
        xs, ys = zip(*ram)
        right.plot(xs, ys, marker="o", color=colour, label=f"{system}: RAM / note")
        disk = [(x, v["disk_bytes_per_note"]) for x, v, _ in points if v["disk_bytes_per_note"]]
        if disk:
            xs, ys = zip(*disk)
            right.plot(xs, ys, "--", marker="s", color=colour, label=f"{system}: disk / note")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.grid(alpha=0.3, which="both")
        ax.set_xlabel("notes in the store")
        ax.legend(fontsize=6.5)
    left.set_ylabel("recall latency (ms)")
    left.set_title("Recall latency vs store size (hashing embedder)", fontsize=10)
    right.set_ylabel("bytes per note")
    right.set_title("Memory and disk per note", fontsize=10)
    return figure
