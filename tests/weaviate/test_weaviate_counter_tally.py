"""Counter tallies on a real server: a record with many counter events is read through the
tally its record carries plus the events stored after its cutoff, with the same counts as
from every event, whoever wrote the tally and whatever happened to the record since
(``commonplace_weaviate._counters``). When an event is stored is the writer's wall clock,
the one thing these tests set (``_stored_at``): events stored days ago are what a tally
covers."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, time, timedelta, timezone
from typing import Any

import pytest

from commonplace import Record, Scope
from commonplace.errors import StoreError
from commonplace.stores import TurnWrite, WriteBatch
from commonplace.testing import T0, episode, note, unit
from commonplace.testing._fixtures import rows
from commonplace_weaviate import WeaviateBackend, _counters
from commonplace_weaviate import _schema as S
from commonplace_weaviate._counters import (
    TALLIES_PER_WRITE,
    TALLY_AFTER,
    Tally,
    _after_cutoffs,
    tally_of,
)
from commonplace_weaviate._mapping import object_uuid

pytestmark = pytest.mark.weaviate

ANA = Scope(user="ana")
SPREAD = timedelta(hours=2)  # between two accesses' own times
DAYS_AGO = datetime.now(timezone.utc) - timedelta(days=3)  # before any cutoff made today


def _one_note(backend: WeaviateBackend) -> str:
    turn = episode(ANA, "ana drinks green tea", at=T0)
    made = note(turn)
    backend.apply(WriteBatch([TurnWrite(turn, made)], rows(unit(1.0))))
    return made.id


@contextmanager
def _stored(backend: WeaviateBackend, when: datetime) -> Iterator[None]:
    """Events written in the block are stored at ``when`` (the writer's wall clock)."""
    backend._stored_at = lambda: when  # type: ignore[method-assign]
    try:
        yield
    finally:
        del backend._stored_at


def _access(backend: WeaviateBackend, rid: str, times: list[datetime]) -> None:
    for at in times:
        backend.update_records([rid], at=at, counter="access")


def _times(start: datetime, n: int) -> list[datetime]:
    return [start + SPREAD * i for i in range(n)]


def _read(backend: WeaviateBackend, rid: str) -> Record:
    (record,) = backend.get_records([rid])
    return record


def _tally(backend: WeaviateBackend, rid: str) -> Tally | None:
    ((_, _, row),) = backend._fetch_rows([rid])
    return tally_of(row)


def _events_read(backend: WeaviateBackend, rid: str) -> int:
    """How many events a read of ``rid`` aggregates now (its tally's cutoff on)."""
    where = _after_cutoffs([rid], {rid: _tally(backend, rid)})
    return sum(n for _, totals in backend._aggregate(where, 4) for n, _ in totals.values())


def _aggregated_by(backend: WeaviateBackend, read: Callable[[], object]) -> int:
    """How many events the counter aggregates sent while ``read`` ran counted."""
    seen: list[int] = []
    inner = backend._aggregate

    def spy(where: Any, groups: int) -> Any:
        found = inner(where, groups)
        seen.append(sum(n for _, totals in found for n, _ in totals.values()))
        return found

    backend._aggregate = spy  # type: ignore[method-assign]
    try:
        read()
    finally:
        del backend._aggregate
    assert seen, "the read aggregated no counters"
    return sum(seen)


def _tallied(backend: WeaviateBackend, rid: str, n: int) -> list[datetime]:
    """``n`` accesses of ``rid`` stored days ago, a read (which finds them many), and one
    more access now (a counter write, which makes the tally); the times of every access."""
    times = _times(T0, n)
    with _stored(backend, DAYS_AGO):
        _access(backend, rid, times)
    _read(backend, rid)
    last = times[-1] + SPREAD
    _access(backend, rid, [last])
    return [*times, last]


def test_a_record_with_many_events_is_read_through_a_tally_with_the_same_counts(
    backend: WeaviateBackend,
) -> None:
    rid = _one_note(backend)
    times = _times(T0, TALLY_AFTER + 40)
    with _stored(backend, DAYS_AGO):
        _access(backend, rid, times)
    before = _read(backend, rid)
    assert before.access_count == len(times) and before.last_access == times[-1]
    assert _tally(backend, rid) is None  # read from every event so far

    last = times[-1] + SPREAD
    _access(backend, rid, [last])  # the counter write tallies what the read found many
    tally = _tally(backend, rid)
    assert tally is not None
    # a UTC midnight, at least a day behind the wall clock: every event stored days ago
    assert tally.to.time() == time.min and tally.to.tzinfo is not None
    assert DAYS_AGO < tally.to <= datetime.now(timezone.utc) - timedelta(days=1)
    assert tally.totals["access"] == (len(times), times[-1])

    # the read aggregates only the events stored after the cutoff: the last one
    aggregated = _aggregated_by(backend, lambda: _read(backend, rid))
    assert aggregated == _events_read(backend, rid) == 1
    after = _read(backend, rid)
    assert (after.access_count, after.last_access) == (len(times) + 1, last)


def test_a_keyword_only_hit_is_counted_through_its_tally(backend: WeaviateBackend) -> None:
    """Its counters are read before its row comes (with its cosine): its tally comes with
    the keyword query."""
    rid = _one_note(backend)
    turn = episode(ANA, "ana walks her dog at dawn", at=T0)
    other = note(turn)
    backend.apply(WriteBatch([TurnWrite(turn, other)], rows(unit(0.0, 1.0))))
    times = _tallied(backend, rid, TALLY_AFTER + 40)
    assert _tally(backend, rid) is not None

    found: list[Any] = []
    aggregated = _aggregated_by(
        backend,
        lambda: found.extend(backend.search(ANA, unit(0.0, 1.0), text="green tea", limit=1)),
    )
    by_id = {h.record.id: h for h in found}
    # the vector query's one hit is the other note; the tea note came by keyword only
    assert set(by_id) == {other.id, rid} and by_id[rid].keyword
    assert by_id[rid].record.access_count == len(times)
    assert aggregated < TALLY_AFTER


def test_accesses_after_a_tally_are_counted_once(backend: WeaviateBackend) -> None:
    rid = _one_note(backend)
    times = _tallied(backend, rid, TALLY_AFTER + 40)
    assert _tally(backend, rid) is not None
    more = _times(times[-1] + SPREAD, 5)
    _access(backend, rid, more)
    record = _read(backend, rid)
    assert (record.access_count, record.last_access) == (len(times) + 5, more[-1])


def test_a_count_stamped_long_before_a_tally_is_still_counted(backend: WeaviateBackend) -> None:
    """A feedback for an old recall is stamped with that recall's time: what places it after
    a tally is when it was stored, not its own time."""
    rid = _one_note(backend)
    times = _tallied(backend, rid, TALLY_AFTER + 40)
    tally = _tally(backend, rid)
    assert tally is not None
    long_ago = T0 - timedelta(days=300)  # before every event the tally covers
    backend.update_records([rid], at=long_ago, counter="used")
    backend.update_records([rid], at=long_ago, counter="access")
    record = _read(backend, rid)
    assert (record.access_count, record.used_count) == (len(times) + 1, 1)
    assert record.last_access == times[-1]  # the newest time still wins


def test_a_record_written_again_loses_its_tally_and_keeps_its_counts(
    backend: WeaviateBackend,
) -> None:
    rid = _one_note(backend)
    times = _tallied(backend, rid, TALLY_AFTER + 40)
    record = _read(backend, rid)
    assert _tally(backend, rid) is not None and record.access_count == len(times)
    backend.put_records([record], rows(unit(1.0)), replace=True)  # a full rewrite
    assert _tally(backend, rid) is None
    again = _read(backend, rid)
    assert (again.access_count, again.last_access) == (len(times), times[-1])


def test_two_clients_that_tally_one_record_both_leave_the_right_counts(
    backend: WeaviateBackend,
) -> None:
    rid = _one_note(backend)
    other = WeaviateBackend(backend.url)
    try:
        times = _times(T0, TALLY_AFTER + 40)
        with _stored(backend, DAYS_AGO):
            _access(backend, rid, times)
        _read(backend, rid)
        _read(other, rid)  # both find it due, before either has tallied
        first = times[-1] + SPREAD
        _access(backend, rid, [first])
        mine = _tally(backend, rid)
        # days later, the other client tallies from what it read then (no tally)
        more = _times(first + timedelta(days=3), 3)
        with _stored(other, datetime.now(timezone.utc) + timedelta(days=3)):
            _access(other, rid, more)
        theirs = _tally(backend, rid)
        assert mine is not None and theirs is not None and theirs.to > mine.to
        everything = [*times, first, *more]
        for client in (backend, other):
            record = _read(client, rid)
            assert (record.access_count, record.last_access) == (len(everything), more[-1])
    finally:
        other.close()


def _old_version_access(backend: WeaviateBackend, rid: str, times: list[datetime]) -> None:
    """Access events as an older version inserted them: with no ``after``."""
    from weaviate.classes.data import DataObject

    backend._insert(
        S.COUNTER,
        None,
        [
            DataObject(
                uuid=uuid.uuid4(),
                properties={
                    "key": f"access:{rid}",
                    "record_id": rid,
                    "field": "access",
                    "at": at,
                    "ledger": True,
                },
            )
            for at in times
        ],
        "counter events",
        [f"access:{rid}"],
    )


def test_a_record_with_events_of_an_older_version_is_tallied_with_them(
    backend: WeaviateBackend,
) -> None:
    """An older version's events carry no time of storing, so no range finds them: the first
    tally counts them as all events less those stored after its cutoff."""
    rid = _one_note(backend)
    times = _times(T0, TALLY_AFTER + 40)
    with _stored(backend, DAYS_AGO):
        _access(backend, rid, times)
    # the newest access of all is an old one, so the tally must carry its time
    old = [times[-1] + timedelta(hours=10 + i) for i in range(3)]
    _old_version_access(backend, rid, old)
    _read(backend, rid)
    last = times[-1] + SPREAD  # stored now, after the cutoff, though its own time is older
    _access(backend, rid, [last])
    tally = _tally(backend, rid)
    assert tally is not None
    assert tally.totals["access"][0] == len(times) + len(old)
    record = _read(backend, rid)
    assert (record.access_count, record.last_access) == (len(times) + len(old) + 1, old[-1])
    # and from now on a read aggregates only the events stored after the cutoff
    assert _aggregated_by(backend, lambda: _read(backend, rid)) == 1
    _access(backend, rid, [old[-1] + SPREAD])
    record = _read(backend, rid)
    assert (record.access_count, record.last_access) == (
        len(times) + len(old) + 2,
        old[-1] + SPREAD,
    )


def test_an_event_stored_while_a_first_tally_counts_puts_it_off(
    backend: WeaviateBackend,
) -> None:
    """The first tally of a record with an older version's events counts every event, then
    those after the cutoff: an event stored in between must not be counted twice."""
    rid = _one_note(backend)
    times = _times(T0, TALLY_AFTER + 40)
    with _stored(backend, DAYS_AGO):
        _access(backend, rid, times)
    _old_version_access(backend, rid, [times[-1] + SPREAD])
    _read(backend, rid)
    inner = backend._aggregate
    calls: list[object] = []
    racing = times[-1] + 2 * SPREAD

    def racy(where: Any, groups: int) -> Any:
        calls.append(where)
        if len(calls) == 2:  # another client counts an access just then
            del backend._aggregate
            _access(backend, rid, [racing])
            backend._aggregate = racy  # type: ignore[method-assign]
        return inner(where, groups)

    backend._aggregate = racy  # type: ignore[method-assign]
    try:
        _access(backend, rid, [racing + SPREAD])
    finally:
        del backend._aggregate
    assert len(calls) >= 4  # the tally was tried, and found the count moved
    assert _tally(backend, rid) is None
    record = _read(backend, rid)  # which finds it due again
    assert record.access_count == len(times) + 3
    _access(backend, rid, [racing + 2 * SPREAD])
    assert _tally(backend, rid) is not None
    record = _read(backend, rid)
    assert (record.access_count, record.last_access) == (len(times) + 4, racing + 2 * SPREAD)


def test_a_tally_that_cannot_be_read_is_ignored(backend: WeaviateBackend) -> None:
    rid = _one_note(backend)
    times = _tallied(backend, rid, TALLY_AFTER + 40)
    ((spec, tenant, _),) = backend._fetch_rows([rid])
    for damaged in ("{not json", '{"access": [5, null]}', '{"to": "soon", "access": [5]}'):
        backend._patch(spec, tenant, object_uuid("record", rid), {"tally": damaged}, "damage")
        assert _tally(backend, rid) is None
        record = _read(backend, rid)
        assert (record.access_count, record.last_access) == (len(times), times[-1])


def test_a_tally_that_fails_does_not_fail_the_counter_write(
    backend: WeaviateBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The events of the write have landed by then: an error would have the caller send
    them again and count them twice."""
    rid = _one_note(backend)
    times = _times(T0, TALLY_AFTER + 40)
    with _stored(backend, DAYS_AGO):
        _access(backend, rid, times)
    _read(backend, rid)

    def server_down(*_: object) -> None:
        raise StoreError("Weaviate at 127.0.0.1 did not answer (injected)")

    monkeypatch.setattr(backend, "_events_between", server_down)
    last = times[-1] + SPREAD
    _access(backend, rid, [last])  # no error
    assert _tally(backend, rid) is None
    monkeypatch.undo()
    record = _read(backend, rid)
    assert (record.access_count, record.last_access) == (len(times) + 1, last)
    _access(backend, rid, [last + SPREAD])  # due again after that read: tallied now
    assert _tally(backend, rid) is not None


def test_a_counter_write_makes_a_few_tallies_and_leaves_the_rest_to_the_next(
    backend: WeaviateBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_counters, "TALLY_AFTER", 3)  # a few events make a record due
    turns = [episode(ANA, f"ana keeps note {i}", at=T0) for i in range(TALLIES_PER_WRITE + 4)]
    notes = [note(t) for t in turns]
    backend.apply(
        WriteBatch([TurnWrite(t, n) for t, n in zip(turns, notes)], rows(*[unit(1.0)] * len(notes)))
    )
    ids = [n.id for n in notes]
    times = _times(T0, 3)
    with _stored(backend, DAYS_AGO):
        for at in times:
            backend.update_records(ids, at=at, counter="access")
    backend.get_records(ids)  # every one of them is due now

    def tallied() -> int:
        return sum(_tally(backend, rid) is not None for rid in ids)

    assert tallied() == 0
    backend.update_records([ids[0]], at=times[-1], counter="access")
    assert tallied() == TALLIES_PER_WRITE
    backend.update_records([ids[0]], at=times[-1], counter="access")
    assert tallied() == len(ids)
    counts = {r.id: r.access_count for r in backend.get_records(ids)}
    assert counts == {rid: 3 + 2 * (rid == ids[0]) for rid in ids}


def test_the_tally_round_trips_through_its_json() -> None:
    at = datetime(2026, 3, 1, 12, 30, 0, 123_456, tzinfo=timezone.utc)
    tally = Tally(
        datetime(2026, 3, 1, tzinfo=timezone.utc),
        {"access": (7, at), "used": (2, None), "seen": (1, at)},
    )
    assert Tally.from_json(tally.to_json()) == tally
    assert Tally.from_json(None) is None and Tally.from_json("") is None
