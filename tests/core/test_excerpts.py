"""Episodes stay the evidence: what a note dropped is quoted from its turn when asked for."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone

import pytest

from commonplace import Config, HashingEmbedder, ManualClock, Memory
from commonplace._records import Episode, Kind, Record, Role, Tags
from commonplace._scope import Scope
from commonplace.read._excerpts import MAX_EXCERPT_WORDS, excerpts_for

RENOVATION = (
    "I finally finished the kitchen renovation after three months of work. "
    "The new cabinets are oak and the counters are grey granite. "
    "We also replaced the old boiler in the basement with a heat pump. "
    "My sister Ana came over to help paint the hallway blue. "
    "Her dog Biscuit slept under the table the whole afternoon while we worked."
)
GRANITE = "The new cabinets are oak and the counters are grey granite."
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


@pytest.fixture
def memory(db_url: str, clock: ManualClock, monkeypatch: pytest.MonkeyPatch) -> Iterator[Memory]:
    """The default (semantic) embedder: the note is found by its turn's meaning, which is
    what lets a question about a dropped clause reach it at all."""
    monkeypatch.delenv("COMMONPLACE_EMBEDDER")
    with Memory(db_url, clock=clock, config=Config(search_min_notes=0)) as m:
        yield m


def test_a_sentence_the_note_dropped_is_quoted_beside_it_when_asked_about(
    memory: Memory,
) -> None:
    note = memory.write(RENOVATION, scope="ana").note
    assert note is not None and "granite" not in note.text  # the writer kept other clauses
    recall = memory.recall("what are the counters made of?", scope="ana")
    (item,) = [i for i in recall.items if i.record.id == note.id]
    assert item.excerpt == GRANITE
    assert f"— “{GRANITE}”" in recall.text and recall.tokens <= 1500
    assert item.to_json()["excerpt"] == GRANITE


def test_a_note_that_holds_what_is_asked_gets_no_excerpt(memory: Memory) -> None:
    note = memory.write(RENOVATION, scope="ana").note
    assert note is not None and "heat pump" in note.text
    recall = memory.recall("what replaced the old boiler in the basement?", scope="ana")
    (item,) = [i for i in recall.items if i.record.id == note.id]
    assert item.excerpt is None and "“" not in recall.text


def test_an_excerpt_quotes_only_a_turn_the_recall_may_see(memory: Memory) -> None:
    note = memory.write(RENOVATION, scope={"user": "ana", "thread": "t1"}).note
    assert note is not None
    question = "what are the counters made of?"
    own = memory.recall(question, scope={"user": "ana", "thread": "t1"})
    assert [i.excerpt for i in own.items if i.record.id == note.id] == [GRANITE]
    other = memory.recall(question, scope={"user": "ana", "thread": "t2"})
    assert note.id not in {i.record.id for i in other.items} and "granite" not in other.text


def _record(rid: str, text: str, *provenance: str) -> Record:
    return Record(
        id=rid,
        kind=Kind.NOTE,
        scope=Scope(user="a"),
        text=text,
        tags=Tags(),
        provenance=provenance,
        created_at=T0,
        last_access=T0,
    )


def _episodes(**texts: str) -> dict[str, Episode]:
    return {
        eid: Episode(id=eid, scope=Scope(user="a"), role=Role.USER, text=text, at=T0)
        for eid, text in texts.items()
    }


def test_one_excerpt_per_turn_for_the_best_note_that_needs_it() -> None:
    episodes = _episodes(ep_1="I sold the red bike. I bought a green kayak for the lake.")
    first = _record("nt_1", "The user sold the red bike.", "ep_1")
    merged = _record("nt_2", "The user sold a bike.", "ep_1")
    found = excerpts_for("which kayak did I buy?", [first, merged], episodes.get)
    assert found == {"nt_1": "I bought a green kayak for the lake."}


def test_a_turn_with_nothing_the_note_lacks_is_not_quoted() -> None:
    episodes = _episodes(ep_1="I sold the red bike. The weather was lovely.")
    note = _record("nt_1", "The user sold the red bike.", "ep_1")
    assert excerpts_for("who bought my kayak?", [note], episodes.get) == {}
    assert excerpts_for("what did I sell?", [note], episodes.get) == {}  # the note has it
    assert excerpts_for("the?", [note], episodes.get) == {}  # no content word asked
    gone = _record("nt_2", "The user sold a bike.", "ep_deleted")
    assert excerpts_for("kayak lake", [gone], episodes.get) == {}


def test_a_long_sentence_is_cut_around_what_was_asked() -> None:
    filler = " ".join(f"w{n}" for n in range(40))
    episodes = _episodes(ep_1=f"We walked past {filler} until we saw the lighthouse at dusk.")
    note = _record("nt_1", "The user went for a walk.", "ep_1")
    (excerpt,) = excerpts_for("when did we see the lighthouse?", [note], episodes.get).values()
    assert "lighthouse" in excerpt and excerpt.startswith("… ")
    words = [w for w in excerpt.split() if w != "…"]
    assert len(words) == MAX_EXCERPT_WORDS and "We" not in words


def test_a_word_said_but_not_noted_is_found_by_keyword_too(db_url: str) -> None:
    """With the hashing model a paraphrase cannot find the note by its vector; the words
    of the turn the note dropped are in its keyword index (``Tags.turn_terms``)."""
    with Memory(db_url, embedder=HashingEmbedder(), config=Config(search_min_notes=0)) as m:
        note = m.write(RENOVATION, scope="ana").note
        m.write("I take the bus to work.", scope="ana")
        assert note is not None and "granite" in note.tags.turn_terms
        recall = m.recall("granite", scope="ana")
    (item,) = [i for i in recall.items if i.record.id == note.id]
    assert item.section == "relevant" and item.score.keyword == 1.0
    assert item.excerpt == GRANITE
