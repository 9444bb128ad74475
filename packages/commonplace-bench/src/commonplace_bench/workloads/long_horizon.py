"""Workload 4: a seeded persona chatting for months, with noise, jokes and life events.

The persona (name, city, job, partner, sister, friends, a dog) talks for ``turns``
user turns over about six simulated months, each answered by the assistant: noise
("ok", "lol"), jokes and hypotheticals, questions for the assistant (answered at
length), small talk, news about the people in their life, a few major life events,
and planted facts (a passport's last digits, a dentist, a wifi password ...), some
of which change later. Every system runs the same conversation in lockstep, turn by
turn, the way an agent uses memory: before answering, it recalls with the user's
message (every ``recall_every``-th turn, to bound the run) at the default budget of
1,500 tokens; after answering, it writes the exchange. commonplace's scheduled
``sleep`` runs every ``sleep_every`` user turns.

Reported: evidence recall of the planted facts' current values at several token
budgets (the context must contain the value), the compiled context's size per turn,
the profile card's size over time, embedding and LLM calls per turn, store size,
and time per turn as a ratio to plain RAG measured in the same run.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..embedding import CachedEmbedder
from ..systems.base import System, Turn
from .common import START, RunContext, contains, leaks

BUDGETS = (250, 500, 1000, 1500)
DEFAULT_BUDGET = 1500
DAYS = 180
TOP_K = 10

_NAMES = ["Ana", "Joana", "Rita", "Marta", "Ines", "Sara"]
_PARTNERS = ["Miguel", "Tomas", "Andre", "Nuno", "Pedro"]
_SISTERS = ["Clara", "Beatriz", "Leonor", "Mariana"]
_FRIENDS = ["Rui", "Sofia", "Diogo", "Catarina", "Hugo", "Lara", "Vasco"]
_DOGS = ["Biscuit", "Pepper", "Mochi", "Tofu", "Olive"]
_CITIES = ["Lisbon", "Porto", "Braga", "Aveiro", "Coimbra"]
_EMPLOYERS = ["Feedzai", "Talkdesk", "Unbabel", "OutSystems"]


@dataclass(frozen=True, slots=True)
class Planted:
    statements: tuple[str, ...]  # first statement, then the ones that change it
    values: tuple[str, ...]
    question: str


_PLANTED: tuple[Planted, ...] = (
    Planted(
        ("My passport number ends in {v}.",),
        ("4471", "9028", "3316"),
        "what are the last digits on my travel document?",
    ),
    Planted(
        ("My gym locker code is {v}.", "The gym gave me a new locker code: {v}."),
        ("5512", "7734", "2290"),
        "what opens my locker at the gym?",
    ),
    Planted(
        ("My dentist is Dr. {v}.", "Switched dentists, I see Dr. {v} now."),
        ("Okafor", "Lindqvist", "Moreau"),
        "who looks after my teeth?",
    ),
    Planted(
        ("The wifi password at home is {v}.", "Changed the home wifi password to {v}."),
        ("sunflower42", "otter2024", "bluegate77"),
        "how do guests get on our home network?",
    ),
    Planted(
        ("I'm allergic to {v}.",),
        ("penicillin", "shellfish", "latex"),
        "is there anything I react badly to?",
    ),
    Planted(
        ("My blood type is {v}.",),
        ("O negative", "AB positive", "B negative"),
        "which blood group am I?",
    ),
    Planted(
        ("Our anniversary is on {v}.",),
        ("June 14", "March 3", "October 21"),
        "when do we celebrate being together?",
    ),
    Planted(
        ("My car's plate is {v}.",),
        ("42-XK-17", "88-RT-03", "15-LM-60"),
        "what is the registration of my vehicle?",
    ),
    Planted(
        ("My manager is {v}.", "{v} is my new manager after the reorg."),
        ("Helena", "Duarte", "Carolina"),
        "who do I report to?",
    ),
    Planted(
        ("My bike lock combination is {v}.",),
        ("318", "905", "642"),
        "what numbers open the lock on my bicycle?",
    ),
    Planted(
        ("My health insurance number is {v}.",),
        ("HX-2291", "QT-8810", "MV-4402"),
        "what reference do I quote for medical cover?",
    ),
    Planted(
        ("Spin class is every {v}.", "Spin class moved to {v}."),
        ("Tuesday at 7pm", "Thursday at 6pm", "Saturday at 9am"),
        "when is my weekly cycling workout?",
    ),
    Planted(
        ("My office is on the {v} floor.",),
        ("fourth", "ninth", "eleventh"),
        "which level of the building do I work on?",
    ),
    Planted(
        ("Our favourite restaurant is {v}.",),
        ("Cantinho do Avillez", "Taberna da Rua", "O Velho Eurico"),
        "where do we usually go out to eat?",
    ),
    Planted(
        ("Our landlord is {v}.",),
        ("Mr Albuquerque", "Mrs Fontes", "Mr Varga"),
        "who owns the flat we rent?",
    ),
    Planted(
        ("My therapist is {v}.",),
        ("Dr Ramalho", "Dr Pires", "Dr Sousa"),
        "who do I see for counselling?",
    ),
    Planted(
        ("The project I lead is codenamed {v}.", "The project got renamed to {v}."),
        ("Bluebird", "Kestrel", "Juniper"),
        "what is the internal name of the thing I run at work?",
    ),
    Planted(
        ("I'm learning {v} on Tuesdays.",),
        ("Japanese", "Italian", "Greek"),
        "which foreign language am I studying?",
    ),
    Planted(
        ("My usual coffee is a {v}.", "I've switched to a {v} lately."),
        ("flat white", "cortado", "oat latte"),
        "what do I order at the café?",
    ),
    Planted(("My mum lives in {v}.",), ("Viseu", "Tomar", "Evora"), "where is my mother's home?"),
    Planted(
        ("I'm training for the {v} half marathon.",),
        ("Lisbon", "Porto", "Madeira"),
        "which race am I preparing for?",
    ),
    Planted(
        ("I bank with {v}.", "Moved my account to {v}."),
        ("Millennium", "Revolut", "ActivoBank"),
        "where do I keep my money?",
    ),
    Planted(
        ("My phone is a {v}.", "Got a new phone, a {v}."),
        ("Pixel 8", "iPhone 15", "Fairphone 5"),
        "what mobile do I carry?",
    ),
    Planted(
        ("Our book club is reading {v}.", "Book club switched to {v}."),
        ("Middlemarch", "Kindred", "Stoner"),
        "what is the reading group on?",
    ),
    Planted(
        ("My shoe size is {v}.",), ("38", "41", "44"), "how big are my feet, for buying trainers?"
    ),
    Planted(
        ("The vet we use is {v}.",),
        ("Clinica Sao Bento", "VetPorto", "Patas e Companhia"),
        "where do we take the dog when she is sick?",
    ),
    Planted(
        ("My flight to Berlin is {v}.",),
        ("TP574", "LH1169", "FR2031"),
        "what is the number of my upcoming flight to Germany?",
    ),
    Planted(
        ("My library card number is {v}.",),
        ("20331", "58812", "77409"),
        "what do I show to borrow books?",
    ),
    Planted(
        ("My sister's birthday is {v}.",),
        ("May 2", "August 19", "December 7"),
        "when should I send my sibling a card?",
    ),
    Planted(
        ("My parking spot at work is {v}.",),
        ("B-14", "C-02", "A-31"),
        "where do I leave the car at the office?",
    ),
)

_NOISE = ["ok", "lol", "thanks!", "hmm", "wait", "haha", "yep", "👍", "sure", "ok cool", "nice"]
_JOKES = [
    "lol {dog} would make a better project manager than my boss",
    "if procrastination were a sport I'd have a gold medal by now",
    "my plants have a better social life than me haha",
    "I told {friend} I'd stop buying books. I lied, obviously",
    "pretty sure my coffee machine judges me every morning lol",
    "{partner} says I snore like a tractor, rude but fair",
]
_HYPOTHETICALS = [
    "if I won the lottery I'd buy a boat and sail to {place}",
    "imagine if I quit and opened a bakery in {place}",
    "what if we adopted a second dog, {partner} would lose it",
    "maybe one day I'll learn to surf properly",
]
_QUESTIONS = [
    (
        "what's a good recipe for {dish}?",
        (
            "Here's a simple one: sauté onion and garlic, add the main ingredients,"
            " season well and simmer for about twenty minutes, then finish with "
            "fresh herbs and a squeeze of lemon. Serve it with crusty bread."
        ),
    ),
    (
        "how long should I boil an egg?",
        (
            "For a soft yolk about six minutes, for a jammy one seven, and nine to "
            "ten for hard-boiled; start timing once the water is at a rolling boil "
            "and cool them in cold water afterwards."
        ),
    ),
    (
        "can you explain how index funds work?",
        (
            "An index fund buys every stock in an index, so it tracks the market "
            "instead of trying to beat it; fees are low because there is no stock "
            "picking, and over long periods that usually beats most active funds."
        ),
    ),
    (
        "any tips for sleeping better?",
        (
            "Keep a regular schedule, dim the lights an hour before bed, avoid "
            "screens late, keep the room cool and dark, and limit caffeine after "
            "lunch. A short wind-down routine helps too."
        ),
    ),
    (
        "how do I get wine out of a carpet?",
        (
            "Blot, don't rub; pour a little cold water, blot again, then use a "
            "paste of baking soda and water, let it dry and vacuum. A dab of dish "
            "soap in warm water works on what remains."
        ),
    ),
    (
        "what's a good stretch for lower back pain?",
        (
            "Try the cat-cow stretch and child's pose, holding each for thirty "
            "seconds, and knee-to-chest stretches lying down. Move slowly and stop "
            "if anything feels sharp."
        ),
    ),
]
_DISHES = ["lentil soup", "shakshuka", "risotto", "bacalhau", "curry", "gazpacho"]
_SMALL_TALK = [
    "had {food} for lunch, not bad",
    "it's raining again in {city}",
    "{friend} and I went for a walk along the river after work",
    "watched a documentary about {topic} last night",
    "work was busy today, lots of meetings",
    "took {dog} to the park, she chased pigeons for an hour",
    "the tram was late again this morning",
    "finally finished that puzzle, 1000 pieces",
    "tried a new café near the office, decent pastries",
    "cleaned the whole flat today, feeling productive",
]
_FOODS = ["a bifana", "sushi", "soup", "a salad", "leftover pizza", "pasta"]
_TOPICS = ["octopuses", "the deep sea", "volcanoes", "ancient Rome", "bees"]
_PEOPLE = [
    "{sister} called, she's thinking about changing jobs",
    "{partner} cooked dinner tonight, it was great",
    "{friend} is moving flats next week, I said I'd help",
    "{sister} sent photos of her new kitchen",
    "{friend} and I have tickets for a concert in the spring",
    "{partner}'s parents are visiting this weekend",
]
_EVENTS = [
    "Big news: {partner} and I got engaged!",
    "I got promoted to team lead today.",
    "My grandfather passed away this morning.",
    "{sister} had a baby girl, I'm an aunt!",
    "We're moving to {place2} next month.",
]
_REPLIES = [
    "That sounds nice!",
    "Good to hear.",
    "Ha, fair enough.",
    "Thanks for telling me.",
    "Sounds like a full day.",
    "I hope the rest of the week is calmer.",
]
_EVENT_REPLIES = [
    "Congratulations, that's wonderful news!",
    "I'm so sorry for your loss. Take care of yourself.",
    "What a big step, good luck with everything!",
]


@dataclass(frozen=True, slots=True)
class Horizon:
    turns: list[Turn]  # user and assistant, alternating
    facts: list[tuple[str, str, tuple[str, ...]]]  # (question, current value, all values)


def build(seed: int, *, turns: int) -> Horizon:
    rng = random.Random(seed)
    persona = {
        "name": rng.choice(_NAMES),
        "partner": rng.choice(_PARTNERS),
        "sister": rng.choice(_SISTERS),
        "friend": rng.choice(_FRIENDS),
        "dog": rng.choice(_DOGS),
        "city": rng.choice(_CITIES),
        "employer": rng.choice(_EMPLOYERS),
    }
    n_facts = max(3, min(len(_PLANTED), turns // 35))
    planted = rng.sample(_PLANTED, n_facts)
    schedule: dict[int, tuple[str, str]] = {}  # turn -> (user text, assistant reply)
    facts = []
    free = list(range(5, turns))
    rng.shuffle(free)

    def slot(low: float, high: float) -> int:
        for i, candidate in enumerate(free):
            if low * turns <= candidate < high * turns:
                return free.pop(i)
        return free.pop()

    for fact in planted:
        changes = 1 if len(fact.statements) > 1 and rng.random() < 0.5 else 0
        values = rng.sample(fact.values, changes + 1)
        first = slot(0.0, 0.6)
        schedule[first] = (fact.statements[0].format(v=values[0]), "Got it, I'll remember that.")
        if changes:
            later = slot(first / turns + 0.1, 0.95)
            schedule[later] = (fact.statements[1].format(v=values[1]), "Noted, thanks.")
        assert not any(leaks(fact.question, v) for v in values), fact.question
        facts.append((fact.question, values[-1], tuple(values)))
    intro = (
        f"Hi! I'm {persona['name']}, I live in {persona['city']} and work at {persona['employer']}."
    )
    schedule[0] = (intro, f"Nice to meet you, {persona['name']}!")
    for n, event in enumerate(rng.sample(_EVENTS, min(len(_EVENTS), max(1, turns // 200)))):
        when = slot(0.1 + 0.8 * n / 5, 0.3 + 0.8 * n / 5)
        place2 = rng.choice([c for c in _CITIES if c != persona["city"]])
        schedule[when] = (event.format(place2=place2, **persona), rng.choice(_EVENT_REPLIES))
    out: list[Turn] = []
    step = timedelta(days=DAYS) / max(1, turns)
    for n in range(turns):
        at = START + step * n + timedelta(minutes=rng.randint(0, 30))
        said, reply = schedule.get(n) or _chatter(rng, persona)
        out.append(Turn("user", said, at, f"lh{seed}-{n}-u"))
        out.append(Turn("assistant", reply, at + timedelta(seconds=40), f"lh{seed}-{n}-a"))
    return Horizon(out, facts)


def _chatter(rng: random.Random, persona: dict[str, str]) -> tuple[str, str]:
    slots = {
        **persona,
        "place": rng.choice(["Madeira", "the Azores", "Crete", "Norway"]),
        "dish": rng.choice(_DISHES),
        "food": rng.choice(_FOODS),
        "topic": rng.choice(_TOPICS),
    }
    roll = rng.random()
    if roll < 0.15:
        return rng.choice(_NOISE), rng.choice(["😊", "Anytime!", "Sure thing.", "Ha!"])
    if roll < 0.22:
        return rng.choice(_JOKES).format(**slots), "Ha! That made me smile."
    if roll < 0.27:
        return rng.choice(_HYPOTHETICALS).format(**slots), "That would be quite something!"
    if roll < 0.40:
        question, answer = rng.choice(_QUESTIONS)
        return question.format(**slots), answer
    if roll < 0.80:
        return rng.choice(_SMALL_TALK).format(**slots), rng.choice(_REPLIES)
    return rng.choice(_PEOPLE).format(**slots), rng.choice(_REPLIES)


def run(embedder: CachedEmbedder, ctx: RunContext) -> dict[str, Any]:
    sizes = ctx.sizes
    horizon = build(ctx.seed, turns=sizes.horizon_turns)
    embedder.prime([t.text for t in horizon.turns] + [q for q, _, _ in horizon.facts])
    systems: list[System] = []
    for key in ("rag", "langgraph", "llamaindex", "nlm", "commonplace"):
        if key in ctx.specs:
            systems.append(ctx.build(key, embedder))
    try:
        return _run(horizon, systems, sizes.horizon_recall_every, sizes.horizon_sleep_every)
    finally:
        for system in systems:
            system.close()


def _run(
    horizon: Horizon, systems: Sequence[System], recall_every: int, sleep_every: int
) -> dict[str, Any]:
    seconds = {s.label: 0.0 for s in systems}
    tokens: dict[str, list[tuple[int, int]]] = {s.label: [] for s in systems}
    profile: list[tuple[int, int]] = []
    user_turns = len(horizon.turns) // 2
    for n in range(user_turns):
        user, reply = horizon.turns[2 * n], horizon.turns[2 * n + 1]
        for system in systems:  # lockstep: the same load hits every system alike
            start = time.perf_counter()
            if n % recall_every == 0 and n > 0:
                found = system.query(user.text, at=user.at, top_k=TOP_K, budget=DEFAULT_BUDGET)
                tokens[system.label].append((n, found.tokens))
                if found.profile_tokens is not None:
                    profile.append((n, found.profile_tokens))
            system.add([user, reply])
            if (n + 1) % sleep_every == 0:
                system.maintain(at=reply.at)
            seconds[system.label] += time.perf_counter() - start
    counts = {s.label: s.embed_counts() for s in systems}  # before the final questions
    end = horizon.turns[-1].at + timedelta(hours=1)
    recalled: dict[str, dict[str, float]] = {s.label: {} for s in systems}
    stale: dict[str, float] = {}
    for system in systems:
        for budget in BUDGETS:
            hits = 0
            stale_hits = 0
            for question, current, values in horizon.facts:
                found = system.query(question, at=end, top_k=TOP_K, budget=budget)
                hits += contains(found.context, current)
                stale_hits += any(contains(found.context, v) for v in values if v != current)
            recalled[system.label][str(budget)] = hits / len(horizon.facts)
            if budget == DEFAULT_BUDGET:
                stale[system.label] = stale_hits / len(horizon.facts)
    base = seconds.get("plain RAG") or None
    out: dict[str, Any] = {
        "user_turns": user_turns,
        "planted": len(horizon.facts),
        "changed": sum(len(v) > 1 for _, _, v in horizon.facts),
        "recall_every": recall_every,
        "budgets": list(BUDGETS),
        "systems": {},
        "profile_series": profile,
    }
    for system in systems:
        series = [t for _, t in tokens[system.label]] or [0]
        calls, texts = counts[system.label]
        out["systems"][system.label] = {
            "evidence_recall": recalled[system.label],
            "stale_in_context": stale[system.label],
            "tokens_median": statistics.median(series),
            "tokens_p95": sorted(series)[int(0.95 * (len(series) - 1))],
            "tokens_series": tokens[system.label],
            "embed_calls_per_turn": calls / user_turns,
            "embed_texts_per_turn": texts / user_turns,
            "llm_calls_per_turn": system.llm_calls / user_turns,
            "ms_per_turn": 1000 * seconds[system.label] / user_turns,
            "time_vs_rag": seconds[system.label] / base if base else None,
            "disk_mib": system.disk_bytes() / 2**20,
        }
    return out
