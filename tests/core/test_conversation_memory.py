"""Memory of real multi-party chat: what the writer keeps, who said it, what recall packs.

Each test is one behaviour the LoCoMo work needed (docs/benchmarks.md, LoCoMo section):
small talk is skipped with its reason, a long turn keeps its substance, speakers are
named, the evidence stays searchable, the budget is filled by value, the question being
answered never answers itself, and updates said in words replace what they update.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from commonplace import Config, Kind, ManualClock, Memory, Modality

SMALL_TALK = [
    "Hey Mel! Good to see you! How have you been?",
    "Thanks, Caroline.",
    "Wow, love that painting!",
    "That's really cool. You've got guts. What now?",
    "Congrats! Good luck with that!",
    "Caroline: Hey Mel! Long time no see!",
]


@pytest.mark.parametrize("turn", SMALL_TALK)
def test_greetings_thanks_and_reactions_are_skipped_with_the_reason(
    memory: Memory, turn: str
) -> None:
    result = memory.write(turn, scope="ana")
    assert result.note is None and result.skipped is not None
    assert "nothing to remember" in result.skipped
    assert memory.count(Kind.NOTE, scope="ana") == 0 and memory.count(Kind.EPISODE) == 1


def test_a_long_turn_keeps_its_informative_clauses_not_its_greeting(memory: Memory) -> None:
    turn = (
        "Hey Caroline, since we last chatted, I've had a lot of things happening to me. "
        "I ran a charity race for mental health last Saturday - it was really rewarding. "
        "How have you been?"
    )
    note = memory.write(turn, scope="ana").note
    assert note is not None
    assert "charity race for mental health" in note.text
    assert "Hey" not in note.text and "How have you been" not in note.text


def test_a_very_long_turn_is_one_bounded_note(memory: Memory) -> None:
    sentence = "I planted {} tomatoes in the community garden behind the old library."
    turn = " ".join(sentence.format(n) for n in range(2, 30))
    note = memory.write(turn, scope="ana").note
    assert note is not None and memory.count(Kind.NOTE) == 1
    assert len(note.text.split()) <= 60 < len(turn.split())


def test_a_stated_preference_is_kept_and_carried_into_the_profile_card(memory: Memory) -> None:
    note = memory.write("Please always answer me in Portuguese. I live in Porto.", scope="ana").note
    assert note is not None
    assert "Portuguese" in note.text and "Porto" in note.text
    card = memory.rewrite_profile(scope="ana")
    assert "Preferences: always answer the user in Portuguese" in card
    assert "city Porto" in card


@pytest.mark.parametrize(
    ("text", "speaker"),
    [
        ("Caroline: I went to a support group yesterday.", None),
        ("I went to a support group yesterday.", "Caroline"),
        ("Caroline: I went to a support group yesterday.", "Caroline"),
    ],
)
def test_a_named_speaker_is_named_in_the_note_and_tagged(
    memory: Memory, text: str, speaker: str | None
) -> None:
    result = memory.write(text, scope="ana", speaker=speaker)
    assert result.note is not None
    assert result.note.text == "Caroline went to a support group yesterday."
    assert result.note.tags.entities[0] == "Caroline"
    assert result.note.scope == memory.turn("x", scope="ana").scope  # scopes are unchanged
    assert memory.explain(result.note.id).episodes()[0].text == text  # evidence verbatim


def test_a_speakers_facts_are_keyed_to_the_speaker_not_to_the_user(memory: Memory) -> None:
    caroline = memory.write("Caroline: I live in Lisbon.", scope="chat").note
    melanie = memory.write("Melanie: I live in Porto.", scope="chat").note
    assert caroline is not None and melanie is not None
    assert caroline.tags.key is not None and caroline.tags.key.subject == "caroline"
    # two people's cities: neither replaces the other
    assert memory.explain(caroline.id).record.superseded_by is None


@pytest.mark.parametrize("label", ["Update", "Note", "PS", "Reminder"])
def test_a_label_before_a_colon_is_not_a_speaker(memory: Memory, label: str) -> None:
    note = memory.write(f"{label}: my server port is 8001.", scope="ana").note
    assert note is not None and "the user" in note.text.lower()


def test_recall_finds_a_note_by_words_only_its_evidence_holds(memory: Memory) -> None:
    sentences = [
        "I finally finished restoring the old wooden sailboat my grandfather built.",
        "It took me three summers of weekends in the boatyard at Brixham harbour.",
        "My sister Ana helped me varnish the hull and replace the rigging.",
        "We launched it last Sunday with the whole family watching from the pier.",
        "The name painted on the stern is Marigold, after my grandmother.",
        "Somebody brought zucchini bread.",
    ]
    result = memory.write(" ".join(sentences), scope="ana")
    assert result.note is not None and "zucchini" not in result.note.text.lower()
    memory.write_many([memory.turn(f"I walked route {n} today.", scope="ana") for n in range(8)])
    recall = memory.recall("who brought zucchini bread", scope="ana", budget_tokens=200)
    shown = {i.record.id: i for i in recall.items}
    assert result.note.id in shown and result.episode_id in shown[result.note.id].record.provenance


def test_relevant_notes_fill_the_budget_before_recent_ones(db_url: str, clock: ManualClock) -> None:
    with Memory(db_url, clock=clock, config=Config(search_min_notes=0)) as memory:
        target = memory.write("My passport number is X1234567.", scope="ana").note
        clock.advance(days=3)
        memory.write_many(
            [memory.turn(f"I cooked dish number {n} for dinner.", scope="ana") for n in range(40)]
        )
        small = memory.recall("what is my passport number", scope="ana", budget_tokens=60)
        assert target is not None and target.id in small.included
        assert [i.section for i in small.items if i.record.id == target.id] == ["relevant"]
        # without a top_k the budget, not a count, decides how much is shown: all 40 fit
        full = memory.recall("what did I cook for dinner", scope="ana", budget_tokens=1500)
        cooked = [i for i in full.items if "cooked" in i.record.text]
        assert len(cooked) == 40 and all(i.section == "relevant" for i in cooked)


def test_every_record_the_context_shows_is_an_item_with_its_section(memory: Memory) -> None:
    for text in ("I live in Lisbon.", "I play the cello.", "My dog is Pixel.", "I cycle."):
        memory.write(text, scope="ana")
    recall = memory.recall("what instrument do I play", scope="ana")
    assert {i.record.id for i in recall.items} == set(recall.included)
    assert all(i.section in ("hot", "recent", "relevant") for i in recall.items)
    assert all(i.record.text in recall.render() for i in recall.items)


def test_the_question_being_answered_is_never_recalled_for_itself(memory: Memory) -> None:
    memory.write("My cat is called Miso.", scope="ana")
    memory.write("What is my cat's name?", scope="ana")
    memory.write("What is my cat's name?", scope="ana", key="msg-2")  # asked again
    recall = memory.recall("What is my cat's name?", scope="ana")
    assert recall.items and "Miso" in recall.items[0].record.text
    assert all(i.record.tags.modality is not Modality.QUESTION for i in recall.items)


def test_a_question_never_outranks_the_statement_that_answers_it(memory: Memory) -> None:
    memory.write("Which gym is closest to my office?", scope="ana")
    memory.write("The closest gym to my office is FitHub on Rua Augusta.", scope="ana")
    recall = memory.recall("the gym closest to the office", scope="ana")
    ranked = [i for i in recall.items if i.section == "relevant"]
    assert ranked[0].record.tags.modality is Modality.STATEMENT
    question = next(i for i in ranked if i.record.tags.modality is Modality.QUESTION)
    assert question.score.modality_factor < 1.0


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I am vegetarian.", "I'm not vegetarian anymore, I eat fish now."),
        ("I eat meat.", "I no longer eat meat."),
        ("I live in Lisbon.", "I used to live in Lisbon."),
        ("My manager is Deepa.", "Tom is my new manager."),
        ("The office is on Elm Road.", "The office relocated to Harbour Lane."),
        ("The mobile app is written in Swift.", "The mobile app was rewritten in Kotlin."),
    ],
)
def test_an_update_in_words_supersedes_the_older_statement(
    memory: Memory, clock: ManualClock, old: str, new: str
) -> None:
    older = memory.write(old, scope="ana").note
    clock.advance(days=2)
    newer = memory.write(new, scope="ana").note
    assert older is not None and newer is not None
    assert memory.explain(older.id).record.superseded_by == newer.id


def test_an_old_statement_imported_late_arrives_already_superseded(
    memory: Memory, clock: ManualClock
) -> None:
    newer = memory.write("The office relocated to Harbour Lane.", scope="ana").note
    older = memory.write(
        "The office is on Elm Road.", scope="ana", at=clock.now() - timedelta(days=180)
    ).note
    assert newer is not None and older is not None
    assert memory.explain(older.id).record.superseded_by == newer.id
    recall = memory.recall("where is the office", scope="ana")
    assert recall.items[0].record.id == newer.id


def test_a_plain_negation_takes_nothing_back(memory: Memory, clock: ManualClock) -> None:
    older = memory.write("I am a fan of jazz.", scope="ana").note
    clock.advance(days=1)
    memory.write("I am not a fan of opera.", scope="ana")
    assert older is not None and memory.explain(older.id).record.superseded_by is None


def test_switching_from_a_value_with_no_key_is_flagged(memory: Memory) -> None:
    memory.write("I use vim for everything.", scope="ana")
    memory.write("I switched from vim to emacs.", scope="ana")
    recall = memory.recall("which editor do I use", scope="ana")
    assert any("switched from vim" in d.reason for d in recall.disagreements)
    assert "switched from vim" in recall.render()
