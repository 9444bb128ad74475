"""The writer chooses: a note says something about its speaker, in a sentence a person
would write; what is said to the listener stays an episode (evidence), and a card slot
holds only a value of its kind."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from commonplace import (
    Config,
    HashingEmbedder,
    Kind,
    ManualClock,
    Memory,
    NoteDraft,
    RuleNoteWriter,
    Scope,
    Tags,
    Turn,
    hookimpl,
)
from commonplace._records import FactKey
from commonplace.stores import RecordQuery

T0 = datetime(2026, 5, 4, 18, 0, tzinfo=timezone.utc)


@pytest.fixture
def memory() -> Memory:
    return Memory(":memory:", embedder=HashingEmbedder(), clock=ManualClock(T0))


def note_of(memory: Memory, text: str, scope: str = "chat") -> str | None:
    result = memory.write(text, scope=scope)
    return None if result.note is None else result.note.text


@pytest.mark.parametrize(
    ("said", "note"),
    [
        # a verb the rewrite knows is conjugated, an informal form written out
        ("Jon: I wanna start a dance studio.", "Jon wants to start a dance studio."),
        ("Jon: I totally agree. I also have two cats.", "Jon also has two cats."),
        ("Jon: I chose the blue one.", "Jon chose the blue one."),
        # a gerund that is the subject is not a dropped "I'm"
        (
            "Jon: Juggling both my jobs can be tricky.",
            "Juggling both Jon's jobs can be tricky.",
        ),
        ("Jon: Researching flights to Lima.", "Jon is researching flights to Lima."),
        # what the rewrite cannot be sure of keeps the speaker's own words
        ("Jon: I def love the new flat.", "Jon says: “I def love the new flat.”"),
        ("Jon: Our army marched past the flat.", "Jon says: “Our army marched past the flat.”"),
        (
            "Jon: I saw you at the market on Sunday.",
            "Jon says: “I saw you at the market on Sunday.”",
        ),
        # "our" of the speaker's own household is theirs
        ("Jon: Our kids start school in May.", "Jon's kids start school in May."),
    ],
)
def test_a_note_is_a_sentence_a_person_would_write(memory: Memory, said: str, note: str) -> None:
    assert note_of(memory, said) == note


def test_the_listener_s_things_are_never_the_speaker_s(memory: Memory) -> None:
    assert note_of(memory, "Maya: Your garden is lovely!") is None
    note = note_of(memory, "Maya: Your garden is lovely! My roses are finally blooming.")
    assert note == "Maya's roses are finally blooming."


def test_a_question_is_kept_only_when_it_is_the_speaker_s_own_matter(memory: Memory) -> None:
    own = memory.write("Should I take the Lisbon job or stay in Porto?", scope="ana")
    assert own.note is not None and own.note.tags.modality.value == "question"
    general = memory.write("What's the capital of Peru?", scope="ana")
    assert general.note is None and general.skipped is not None
    assert general.skipped.startswith("a general question")
    asked = memory.write("Maya: What are you reading these days?", scope="chat")
    assert asked.note is None and asked.skipped is not None
    assert asked.skipped.startswith("a question to the other person")
    # a fact said before a question is kept, the question is not
    both = memory.write(
        "I just moved to Leeds with my partner Tom, any good climbing gyms?", scope="ana"
    )
    assert (
        both.note is not None
        and both.note.text == "The user just moved to Leeds with the user's partner Tom."
    )


def test_the_card_holds_only_open_threads_that_are_questions(memory: Memory) -> None:
    for text in (
        "Should I take the Lisbon job or stay in Porto?",
        "Have a great time and learn a lot.",
        "Thanks, that helps!",
        "How do I get my toddler to sleep through the night?",
    ):
        memory.write(text, scope="ana")
    memory.rewrite_profile(scope="ana")
    threads = memory.profile(scope="ana").threads
    assert [t.split("“")[1][:12] for t in threads] == ["Should I tak", "How do I get"]


def test_a_turn_said_to_the_other_person_is_kept_as_the_evidence_of_what_it_answers() -> None:
    clock = ManualClock(T0)
    searched = Config(search_min_notes=0)
    with Memory(":memory:", embedder=HashingEmbedder(), clock=clock, config=searched) as memory:
        ran = memory.write("Mel: I ran a charity race for mental health last Saturday.", scope="c")
        clock.advance(minutes=1)
        reply = memory.write(
            "Caroline: That charity race sounds great, Mel! The purple medal is gorgeous.",
            scope="c",
        )
        assert ran.note is not None and reply.note is None
        assert reply.skipped is not None and f"kept as evidence of {ran.note.id}" in reply.skipped
        assert memory.count(Kind.NOTE, scope="c") == 1
        # the reply is evidence of the note, and its words find the note
        # (in no particular order: a note's sources are listed by id)
        said = sorted(e.text for e in memory.explain(ran.note.id).episodes())
        assert [t[:27] for t in said] == [
            "Caroline: That charity race",
            "Mel: I ran a charity race f",
        ]
        recall = memory.recall("what colour was the medal?", scope="c")
        assert [i.record.id for i in recall.items if i.section == "relevant"][:1] == [ran.note.id]
        assert "purple" in recall.render()  # quoted from the reply beside the note


@pytest.mark.parametrize(
    ("scope", "later", "speaker"),
    [
        ("other", timedelta(minutes=1), "Caroline"),  # another conversation
        ("c", timedelta(hours=2), "Caroline"),  # another session
        ("c", timedelta(minutes=1), None),  # no named speaker: a user talking to an assistant
    ],
)
def test_a_turn_is_evidence_only_of_its_own_conversation_and_session(
    scope: str, later: timedelta, speaker: str | None
) -> None:
    clock = ManualClock(T0)
    with Memory(":memory:", embedder=HashingEmbedder(), clock=clock) as memory:
        memory.write("Mel: I ran a charity race for mental health last Saturday.", scope="c")
        clock.advance(seconds=later.total_seconds())
        said = "That charity race sounds great, Mel! The purple medal is gorgeous."
        reply = memory.write(f"{speaker}: {said}" if speaker else said, scope=scope)
        assert reply.note is None and "kept as evidence" not in (reply.skipped or "")


def test_a_job_on_the_card_is_an_occupation(memory: Memory) -> None:
    fan = memory.write("I'm a huge Celtic supporter, never miss a game.", scope="ana").note
    assert fan is not None and fan.tags.key is None
    # how well someone cooks is no trade
    cook = memory.write("honestly I'm a terrible cook, I live on toast", scope="ana").note
    assert cook is not None and cook.tags.key is None
    nurse = memory.write("I'm a nurse at St Mary's.", scope="ana").note
    assert nurse is not None and nurse.tags.key == FactKey("user", "job")
    memory.rewrite_profile(scope="ana")
    assert memory.profile(scope="ana").identity == {"job": "nurse"}


class FansAreJobs:
    """A note writer (an LLM, say) that files a taste under the job slot."""

    @hookimpl
    def commonplace_write_note(self, turn: Turn) -> NoteDraft:
        return NoteDraft(
            text="The user is a huge Celtic supporter.",
            tags=Tags(key=FactKey("user", "job"), value="huge Celtic supporter"),
        )


def test_the_card_refuses_a_misfiled_slot_from_any_writer() -> None:
    with Memory(":memory:", embedder=HashingEmbedder(), plugins=[FansAreJobs()]) as memory:
        memory.write("I'm a huge Celtic supporter.", scope="ana")
        memory.rewrite_profile(scope="ana")
        assert memory.profile(scope="ana").identity == {}
        stored = list(memory.backend.iter_records(RecordQuery(scope=memory_scope("ana"))))
        assert len(stored) == 1  # the note is kept; only the card refuses the slot


def memory_scope(user: str):
    from commonplace import Scope

    return Scope(user=user)


@pytest.mark.parametrize(
    ("first", "again"),
    [
        ("I work at Ikea.", "i work at ikea!!"),
        ("Maya: I love   jazz .", "Maya: I LOVE JAZZ!"),
        ("My sister Ana lives in Porto.", "my sister ana lives in porto"),
    ],
)
def test_a_near_copy_merges_whatever_its_case_punctuation_and_spacing(
    first: str, again: str
) -> None:
    clock = ManualClock(T0)
    with Memory(":memory:", embedder=HashingEmbedder(), clock=clock) as memory:
        one = memory.write(first, scope="ana").note
        clock.advance(days=1)
        two = memory.write(again, scope="ana")
        assert one is not None and two.note is not None and two.note.id == one.id
        assert two.superseded == () and memory.count(Kind.NOTE, scope="ana") == 1
        assert len(memory.explain(one.id).episodes()) == 2


def test_a_near_copy_merges_only_into_a_note_of_its_own_scope() -> None:
    clock = ManualClock(T0)
    with Memory(":memory:", embedder=HashingEmbedder(), clock=clock) as memory:
        narrow = {"user": "ana", "agent": "bot", "thread": "t1"}
        one = memory.write("I work at Ikea.", scope=narrow).note
        clock.advance(days=1)
        two = memory.write("I work at Ikea.", scope="ana").note  # the same words, broader
        assert one is not None and two is not None and two.id != one.id
        assert [e.scope for e in memory.explain(one.id).episodes()] == [one.scope]


@pytest.mark.parametrize(
    "text",
    [
        "The finance folder holds invoices.",
        "Code review needs two approvals.",
        "A badge is required to print upstairs.",
        "The support team has nine people.",
    ],
)
def test_a_thing_of_the_users_world_told_to_an_assistant_is_a_note(text: str) -> None:
    """Told to an assistant, a statement about a thing of the user's world is said so that
    the assistant knows it; said among people it is mostly a remark in passing."""
    draft = RuleNoteWriter().write(Turn(role="user", text=text, scope=Scope(user="ana"), at=T0))
    assert hasattr(draft, "text"), draft


@pytest.mark.parametrize(
    "text",
    [
        "Family is everything.",
        "Life is tough sometimes.",
        "ooh the curry sounds good",
        "ok cheers, talk later",
        "That's a good way to put it",
    ],
)
def test_a_remark_or_reaction_stays_an_episode_even_told_to_an_assistant(text: str) -> None:
    draft = RuleNoteWriter().write(Turn(role="user", text=text, scope=Scope(user="ana"), at=T0))
    assert not hasattr(draft, "text"), draft
