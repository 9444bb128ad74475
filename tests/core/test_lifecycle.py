"""Every lifecycle rule, with simulated time."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from commonplace import Config, ManualClock, Memory, Tier, TierRules


@pytest.fixture
def memory(db_url: str, clock: ManualClock) -> Iterator[Memory]:
    config = Config(search_min_notes=0, tiers=TierRules(promote_uses=3, hot_budget_tokens=40))
    with Memory(db_url, clock=clock, config=config) as m:
        yield m


def _use(memory: Memory, query: str, record_id: str, times: int, clock: ManualClock) -> None:
    for _ in range(times):
        recall = memory.recall(query, scope="ana")
        memory.feedback(recall.id, used=[record_id])
        clock.advance(days=1)


# -- tiers ----------------------------------------------------------------------------


def test_new_notes_land_warm(memory: Memory) -> None:
    note = memory.write("I play the cello.", scope="ana").note
    assert note is not None and note.tier is Tier.WARM


def test_promotion_needs_k_uses_within_the_window(memory: Memory, clock: ManualClock) -> None:
    note = memory.write("I play the cello in an orchestra.", scope="ana").note
    assert note is not None
    _use(memory, "cello orchestra", note.id, 2, clock)
    assert memory.apply_tiers(scope="ana").counts().get("to_hot") is None
    _use(memory, "cello orchestra", note.id, 1, clock)
    report = memory.apply_tiers(scope="ana")
    assert [(a.action, a.rule) for a in report.actions] == [("to_hot", "promote_by_use")]
    assert memory.explain(note.id).record.tier is Tier.HOT  # type: ignore[union-attr]


def test_uses_outside_the_window_do_not_count(memory: Memory, clock: ManualClock) -> None:
    note = memory.write("I play the cello in an orchestra.", scope="ana").note
    assert note is not None
    _use(memory, "cello orchestra", note.id, 2, clock)
    clock.advance(days=20)  # the first two uses fall out of the 14-day window
    _use(memory, "cello orchestra", note.id, 1, clock)
    assert "to_hot" not in memory.apply_tiers(scope="ana").counts()


def test_hot_records_are_always_injected(memory: Memory, clock: ManualClock) -> None:
    note = memory.write("I am allergic to peanuts.", scope="ana").note
    assert note is not None
    memory.pin(note.id, scope="ana")
    memory.write_many([memory.turn(f"I watched film number {i}.", scope="ana") for i in range(10)])
    recall = memory.recall("which film did I watch", scope="ana")
    assert [r.id for r in recall.hot] == [note.id]
    assert "allergic to peanuts" in recall.render() and "Always remembered:" in recall.render()


def test_the_hot_budget_demotes_the_weakest(memory: Memory, clock: ManualClock) -> None:
    ids = []
    for n, (text, query) in enumerate(
        [
            ("I am allergic to peanuts and shellfish and to bee stings.", "allergies"),
            ("My blood type is O negative, which matters in emergencies.", "blood type"),
            ("My emergency contact is my sister Mia at the hospital.", "emergency contact"),
        ]
    ):
        note = memory.write(text, scope="ana").note
        assert note is not None
        ids.append(note.id)
        _use(memory, query, note.id, 3 + n, clock)  # the later ones are used more
    report = memory.apply_tiers(scope="ana")
    hot = {a.record_id for a in report.actions if a.action == "to_hot"}
    demoted = [a.record_id for a in report.actions if a.rule == "hot_budget"]
    assert hot == set(ids) and demoted and ids[0] in demoted and ids[2] not in demoted


def test_disuse_demotes_hot_to_warm_and_warm_to_cold(memory: Memory, clock: ManualClock) -> None:
    hot = memory.write("I am allergic to peanuts.", scope="ana").note
    warm = memory.write("I collect vinyl records.", scope="ana").note
    assert hot is not None and warm is not None
    _use(memory, "allergic peanuts", hot.id, 3, clock)
    memory.apply_tiers(scope="ana")
    clock.advance(days=31)
    report = memory.apply_tiers(scope="ana")
    moved = {(a.record_id, a.action) for a in report.actions if a.rule == "demote_unused"}
    assert moved == {(hot.id, "to_warm"), (warm.id, "to_cold")}


def test_pinned_records_are_hot_and_never_demoted(memory: Memory, clock: ManualClock) -> None:
    note = memory.write("I am allergic to peanuts.", scope="ana").note
    assert note is not None
    assert memory.pin(note.id, scope="ana").tier is Tier.HOT
    clock.advance(days=400)
    memory.apply_tiers(scope="ana")
    memory.decay(scope="ana")
    assert memory.explain(note.id).record.tier is Tier.HOT  # type: ignore[union-attr]


def test_tier_dry_run_changes_nothing(memory: Memory, clock: ManualClock) -> None:
    memory.write("I collect vinyl records.", scope="ana")
    clock.advance(days=31)
    assert memory.apply_tiers(scope="ana", dry_run=True).counts() == {"to_cold": 1}
    assert memory.audit(scope="ana") == []
    assert memory.apply_tiers(scope="ana").counts() == {"to_cold": 1}
    assert [e.rule for e in memory.audit(scope="ana")] == ["demote_unused"]


# -- supersession and temporal validity ------------------------------------------------


def test_a_new_value_supersedes_the_old_and_explain_walks_the_chain(
    memory: Memory, clock: ManualClock
) -> None:
    lisbon = memory.write("I live in Lisbon.", scope="ana").note
    clock.advance(days=100)
    porto = memory.write("I moved to Porto.", scope="ana").note
    assert lisbon is not None and porto is not None
    old = memory.explain(lisbon.id).record
    assert old.superseded_by == porto.id and old.tier is Tier.COLD  # type: ignore[union-attr]
    assert old.valid_to == porto.created_at  # type: ignore[union-attr]
    top = memory.recall("where do I live", scope="ana").items
    assert top[0].record.id == porto.id
    was = next(i for i in top if i.record.id == lisbon.id)
    assert was.note is not None and was.note.startswith("until ")
    assert was.note.endswith("; then: Porto")  # shown as past, with what replaced it


def test_as_of_returns_what_was_true_then(memory: Memory, clock: ManualClock) -> None:
    start = clock.now()
    memory.write("I live in Lisbon.", scope="ana")
    clock.advance(days=100)
    memory.write("I moved to Porto.", scope="ana")
    clock.advance(days=100)
    memory.write("I moved to Berlin.", scope="ana")
    then = memory.recall("where do I live", scope="ana", as_of=start + timedelta(days=150))
    assert [i.record.tags.value for i in then.items if i.score.gate > 0][:1] == ["Porto"]
    assert all(i.record.tags.value != "Berlin" for i in then.items)
    early = memory.recall("where do I live", scope="ana", as_of=start + timedelta(days=1))
    assert [i.record.tags.value for i in early.items] == ["Lisbon"]


def test_the_same_value_again_is_not_a_supersession(memory: Memory, clock: ManualClock) -> None:
    first = memory.write("I live in Lisbon.", scope="ana").note
    clock.advance(days=3)
    memory.write("I live in Lisbon with two cats.", scope="ana")
    assert first is not None
    assert memory.explain(first.id).record.superseded_by is None  # type: ignore[union-attr]


# every relation word the writer knows counts (the pipeline once had a shorter copy of the
# list: "niece" against "coworker" raised nothing)
@pytest.mark.parametrize("first", ["niece", "nephew", "landlord", "grandma", "flatmate"])
def test_any_known_relation_with_a_shared_name_is_a_conflict(memory: Memory, first: str) -> None:
    memory.write(f"My {first} Mia loves dinosaurs.", scope="ana")
    memory.write("My coworker Mia is on holiday.", scope="ana")
    (conflict,) = memory.conflicts(scope="ana")
    assert first in conflict.reason and "coworker" in conflict.reason


def test_two_people_with_one_name_go_to_the_conflict_queue(
    memory: Memory, clock: ManualClock
) -> None:
    a = memory.write("My sister Mia is visiting.", scope="ana").note
    b = memory.write("My coworker Mia got promoted.", scope="ana").note
    assert a is not None and b is not None
    (conflict,) = memory.conflicts(scope="ana")
    assert conflict.entity == "mia" and set(conflict.record_ids) == {a.id, b.id}
    assert "sister" in conflict.reason and "coworker" in conflict.reason
    assert memory.explain(a.id).record.text != memory.explain(b.id).record.text  # not merged
    clock.advance(days=61)
    report = memory.decay(scope="ana")
    assert [a.rule for a in report.actions] == ["conflict_timeout"]
    assert memory.conflicts(scope="ana") == []
    (resolved,) = memory.conflicts(scope="ana", open_only=False)
    assert resolved.resolution == "separate entities"


def test_pinning_is_a_tier_change_in_the_audit_log(memory: Memory, clock: ManualClock) -> None:
    note = memory.write("My passport number ends in 4471.", scope="ana").note
    assert note is not None
    pinned = memory.pin(note.id, scope="ana")
    assert pinned.pinned and pinned.tier is Tier.HOT
    clock.advance(days=1)
    unpinned = memory.pin(note.id, scope="ana", pinned=False)
    assert not unpinned.pinned and unpinned.tier is Tier.WARM
    assert [(e.action, e.rule, e.record_id) for e in memory.audit(scope="ana")] == [
        ("to_warm", "unpin", note.id),  # newest first
        ("to_hot", "pin", note.id),
    ]


def test_a_search_that_finds_only_the_oldest_value_still_brings_the_current_one(
    db_url: str, clock: ManualClock
) -> None:
    """Supersession heads are followed step by step along the chain (Lisbon, then Porto,
    then Berlin): with a pool of one, the search finds the old value and the recall shows
    what holds now, scored as relevant as what it replaced."""
    config = Config(search_min_notes=0, pool_min=1, pool_factor=1)
    with Memory(db_url, clock=clock, config=config) as memory:
        lisbon = memory.write("I live in Lisbon.", scope="ana").note
        for text in ("I moved to Porto.", "I moved to Berlin."):
            clock.advance(days=100)
            memory.write(text, scope="ana")
        for n in range(20):
            memory.write(f"I walked the dog along route {n}.", scope="ana")
        assert lisbon is not None
        limits: list[int] = []
        search = memory.backend.search

        def spy(*args: object, **kwargs: object) -> object:
            limits.append(int(kwargs["limit"]))  # type: ignore[call-overload]
            return search(*args, **kwargs)  # type: ignore[arg-type]

        memory.backend.search = spy  # type: ignore[method-assign]
        recall = memory.recall("Lisbon", scope="ana", top_k=1)
    assert limits == [1]
    relevant = [i for i in recall.items if i.section == "relevant"]
    assert [i.record.tags.value for i in relevant] == ["Berlin"]
    assert relevant[0].score.semantic >= max(i.score.semantic for i in recall.items)
