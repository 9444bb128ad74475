"""Workload 2b: facts that change, said the way people say it, judged on what the model reads.

``everyday_updates.jsonl`` (beside this module) holds cases written for this workload,
none taken from NLM's set or from the issue that asked for it. Each case is an old fact
(one or two turns), two weeks of small talk and of other facts about the user's life, the
update in everyday words, a few more days of chat, then the question. The classes:

- ``ending``: the old value named with a verb of ending or replacing ("sold the Mazda3
  and picked up a Skoda", "broke up with Karim");
- ``implicit``: the same slot with a new value and a cue of change, the slot unnamed
  ("using fish these days" after "my shell is bash");
- ``quantity``: a changed amount ("rent is €1,290 from March");
- ``correction``: "turns out", "actually", "sorry, I meant";
- ``lookalike``: a statement that resembles an update but changes nothing: about someone
  else ("my wife's car is a Tesla"), a plan ("thinking about moving to Ally"), an addition
  ("picked up the trombone too"), a question.

Cases are ``dev`` (looked at while the rules were written), ``holdout`` (every third case
of each class; scored once blind, then its misses were read and the rules fixed by class,
so it is no longer blind) and ``fresh`` (28 cases written after that, scored once, blind).
Every system is judged on the context it hands the model, line by line (a system's
rendering of a past value counts only when the line says so: "until <date>", "replaced",
"disagrees with"):

- **stale**: a line names the old value, not the new one, and is not marked as past or
  disputed (a line naming both is the update itself, which a reader understands);
- an update **holds** when some line names the new value and no line is stale;
- **past found**: asked about the past ("what car did I drive before?"), a line names
  the old value;
- **as of**: asked as of a day between the old fact and the update (systems that answer
  "as of" at all), a line names the old value unmarked and none names the new one (the
  profile card included: the future must not leak into the past);
- a look-alike **kept**: a line names the old value unmarked (it still holds); it is
  **replaced** when the old value is shown only as past, **disputed** when only marked.

``python -m commonplace_bench.workloads.everyday_updates [--split dev]`` prints the table.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..embedding import CachedEmbedder
from ..systems.base import System, Turn
from .common import START, RunContext, contains, mean

CASES = Path(__file__).with_name("everyday_updates.jsonl")
CLASSES = ("ending", "implicit", "quantity", "correction", "lookalike")
SYSTEMS = ("rag", "langgraph", "nlm", "commonplace")
# what a system's line says when the value it names is past or in doubt
_MARKED = re.compile(r"\((?:[^()]*; )?(?:until \d|replaced|disagrees with)", re.IGNORECASE)
_SMALL_TALK = (
    ("Long day, going to make a curry tonight.", "A curry sounds like a good end to it."),
    ("It's been raining non-stop here.", "Perfect weather for staying in."),
    ("Any ideas for a rainy Sunday?", "A museum or a long film could work."),
    ("Watched a documentary about octopuses last night.", "They're remarkably clever."),
    ("ugh my neck is sore from the new pillow", "Maybe try a lower one for a few nights."),
    ("what's a quick lunch with chickpeas?", "A chickpea salad with lemon takes ten minutes."),
    ("Feeling a bit flat today.", "An early night might help."),
    ("thanks!", "You're welcome!"),
    ("haha that's a good one", "Glad it made you laugh."),
    ("Can you remind me what a haiku is?", "Three lines: five, seven and five syllables."),
)
# other facts about the same user, said between the old fact and the update: what a
# careless update decision would wrongly replace
_LIFE = (
    "My dog is called Biscuit, he's a beagle.",
    "I'm learning Japanese on Tuesday evenings.",
    "I play five-a-side football on Thursdays.",
    "My favourite band is Wilco.",
    "I keep a sourdough starter called Doug.",
    "I'm reading a book about the history of salt.",
)


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    cls: str
    split: str
    old: tuple[str, ...]
    update: str
    old_value: str
    new_value: str
    question: str
    past_question: str | None


def load(path: Path = CASES, *, split: str | None = None) -> list[Case]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        case = Case(
            row["id"],
            row["class"],
            row["split"],
            tuple(row["old"]),
            row["update"],
            row["old_value"],
            row["new_value"],
            row["question"],
            row.get("past_question"),
        )
        if split is None or case.split == split:
            out.append(case)
    return out


@dataclass(frozen=True, slots=True)
class Script:
    """One case as a chat: the turns, when the update was said, and a day between."""

    turns: tuple[Turn, ...]
    updated_at: datetime
    between: datetime
    asked_at: datetime


def script(case: Case, *, seed: int) -> Script:
    rng = random.Random(f"{seed}-{case.id}")
    at = START
    turns: list[Turn] = []

    def say(text: str, reply: str) -> None:
        nonlocal at
        n = len(turns)
        turns.append(Turn("user", text, at, f"{case.id}-{n}-u"))
        turns.append(Turn("assistant", reply, at + timedelta(seconds=30), f"{case.id}-{n}-a"))

    for text in case.old:
        say(text, "Noted.")
        at += timedelta(minutes=5)
    life = [t for t in _LIFE if not _shares_value(t, case)]
    for day in range(1, 15):
        at = START + timedelta(days=day, hours=rng.randint(8, 20))
        if day % 3 == 0 and life:
            say(life.pop(0), "Nice to know.")
        said, reply = _SMALL_TALK[rng.randrange(len(_SMALL_TALK))]
        say(said, reply)
    updated_at = START + timedelta(days=15, hours=10)
    at = updated_at
    say(case.update, "Thanks for telling me.")
    for day in range(16, 19):
        at = START + timedelta(days=day, hours=rng.randint(8, 20))
        said, reply = _SMALL_TALK[rng.randrange(len(_SMALL_TALK))]
        say(said, reply)
    return Script(tuple(turns), updated_at, START + timedelta(days=7), START + timedelta(days=19))


def _shares_value(text: str, case: Case) -> bool:
    return contains(text, case.old_value) or contains(text, case.new_value)


def stale_lines(context: str, case: Case) -> list[str]:
    """The lines that show the old value as if it held."""
    return [
        line
        for line in context.splitlines()
        if contains(line, case.old_value)
        and not contains(line, case.new_value)
        and not _MARKED.search(line)
    ]


def judge(system: System, case: Case, play: Script) -> dict[str, bool | None]:
    """What one system's contexts show for one case (see the module's docstring)."""
    now = system.query(case.question, at=play.asked_at, top_k=5, budget=1500).context
    lines = now.splitlines()
    shows_new = any(contains(line, case.new_value) for line in lines)
    unmarked_old = any(
        contains(line, case.old_value) and not _MARKED.search(line) for line in lines
    )
    marked_old = any(contains(line, case.old_value) and _MARKED.search(line) for line in lines)
    out: dict[str, bool | None] = {"stale": bool(stale_lines(now, case)), "new": shows_new}
    if case.cls == "lookalike":
        out["kept"] = unmarked_old
        out["replaced"] = marked_old and not unmarked_old and _past_only(now, case)
        out["disputed"] = marked_old and not out["replaced"]
    if case.past_question:
        past = system.query(case.past_question, at=play.asked_at, top_k=5, budget=1500).context
        out["past"] = any(contains(line, case.old_value) for line in past.splitlines())
    if system.supports_as_of and case.cls != "lookalike":
        then = system.query(
            case.question, at=play.asked_at, top_k=5, budget=1500, as_of=play.between
        ).context
        then_lines = then.splitlines()
        out["as_of"] = any(
            contains(line, case.old_value) and not _MARKED.search(line) for line in then_lines
        ) and not any(contains(line, case.new_value) for line in then_lines)
    return out


def _past_only(context: str, case: Case) -> bool:
    return any(
        contains(line, case.old_value) and re.search(r"until \d|replaced", line)
        for line in context.splitlines()
    )


# cases per class at each size (None: all): the smoke test keeps to a few
_PER_CLASS = {"tiny": 1, "quick": 4}


def run(embedder: CachedEmbedder, ctx: RunContext, *, split: str | None = None) -> dict[str, Any]:
    cases = load(split=split)
    per_class = _PER_CLASS.get(ctx.sizes.name)
    if per_class is not None:
        cases = [
            c for c in cases if [d.cls for d in cases if d.id <= c.id].count(c.cls) <= per_class
        ]
    plays = {c.id: script(c, seed=ctx.seed) for c in cases}
    texts = {t.text for p in plays.values() for t in p.turns}
    questions = {q for c in cases for q in (c.question, c.past_question) if q}
    embedder.prime(sorted(texts | questions))
    out: dict[str, Any] = {}
    every: dict[str, dict[str, dict[str, bool | None]]] = {}
    for key in SYSTEMS:
        if key not in ctx.specs:
            continue
        verdicts: dict[str, dict[str, bool | None]] = {}
        label = ""
        for case in cases:
            system = ctx.build(key, embedder)
            label = system.label
            try:
                play = plays[case.id]
                for start in range(0, len(play.turns), 2):  # one exchange at a time
                    system.add(play.turns[start : start + 2])
                verdicts[case.id] = judge(system, case, play)
            finally:
                system.close()
        out[label] = summarise(cases, verdicts)
        every[label] = verdicts
    return {
        "cases": len(cases),
        "updates": sum(c.cls != "lookalike" for c in cases),
        "lookalikes": sum(c.cls == "lookalike" for c in cases),
        "split": split or "all",
        "systems": out,
        "verdicts": every,
    }


def by_split(result: dict[str, Any], split: str) -> dict[str, Any]:
    """The result as if only the ``split`` cases (dev or holdout) had been run."""
    cases = [c for c in load(split=split) if c.id in next(iter(result["verdicts"].values()), {})]
    return {
        "cases": len(cases),
        "updates": sum(c.cls != "lookalike" for c in cases),
        "lookalikes": sum(c.cls == "lookalike" for c in cases),
        "split": split,
        "systems": {
            name: summarise(cases, verdicts) for name, verdicts in result["verdicts"].items()
        },
        "verdicts": result["verdicts"],
    }


def _first(cases: Sequence[Case], per_class: int) -> list[Case]:
    """The first ``per_class`` cases of each class, in file order."""
    out: list[Case] = []
    for case in cases:
        if sum(c.cls == case.cls for c in out) < per_class:
            out.append(case)
    return out


def summarise(cases: Sequence[Case], verdicts: dict[str, dict[str, bool | None]]) -> dict[str, Any]:
    updates = [c for c in cases if c.cls != "lookalike" and c.id in verdicts]
    looks = [c for c in cases if c.cls == "lookalike" and c.id in verdicts]

    def rate(group: Sequence[Case], key: str, want: bool = True) -> float | None:
        values = [verdicts[c.id].get(key) for c in group]
        known = [v for v in values if v is not None]
        return mean(v == want for v in known) if known else None

    holds = {
        cls: mean(
            bool(verdicts[c.id]["new"]) and not verdicts[c.id]["stale"]
            for c in updates
            if c.cls == cls
        )
        for cls in CLASSES[:-1]
        if any(c.cls == cls for c in updates)
    }
    return {
        "holds": mean(bool(verdicts[c.id]["new"]) and not verdicts[c.id]["stale"] for c in updates),
        "no_stale": rate(updates, "stale", want=False),
        "by_class": holds,
        "past": rate([c for c in updates if c.past_question], "past"),
        "as_of": rate(updates, "as_of"),
        "lookalike_kept": rate(looks, "kept"),
        "lookalike_replaced": rate(looks, "replaced"),
        "lookalike_disputed": rate(looks, "disputed"),
        "missed": sorted(
            c.id for c in updates if verdicts[c.id]["stale"] or not verdicts[c.id]["new"]
        ),
        "lookalikes_touched": sorted(c.id for c in looks if not verdicts[c.id]["kept"]),
    }


def table(result: dict[str, Any]) -> list[str]:
    """The workload's table, as markdown lines."""

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:.0f}%"

    head = [
        "system",
        "updates hold",
        "no stale value",
        *(f"{c}" for c in CLASSES[:-1]),
        "past found",
        "as of",
        "look-alikes kept",
        "replaced",
        "disputed",
    ]
    rows = [
        [
            name,
            pct(v["holds"]),
            pct(v["no_stale"]),
            *(pct(v["by_class"].get(c)) for c in CLASSES[:-1]),
            pct(v["past"]),
            pct(v["as_of"]),
            pct(v["lookalike_kept"]),
            pct(v["lookalike_replaced"]),
            pct(v["lookalike_disputed"]),
        ]
        for name, v in result["systems"].items()
    ]
    lines = [
        f"{result['updates']} updates and {result['lookalikes']} look-alikes "
        f"({result['split']} cases):",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def page(
    parts: Sequence[dict[str, Any]],
    *,
    embedder: str,
    argv: Sequence[str] | None,
    supersession: dict[str, Any] | None = None,
) -> str:
    """The workload's page: how it is judged, a table per split, and the older
    supersession workload's table (facts restated with light everyday variation)."""
    import sys

    from ..page import _supersession_tables

    command = "python -m commonplace_bench.workloads.everyday_updates " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    doc = (__doc__ or "").split("``python -m", 1)[0].strip()
    lines = [
        "# Everyday updates and look-alikes",
        "",
        "<!-- written by commonplace_bench.workloads.everyday_updates --output; do not edit -->",
        "",
        doc,
        "",
        f"Embedder: {embedder}. Command: `{command.strip()}`.",
        "",
    ]
    for part in parts:
        lines += [*table(part), ""]
    if supersession is not None:
        lines += [
            "## The supersession workload",
            "",
            "The bench's older workload (workload 2 of [Benchmarks](benchmarks.md)): facts "
            "changed two or three times over a year among small talk, asked now and as of a "
            "date; the first retrieved record naming any value must name the one that holds.",
            "",
            *_supersession_tables(supersession),
            "",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from ..embedding import EMBEDDERS, load_embedders
    from ..harness import system_specs

    parser = argparse.ArgumentParser(prog="python -m commonplace_bench.workloads.everyday_updates")
    parser.add_argument("--split", choices=("dev", "holdout", "fresh", "all"), default="all")
    parser.add_argument("--embedder", choices=sorted(EMBEDDERS), default="minilm")
    parser.add_argument(
        "--skip", action="append", default=[], help="leave out systems (comma-separated)"
    )
    parser.add_argument("--nlm-python", default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--misses", action="store_true", help="list the updates that fail")
    parser.add_argument("--output", type=Path, help="write the page (all, dev and holdout)")
    args = parser.parse_args(argv)
    import tempfile

    from .common import SIZES

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        skip = [s.strip() for item in args.skip for s in item.split(",") if s.strip()]
        specs, not_run, _ = system_specs(skip, args.nlm_python, folder)
        for name, why in not_run.items():
            print(f"not run: {name}: {why}")
        ctx = RunContext(SIZES["full"], folder, specs, seed=args.seed)
        loaded, failed = load_embedders([args.embedder])
        if not loaded:
            raise SystemExit(f"the embedder did not load: {failed}")
        split = None if args.split == "all" else args.split
        result = run(loaded[0].embedder, ctx, split=split)
        older: dict[str, Any] | None = None
        if args.output is not None:
            from . import supersession

            older = supersession.run(loaded[0].embedder, ctx)
    print("\n".join(table(result)))
    if args.output is not None:
        names = ("dev", "holdout", "fresh")
        parts = [result] if split else [result, *(by_split(result, n) for n in names)]
        text = page(parts, embedder=args.embedder, argv=argv, supersession=older)
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
    if args.misses:
        for name, v in result["systems"].items():
            print(f"{name}: {', '.join(v['missed']) or 'none'}", end="; ")
            print(f"look-alikes changed: {', '.join(v['lookalikes_touched']) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
