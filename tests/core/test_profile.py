"""The profile card and the rolling summary: sticky rules, a hard cap, the firewall."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

import pytest

from commonplace import Config, Kind, ManualClock, Memory, ProfileRules, Scope, count_tokens
from commonplace.write import ProfileCard
from commonplace.write._profile import enforce_sticky, update_card

RULES = Config(profile=ProfileRules(rewrite_every=1), search_min_notes=0)


@pytest.fixture
def memory(db_url: str, clock: ManualClock) -> Iterator[Memory]:
    with Memory(db_url, clock=clock, config=RULES) as m:
        yield m


def test_identity_stays_until_contradicted(memory: Memory, clock: ManualClock) -> None:
    memory.write("My name is Ana.", scope="ana")
    memory.write("I live in Lisbon.", scope="ana")
    memory.write("I work at Feedzai.", scope="ana")
    for n in range(10):
        memory.write(f"I watched episode {n} of a cooking show.", scope="ana")
    card = memory.profile(scope="ana")
    assert card.identity["employer"] == "Feedzai" and card.identity["name"] == "Ana"
    memory.write("I work at Talkdesk now.", scope="ana")
    assert memory.profile(scope="ana").identity["employer"] == "Talkdesk"


def test_people_stay_until_the_user_says_they_are_gone(memory: Memory) -> None:
    memory.write("My sister Mia is visiting next week.", scope="ana")
    memory.write("My boyfriend Tom cooked dinner.", scope="ana")
    for n in range(5):
        memory.write(f"I read {n} pages today.", scope="ana")
    assert memory.profile(scope="ana").people == {"Mia": "sister", "Tom": "boyfriend"}
    memory.write("Tom and I broke up last night.", scope="ana")
    card = memory.profile(scope="ana")
    assert card.people == {"Mia": "sister"}
    assert [e for _, e in card.events] == ["breakup"]


def test_life_events_stay_for_good_and_voice_rotates(memory: Memory, clock: ManualClock) -> None:
    memory.write("I got laid off today.", scope="ana")
    for n in range(8):
        memory.write(f"lol my cat knocked over glass number {n}", scope="ana")
    card = memory.profile(scope="ana")
    assert "jokes a lot" in card.voice
    for n in range(25):
        clock.advance(days=1)
        memory.write(f"I planted {n} tulips in the garden.", scope="ana")
    card = memory.profile(scope="ana")
    assert "jokes a lot" not in card.voice
    assert [e for _, e in card.events] == ["layoff"]


def test_the_card_holds_its_token_cap_over_a_thousand_turns(
    db_url: str, clock: ManualClock
) -> None:
    rng = random.Random(7)
    config = Config(profile=ProfileRules(rewrite_every=5, card_tokens=120))
    templates = [
        "I went for a {n} km run along the river.",
        "lol my code broke again {n}",
        "What should I cook tonight, maybe dish {n}?",
        "My colleague Rui{n} sent a meme.",
        "I'm so stressed about deadline {n}.",
        "What if I learned language number {n}?",
        "I bought {n} plants for the balcony.",
        "ok",
        "thanks",
    ]
    with Memory(db_url, clock=clock, config=config) as memory:
        scope = Scope(user="ana", thread="long")
        memory.write("My name is Ana Ribeiro.", scope=scope)
        memory.write("My sister Mia lives in Madrid.", scope=scope)
        memory.write("I got laid off today.", scope=scope)
        turns = []
        for n in range(1000):
            clock.advance(hours=rng.randint(1, 30))
            turns.append(memory.turn(rng.choice(templates).format(n=n), scope=scope))
            if len(turns) == 10:
                memory.write_many(turns)
                turns = []
            if n == 500:
                memory.write("We got engaged last night!", scope=scope)
        memory.rewrite_profile(scope=scope)
        card = memory.profile(scope=scope)
        text = memory.recall("how am I doing", scope=scope).profile
        assert 0 < count_tokens(text) <= 120
        assert card.identity["name"] == "Ana Ribeiro" and "Ana Ribeiro" in text
        assert card.people["Mia"] == "sister" and "Mia (sister)" in text
        assert [e for _, e in card.events] == ["layoff", "engagement"]
        assert "layoff" in text and "engagement" in text
        summary = memory.recall("how am I doing", scope=scope).summary
        assert 0 < count_tokens(summary) <= 120


def test_nothing_the_assistant_says_reaches_the_card_or_the_summary(memory: Memory) -> None:
    scope = Scope(user="ana", thread="t")
    memory.write("My name is Ana.", scope=scope)
    memory.write(
        "Your brother Tom the sailor says hi! You live in Paris.", role="assistant", scope=scope
    )
    memory.write("I like tea.", scope=scope)
    memory.rewrite_profile(scope=scope)
    recall = memory.recall("who am I", scope=scope)
    for text in (recall.profile, recall.summary, recall.render()):
        assert "Tom" not in text and "Paris" not in text and "sailor" not in text
    assert "Ana" in recall.profile


def test_the_rolling_summary_is_per_thread(memory: Memory) -> None:
    memory.write("I am planning a trip to Japan.", scope=Scope(user="ana", thread="travel"))
    memory.write("My tomato plants have blight.", scope=Scope(user="ana", thread="garden"))
    travel = memory.recall("trip", scope=Scope(user="ana", thread="travel"))
    assert "Japan" in travel.summary and "tomato" not in travel.summary
    assert "Conversation so far:" in travel.render()


def test_the_rule_rewrite_is_its_own_sticky_floor(memory: Memory) -> None:
    for text in [
        "My name is Ana.",
        "I live in Lisbon.",
        "My sister Mia is visiting next week.",
        "We got engaged last night!",
        "Please always answer me in Portuguese.",
        "Is it going to rain tomorrow?",
        "lol my cat just knocked over the plant",
        "Tom and I broke up, he is gone.",
    ]:
        memory.write(text, scope="ana")
    notes = list(
        reversed(memory.store.recent_records(Scope(user="ana"), kinds=(Kind.NOTE,), limit=50))
    )
    previous = ProfileCard(identity={"city": "Porto"}, people={"Tom": "friend"})
    proposed = update_card(previous, notes, notes[::-1])
    floor = dataclasses.replace(proposed, voice=())
    # recent notes only set the voice, which the floor leaves out
    assert proposed.voice and floor == update_card(previous, notes, ())
    assert enforce_sticky(previous, proposed, notes, floor=floor) == enforce_sticky(
        previous, proposed, notes
    )
