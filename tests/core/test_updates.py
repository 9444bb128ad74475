"""Facts that change, said in everyday words: the built-in update decision, and what a
store does with it (supersede or dispute, explain, audit, render, card, as-of).

The sentences here are written for these tests (the bench's workload,
``commonplace_bench/workloads/everyday_updates.jsonl``, has its own); every store is a
real SQLite file. The rule decider is given candidates with the similarities MiniLM gives
such pairs (0.3-0.7): the rules read words first, closeness only to choose among them.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from commonplace import (
    Config,
    Kind,
    ManualClock,
    Memory,
    Record,
    Scope,
    UpdateCandidate,
    UpdateDecision,
    hookimpl,
)
from commonplace.embedders import MiniLMEmbedder
from commonplace.errors import PluginError
from commonplace.write import RuleNoteWriter, RuleUpdateDecider, Turn

AT = datetime(2025, 4, 1, 9, 0, tzinfo=timezone.utc)
USER = Scope(user="ana")
WRITER = RuleNoteWriter()
DECIDER = RuleUpdateDecider()


def note(text: str, *, days: int = 0, rid: str | None = None) -> tuple[Record, Turn]:
    """The rule writer's note of a user turn, as the pipeline would hand it on."""
    turn = Turn(role="user", text=text, scope=USER, at=AT + timedelta(days=days))
    draft = WRITER.write(turn)
    assert hasattr(draft, "text"), f"the writer skipped {text!r}: {draft}"
    record = Record(
        id=rid or f"nt_{abs(hash(text)) % 10**12:012d}",
        kind=Kind.NOTE,
        scope=USER,
        text=draft.text,  # type: ignore[union-attr]
        tags=draft.tags,  # type: ignore[union-attr]
        provenance=("ep_x",),
        created_at=turn.at,
        last_access=turn.at,
    )
    return record, turn


def decide(old: list[tuple[str, float]], update: str) -> list[tuple[str, str]]:
    """(verdict, old text) for each decision the rules make about ``update``."""
    olds = [(note(text, rid=f"nt_old{n}")[0], sim) for n, (text, sim) in enumerate(old)]
    new, turn = note(update, days=20, rid="nt_new")
    decisions = DECIDER.decide(new, turn, [UpdateCandidate(r, s) for r, s in olds])
    texts = {r.id: r.text for r, _ in olds}
    return [(d.verdict, texts[d.record_id]) for d in decisions]


# -- the classes of update ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "update"),
    [
        ("I ride a Brompton to work.", "sold the Brompton, got a Cannondale road bike instead"),
        ("My dentist is Dr Achebe.", "finally ditched Dr Achebe, she kept overbooking"),
        ("I've been going out with Tomas since spring.", "broke up with Tomas last night"),
        ("My broadband is with Sky.", "switched from Sky to Virgin, half the price"),
        ("My son plays for Hillside FC.", "we moved him from Hillside FC to Parkway United"),
    ],
)
def test_an_ending_that_names_the_old_value_replaces_it(old: str, update: str) -> None:
    assert decide([(old, 0.45), ("My dog is called Pepper.", 0.2)], update) == [
        ("replaces", note(old)[0].text)
    ]


@pytest.mark.parametrize(
    ("old", "update"),
    [
        ("My gym membership is 40 a month.", "the gym went up to 48 a month"),
        ("I run 20 km a week.", "upped my running to 30 km a week"),
        ("Our database pool has 16 connections.", "bumped the database pool to 32 connections"),
    ],
)
def test_a_changed_quantity_of_the_same_slot_replaces_it(old: str, update: str) -> None:
    assert decide([(old, 0.55), ("I'm 34 years old.", 0.3)], update) == [
        ("replaces", note(old)[0].text)
    ]


def test_two_statements_about_as_close_to_a_changed_quantity_are_disputed_not_guessed() -> None:
    # "the dose" of which medicine: no rule can tell, so neither is hidden
    verdicts = decide(
        [("I take 10 mg of ramipril.", 0.52), ("I take 25 mg of sertraline.", 0.5)],
        "doctor doubled my dose to 50 mg",
    )
    assert sorted(v for v, _ in verdicts) == ["disputes", "disputes"]


@pytest.mark.parametrize(
    ("old", "update"),
    [
        ("My flight lands at 14:10.", "correction: the flight lands at 16:40"),
        ("My niece Ada is in year 4.", "wait, Ada's in year 5, not year 4"),
        ("Our office is on Baker Street.", "sorry I got it wrong, the office is on Dean Street"),
    ],
)
def test_a_correction_of_the_same_thing_replaces_it(old: str, update: str) -> None:
    assert decide([(old, 0.5), ("My dog is called Pepper.", 0.2)], update) == [
        ("replaces", note(old)[0].text)
    ]


def test_a_cue_of_change_that_names_no_slot_only_disputes_the_closest_statement() -> None:
    old = "I'm on a Nokia 8."
    verdicts = decide(
        [(old, 0.36), ("I like hiking.", 0.28)], "using a Pixel 9 these days, the camera rocks"
    )
    assert verdicts == [("disputes", note(old)[0].text)]


# -- look-alikes: precision first --------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "update"),
    [
        # someone else
        ("My uncle Piet lives in Utrecht.", "my cousin just moved to Leiden"),
        ("My bike is a Brompton.", "my husband's bike is a Cannondale now"),
        ("My boss is Ingrid.", "my sister's new boss is called Marit"),
        ("My best friend Sade works at Unilever.", "Sade's brother just started at Shell"),
        ("My manager is Joost.", "Joost's manager is leaving, Femke replaces him"),
        # a plan, a maybe, a question
        ("I bank with ING.", "thinking about switching to Bunq, not sure yet"),
        ("We live in Utrecht.", "we might move to Leiden if the job works out"),
        ("My rent is 1,400 a month.", "landlord says rent may go to 1,500, we'll see"),
        ("I drive a Polo.", "should I sell the Polo and get an e-bike?"),
        # an addition
        ("I play the cello in an orchestra.", "picked up the viola too, just at home"),
    ],
)
def test_a_look_alike_never_replaces(old: str, update: str) -> None:
    turn = Turn(role="user", text=update, scope=USER, at=AT)
    if not hasattr(WRITER.write(turn), "text"):
        return  # the writer keeps no note of it (a question): it can change nothing
    assert decide([(old, 0.6)], update) == []  # neither replaces nor disputes


def test_saying_a_fact_again_changes_nothing() -> None:
    assert decide([("I'm vegetarian.", 0.8)], "I'm still vegetarian these days, going strong") == []


# -- through a store ---------------------------------------------------------------------


def test_a_replaced_note_is_explained_audited_and_shown_as_past_with_what_replaced_it(
    memory: Memory, clock: ManualClock
) -> None:
    old = memory.write("I ride a Brompton to work.", scope="ana").note
    clock.advance(days=3)
    memory.write("It rained all day here.", scope="ana")
    clock.advance(days=10)
    result = memory.write("sold the Brompton, I got a Cannondale road bike instead", scope="ana")
    assert old is not None and result.note is not None
    assert result.superseded == (old.id,)
    chain = memory.explain(old.id)
    assert chain.replaced_by == result.note.id
    assert chain.why == "ended: brompton"
    assert result.note.data["replaces"] == {old.id: "ended: brompton"}
    entry = next(e for e in memory.audit(scope="ana") if e.record_id == old.id)
    assert (entry.action, entry.rule) == ("superseded", "update")
    assert result.note.id in entry.detail and result.episode_id in entry.detail
    text = memory.recall("what bike do I ride?", scope="ana").text
    line = next(ln for ln in text.splitlines() if "Brompton to work" in ln)
    when = f"{old.created_at + timedelta(days=13):%-d %B %Y}"
    assert f"(until {when}; then: Cannondale)" in line
    # a question about the past still finds the old note
    past = memory.recall("what bike did I ride before?", scope="ana").text
    assert "Brompton to work" in past


def test_a_dispute_marks_both_in_every_recall_and_the_newer_comes_first(
    db_url: str, clock: ManualClock
) -> None:
    # the closeness the rules were calibrated on: the default embedder's
    config = Config(search_min_notes=0)
    with Memory(db_url, clock=clock, config=config, embedder=MiniLMEmbedder()) as memory:
        old = memory.write("I'm on a Nokia 8.", scope="ana").note
        clock.advance(days=5)
        result = memory.write("using a Pixel 9 these days, the camera rocks", scope="ana")
        assert old is not None and result.note is not None
        assert result.disputed == (old.id,) and result.superseded == ()
        assert memory.explain(old.id).disputes[0][0] == result.note.id
    # the dispute is kept beside the records: a later opening marks both
    with Memory(db_url, clock=clock, config=config) as m:
        recall = m.recall("which phone do I have?", scope="ana")
    marked = [ln for ln in recall.text.splitlines() if "disagrees with" in ln]
    assert any("Nokia" in ln for ln in marked) and any("Pixel" in ln for ln in marked)
    ids = [i.record.id for i in recall.items]
    assert ids.index(result.note.id) < ids.index(old.id)


def test_a_dispute_is_forgotten_with_either_of_its_notes(
    memory: Memory, clock: ManualClock
) -> None:
    class Doubting:
        @hookimpl
        def commonplace_decide_update(self, note, turn, candidates):  # type: ignore[no-untyped-def]
            return [UpdateDecision(c.record.id, "disputes", "maybe") for c in candidates]

    with Memory(
        memory.url, clock=clock, config=Config(search_min_notes=0), plugins=[Doubting()]
    ) as m:
        old = m.write("I'm on a Nokia 8.", scope="ana").note
        clock.advance(days=1)
        new = m.write("using a Pixel 9 these days", scope="ana")
        assert old is not None and new.disputed == (old.id,)
        assert m.explain(old.id).disputes == ((new.note.id, "maybe"),)  # type: ignore[union-attr]
        m.forget(new.note.id, scope="ana")  # type: ignore[union-attr]
        assert m.explain(old.id).disputes == ()
        assert "disagrees" not in m.recall("which phone?", scope="ana").text


def test_an_update_in_the_same_batch_replaces_the_note_before_it(memory: Memory) -> None:
    results = memory.write_many(
        [
            memory.turn("I ride a Brompton to work.", scope="ana", at=AT),
            memory.turn(
                "sold the Brompton, got a Cannondale", scope="ana", at=AT + timedelta(days=9)
            ),
        ]
    )
    first, second = results
    assert first.note is not None and second.superseded == (first.note.id,)


def test_the_card_is_revised_by_the_decision_and_as_of_shows_the_card_that_held(
    db_url: str, clock: ManualClock
) -> None:
    config = Config(search_min_notes=0)
    with Memory(db_url, clock=clock, config=config) as m:
        m.write("I work as a nurse at the Royal.", scope="ana")
        assert "job nurse" in m.rewrite_profile(scope="ana")
        before = clock.now()
        clock.advance(days=30)
        m.write("left nursing for good, I teach maths at a college now", scope="ana")
        card = m.rewrite_profile(scope="ana")
        assert "nurse" not in card  # a replaced statement leaves the card
        assert "nurse" not in m.recall("what do I do?", scope="ana").profile
        then = m.recall("what do I do?", scope="ana", as_of=before + timedelta(hours=1))
        assert "job nurse" in then.profile  # the card as it was, not today's
        empty = m.recall("what do I do?", scope="ana", as_of=before - timedelta(days=1))
        assert empty.profile == ""  # nothing held yet: no card at all


def test_a_plugin_decides_and_its_answer_is_checked(db_url: str, clock: ManualClock) -> None:
    class Outsider:
        @hookimpl
        def commonplace_decide_update(self, note, turn, candidates):  # type: ignore[no-untyped-def]
            return [UpdateDecision("nt_not_a_candidate", "replaces", "why not")]

    with Memory(db_url, clock=clock, plugins=[Outsider()]) as m:
        m.write("I ride a Brompton.", scope="ana")
        with pytest.raises(PluginError, match="not one of the candidates"):
            m.write("sold the Brompton", scope="ana")
        assert m.count(scope="ana") == 1  # refused: nothing of the second turn was kept

    class Verdictless:
        @hookimpl
        def commonplace_decide_update(self, note, turn, candidates):  # type: ignore[no-untyped-def]
            return [UpdateDecision(c.record.id, "maybe", "?") for c in candidates]  # type: ignore[arg-type]

    with (
        Memory(db_url, clock=clock, plugins=[Verdictless()]) as m,
        pytest.raises(PluginError, match="verdict 'maybe'"),
    ):
        m.write("ditched the Brompton for good", scope="ana")


def test_a_past_value_said_in_another_thread_is_not_named_in_this_one(
    memory: Memory, clock: ManualClock
) -> None:
    t1, t2 = Scope(user="ana", thread="t1"), Scope(user="ana", thread="t2")
    memory.write("I ride a Brompton to work.", scope=t1)
    clock.advance(days=2)
    memory.write("sold the Brompton, got a Cannondale", scope=t2)
    text = memory.recall("what bike do I ride?", scope=t1).text
    line = next(ln for ln in text.splitlines() if "Brompton to work" in ln)
    assert "(until " in line and "Cannondale" not in text


# -- things of the user's world, told to an assistant (NLM's set) --------------------------


@pytest.mark.parametrize(
    ("old", "update"),
    [
        # another thing of the user's: a name never changes a number, nor one thing another
        ("The support team grew to seven people.", "The team switched its deploys to CircleCI."),
        ("The support team has nine people.", "The team switched its deploys to CircleCI."),
        ("The public API is now on version 3.0.", "The newsletter now goes out every Monday."),
        ("The staging database runs on MySQL.", "The test suite now takes 40 minutes."),
        # a sentence's capitalised first word is no one's name shared by both
        (
            "For the Orchard book club it's Kindred now, just picked it up.",
            "For the Lighthouse book club it's Rebecca now, just picked it up.",
        ),
    ],
)
def test_a_change_of_one_thing_never_replaces_or_disputes_another(old: str, update: str) -> None:
    assert decide([(old, 0.6)], update) == []


def test_one_slot_named_shorter_still_takes_a_value_of_its_kind() -> None:
    old = "My bike lock code is 4471."
    assert decide([(old, 0.6)], "the lock code is 4417 now") == [("replaces", note(old)[0].text)]


def test_a_statement_that_arrives_after_the_one_that_replaced_it_is_superseded(
    db_url: str, clock: ManualClock
) -> None:
    """An old chat imported after a newer one: the newer value, said with its slot named
    shorter ("the public API" for "the public API version"), still holds."""
    with Memory(db_url, clock=clock) as memory:
        new = memory.write("The public API is now on version 3.0.", scope="ana", at=AT)
        late = memory.write(
            "The public API is on version 4.2.", scope="ana", at=AT - timedelta(days=180)
        )
        assert new.note is not None and late.note is not None
        assert memory.store.get_record(late.note.id).superseded_by == new.note.id  # type: ignore[union-attr]
        assert memory.store.get_record(new.note.id).superseded_by is None  # type: ignore[union-attr]
