"""Does the four-signal rerank beat plain cosine when the signals come from history?

Every case is written through ``Memory.write`` at simulated times, and the
frequency case earns its frequency through real recalls with feedback, so
nothing is injected. Fillers make the candidate pool realistic (at least 50).
Queries share their words with the right record and its rivals alike, so
similarity alone cannot settle them.

Systems, all over the same store and the same embedder:

* ``cosine``: plain top-k by cosine similarity over the notes;
* ``nlm@2``: the ungated NLM formula reranking the 2 nearest candidates (the
  published setting);
* ``nlm@50``: the same formula over a realistic pool of 50;
* ``commonplace``: the default recall (gated four signals, keyword blend,
  supersession, links).

Run: ``python -m commonplace_bench.rerank [--fillers 3000]``.
"""

from __future__ import annotations

import argparse
import math
import random
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from commonplace import Config, ManualClock, Memory, Scope
from commonplace.embedders import embed_checked

SCOPE = Scope(user="bench")
START = datetime(2025, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Case:
    category: str
    query: str
    target: str  # a distinctive substring of the right note's text


@dataclass
class History:
    cases: list[Case]
    url: str
    now: datetime


def build(folder: Path, *, fillers: int, seed: int) -> History:
    rng = random.Random(seed)
    clock = ManualClock(START)
    url = f"sqlite:///{folder / 'rerank.db'}"
    cases: list[Case] = []
    with Memory(url, clock=clock) as memory:

        def write(text: str) -> None:
            memory.write(text, scope=SCOPE)

        topics = [
            "pottery",
            "sailing",
            "chess",
            "salsa",
            "climbing",
            "baking",
            "birding",
            "judo",
            "origami",
            "karaoke",
            "rowing",
            "fencing",
            "tango",
            "surfing",
        ]
        for n in range(fillers):
            clock.advance(minutes=rng.randint(5, 600))
            write(
                f"I tried {rng.choice(topics)} session {n} with a friend and it was "
                f"{rng.choice(['fun', 'hard', 'long', 'cold', 'great'])}."
            )
        # temporal: the same kind of statement, months apart, no fact key
        titles = [
            "Dune",
            "Emma",
            "Ulysses",
            "Beloved",
            "Hamlet",
            "Solaris",
            "Walden",
            "Rebecca",
            "Ivanhoe",
            "Matilda",
        ]
        rng.shuffle(titles)
        for n in range(5):
            old, new = titles[2 * n], titles[2 * n + 1]
            clock.set(START - timedelta(days=300 - n))
            write(f"I am reading the novel {old} for book club {n}.")
            clock.set(START + timedelta(days=200 + n))
            write(f"I am reading the novel {new} for book club {n}.")
            cases.append(Case("temporal", f"which novel am I reading for book club {n}?", new))
        # supersession: a setting that changes value (the writer keys both statements)
        for n, setting in enumerate(
            ["staging server", "backup server", "metrics server", "build server", "proxy server"]
        ):
            old_port, new_port = rng.sample(range(8000, 9999), 2)
            clock.set(START - timedelta(days=250 - n))
            write(f"Our {setting} port is {old_port}.")
            clock.set(START + timedelta(days=150 + n))
            write(f"The {setting} moved to port {new_port}.")
            cases.append(Case("supersession", f"which port does the {setting} use?", str(new_port)))
        # frequency: two codes at one place; one of them is asked about again and again
        for n, place in enumerate(["harbour", "cabin", "studio", "allotment", "warehouse"]):
            often, rarely = rng.sample(["locker", "gate", "safe", "shed", "alarm", "door"], 2)
            clock.set(START + timedelta(days=10 + n))
            write(f"At the {place} the {often} code is {1000 + n}.")
            write(f"At the {place} the {rarely} code is {2000 + n}.")
            for week in range(12):
                clock.set(START + timedelta(days=20 + 7 * week + n))
                recall = memory.recall(f"{place} {often} code", scope=SCOPE)
                used = [i.record.id for i in recall.items if str(1000 + n) in i.record.text]
                memory.feedback(recall.id, used=used[:1])
            cases.append(Case("frequency", f"what is the code at the {place}?", str(1000 + n)))
        # relevance: an old fact with no rival; fresh, popular, important notes about other
        # things must not push it down (the ungated formula lets them)
        for n, (thing, value) in enumerate(
            [
                ("passport number", "ends in 4471"),
                ("blood type", "is O negative"),
                ("car plate", "is 42-XK-17"),
                ("bank branch", "is on Rua Augusta"),
                ("insurance policy", "is HX-2291"),
            ]
        ):
            clock.set(START - timedelta(days=320 - n))
            write(f"My {thing} {value}.")
            cases.append(Case("relevance", f"what about my {thing}?", value))
        for n, routine in enumerate(
            [
                "daily standup is at 9:30 in room 4",
                "gym class is on Mondays at 7pm",
                "therapist session is every Thursday at 5pm",
                "weekly review with Marta is on Fridays at 3pm",
                "piano lesson is on Tuesdays at 6pm",
            ]
        ):
            clock.set(START + timedelta(days=200 + n))
            write(f"My {routine}.")
            for day in range(25):  # asked about every day: fresh and popular
                clock.set(START + timedelta(days=210 + day, hours=n))
                recall = memory.recall(routine, scope=SCOPE)
                memory.feedback(recall.id, used=[recall.items[0].record.id] if recall.items else [])
        # importance: a specific, factual note and a vague one about the same trip
        for n, city in enumerate(["Tokyo", "Nairobi", "Lima", "Oslo", "Hanoi"]):
            clock.set(START + timedelta(days=120 + n))
            write(f"My flight to {city} leaves at 14:3{n} from gate B1{n} on terminal 2.")
            write(f"Maybe I will go to {city} sometime, who knows.")
            cases.append(Case("importance", f"my trip to {city}", f"gate B1{n}"))
        now = START + timedelta(days=240)
    return History(cases, url, now)


Ranker = Callable[[Memory, Case, datetime], list[str]]


def cosine(memory: Memory, case: Case, now: datetime) -> list[str]:
    vector = embed_checked(memory.embedder, [case.query])[0]
    hits = memory.store.search(SCOPE, vector, text=None, limit=50)
    return [h.record.text for h in sorted(hits, key=lambda h: -h.similarity)]


def recall_with(config: Config, top_k: int) -> Ranker:
    def rank(memory: Memory, case: Case, now: datetime) -> list[str]:
        with Memory(memory.url, config=config) as other:
            return [
                i.record.text
                for i in other.recall(case.query, scope=SCOPE, top_k=top_k, at=now).items
            ]

    return rank


NLM = dict(
    relevance_floor=-1.0,
    relevance_margin=math.inf,
    keyword_weight=0.0,
    cold_factor=1.0,
    ignore_penalty=0.0,
    link_expand=0,
    touch_on_recall=False,
    search_min_notes=0,
)
SYSTEMS: dict[str, tuple[Ranker, bool]] = {  # name -> (ranker, has recall@5)
    "cosine": (cosine, True),
    "nlm@2": (recall_with(Config(pool_min=2, pool_factor=2, **NLM), 1), False),  # type: ignore[arg-type]
    "nlm@50": (recall_with(Config(**NLM), 5), True),  # type: ignore[arg-type]
    "commonplace": (recall_with(Config(touch_on_recall=False), 5), True),
}


def evaluate(history: History) -> dict[str, dict[str, tuple[float, float | None]]]:
    """system -> category -> (top-1, recall@5 or None)."""
    out: dict[str, dict[str, tuple[float, float | None]]] = {}
    with Memory(history.url, config=Config(touch_on_recall=False)) as memory:
        for name, (rank, has_at5) in SYSTEMS.items():
            per: dict[str, list[tuple[bool, bool]]] = {}
            for case in history.cases:
                ranked = rank(memory, case, history.now)
                hit1 = bool(ranked) and case.target in ranked[0]
                hit5 = any(case.target in text for text in ranked[:5])
                per.setdefault(case.category, []).append((hit1, hit5))
            per["overall"] = [h for hits in list(per.values()) for h in hits]
            out[name] = {
                cat: (
                    sum(a for a, _ in hits) / len(hits),
                    sum(b for _, b in hits) / len(hits) if has_at5 else None,
                )
                for cat, hits in per.items()
            }
    return out


def table(results: dict[str, dict[str, tuple[float, float | None]]]) -> str:
    categories = ["temporal", "supersession", "frequency", "importance", "relevance", "overall"]
    lines = ["| system | " + " | ".join(categories) + " |", "|---|" + "---:|" * len(categories)]
    for name, per in results.items():
        cells = []
        for cat in categories:
            top1, at5 = per[cat]
            cells.append(f"{top1:.0%}" + ("" if at5 is None else f" / {at5:.0%}"))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fillers", type=int, default=3000)
    parser.add_argument("--seeds", type=int, default=5, help="histories to average over")
    args = parser.parse_args(argv)
    runs = []
    for seed in range(1, args.seeds + 1):
        with tempfile.TemporaryDirectory() as folder:
            history = build(Path(folder), fillers=args.fillers, seed=seed)
            runs.append(evaluate(history))
    print(
        f"top-1 / recall@5 per category, mean of {args.seeds} seeded histories "
        f"({len(history.cases)} queries each, {args.fillers} filler notes)\n"
    )
    print(table(average(runs)))


def average(
    runs: list[dict[str, dict[str, tuple[float, float | None]]]],
) -> dict[str, dict[str, tuple[float, float | None]]]:
    out: dict[str, dict[str, tuple[float, float | None]]] = {}
    for name, per in runs[0].items():
        out[name] = {}
        for cat, (_, at5) in per.items():
            top1 = sum(r[name][cat][0] for r in runs) / len(runs)
            five = None if at5 is None else sum(r[name][cat][1] or 0 for r in runs) / len(runs)
            out[name][cat] = (top1, five)
    return out


if __name__ == "__main__":
    main()
