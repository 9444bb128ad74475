"""Consolidation ("sleep"): summaries with coverage maps, idempotent, invalidated on change."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from commonplace import Config, Kind, ManualClock, Memory, Record, hookimpl
from commonplace._records import Status


@pytest.fixture
def memory(db_url: str, clock: ManualClock) -> Iterator[Memory]:
    with Memory(db_url, clock=clock, config=Config(search_min_notes=0)) as m:
        yield m


JOANA = (
    "My partner Joana is a nurse.",
    "Joana loves climbing on weekends.",
    "Joana and I adopted a cat called Miso.",
    "I think the weather is nice today.",
)


def _write(memory: Memory, clock: ManualClock, texts: Sequence[str]) -> list[Record]:
    notes = []
    for text in texts:
        note = memory.write(text, scope="ana").note
        assert note is not None
        notes.append(note)
        clock.advance(days=1)
    clock.advance(days=2)
    return notes


def _summaries(memory: Memory, *, status: Status = Status.ACTIVE) -> list[Record]:
    from commonplace.stores import RecordQuery

    return list(memory.backend.iter_records(RecordQuery(kinds=(Kind.SUMMARY,), statuses=(status,))))


def test_a_cluster_becomes_a_summary_with_a_coverage_map(
    memory: Memory, clock: ManualClock
) -> None:
    notes = _write(memory, clock, JOANA)
    report = memory.consolidate(scope="ana")
    assert report.counts() == {"summarise": 1}
    (summary,) = _summaries(memory)
    assert summary.data["entity"] == "joana" and summary.text.startswith("About joana:")
    coverage = {sentence: ids for sentence, ids in summary.data["coverage"]}
    assert set(coverage) == {n.text for n in notes[:3]}
    assert set(summary.provenance) == {n.id for n in notes[:3]}
    episodes = {e.id for e in memory.explain(summary.id).episodes()}
    assert episodes == {n.provenance[0] for n in notes[:3]}  # traced down to the evidence
    assert memory.count(Kind.NOTE) == 4  # source notes stay


def test_consolidation_is_idempotent(memory: Memory, clock: ManualClock) -> None:
    _write(memory, clock, JOANA)
    memory.consolidate(scope="ana")
    assert memory.consolidate(scope="ana").actions == ()
    assert len(_summaries(memory)) == 1


def test_small_or_young_clusters_wait(memory: Memory, clock: ManualClock) -> None:
    memory.write("Joana loves climbing.", scope="ana")
    memory.write("Joana is a nurse.", scope="ana")
    memory.write("Joana adopted a cat.", scope="ana")
    assert memory.consolidate(scope="ana").actions == ()  # younger than min_age_days
    clock.advance(days=2)
    assert memory.consolidate(scope="ana").counts() == {"summarise": 1}


def test_a_superseded_source_invalidates_the_summary_and_the_next_run_refreshes(
    memory: Memory, clock: ManualClock
) -> None:
    notes = _write(
        memory,
        clock,
        (
            "I work at Feedzai.",
            "Feedzai has an office in Porto.",
            "Feedzai pays for my train pass.",
            "Feedzai uses Kotlin.",
        ),
    )
    memory.consolidate(scope="ana")
    (old,) = _summaries(memory)
    assert notes[0].id in old.provenance
    memory.write("I work at Talkdesk now.", scope="ana")  # supersedes user.employer
    assert memory.explain(notes[0].id).record.superseded_by is not None  # type: ignore[union-attr]
    assert memory.explain(old.id).record.status is Status.INVALID  # type: ignore[union-attr]
    clock.advance(days=2)
    assert memory.consolidate(scope="ana").counts() == {"summarise": 1}
    (fresh,) = _summaries(memory)
    assert fresh.id != old.id and notes[0].id not in fresh.provenance
    assert [s.id for s in _summaries(memory, status=Status.INVALID)] == [old.id]


def test_a_run_killed_halfway_is_finished_by_the_next(db_url: str, clock: ManualClock) -> None:
    class DiesOnSecondCluster:
        calls = 0

        @hookimpl
        def commonplace_summarise(self, entity: str, notes: Sequence[Record]) -> None:
            DiesOnSecondCluster.calls += 1
            if DiesOnSecondCluster.calls == 2:
                raise KeyboardInterrupt("killed")

    with Memory(db_url, clock=clock, plugins=[DiesOnSecondCluster()]) as memory:
        _write(
            memory,
            clock,
            (*JOANA[:3], "Rui plays chess.", "Rui teaches maths.", "Rui and I went hiking."),
        )
        with pytest.raises(KeyboardInterrupt):
            memory.consolidate(scope="ana")
        assert len(_summaries(memory)) == 1  # the first cluster's summary is committed
        report = memory.consolidate(scope="ana")
        assert report.counts() == {"summarise": 1}
        assert {s.data["entity"] for s in _summaries(memory)} == {"joana", "rui"}


def test_jokes_and_questions_never_feed_a_summary(memory: Memory, clock: ManualClock) -> None:
    _write(
        memory,
        clock,
        (
            "lol Joana is secretly a spy",
            "Is my partner Joana coming tonight?",
            "Joana loves climbing.",
            "Joana is a nurse.",
            "Joana plays bass.",
        ),
    )
    memory.consolidate(scope="ana")
    (summary,) = _summaries(memory)
    assert "spy" not in summary.text and "coming tonight" not in summary.text


def test_a_summary_never_outranks_its_notes(memory: Memory, clock: ManualClock) -> None:
    _write(memory, clock, JOANA)
    memory.consolidate(scope="ana")
    (summary,) = _summaries(memory)
    items = memory.recall("Joana nurse climbing cat", scope="ana", top_k=10).items
    position = {i.record.id: n for n, i in enumerate(items)}
    for source in summary.provenance:
        assert position[source] < position[summary.id]


# -- procedures -------------------------------------------------------------------------


def test_repeated_requests_become_a_procedure_promoted_after_confirmations(
    memory: Memory, clock: ManualClock
) -> None:
    memory.write("Can you draft my weekly status report for the team?", scope="ana")
    clock.advance(days=7)
    memory.write("Please draft my weekly status report for the team again.", scope="ana")
    clock.advance(days=2)
    first = memory.consolidate(scope="ana")
    assert first.counts() == {"new_procedure": 1}
    clock.advance(days=5)
    memory.write("Could you draft the weekly status report for my team?", scope="ana")
    second = memory.consolidate(scope="ana")
    assert second.counts() == {"promote_procedure": 1}
    (procedure,) = memory.backend.iter_records(
        __import__("commonplace").stores.RecordQuery(kinds=(Kind.PROCEDURE,))
    )
    assert procedure.data["confirmations"] == 3 and procedure.data["promoted"] is True
    assert memory.consolidate(scope="ana").actions == ()
