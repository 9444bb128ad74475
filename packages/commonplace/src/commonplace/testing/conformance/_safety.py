"""Atomicity and the store's lifecycle (required, ``"records"``), concurrency (optional).

``"records"`` covers atomicity, or for stores without transactions retry safety (a refused
call changes nothing, a stored turn is stored whole, sending a batch again is safe; the
tests hold for both kinds of store), and the store as a whole (a closed store refuses every
call, its url opens the same store, times keep their microseconds). ``"concurrency"``:
threads and two instances on one store write at once and lose no update.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import timedelta

import pytest

from ..._records import Kind, Tier
from ..._scope import Scope
from ...errors import InvalidInputError, StoreClosedError
from ...stores import (
    PROFILE_CARD,
    Backend,
    Card,
    Conflict,
    LinkGraph,
    RecallLog,
    RecordQuery,
    SearchQuery,
    Store,
    WriteBatch,
)
from ...stores._entries import card_entry, conflict_entry
from .._fixtures import PIN, T0, later, rows, unit
from ._core import ANA, BOB, CapabilityGroup, _ids, _nid, _note, _same, _turn, _write

# -- atomicity ----------------------------------------------------------------------------------


class TestAtomicity(CapabilityGroup):
    capability = "records"

    def test_a_refused_call_changes_nothing(self, store: Store) -> None:
        turns = [_turn(ANA, "first"), _turn(BOB, "second")]
        with pytest.raises(InvalidInputError):
            store.write_turns(turns, rows(unit(1.0), unit(1.0), unit(1.0)))
        assert store.existing_episode_ids({t.episode.id for t in turns}) == set()
        assert store.count(None, Kind.NOTE) == 0 and store.count(None, Kind.EPISODE) == 0

    def test_a_stored_turn_is_stored_whole(self, store: Store) -> None:
        turns = [
            _turn(Scope(user=f"u{i % 3}"), f"turn {i}", with_note=i % 2 == 0) for i in range(9)
        ]
        assert _write(store, turns) == [True] * 9
        for turn in turns:
            assert store.get_episode(turn.episode.id) == turn.episode
            if turn.note is not None:
                assert _same(store.get_record(_nid(turn)), _note(turn))

    def test_a_batch_commits_its_links_entries_and_cards_with_its_turns(self, store: Store) -> None:
        first, second = _turn(ANA, "first"), _turn(ANA, "second", at=later(1))
        a, b = _nid(first), _nid(second)
        conflict = Conflict("cf_ab", ANA, "mia", "two Mias", (a, b), later(1))
        second = replace(
            second, links=((b, a, "session", 0.3),), entries=(conflict_entry(conflict),)
        )
        card = Card(ANA, PROFILE_CARD, "Ana said two things.", later(2))
        turns = [first, second]
        assert store.apply(
            WriteBatch(turns, rows(unit(1.0), unit(0.0, 1.0)), [card_entry(card)])
        ) == [
            True,
            True,
        ]
        assert [store.get_record(r) is not None for r in (a, b)] == [True, True]
        assert store.books.conflicts(ANA, open_only=True) == [conflict]
        assert store.books.get_card(ANA, PROFILE_CARD) == card
        if isinstance(store.backend, LinkGraph):
            (link,) = store.links.links_of([a], min_weight=0.0)
            assert {link.a, link.b} == {a, b} and link.kind == "session"
            assert link.weight == pytest.approx(0.3)

    def test_a_turn_already_stored_brings_nothing_again(self, store: Store) -> None:
        said = _turn(ANA, "said once")
        _write(store, [said])
        other = _turn(ANA, "other", at=later(1))
        _write(store, [other])
        again = replace(
            said,
            links=((_nid(said), _nid(other), "entity", 0.5),),
            entries=(conflict_entry(Conflict("cf_again", ANA, "x", "y", (_nid(said),), T0)),),
        )
        assert store.apply(WriteBatch([again], rows(unit(1.0)))) == [False]
        assert store.books.conflicts(ANA, open_only=False) == []
        if isinstance(store.backend, LinkGraph):
            assert store.links.links_of([_nid(said)], min_weight=0.0) == []

    def test_a_refused_batch_stores_none_of_its_entries(self, store: Store) -> None:
        turn = replace(
            _turn(ANA, "refused"),
            entries=(conflict_entry(Conflict("cf_no", ANA, "x", "y", ("a",), T0)),),
        )
        card = Card(ANA, PROFILE_CARD, "never", T0)
        with pytest.raises(InvalidInputError):
            store.apply(WriteBatch([turn], rows(unit(1.0), unit(1.0)), [card_entry(card)]))
        assert store.books.conflicts(ANA, open_only=False) == []
        assert store.books.get_card(ANA, PROFILE_CARD) is None
        assert store.count(None, Kind.EPISODE) == 0

    def test_sending_a_batch_again_is_safe(self, store: Store) -> None:
        turns = [_turn(ANA, f"retry {i}") for i in range(4)]
        _write(store, turns[:2])
        assert _write(store, turns) == [False, False, True, True]
        assert store.count(ANA, Kind.NOTE) == 4 and store.count(ANA, Kind.EPISODE) == 4
        assert len(list(store.iter_records(RecordQuery(scope=ANA)))) == 4


# -- concurrency --------------------------------------------------------------------------------


def _run(threads: int, job: Callable[[int], object]) -> list[object]:
    start = threading.Barrier(threads)

    def go(i: int) -> object:
        start.wait()
        return job(i)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(go, range(threads)))


class TestConcurrency(CapabilityGroup):
    capability = "concurrency"

    def test_concurrent_counters_lose_no_update(self, store: Store) -> None:
        turns = [_turn(ANA, f"hot {i}") for i in range(3)]
        _write(store, turns)
        ids = [_nid(t) for t in turns]

        def job(i: int) -> None:
            for n in range(10):
                store.books.touch(ids, at=later(n))
                store.books.record_feedback(used=[ids[0]], ignored=[ids[1]], at=later(n))

        _run(6, job)
        got = {r.id: r for r in store.get_records(ids)}
        assert [got[i].access_count for i in ids] == [60, 60, 60]
        assert (got[ids[0]].used_count, got[ids[1]].ignored_count) == (60, 60)
        assert store.books.uses_since([ids[0]], T0) == {ids[0]: 60}

    def test_concurrent_writers_of_different_turns(self, store: Store) -> None:
        def job(i: int) -> list[bool]:
            turns = [_turn(Scope(user=f"w{i}"), f"thread {i} turn {n}") for n in range(8)]
            return _write(store, turns)

        assert _run(4, job) == [[True] * 8] * 4
        assert store.count(None, Kind.NOTE) == 32 and store.count(None, Kind.EPISODE) == 32
        for i in range(4):
            assert store.count(Scope(user=f"w{i}"), Kind.NOTE) == 8

    def test_concurrent_writes_of_one_turn_store_it_once(self, store: Store) -> None:
        turn = _turn(ANA, "the same turn from everywhere")
        results = _run(6, lambda i: _write(store, [turn]))
        assert [True] in results
        assert store.count(None, Kind.EPISODE) == 1 and store.count(None, Kind.NOTE) == 1
        assert _same(store.get_record(_nid(turn)), _note(turn))

    def test_concurrent_updates_of_different_fields_all_land(self, store: Store) -> None:
        turn = _turn(ANA, "contended")
        _write(store, [turn])
        rid = _nid(turn)

        def job(i: int) -> None:
            for n in range(10):
                if i == 0:
                    store.update_records([rid], at=later(n), tier=Tier.HOT)
                elif i == 1:
                    store.update_records([rid], at=later(n), pinned=True)
                elif i == 2:
                    store.update_records([rid], at=later(n), valid_to=later(100))
                else:
                    store.books.touch([rid], at=later(n))

        _run(4, job)
        got = store.get_record(rid)
        assert got is not None
        assert (got.tier, got.pinned, got.valid_to, got.access_count) == (
            Tier.HOT,
            True,
            later(100),
            10,
        )

    def test_a_write_if_absent_has_one_winner_across_instances(
        self, store: Store, backend_reopen: Callable[[Backend | Store], Store]
    ) -> None:
        """Feedback is taken once per recall: of instances racing to mark the same recall
        answered, exactly one wins, every time (the ledger's ``put(replace=False)``)."""
        others = [store, backend_reopen(store), backend_reopen(store)]
        for race in range(10):
            recall = RecallLog(f"rc_race_{race}", ANA, later(race), ("nt_x",))
            store.books.log_recall(recall)

            def answer(i: int, recall_id: str = recall.id) -> bool:
                return others[i % 3].books.mark_recall_feedback(recall_id, at=later(i))

            wins = _run(6, answer)
            assert wins.count(True) == 1, (race, wins)

    def test_two_instances_on_one_store_see_and_add_up(
        self, store: Store, backend_reopen: Callable[[Backend | Store], Store]
    ) -> None:
        other = backend_reopen(store)
        turn = _turn(ANA, "shared")
        _write(store, [turn])
        rid = _nid(turn)
        assert _ids([c.record for c in other.search(ANA, unit(1.0), text=None, limit=3)]) == [rid]
        assert _write(other, [turn]) == [False]

        def job(i: int) -> None:
            for n in range(10):
                (store if i % 2 else other).books.touch([rid], at=later(n))

        _run(4, job)
        for backend in (store, other):
            got = backend.get_record(rid)
            assert got is not None and got.access_count == 40


# -- the store as a whole -----------------------------------------------------------------------


class TestStoreLifecycle(CapabilityGroup):
    capability = "records"

    def test_a_closed_store_refuses_every_call(
        self, backend_factory: Callable[[], Backend]
    ) -> None:
        closed = Store(backend_factory())
        closed.embedding.write_pin(PIN)
        turn = _turn(ANA, "before closing")
        _write(closed, [turn])
        closed.close()
        closed.close()  # twice is fine
        calls: list[Callable[[], object]] = [
            closed.embedding.read_pin,
            lambda: closed.get_record(_nid(turn)),
            lambda: closed.search(ANA, unit(1.0), text="x", limit=3),
            lambda: closed.count(ANA, Kind.NOTE),
            lambda: closed.books.touch([_nid(turn)], at=later(1)),
            lambda: _write(closed, [_turn(ANA, "after closing")]),
            lambda: closed.read_batch(
                listings=(RecordQuery(scope=ANA),),
                search=SearchQuery(ANA, unit(1.0), "x", 3),
                cards=((ANA, "profile"),),
            ),
            lambda: closed.books.log_recall(
                RecallLog("rc_closed", ANA, later(1), ()), accessed=["x"]
            ),
        ]
        for call in calls:
            with pytest.raises(StoreClosedError):
                call()

    def test_the_url_opens_the_same_store(
        self, store: Store, backend_reopen: Callable[[Backend | Store], Store]
    ) -> None:
        turn = _turn(ANA, "persisted")
        _write(store, [turn])
        again = backend_reopen(store)
        assert again.embedding.read_pin() == PIN
        assert _same(again.get_record(_nid(turn)), _note(turn))
        assert again.get_episode(turn.episode.id) == turn.episode

    def test_times_keep_their_microseconds(self, store: Store) -> None:
        at = T0 + timedelta(microseconds=123_457)
        turn = _turn(ANA, "precise", at=at)
        _write(store, [turn])
        got = store.get_record(_nid(turn))
        assert got is not None and got.created_at == at
        stored = store.get_episode(turn.episode.id)
        assert stored is not None and stored.at == at
