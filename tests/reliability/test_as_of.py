"""``recall(as_of=D)`` shows memory as it stood at D, by every path a record can arrive.

Hypothesis writes histories built to link and supersede (a name shared by many notes, so
entity and session links form; a fact whose value changes, so older notes are superseded;
updates in words), each turn at its own time, then recalls at a random past instant.
Whatever the search, the link hop, the successor chain or the hot and recent sections put
in the context, every record shown must have held at D: written by then and not yet
superseded or invalidated then.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st
from reliability_support import BUSY, SIZES, profile, tally

from commonplace import Memory

START = datetime(2026, 2, 2, 9, 0, tzinfo=timezone.utc)
TEXTS = (
    "I live in Lisbon.",
    "I live in Porto.",
    "We just moved to Braga.",
    "My sister Mia is a nurse.",
    "Mia and I went hiking in Sintra.",
    "Mia called me about the Sintra trip.",
    "Mia is moving to Berlin for work.",
    "I am vegetarian.",
    "I'm not vegetarian anymore, I eat fish now.",
    "My manager is Rui.",
    "Tomas is my new manager.",
    "I work at Initech with Mia.",
    "I used to work at Initech, now I'm at Globex.",
)
QUERIES = ("where do I live", "Mia", "who is my manager", "what do I eat", "Sintra", "work")


@given(
    history=st.lists(
        st.tuples(st.sampled_from(TEXTS), st.integers(1, 600)), min_size=2, max_size=18
    ),
    at=st.integers(0, 100),
    query=st.sampled_from(QUERIES),
    thread=st.sampled_from([None, "t1"]),
)
@profile(SIZES.fuzz_examples // 2)
def test_nothing_shown_as_of_a_past_instant_was_not_true_then(
    history: list[tuple[str, int]], at: int, query: str, thread: str | None
) -> None:
    scope = {"user": "ana", **({"thread": thread} if thread else {})}
    with Memory(":memory:", config=BUSY) as memory:
        when = START
        for text, minutes in history:
            when += timedelta(minutes=minutes)
            memory.write(text, scope=scope, at=when)
        memory.sleep(scope=scope, at=when + timedelta(days=1))
        past = START + (when - START) * at / 100
        found = memory.recall(query, scope=scope, as_of=past, at=when + timedelta(days=2))
        shown = set(found.included)
        for item in found.items:
            if item.record.id in shown:
                assert item.record.valid_at(past), (past, item.section, item.record)
                tally("as_of: shown records checked")
        assert all(r.valid_at(past) for r in found.recent), past
