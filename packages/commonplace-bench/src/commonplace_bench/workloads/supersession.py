"""Workload 2: facts that change over simulated months, asked now and "as of" a date.

A user mentions facts about their life (city, employer, phone, codes, people, a
server's port ...) and changes each of them two or three times over a year, in
varied everyday phrasing, among small talk; the assistant answers every turn and
sometimes repeats the value it was told ("Porto, nice!"), as assistants do. At the
end each fact is asked in two ways:

* current: the first retrieved record that names any value of the fact must name
  the current value, and only it;
* as of a date between two changes: the same rule with the value that held then.
  Systems with no way to ask "as of" are reported as n/a; plain RAG and LangGraph
  filter on the turns' timestamps (``at <= date``), which is what their users
  would write.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..embedding import CachedEmbedder
from ..systems.base import System, Turn
from .common import START, RunContext, contains, leaks, mean

NOW = START + timedelta(days=380)


@dataclass(frozen=True, slots=True)
class Fact:
    statements: tuple[str, ...]  # the first states it, the others change it
    values: tuple[str, ...]
    question: str


_FACTS: tuple[Fact, ...] = (
    Fact(
        ("I live in {v}.", "We just moved to {v}!", "Finally settled in {v}, boxes everywhere."),
        ("Lisbon", "Porto", "Braga", "Coimbra", "Faro"),
        "which city am I living in?",
    ),
    Fact(
        ("I work at {v}.", "I just started at {v}.", "Got a job at {v}, starting Monday!"),
        ("Feedzai", "Talkdesk", "Unbabel", "OutSystems", "Sword Health"),
        "who is my employer?",
    ),
    Fact(
        ("My phone is a {v}.", "Switched to a {v} this week.", "New phone: a {v}."),
        ("Pixel 8", "iPhone 15", "Galaxy S24", "Fairphone 5"),
        "what mobile do I carry around?",
    ),
    Fact(
        ("My gym locker code is {v}.", "The gym changed my locker code to {v}."),
        ("4471", "5512", "9921", "1034", "7788"),
        "what opens my locker at the gym?",
    ),
    Fact(
        ("The wifi password is {v}.", "Changed the wifi password to {v}."),
        ("sunflower42", "bluegate77", "otter2024", "mangotree9"),
        "how do guests get on our home network?",
    ),
    Fact(
        ("My manager is {v}.", "{v} is my new manager.", "Reorg again, now I report to {v}."),
        ("Helena", "Duarte", "Beatriz", "Goncalo", "Carolina"),
        "who is my boss?",
    ),
    Fact(
        ("Our standup is at {v}.", "Standup moved to {v}.", "Standup is at {v} from now on."),
        ("9:00", "9:30", "10:00", "10:45"),
        "when does the daily team meeting start?",
    ),
    Fact(
        ("I drive a {v}.", "Sold the old car, I drive a {v} now."),
        ("Renault Clio", "Toyota Yaris", "Tesla Model 3", "Volkswagen Golf"),
        "what vehicle do I own?",
    ),
    Fact(
        ("The staging server runs on port {v}.", "Staging moved to port {v}."),
        ("8123", "8456", "9031", "8800", "9443"),
        "which port is the staging box on?",
    ),
    Fact(
        ("My usual coffee is a {v}.", "These days I order a {v}."),
        ("flat white", "cortado", "oat latte", "double espresso"),
        "what do I get at the café?",
    ),
    Fact(
        ("My dentist is Dr. {v}.", "Switched dentists, now seeing Dr. {v}."),
        ("Okafor", "Lindqvist", "Moreau", "Tanaka", "Castro"),
        "who looks after my teeth?",
    ),
    Fact(
        ("Our book club is reading {v}.", "Book club picked {v} this month."),
        ("Middlemarch", "Kindred", "Stoner", "Solaris", "Persuasion"),
        "what is the reading group on right now?",
    ),
    Fact(
        ("I run {v} a week.", "Upped my running to {v} a week."),
        ("12 km", "18 km", "25 km", "32 km"),
        "how much jogging do I do weekly?",
    ),
    Fact(
        ("Our landlord is {v}.", "The flat was sold, our landlord is {v} now."),
        ("Mr Albuquerque", "Mrs Fontes", "Mr Varga", "Ms Nilsen"),
        "who owns the apartment we rent?",
    ),
    Fact(
        ("I'm on the {v} team.", "Moved to the {v} team today."),
        ("Payments", "Search", "Growth", "Infrastructure"),
        "which group do I belong to at work?",
    ),
    Fact(
        ("I bank with {v}.", "Moved my account to {v}."),
        ("Millennium", "Revolut", "ActivoBank", "Santander"),
        "where do I keep my money?",
    ),
)
_ECHO = ("{v}, nice!", "Got it: {v}.", "Noted, {v}.", "{v}? Good to know.")
_CHATTER = (
    ("Had a long day, going to cook pasta.", "Pasta sounds perfect after a long day."),
    ("It rained all afternoon here.", "A good excuse to stay in with a book."),
    ("Any idea for a weekend hike?", "A coastal trail is lovely this time of year."),
    ("I watched a documentary about octopuses.", "They are remarkably clever animals."),
    ("My back hurts from the new chair.", "Try raising the screen to eye level."),
    ("Thinking of learning to paint.", "Watercolours are a forgiving place to start."),
    ("lol my cat just knocked over a plant", "Cats do love a bit of chaos."),
    ("What's a quick dinner with eggs?", "A frittata takes about fifteen minutes."),
    ("Feeling a bit tired today.", "Maybe an early night would help."),
    ("ok thanks", "You're welcome!"),
)


@dataclass(frozen=True, slots=True)
class Question:
    fact: int
    query: str
    expected: str
    values: tuple[str, ...]
    as_of: datetime | None = None


def build(seed: int, *, facts: int, exchanges: int) -> tuple[list[Turn], list[Question]]:
    rng = random.Random(seed)
    chosen = rng.sample(range(len(_FACTS)), min(facts, len(_FACTS)))
    events: list[tuple[datetime, str, str]] = []
    questions: list[Question] = []
    for index in chosen:
        fact = _FACTS[index]
        changes = rng.randint(2, min(3, len(fact.statements)))
        values = rng.sample(fact.values, changes + 1)
        days = sorted(rng.sample(range(5, 360), changes + 1))
        history: list[tuple[datetime, str]] = []
        for n, (value, offset) in enumerate(zip(values, days)):
            at = START + timedelta(days=offset, hours=rng.randint(8, 20))
            statement = fact.statements[min(n, len(fact.statements) - 1)]
            if n > 1 and len(fact.statements) > 2:
                statement = rng.choice(fact.statements[1:])
            events.append((at, statement.format(v=value), rng.choice(_ECHO).format(v=value)))
            history.append((at, value))
        assert not any(leaks(fact.question, v) for v in values), fact.question
        questions.append(Question(index, fact.question, values[-1], tuple(values)))
        for _ in range(2):
            n = rng.randrange(len(history) - 1)
            start, end = history[n][0], history[n + 1][0]
            when = start + (end - start) * rng.uniform(0.2, 0.8)
            questions.append(Question(index, fact.question, history[n][1], tuple(values), when))
    for _ in range(exchanges):
        said, reply = _CHATTER[rng.randrange(len(_CHATTER))]
        at = START + timedelta(days=rng.uniform(0, 370))
        events.append((at, said, reply))
    events.sort(key=lambda e: e[0])
    turns: list[Turn] = []
    for n, (at, said, reply) in enumerate(events):
        turns.append(Turn("user", said, at, f"s{seed}-{n}-u"))
        turns.append(Turn("assistant", reply, at + timedelta(seconds=20), f"s{seed}-{n}-a"))
    return turns, questions


def judge(hits: tuple[str, ...], question: Question) -> str:
    """``right``, ``stale`` (another value came first) or ``missing`` (no value named)."""
    for hit in hits:
        named = [v for v in question.values if contains(hit, v)]
        if named:
            return "right" if named == [question.expected] else "stale"
    return "missing"


def run(embedder: CachedEmbedder, ctx: RunContext) -> dict[str, Any]:
    turns, questions = build(
        ctx.seed, facts=ctx.sizes.supersession_facts, exchanges=ctx.sizes.supersession_exchanges
    )
    embedder.prime([t.text for t in turns] + [q.query for q in questions])
    out: dict[str, dict[str, Any]] = {}
    for key in ("rag", "langgraph", "llamaindex", "nlm", "commonplace"):
        if key not in ctx.specs:
            continue
        system = ctx.build(key, embedder)
        try:
            _ingest(system, turns)
            verdicts: dict[str, list[str]] = {"current": [], "as_of": []}
            for q in questions:
                kind = "current" if q.as_of is None else "as_of"
                if q.as_of is not None and not system.supports_as_of:
                    continue
                found = system.query(q.query, at=NOW, top_k=5, budget=1500, as_of=q.as_of)
                verdicts[kind].append(judge(found.hits, q))
            out[system.label] = {
                "current": mean(v == "right" for v in verdicts["current"]),
                "current_stale": mean(v == "stale" for v in verdicts["current"]),
                "as_of": (
                    mean(v == "right" for v in verdicts["as_of"]) if system.supports_as_of else None
                ),
                "as_of_stale": (
                    mean(v == "stale" for v in verdicts["as_of"]) if system.supports_as_of else None
                ),
            }
        finally:
            system.close()
    return {
        "facts": ctx.sizes.supersession_facts,
        "turns": len(turns),
        "current_questions": sum(q.as_of is None for q in questions),
        "as_of_questions": sum(q.as_of is not None for q in questions),
        "systems": out,
    }


def _ingest(system: System, turns: list[Turn]) -> None:
    for start in range(0, len(turns), 2):  # one exchange at a time, as a chat writes them
        system.add(turns[start : start + 2])
