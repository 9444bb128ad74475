"""Workload 1b: the harder variant, where every signal comes from the memory's history.

Nothing is injected. A year of user statements is written at simulated times into
every system, and the usage that frequency needs is real: the system is asked the
same thing week after week and told which hit the answer used (systems without
feedback just see the queries; NLM's search counts its own hits). Hundreds of
semi-related fillers make the candidate pool realistic, and the final questions
share their words with the right record and its rival alike, never the right
record's own answer words (checked when the set is built).

Five categories of five cases per seed:

* temporal: the same kind of statement months apart, in different words;
* supersession: a setting whose value changes;
* frequency: two codes at one place; one of them is asked about weekly for two months;
* importance: a specific plan and a vague musing about the same trip;
* relevance: an old fact with no rival, while fresh, popular, important notes about
  other things are asked about daily for ten days (an ungated formula lets them
  push it down).

Scored by top-1 (the first hit holds the answer and not the rival) and recall@5.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..embedding import CachedEmbedder
from ..systems.base import System, Turn
from .common import START, Case, RunContext, at5, contains, leaks, summarise, top1

CATEGORIES = ("temporal", "supersession", "frequency", "importance", "relevance")
NOW = START + timedelta(days=240)


@dataclass(frozen=True, slots=True)
class Ask:
    """A question asked during the history; the hit holding ``use`` is the one used."""

    query: str
    at: datetime
    use: str


@dataclass(frozen=True, slots=True)
class History:
    events: list[Turn | Ask]  # in time order
    cases: list[Case]


_TITLES = [
    "Middlemarch", "Dune", "Beloved", "Solaris", "Rebecca", "Walden", "Persuasion",
    "Frankenstein", "Ulysses", "Kindred", "Stoner", "Possession", "Emma", "Matilda",
]  # fmt: skip
_CLUBS = ["Harbour", "Lighthouse", "Riverside", "Attic", "Greenhouse", "Quayside", "Orchard"]
_SETTINGS = [
    "staging server", "metrics dashboard", "build agent", "mail relay", "backup server",
    "reverse proxy", "test database",
]  # fmt: skip
_PLACES = ["harbour", "cabin", "studio", "allotment", "warehouse", "garage", "workshop"]
_LOCKS = ["locker", "gate", "safe", "shed", "alarm", "door", "padlock"]
_CITIES = ["Tokyo", "Nairobi", "Lima", "Oslo", "Hanoi", "Montreal", "Tbilisi", "Dakar"]
_FACTS = [
    ("passport number ends in {d4}", "{d4}", "what are the last digits on my travel document?"),
    ("blood type is {blood}", "{blood}", "which blood group am I?"),
    ("car plate is {plate}", "{plate}", "what is the registration of my vehicle?"),
    ("bank branch is on {street}", "{street}", "where do I go in person for my bank?"),
    ("insurance policy is {policy}", "{policy}", "what reference do I quote for my cover?"),
    ("shoe size is {shoe}", "size {shoe}", "how big are my feet, for buying trainers?"),
    ("library card number is {d5}", "{d5}", "what do I show to borrow books?"),
]
_ROUTINES = [
    "daily standup is at 9:30 in room 4",
    "gym class is on Mondays at 7pm",
    "therapist session is every Thursday at 5pm",
    "weekly review with Marta is on Fridays at 3pm",
    "piano lesson is on Tuesdays at 6pm",
    "Spanish tutor comes on Wednesdays at 8pm",
    "team lunch is every other Friday at noon",
]
_HOBBIES = ["pottery", "sailing", "chess", "salsa", "climbing", "baking", "birding", "judo"]
_FRIENDS = ["Ana", "Rui", "Chloe", "Dev", "Ines", "Marco", "Priya", "Tom"]
_ADJ = ["fun", "hard", "long", "cold", "great", "messy", "relaxing", "odd"]
_FILLER_TEMPLATES = (
    "I tried {hobby} with {friend} and it was {adj}, about {n} minutes in all.",
    "Reading on the train for {n} minutes is my favourite way to relax.",
    "The {place} was {adj} today, I stayed {n} minutes.",
    "Flights to {city} are so expensive lately, saw one for {n}0 euros.",
    "Someone at work mentioned the {setting} was slow again, {n} complaints so far.",
    "{friend} lent me a novel, I read {n} pages of it last night.",
    "I walked past the {place} with {friend}, it looked {adj}.",
    "Thinking about a {hobby} course, {n} euros for the term.",
)


def build(seed: int, *, fillers: int) -> History:
    rng = random.Random(seed)
    timeline: list[tuple[datetime, int, Turn | Ask]] = []
    counter = iter(range(10**9))

    def say(text: str, at: datetime) -> None:
        n = next(counter)
        timeline.append((at, n, Turn("user", text, at, f"h{seed}-{n}")))

    def ask(query: str, at: datetime, use: str) -> None:
        timeline.append((at, next(counter), Ask(query, at, use)))

    def day(offset: float) -> datetime:
        return START + timedelta(days=offset)

    cases: list[Case] = []
    titles = rng.sample(_TITLES, 10)
    for n, club in enumerate(rng.sample(_CLUBS, 5)):
        old, new = titles[2 * n], titles[2 * n + 1]
        say(f"I'm reading {old} for the {club} book club.", day(-300 + n))
        say(f"For the {club} book club it's {new} now, just picked it up.", day(200 + n))
        cases.append(
            Case("temporal", f"what is the {club} reading group on at the moment?", new, old)
        )
    for n, setting in enumerate(rng.sample(_SETTINGS, 5)):
        old_port, new_port = (str(p) for p in rng.sample(range(8000, 9999), 2))
        say(f"Our {setting} listens on port {old_port}.", day(-250 + n))
        say(f"Heads up: the {setting} moved to port {new_port}.", day(150 + n))
        cases.append(
            Case(
                "supersession", f"which port do I connect to for the {setting}?", new_port, old_port
            )
        )
    for n, place in enumerate(rng.sample(_PLACES, 5)):
        often, rarely = rng.sample(_LOCKS, 2)
        code_often, code_rarely = (str(c) for c in rng.sample(range(1000, 9999), 2))
        say(f"At the {place} the {often} code is {code_often}.", day(10 + n))
        say(f"At the {place} the {rarely} code is {code_rarely}.", day(10 + n))
        for week in range(8):
            ask(f"{often} code for the {place}", day(20 + 7 * week + n), code_often)
        cases.append(Case("frequency", f"what's the code at the {place}?", code_often, code_rarely))
    for n, city in enumerate(rng.sample(_CITIES, 5)):
        gate = f"B{rng.randint(10, 59)}"
        say(
            f"My flight to {city} leaves at {rng.randint(6, 22)}:{rng.choice(['05', '20', '45'])} "
            f"from gate {gate}, terminal 2.",
            day(120 + n),
        )
        say(f"Maybe I'll visit {city} someday, who knows.", day(120 + n))
        cases.append(Case("importance", f"when and where do I board for {city}?", gate, "someday"))
    slots = {
        "d4": str(rng.randint(1000, 9999)),
        "d5": str(rng.randint(10000, 99999)),
        "blood": rng.choice(["O negative", "A positive", "B negative", "AB positive"]),
        "plate": f"{rng.randint(10, 99)}-{rng.choice(['XK', 'RT', 'LM'])}-{rng.randint(10, 99)}",
        "street": rng.choice(["Rua Augusta", "Elm Road", "Mill Street"]),
        "policy": f"HX-{rng.randint(1000, 9999)}",
        "shoe": str(rng.randint(37, 46)),
    }
    for n, (statement, answer, question) in enumerate(rng.sample(_FACTS, 5)):
        say(f"My {statement.format(**slots)}.", day(-320 + n))
        cases.append(Case("relevance", question, answer.format(**slots)))
    for n, routine in enumerate(rng.sample(_ROUTINES, 5)):
        say(f"My {routine}.", day(200 + n))
        for d in range(10):  # asked about every day: fresh and popular
            ask(routine, day(210 + d) + timedelta(hours=n), routine.split(" at ")[-1])
    for n in range(fillers):
        text = rng.choice(_FILLER_TEMPLATES).format(
            hobby=rng.choice(_HOBBIES),
            friend=rng.choice(_FRIENDS),
            adj=rng.choice(_ADJ),
            place=rng.choice(_PLACES),
            city=rng.choice(_CITIES),
            setting=rng.choice(_SETTINGS),
            n=n + 2,
        )
        say(text, day(rng.uniform(-330, 235)))
    for case in cases:
        assert not leaks(case.query, case.target), case
    timeline.sort(key=lambda item: (item[0], item[1]))
    return History([item for _, _, item in timeline], cases)


def replay(system: System, events: Sequence[Turn | Ask]) -> None:
    """Write the turns in time order; at each ask, query and give feedback."""
    batch: list[Turn] = []
    for event in events:
        if isinstance(event, Turn):
            batch.append(event)
            continue
        if batch:
            system.add(batch)
            batch = []
        found = system.query(event.query, at=event.at, top_k=5, budget=1500)
        used = [i for i, hit in enumerate(found.hits[:5]) if contains(hit, event.use)]
        system.feedback(found, used[:1])
    if batch:
        system.add(batch)


VARIANTS: tuple[tuple[str, int | None], ...] = (
    ("rag", None),
    ("langgraph", None),
    ("llamaindex", None),
    ("nlm", 2),
    ("nlm", 50),
    ("commonplace", None),
)


def run(embedder: CachedEmbedder, ctx: RunContext) -> dict[str, Any]:
    per_top1: dict[str, dict[str, list[float]]] = {}
    per_at5: dict[str, dict[str, list[float]]] = {}
    turns = queries = 0
    for seed in range(ctx.seed, ctx.seed + ctx.sizes.history_seeds):
        history = build(seed, fillers=ctx.sizes.history_fillers)
        texts = [e.text if isinstance(e, Turn) else e.query for e in history.events]
        embedder.prime(texts + [c.query for c in history.cases])
        turns += sum(isinstance(e, Turn) for e in history.events)
        queries += len(history.cases)
        for key, pool in VARIANTS:
            if key not in ctx.specs:
                continue
            system = ctx.build(key, embedder, pool=pool)
            try:
                replay(system, history.events)
                one = per_top1.setdefault(system.label, {c: [] for c in CATEGORIES})
                five = per_at5.setdefault(system.label, {c: [] for c in CATEGORIES})
                for case in history.cases:
                    found = system.query(case.query, at=NOW, top_k=5, budget=1500)
                    one[case.category].append(float(top1(found.hits, case)))
                    five[case.category].append(float(at5(found.hits, case)))
            finally:
                system.close()
    return {
        "seeds": ctx.sizes.history_seeds,
        "turns_per_seed": turns // max(1, ctx.sizes.history_seeds),
        "queries_per_seed": queries // max(1, ctx.sizes.history_seeds),
        "top1": {label: summarise(per) for label, per in per_top1.items()},
        "at5": {label: summarise(per) for label, per in per_at5.items()},
    }
