"""Workload 3: self-poisoning, where the assistant invents details the user never said.

Each case is an exchange in which the user mentions something vaguely and the
assistant "helpfully" fills in specifics it made up (a dentist's name, a flight
number, a pet's name), with the user answering only "ok" or moving on. In half the
cases the user states the real fact in another conversation. The invented words
are unique to the assistant's turn, so any of them in a recalled context can only
have come from the assistant. Later the user asks about each thing.

Measured per system: how often the compiled context holds an invented detail
(commonplace never stores assistant turns as memory, so it must be zero), how often
an assistant turn is among the top five hits, and, where the user did state the
fact, whether the real value reached the context.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..embedding import CachedEmbedder
from ..systems.base import Turn
from .common import START, RunContext, contains, mean

NOW = START + timedelta(days=200)

# (user's vague turn, assistant's invention, later question, true statement, slots)
# slots named i* are invented by the assistant; t is the true value the user gives
_CASES: tuple[tuple[str, str, str, str], ...] = (
    (
        "I need to book a dentist appointment soon.",
        "Good idea! Dr. {i1} at the {i2} clinic usually has Thursday slots.",
        "who is my dentist?",
        "My dentist is Dr. {t}.",
    ),
    (
        "My sister is visiting next month.",
        "Lovely! Will she bring {i1} and {i2} again? Kids love a visit.",
        "what are my sister's children called?",
        "My sister's kids are called {t} and Rosa.",
    ),
    (
        "I'm thinking about getting a new laptop.",
        "Your {i1} is from 2019, so an upgrade to a {i2} makes sense.",
        "what laptop do I have right now?",
        "My current laptop is a {t}.",
    ),
    (
        "Work has been stressful lately.",
        "Is {i1} still pushing the {i2} deadline on you?",
        "which project is stressing me out at work?",
        "The project that's stressing me is {t}.",
    ),
    (
        "I should call my mum this weekend.",
        "She'll be glad. Is she still living in {i1} near the {i2} market?",
        "where does my mother live?",
        "My mum lives in {t}.",
    ),
    (
        "Our anniversary is coming up.",
        "How exciting! {i1} would be perfect for dinner again, or {i2}.",
        "where do we usually go for our anniversary dinner?",
        "For our anniversary we always go to {t}.",
    ),
    (
        "My dog has been limping a bit.",
        "Poor {i1}! Dr. {i2} at the vet should look at that paw.",
        "what is my dog's name?",
        "My dog is called {t}.",
    ),
    (
        "I'm flying out next week.",
        "Flight {i1} to {i2}, right? Check in early.",
        "what flight am I taking next week?",
        "I'm on flight {t} next week.",
    ),
    (
        "Gym later, if I can be bothered.",
        "Is {i1} still running the {i2} class? Worth it.",
        "who is my personal trainer at the gym?",
        "My trainer at the gym is {t}.",
    ),
    (
        "I lost my keys again.",
        "Did you check the {i1} drawer? Last time they were under the {i2}.",
        "where do I usually find my lost keys?",
        "My keys always turn up in the {t}.",
    ),
    (
        "My brother got a new job.",
        "Congrats to him! Is he joining {i1} as a {i2}?",
        "where does my brother work now?",
        "My brother now works at {t}.",
    ),
    (
        "I want to plant something on the balcony.",
        "Your {i1} did well last year; maybe add {i2} this spring.",
        "what did I grow on the balcony?",
        "Last year I grew {t} on the balcony.",
    ),
    (
        "Need to renew my car insurance.",
        "{i1} quoted you {i2} euros last time, worth comparing.",
        "which insurer covers my car?",
        "My car insurance is with {t}.",
    ),
    (
        "Planning a weekend away.",
        "The cabin in {i1} you liked has a free weekend; {i2} nights are cheapest.",
        "where is the cabin we like for weekends away?",
        "The cabin we love is in {t}.",
    ),
)
_INVENTED = [
    "Kowalczyk", "Brannigan", "Pemberton", "Zanetti", "Okonkwo", "Haverford", "Quimby",
    "Rasmussen", "Delacroix", "Abernathy", "Tremaine", "Vasquez", "Ellery", "Winslow",
    "Bellweather", "Fairbanks", "Ashdown", "Marchetti", "Thistlewood", "Caldera",
    "Nightingale", "Everhart", "Lindgren", "Sokolova", "Pettigrew", "Montague",
    "Halvorsen", "Quenneville", "Beaumarchais", "Ostrowski", "Fitzwilliam", "Yarborough",
]  # fmt: skip
_TRUE = [
    "Almeida", "Fernanda", "Pedrosa", "Guimaraes", "Sintra", "Lusitania", "Tavares", "Mondego",
    "Figueira", "Estrela", "Ribeira", "Barroca", "Monsanto", "Ericeira",
]  # fmt: skip
_CHATTER = (
    ("What's a good stretch for a stiff neck?", "Slow chin tucks, ten at a time."),
    ("It's so hot today.", "Stay hydrated and keep the blinds down."),
    ("Recommend me a podcast?", "A history podcast is great for commutes."),
    ("haha yes", "😄"),
    ("How long do I boil an egg?", "About seven minutes for a jammy yolk."),
    ("I finished the puzzle finally.", "Well done, that's satisfying!"),
    ("ok", "👍"),
    ("Can you explain compound interest?", "Interest earned on interest, growing over time."),
)


#: how many distinct cases a transcript can hold
MAX_CASES = len(_CASES)


@dataclass(frozen=True, slots=True)
class PoisonCase:
    question: str
    invented: tuple[str, ...]
    truth: str | None


def build(seed: int, *, cases: int, exchanges: int) -> tuple[list[Turn], list[PoisonCase]]:
    rng = random.Random(seed)
    invented = rng.sample(_INVENTED, len(_INVENTED))
    truths = rng.sample(_TRUE, len(_TRUE))
    events: list[tuple[float, str, str]] = []
    out: list[PoisonCase] = []
    for n, (vague, invention, question, statement) in enumerate(rng.sample(_CASES, cases)):
        i1, i2 = invented[2 * n], invented[2 * n + 1]
        day = rng.uniform(0, 150)
        events.append((day, vague, invention.format(i1=i1, i2=i2)))
        events.append((day + 0.001, "ok", "Anything else I can help with?"))
        truth = None
        if n % 2 == 0:
            truth = truths[n // 2]
            events.append((rng.uniform(0, 190), statement.format(t=truth), "Thanks, noted."))
        out.append(PoisonCase(question, (i1, i2), truth))
    for _ in range(exchanges):
        said, reply = _CHATTER[rng.randrange(len(_CHATTER))]
        events.append((rng.uniform(0, 190), said, reply))
    events.sort(key=lambda e: e[0])
    turns: list[Turn] = []
    for n, (day, said, reply) in enumerate(events):
        at = START + timedelta(days=day)
        turns.append(Turn("user", said, at, f"p{seed}-{n}-u"))
        turns.append(Turn("assistant", reply, at + timedelta(seconds=30), f"p{seed}-{n}-a"))
    return turns, out


def run(embedder: CachedEmbedder, ctx: RunContext) -> dict[str, Any]:
    per: dict[str, dict[str, list[bool]]] = {}
    n_cases = n_truth = n_turns = 0
    for seed in range(ctx.seed, ctx.seed + ctx.sizes.history_seeds):
        turns, cases = build(
            seed,
            cases=min(ctx.sizes.poisoning_cases, MAX_CASES),
            exchanges=ctx.sizes.poisoning_exchanges,
        )
        n_cases += len(cases)
        n_truth += sum(c.truth is not None for c in cases)
        n_turns += len(turns)
        _score(embedder, ctx, turns, cases, per)
    return {
        "seeds": ctx.sizes.history_seeds,
        "cases": n_cases,
        "with_truth": n_truth,
        "turns": n_turns,
        "systems": {
            label: {metric: mean(values) for metric, values in metrics.items()}
            for label, metrics in per.items()
        },
    }


def _score(
    embedder: CachedEmbedder,
    ctx: RunContext,
    turns: list[Turn],
    cases: list[PoisonCase],
    per: dict[str, dict[str, list[bool]]],
) -> None:
    assistant = [t.text for t in turns if t.role == "assistant" and len(t.text) > 30]
    embedder.prime([t.text for t in turns] + [c.question for c in cases])
    for key in ("rag", "langgraph", "llamaindex", "nlm", "commonplace"):
        if key not in ctx.specs:
            continue
        system = ctx.build(key, embedder)
        try:
            for start in range(0, len(turns), 2):
                system.add(turns[start : start + 2])
            metrics = per.setdefault(
                system.label,
                {"poisoned_context": [], "assistant_in_top5": [], "truth_in_context": []},
            )
            poisoned = metrics["poisoned_context"]
            in_top5 = metrics["assistant_in_top5"]
            evidence = metrics["truth_in_context"]
            for case in cases:
                found = system.query(case.question, at=NOW, top_k=5, budget=1500)
                poisoned.append(any(contains(found.context, w) for w in case.invented))
                in_top5.append(any(a in hit for hit in found.hits[:5] for a in assistant))
                if case.truth is not None:
                    evidence.append(contains(found.context, case.truth))
        finally:
            system.close()
