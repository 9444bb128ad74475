"""The read path: hybrid candidates, the search threshold, flags, feedback, links."""

from __future__ import annotations

import pytest

from commonplace import Config, Kind, ManualClock, Memory
from commonplace.errors import InvalidInputError, NotFoundError


def test_search_stays_off_below_the_threshold(db_url: str, clock: ManualClock) -> None:
    with Memory(db_url, clock=clock, config=Config(search_min_notes=4, recent_notes=3)) as m:
        for text in ("I live in Lisbon.", "I play the cello.", "My dog is Pixel."):
            m.write(text, scope="ana")
        small = m.recall("cello", scope="ana")
        assert not small.searched
        assert small.render().count("\n- ") == 3  # every note is shown as a recent note
        # and whatever the context shows is an item, with its section, score and provenance
        assert len(small.items) == 3 and {i.section for i in small.items} == {"recent"}
        assert small.items[0].record.text == "The user plays the cello."
        assert all(i.record.provenance and "total" in i.score.breakdown() for i in small.items)
        m.write("I work at a bakery.", scope="ana")
        large = m.recall("cello", scope="ana")
        assert large.searched and large.items[0].record.text == "The user plays the cello."


def test_keyword_candidates_find_what_vectors_miss(memory: Memory) -> None:
    target = memory.write("My locker code is 4471.", scope="ana").note
    memory.write_many(
        [memory.turn(f"I walked the dog along route {n}.", scope="ana") for n in range(60)]
    )
    assert target is not None
    recall = memory.recall("4471", scope="ana", top_k=3)
    top = recall.items[0]
    assert top.record.id == target.id and top.score.keyword == 1.0


def test_flags_a_contradiction_between_agents_and_says_so(memory: Memory) -> None:
    from commonplace import Scope

    a = memory.write("I live in Lisbon.", scope=Scope(user="ana", agent="coach")).note
    b = memory.write("I live in Berlin.", scope=Scope(user="ana", agent="tutor")).note
    assert a is not None and b is not None
    # each agent's facts stand alone, so no supersession happened: a user-wide recall flags it
    memory.pin(a.id, scope="ana")
    recall = memory.recall("where do I live", scope=Scope(user="ana", agent="tutor"))
    assert recall.disagreements == ()  # the pinned Lisbon note is not visible to the tutor
    recall = memory.recall("where do I live", scope="ana")
    assert [(d.first, d.second) for d in recall.disagreements] in ([(a.id, b.id)], [(b.id, a.id)])
    assert "Disagreements:" in recall.render() and "'Lisbon'" in recall.render()
    flagged = [i for i in recall.items if i.record.id == b.id]
    assert flagged and flagged[0].note is not None and a.id in flagged[0].note


def test_similar_but_compatible_records_are_not_flagged(memory: Memory) -> None:
    memory.write("I love hiking in the Alps.", scope="ana")
    memory.write("I love hiking in the Pyrenees.", scope="ana")
    memory.write("I eat meat.", scope="ana")
    assert memory.recall("hiking", scope="ana").disagreements == ()


def test_negation_is_flagged(memory: Memory) -> None:
    from commonplace import Scope

    memory.write("I eat meat.", scope=Scope(user="ana", thread="a"))
    memory.write("I don't eat meat.", scope=Scope(user="ana", thread="b"))
    (flag,) = memory.recall("do I eat meat", scope="ana").disagreements
    assert flag.reason == "one negates the other"


def test_feedback_strengthens_used_and_sinks_ignored(memory: Memory, clock: ManualClock) -> None:
    used = memory.write("My favourite tea is sencha.", scope="ana").note
    ignored = memory.write("My favourite tea shop is in Alfama.", scope="ana").note
    assert used is not None and ignored is not None
    for _ in range(5):
        recall = memory.recall("favourite tea", scope="ana")
        assert {used.id, ignored.id} <= set(recall.included)
        feedback = memory.feedback(recall.id, used=[used.id])
        assert feedback.used == (used.id,) and ignored.id in feedback.ignored
        clock.advance(days=1)
    items = {i.record.id: i for i in memory.recall("favourite tea", scope="ana").items}
    assert items[used.id].score.frequency > items[ignored.id].score.frequency
    assert items[ignored.id].score.accessibility < 1.0 == items[used.id].score.accessibility
    assert memory.count(Kind.NOTE) == 2  # sinking is not deleting


def test_feedback_is_taken_once_and_validated(memory: Memory) -> None:
    note = memory.write("My favourite tea is sencha.", scope="ana").note
    assert note is not None
    recall = memory.recall("favourite tea", scope="ana")
    with pytest.raises(InvalidInputError):
        memory.feedback(recall.id, used=["nt_not_in_this_recall"])
    with pytest.raises(InvalidInputError):
        memory.feedback(recall.id)
    with pytest.raises(NotFoundError):
        memory.feedback("rc_unknown", used=[])
    assert not memory.feedback(recall.id, used=[note.id]).already_given
    assert memory.feedback(recall.id, used=[note.id]).already_given
    assert memory.explain(note.id).record.used_count == 1  # type: ignore[union-attr]


def test_automatic_feedback_reads_the_reply(memory: Memory) -> None:
    tea = memory.write("My favourite tea is sencha.", scope="ana").note
    shop = memory.write("My favourite tea shop is in Alfama.", scope="ana").note
    assert tea is not None and shop is not None
    recall = memory.recall("favourite tea", scope="ana")
    feedback = memory.feedback(recall.id, reply="You could brew some sencha, your favourite!")
    assert feedback.used == (tea.id,) and feedback.ignored == (shop.id,)


def test_co_used_records_are_linked_and_links_expand_recall(
    memory: Memory, clock: ManualClock
) -> None:
    allergy = memory.write("I am allergic to penicillin.", scope="ana").note
    doctor = memory.write("My GP practice is on Rua Augusta.", scope="ana").note
    memory.write_many(
        [memory.turn(f"I read chapter {n} of a novel.", scope="ana") for n in range(30)]
    )
    assert allergy is not None and doctor is not None
    clock.advance(days=1)
    for _ in range(3):
        recall = memory.recall("allergic penicillin GP practice Rua Augusta", scope="ana")
        memory.feedback(recall.id, used=[allergy.id, doctor.id])
    links = memory.backend.links_of([allergy.id], min_weight=0.5)
    assert [(k.kind, round(k.weight, 2)) for k in links] == [("co_used", 0.6)]
    recall = memory.recall("penicillin allergy", scope="ana", top_k=1)
    linked = [i for i in recall.items if i.record.id == doctor.id]
    assert recall.items[0].record.id == allergy.id
    expanded = memory.recall("penicillin allergy", scope="ana", top_k=3)
    via = [i for i in expanded.items if i.record.id == doctor.id]
    assert via and via[0].note == f"linked from {allergy.id}"
    assert linked == [] or linked[0].note is not None


def test_recent_notes_and_authority_sections_in_the_context(memory: Memory) -> None:
    for text in (
        "I live in Lisbon.",
        "I play the cello.",
        "My dog is Pixel.",
        "I work at a bakery.",
        "I love sourdough.",
    ):
        memory.write(text, scope="ana")
    text = memory.recall("cello", scope="ana").render()
    assert text.index("Recent notes:") < text.index("Relevant notes:")
    assert "sourdough" in text.split("Relevant notes:")[0]


def _spy_search(memory: Memory, limits: list[int]) -> None:
    """Record the ``limit`` of every search the recall makes (the store still answers)."""
    backend = memory.store.backend
    search = backend.search

    def spy(*args: object, **kwargs: object) -> object:
        limits.append(int(kwargs["limit"]))  # type: ignore[call-overload]
        return search(*args, **kwargs)  # type: ignore[arg-type]

    backend.search = spy  # type: ignore[method-assign]


def test_without_top_k_the_pool_is_what_the_budget_can_show(memory: Memory) -> None:
    """A note's line is about 30 tokens: the pool is the budget's worth of notes (never
    fewer than pool_min), from the vector search and as many again by keyword; a deeper
    pool adds only what the budget has no room for."""
    memory.write_many(
        [memory.turn(f"I walked the dog along route {n}.", scope="ana") for n in range(30)]
    )
    limits: list[int] = []
    _spy_search(memory, limits)
    memory.recall("dog walks", scope="ana", budget_tokens=1500)
    memory.recall("dog walks", scope="ana", budget_tokens=6000)
    memory.recall("dog walks", scope="ana", budget_tokens=300)
    memory.recall("dog walks", scope="ana", top_k=7)
    pool_min, factor = memory.config.pool_min, memory.config.pool_factor
    assert limits == [max(pool_min, 1500 // 30), 6000 // 30, pool_min, max(7 * factor, pool_min)]


def test_packing_only_what_the_budget_can_show_changes_nothing_it_shows(
    db_url: str, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pool larger than the budget: lines, flags and excerpts are made only for the best
    relevant records the budget could hold (and a few more), and the context is the one a
    packing of the whole pool gives; no record the budget could not show is an item."""
    from commonplace.read import _rank

    # recalls do not refresh what they show here, so two recalls score alike
    config = Config(search_min_notes=0, touch_on_recall=False)
    texts = [f"Route {n} of the dog walk goes past the old mill and the river." for n in range(80)]
    with Memory(db_url, clock=clock, config=config) as memory:
        memory.write_many([memory.turn(t, scope="ana") for t in texts])
        considered: list[int] = []
        within = _rank._within_budget

        def counted(relevant: list[object], budget: int) -> int:
            considered.append(within(relevant, budget))  # type: ignore[arg-type]
            return considered[-1]

        monkeypatch.setattr(_rank, "_within_budget", counted)
        recall = memory.recall("dog walk past the mill", scope="ana", budget_tokens=400)
        monkeypatch.setattr(_rank, "_within_budget", lambda relevant, budget: len(relevant))
        whole = memory.recall("dog walk past the mill", scope="ana", budget_tokens=400)
    relevant = [i for i in recall.items if i.section == "relevant"]
    assert 0 < len(relevant) < considered[0] < 40 and recall.tokens <= 400
    assert recall.tokens > 400 - 40  # nearly full: no line of ~20 tokens was left out
    assert set(recall.included) == {i.record.id for i in recall.items}
    assert recall.text == whole.text and recall.included == whole.included
