"""Workload 1a: the NLM-style set, reproduced in structure, at pool 2 and pool 50.

NLM's published benchmark has 100 memories (60 in 30 test pairs plus 40 unrelated
fillers) and 30 queries scored by top-1 accuracy, in three categories of ten:

* temporal: an old and a new version of a fact, created 180 days and 1 day ago,
  asked with a neutral question; the new one is right;
* frequency: two phrasings of one fact, accessed 15 times and never (importance 0.5
  for both); the often-accessed one is right; asked "tell me about <its first two
  words>";
* importance: a specific, factual memory (importance 0.8) and a vague one about the
  same thing (0.1); the factual one is right; asked "what specifically about <its
  first two words>".

The signals are injected as metadata, as NLM's benchmark does (commonplace gets the
same values through its store API, see ``CommonplaceSystem.add_memos``), and NLM
runs with consolidation off, as there. The texts are this benchmark's own, drawn
from template pools with seeded slot values and a seeded order, so each seed is a
different set with the same structure. Every system is scored on its top-1 hit: it
must hold the right memory's distinctive words and not its rival's.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from ..embedding import CachedEmbedder
from ..systems.base import Memo
from .common import START, Case, RunContext, summarise, top1

NOW = START + timedelta(days=200)
CATEGORIES = ("temporal", "frequency", "importance")

_NAMES = ["Marta", "Tiago", "Ingrid", "Kofi", "Yuki", "Ravi", "Lena", "Omar", "Sofia", "Bruno"]
_ORGS = ["Northwind", "Bluefin", "Kestrel Labs", "Quarry", "Lumen", "Tidewater", "Orbital"]
_CITIES = ["Porto", "Gdansk", "Accra", "Osaka", "Quito", "Tartu", "Leeds", "Lyon"]
_STREETS = ["Baker Street", "Rua Augusta", "Elm Road", "Harbour Lane", "Mill Street"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]

# (old, new, neutral question, values); {v} is the slot, the new value is the target
_TEMPORAL: tuple[tuple[str, str, str, Sequence[str]], ...] = (
    (
        "The team deploys with {v}",
        "The team switched its deploys to {v}",
        "which tool does the team deploy with",
        ["Jenkins", "CircleCI", "Buildkite", "TeamCity", "Bamboo"],
    ),
    (
        "The public API is on version {v}",
        "The public API is now on version {v}",
        "what version is the public API on",
        ["2.1", "3.0", "3.4", "4.2", "5.1"],
    ),
    (
        "The staging database runs on {v}",
        "The staging database was migrated to {v}",
        "which database engine does staging use",
        ["MySQL", "PostgreSQL", "MariaDB", "CockroachDB", "Oracle"],
    ),
    (
        "Our daily standup is at {v}",
        "The daily standup moved to {v}",
        "what time is the daily standup",
        ["9:00", "9:30", "10:15", "11:00", "8:45"],
    ),
    (
        "The office is on {v}",
        "The office relocated to {v}",
        "where is the office",
        _STREETS,
    ),
    (
        "The mobile app is written in {v}",
        "The mobile app was rewritten in {v}",
        "what language is the mobile app written in",
        ["Kotlin", "Swift", "Flutter", "Xamarin", "Ionic"],
    ),
    (
        "The monthly cloud bill is about {v} dollars",
        "The monthly cloud bill dropped to {v} dollars",
        "how much is the monthly cloud bill",
        ["4200", "3100", "5600", "2800", "6900"],
    ),
    (
        "The support team has {v} people",
        "The support team grew to {v} people",
        "how many people work in support",
        ["three", "five", "seven", "nine", "eleven"],
    ),
    (
        "The newsletter goes out every {v}",
        "The newsletter now goes out every {v}",
        "which day does the newsletter go out",
        _DAYS,
    ),
    (
        "Model training runs on {v} GPUs",
        "Model training was scaled to {v} GPUs",
        "how many GPUs does training use",
        ["8", "16", "32", "64", "128"],
    ),
    (
        "The product lead is {v}",
        "{v} took over as product lead",
        "who leads the product",
        _NAMES,
    ),
    (
        "The logo colour is {v}",
        "The logo colour changed to {v}",
        "what colour is the logo",
        ["teal", "orange", "navy", "crimson", "mustard"],
    ),
    (
        "The test suite takes {v} minutes",
        "The test suite now takes {v} minutes",
        "how long does the test suite take",
        ["12", "18", "25", "40", "55"],
    ),
    (
        "The conference talk is scheduled for {v}",
        "The conference talk was moved to {v}",
        "when is the conference talk",
        ["March 3", "April 14", "May 20", "June 9", "July 1"],
    ),
)

# (often accessed, never accessed, a phrase only the first has); {n} {o} {d} {x} slots
_FREQUENCY: tuple[tuple[str, str, str], ...] = (
    ("{n} is the founder of {o}", "{n} started {o} years ago", "founder of"),
    ("Backups run every night at {t}", "Nightly the backups happen at {t}", "run every night"),
    ("{o} has offices in {c}", "{o} operates an office in {c}", "has offices"),
    ("Cache eviction uses an LRU policy", "The cache evicts least recently used", "LRU policy"),
    ("Invoices are stored in the finance folder", "The finance folder holds invoices", "stored in"),
    (
        "The rate limit is 600 requests per minute",
        "Requests are capped at 600 a minute",
        "rate limit",
    ),
    ("The wiki lives at wiki.internal", "Internal docs are hosted on wiki.internal", "lives at"),
    ("Releases are tagged every {d}", "Every {d} a release tag is cut", "are tagged"),
    (
        "Printing on floor four needs a badge",
        "A badge is required to print upstairs",
        "needs a badge",
    ),
    ("Expense reports are due on the fifth", "Submit expenses by the fifth", "are due"),
    ("The VPN client is WireGuard", "WireGuard is what we use for VPN", "client is"),
    ("Code review needs two approvals", "Two approvals are required to merge", "needs two"),
    ("On-call rotation changes every {d}", "On-call shifts hand over each {d}", "rotation changes"),
    ("Lunch is catered on {d}s", "On {d}s a caterer brings lunch", "is catered"),
)

# (factual, vague, a fragment of the factual one); the first two words carry no slot
_IMPORTANCE: tuple[tuple[str, str, str], ...] = (
    ("Cousin {n} was born on 14 May 1991 in {c}", "someone was born somewhere once", "1991"),
    ("The release 4.7.2 shipped on 3 March 2025", "a release came out at some point", "4.7.2"),
    ("The cluster has 48 nodes with 256 GB RAM each", "the cluster is fairly big", "48 nodes"),
    (
        "The contract with {o} renews on 1 October for 18000 euros",
        "a contract renews eventually",
        "18000",
    ),
    ("Flight TP1947 departs from gate 14 at 07:40", "there is a flight at some point", "TP1947"),
    ("The warehouse at {s} 12 opens at 6:30", "the warehouse opens sometime", "6:30"),
    ("Reception extension for {n} is 4417", "people have phone extensions", "4417"),
    ("The greenhouse sensor peaks at 71 degrees", "a sensor reads some temperature", "71 degrees"),
    ("Meeting room 3B seats 14 people and has a projector", "there are some meeting rooms", "3B"),
    ("The mortgage rate is 3.2 percent fixed until 2029", "the loan has some rate", "3.2 percent"),
    ("Engineer {n} joined {o} in 2019 as a data analyst", "someone joined a company once", "2019"),
    ("Parcel tracking number is LX449120PT", "a parcel is on its way", "LX449120PT"),
    ("The boiler was serviced on 2 February by {o}", "the boiler was looked at", "2 February"),
    ("The city marathon starts at 8:15 on {s}", "there is a race sometime", "8:15"),
)

_FILLERS = (
    "Octopuses have three hearts and blue blood",
    "The Danube flows through ten countries",
    "Honey found in old tombs was still edible",
    "A group of flamingos is called a flamboyance",
    "Venus spins in the opposite direction to most planets",
    "The Eiffel Tower grows taller in summer heat",
    "Bamboo can grow almost a metre in a day",
    "Sharks existed before trees did",
    "The first cookbook in English dates from the fourteenth century",
    "Wombats leave cube-shaped droppings",
    "Lightning is hotter than the surface of the sun",
    "Bananas are botanically berries but strawberries are not",
    "A day on Mercury lasts longer than its year",
    "The Sahara once had lakes and hippos",
    "Sea otters hold hands while they sleep",
    "The shortest war in history lasted under an hour",
    "Cows have best friends and get stressed apart",
    "Sound travels four times faster in water than in air",
    "The longest place name in Wales has 58 letters",
    "Oxford University is older than the Aztec empire",
    "Butterflies taste with their feet",
    "The moon has moonquakes",
    "A teaspoon of neutron star would weigh billions of tonnes",
    "Snails can sleep for three years",
    "The inventor of the frisbee was turned into one after death",
    "Scotland's national animal is the unicorn",
    "Carrots were originally purple",
    "Koalas have fingerprints like humans",
    "The heart of a blue whale is the size of a small car",
    "Tomatoes were once thought to be poisonous in Europe",
    "Hot water can freeze faster than cold water",
    "Crows can recognise human faces",
    "The dot over a lowercase i is called a tittle",
    "Peanuts are legumes, not nuts",
    "Mount Everest rises a few millimetres every year",
    "Jellyfish have existed for over 500 million years",
    "The Great Barrier Reef is visible from orbit",
    "Pineapples take about two years to grow",
    "A bolt of lightning contains enough energy to toast many slices of bread",
    "The world's oldest known tree is over 4800 years old",
    "Polar bear fur is actually transparent",
    "The Amazon produces a large share of the world's oxygen",
    "Some turtles can breathe through their backsides",
    "There are more stars in the universe than grains of sand on Earth",
    "Rubber bands last longer in the fridge",
)


def build(seed: int) -> tuple[list[Memo], list[Case]]:
    """The 100 memories (seeded order) and 30 cases of one seed."""
    rng = random.Random(seed)
    slots = {
        "n": rng.choice(_NAMES),
        "o": rng.choice(_ORGS),
        "c": rng.choice(_CITIES),
        "s": rng.choice(_STREETS),
        "d": rng.choice(_DAYS),
        "t": rng.choice(["01:30", "02:00", "03:15", "23:45"]),
    }
    memos: list[Memo] = []
    cases: list[Case] = []
    for old, new, question, values in rng.sample(_TEMPORAL, 10):
        before, after = rng.sample(list(values), 2)
        memos.append(Memo(old.format(v=before), NOW - timedelta(days=180), 0))
        memos.append(Memo(new.format(v=after), NOW - timedelta(days=1), 0))
        cases.append(Case("temporal", question, after, before))
    for often, never, phrase in rng.sample(_FREQUENCY, 10):
        high, low = often.format(**slots), never.format(**slots)
        memos.append(Memo(high, NOW, 15, 0.5))
        memos.append(Memo(low, NOW, 0, 0.5))
        first_two = " ".join(high.split()[:2])
        cases.append(Case("frequency", f"tell me about {first_two}", phrase, _unique(low, high)))
    for factual, vague, fragment in rng.sample(_IMPORTANCE, 10):
        fact = factual.format(**slots)
        memos.append(Memo(fact, NOW, 0, 0.8))
        memos.append(Memo(vague, NOW, 0, 0.1))
        first_two = " ".join(fact.split()[:2])
        cases.append(
            Case(
                "importance", f"what specifically about {first_two}", fragment, _unique(vague, fact)
            )
        )
    memos += [Memo(text, NOW, 0) for text in rng.sample(_FILLERS, 40)]
    rng.shuffle(memos)
    return memos, cases


def _unique(text: str, other: str) -> str:
    """A word of ``text`` that ``other`` lacks: how to tell the rival apart.

    Words are compared as ``contains`` matches them, on word boundaries, so a word
    the other text holds inside a dotted name ("wiki.internal") is not unique.
    """
    theirs = {w.lower() for w in re.findall(r"\w+", other)}
    words: list[str] = re.findall(r"\w+", text)
    for word in sorted(words, key=len, reverse=True):
        if word.lower() not in theirs:
            return word
    return text


VARIANTS: tuple[tuple[str, int | None], ...] = (
    ("rag", None),
    ("langgraph", None),
    ("llamaindex", None),
    ("nlm", 2),
    ("nlm", 50),
    ("commonplace", 2),
    ("commonplace", 50),
)


def run(embedder: CachedEmbedder, ctx: RunContext) -> dict[str, Any]:
    """top-1 per category for each system variant, averaged over seeds."""
    per_system: dict[str, dict[str, list[float]]] = {}
    for seed in range(ctx.seed, ctx.seed + ctx.sizes.nlm_set_seeds):
        memos, cases = build(seed)
        embedder.prime([m.text for m in memos] + [c.query for c in cases])
        for key, pool in VARIANTS:
            if key not in ctx.specs:
                continue
            options = {"consolidation": False} if key == "nlm" else {}  # as published
            system = ctx.build(key, embedder, pool=pool, **options)
            try:
                system.add_memos(memos)
                per = per_system.setdefault(system.label, {c: [] for c in CATEGORIES})
                for case in cases:
                    found = system.query(case.query, at=NOW, top_k=1, budget=1500)
                    per[case.category].append(float(top1(found.hits, case)))
            finally:
                system.close()
    return {
        "seeds": ctx.sizes.nlm_set_seeds,
        "memories": 100,
        "queries": 30,
        "top1": {label: summarise(per) for label, per in per_system.items()},
    }
