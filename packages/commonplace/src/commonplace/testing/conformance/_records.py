"""Records, the required ``"records"`` capability: episodes, records, updates and merges.

Episodes and their idempotency, derived records and their round trip, counters, tier,
status and field updates, supersession and merges, and deletes. Every backend has it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from ..._records import FactKey, Kind, Role, Status, Tags, Tier
from ..._scope import Scope
from ...errors import CommonplaceError, InvalidInputError
from ...stores import RecordQuery, Store, TurnWrite
from .._fixtures import DIM, T0, episode, later, note, rows, unit
from ._core import (
    ANA,
    ANA_T1,
    ANA_T2,
    BOB,
    CapabilityGroup,
    _all,
    _ids,
    _nid,
    _note,
    _same,
    _turn,
    _write,
)

# -- episodes -----------------------------------------------------------------------------------


class TestEpisodes(CapabilityGroup):
    capability = "records"

    def test_episodes_round_trip_exactly(self, store: Store) -> None:
        meta = {"source": "chat", "n": 3, "nested": {"ok": True}, "emoji": "🌊"}
        ep = episode(
            ANA,
            "Olá! I'm moving to Porto — \"quotes\" and 'apostrophes' 🚀",
            meta=meta,
            at=later(1),
        )
        assert store.write_turns([TurnWrite(ep)], None) == [True]
        assert store.get_episode(ep.id) == ep
        assert store.get_episode("ep_does_not_exist") is None

    def test_a_turn_already_stored_writes_nothing_again(self, store: Store) -> None:
        first = _turn(ANA, "I live in Lisbon.")
        assert _write(store, [first]) == [True]
        stored = store.get_record(_nid(first))
        assert stored is not None
        changed = TurnWrite(first.episode, replace(_note(first), text="something else"))
        assert _write(store, [changed], unit(0.0, 1.0)) == [False]
        assert _same(store.get_record(_nid(first)), stored)
        assert store.count(ANA, Kind.EPISODE) == 1 and store.count(ANA, Kind.NOTE) == 1

    def test_the_same_turn_twice_in_one_call_is_stored_once(self, store: Store) -> None:
        turn = _turn(ANA, "I have a cat.")
        assert _write(store, [turn, turn]) == [True, False]
        assert store.count(None, Kind.EPISODE) == 1 and store.count(None, Kind.NOTE) == 1

    def test_existing_episode_ids(self, store: Store) -> None:
        a, b = _turn(ANA, "one", with_note=False), _turn(BOB, "two", with_note=False)
        _write(store, [a, b])
        assert store.existing_episode_ids({a.episode.id, b.episode.id, "ep_x"}) == {
            a.episode.id,
            b.episode.id,
        }
        assert store.existing_episode_ids(set()) == set()

    def test_get_episodes_is_newest_first_limited_and_scoped(self, store: Store) -> None:
        turns = [
            _turn(ANA_T1 if i % 2 else ANA, f"turn {i}", at=later(i), with_note=False)
            for i in range(6)
        ]
        for turn in turns:
            _write(store, [turn])
        _write(store, [_turn(BOB, "bob's turn", with_note=False)])
        got = store.recent_episodes(ANA, limit=10)
        assert [e.text for e in got] == [f"turn {i}" for i in reversed(range(6))]
        assert [e.text for e in store.recent_episodes(ANA, limit=2)] == ["turn 5", "turn 4"]
        assert [e.text for e in store.recent_episodes(ANA_T1, limit=10)] == [
            "turn 5",
            "turn 3",
            "turn 1",
        ]
        assert [e.text for e in store.recent_episodes(BOB, limit=10)] == ["bob's turn"]

    def test_assistant_turns_are_stored_as_episodes_only(self, store: Store) -> None:
        turn = _turn(ANA, "Say hi to Tom!", role=Role.ASSISTANT, with_note=False)
        assert _write(store, [turn]) == [True]
        assert store.get_episode(turn.episode.id) == turn.episode
        assert store.count(ANA, Kind.NOTE) == 0 and store.count(ANA, Kind.EPISODE) == 1

    def test_delete_episodes_keeps_only_their_ids(self, store: Store) -> None:
        a, b = _turn(ANA, "keep", with_note=False), _turn(ANA, "forget", with_note=False)
        _write(store, [a, b])
        assert store.erasure.delete_episodes([b.episode.id, "ep_unknown"]) == [b.episode.id]
        assert store.get_episode(b.episode.id) is None
        assert [e.id for e in store.recent_episodes(ANA, limit=5)] == [a.episode.id]
        assert store.count(ANA, Kind.EPISODE) == 1
        # a forgotten turn is recognised, so replaying it does not store it again
        assert store.existing_episode_ids({a.episode.id, b.episode.id}) == {
            a.episode.id,
            b.episode.id,
        }
        assert _write(store, [b]) == [False]
        assert store.get_episode(b.episode.id) is None
        assert store.erasure.delete_episodes([b.episode.id]) == []


# -- records ------------------------------------------------------------------------------------


class TestRecords(CapabilityGroup):
    capability = "records"

    def test_a_note_round_trips_with_every_field(self, store: Store) -> None:
        tags = Tags(
            entities=("Porto", "Joana"),
            emotion="joy",
            importance=0.75,
            key=FactKey("user", "city"),
            value="Porto",
            event="move",
        )
        ep = episode(ANA, "I moved to Porto with Joana.", at=later(3))
        rec = note(ep, "The user moved to Porto with Joana.", tags=tags, valid_from=later(3))
        assert store.write_turns([TurnWrite(ep, rec)], rows(unit(1.0))) == [True]
        assert _same(store.get_record(rec.id), rec)
        assert _same(store.get_records([rec.id])[0], rec)

    def test_derived_records_round_trip_with_data_and_provenance(self, store: Store) -> None:
        eps = [episode(ANA, f"fact {i}") for i in range(3)]
        _write(store, [TurnWrite(e, note(e)) for e in eps])
        summary = note(
            eps[0],
            "Ana's summary.",
            kind=Kind.SUMMARY,
            record_id="su_test_1",
            provenance=[note(e).id for e in eps],
            at=later(10),
            data={"coverage": {"Ana's summary.": [note(e).id for e in eps]}},
            tier=Tier.HOT,
        )
        procedure = note(
            eps[1],
            "Greet in Portuguese.",
            kind=Kind.PROCEDURE,
            record_id="pr_test_1",
            data={"confirmations": 2},
            at=later(11),
        )
        store.put_records([summary, procedure], rows(unit(0.0, 1.0), unit(0.0, 0.0, 1.0)))
        assert _same(store.get_record("su_test_1"), summary)
        assert _same(store.get_record("pr_test_1"), procedure)
        assert store.count(ANA, Kind.SUMMARY) == 1 and store.count(ANA, Kind.PROCEDURE) == 1

    def test_an_existing_id_is_refused_and_nothing_changes(self, store: Store) -> None:
        ep = episode(ANA, "x")
        rec = note(ep, kind=Kind.SUMMARY, record_id="su_dup")
        store.put_records([rec], rows(unit(1.0)))
        clash = [
            note(ep, "other", kind=Kind.SUMMARY, record_id="su_new"),
            replace(rec, text="changed"),
        ]
        with pytest.raises(CommonplaceError):
            store.put_records(clash, rows(unit(1.0), unit(0.0, 1.0)))
        assert _same(store.get_record("su_dup"), rec)
        assert store.get_record("su_new", any_status=True) is None

    def test_replace_records_swaps_records_with_their_provenance(self, store: Store) -> None:
        eps = [episode(ANA, f"step {i}") for i in range(3)]
        _write(store, [TurnWrite(e) for e in eps])
        first = note(
            eps[0],
            "Procedure v1",
            kind=Kind.PROCEDURE,
            record_id="pr_r",
            provenance=[eps[0].id, eps[1].id],
            data={"confirmations": 1},
        )
        store.put_records([first], rows(unit(1.0)))
        store.books.touch(["pr_r"], at=later(2))
        current = store.get_record("pr_r")
        assert current is not None and current.access_count == 1
        second = replace(
            current,
            text="Procedure v2",
            provenance=(eps[2].id,),
            data={"confirmations": 2},
            tier=Tier.HOT,
        )
        fresh = note(eps[2], "Another", kind=Kind.PROCEDURE, record_id="pr_new")
        store.put_records([second, fresh], rows(unit(0.0, 1.0), unit(0.0, 0.0, 1.0)), replace=True)
        assert _same(store.get_record("pr_r"), second)
        assert _same(store.get_record("pr_new"), fresh)
        assert sorted(store.derived_from([eps[0].id, eps[1].id])) == []
        assert sorted(store.derived_from([eps[2].id])) == ["pr_new", "pr_r"]
        np.testing.assert_allclose(store.get_vectors(["pr_r"])[0], unit(0.0, 1.0), atol=1e-6)
        assert store.count(ANA, Kind.PROCEDURE) == 2

    def test_a_wrong_number_of_vectors_is_refused_before_writing(self, store: Store) -> None:
        turns = [_turn(ANA, "a"), _turn(ANA, "b")]
        with pytest.raises(InvalidInputError):
            store.write_turns(turns, rows(unit(1.0)))
        with pytest.raises(InvalidInputError):
            store.write_turns(turns, None)
        with pytest.raises(InvalidInputError):
            store.put_records([_note(turns[0])], rows(unit(1.0), unit(0.0, 1.0)))
        assert store.count(None, Kind.EPISODE) == 0 and store.count(None, Kind.NOTE) == 0

    def test_get_record_hides_inactive_records_unless_asked(self, store: Store) -> None:
        turn = _turn(ANA, "hidden soon")
        _write(store, [turn])
        rid = _nid(turn)
        store.update_records([rid], at=later(5), status=Status.DELETED)
        assert store.get_record(rid) is None
        found = store.get_record(rid, any_status=True)
        assert found is not None and found.status is Status.DELETED
        assert _ids(store.get_records([rid, "nt_unknown"])) == [rid]

    def test_get_vectors_in_order_with_zeros_for_unknown_ids(self, store: Store) -> None:
        a, b = _turn(ANA, "a"), _turn(ANA, "b")
        va, vb = unit(1.0, 2.0), unit(0.0, 0.0, 3.0, 1.0)
        _write(store, [a, b], va, vb)
        got = store.get_vectors([_nid(b), "nt_unknown", _nid(a)])
        assert got.shape == (3, DIM) and got.dtype == np.float32
        np.testing.assert_allclose(got[0], vb, atol=1e-6)
        np.testing.assert_allclose(got[1], np.zeros(DIM), atol=0)
        np.testing.assert_allclose(got[2], va, atol=1e-6)

    def test_count_counts_active_records_and_all_episodes(self, store: Store) -> None:
        turns = [_turn(ANA, f"n{i}") for i in range(4)] + [_turn(BOB, "b")]
        _write(store, turns)
        _write(store, [_turn(ANA, "no note", with_note=False)])
        store.update_records([_nid(turns[0])], at=later(1), status=Status.INVALID)
        assert store.count(ANA, Kind.NOTE) == 3
        assert store.count(None, Kind.NOTE) == 4
        assert store.count(ANA, Kind.EPISODE) == 5 and store.count(None, Kind.EPISODE) == 6
        assert store.count(Scope(user="nobody"), Kind.NOTE) == 0
        assert store.count(ANA, Kind.SUMMARY) == 0

    def test_iter_records_filters_on_the_server_side_and_is_oldest_first(
        self, store: Store
    ) -> None:
        city = Tags(entities=("Porto",), key=FactKey("user", "city"), value="Porto")
        job = Tags(entities=("ACME", "Porto"), key=FactKey("user", "job"), value="baker")
        turns = [
            _turn(ANA, "city", at=later(1), tags=city),
            _turn(ANA, "job", at=later(2), tags=job),
            _turn(ANA_T1, "plain", at=later(3)),
            _turn(BOB, "bob city", at=later(4), tags=city),
        ]
        for turn in turns:
            _write(store, [turn])
        ids = [_nid(t) for t in turns]
        store.update_records([ids[1]], at=later(5), tier=Tier.HOT)
        store.update_records([ids[2]], at=later(5), status=Status.INVALID)
        store.update_records([ids[0]], at=later(6), superseded_by=ids[1])

        def listed(query: RecordQuery, batch: int = 1000) -> list[str]:
            return _ids(list(store.iter_records(query, batch=batch)))

        assert listed(RecordQuery(scope=ANA)) == [ids[0], ids[1]]
        assert listed(_all(ANA)) == ids[:3]
        assert listed(_all(None), batch=1) == ids
        assert listed(RecordQuery(scope=ANA, tiers=(Tier.HOT,))) == [ids[1]]
        assert listed(RecordQuery(scope=None, predicate="city")) == [ids[0], ids[3]]
        assert listed(RecordQuery(scope=ANA, subject="user", predicate="job")) == [ids[1]]
        assert listed(RecordQuery(scope=None, entity="porto")) == [ids[0], ids[1], ids[3]]
        assert listed(RecordQuery(scope=None, entity="PORTO")) == [ids[0], ids[1], ids[3]]
        assert listed(RecordQuery(scope=None, entity="acme")) == [ids[1]]
        assert listed(RecordQuery(scope=None, entity="Port")) == []
        assert listed(RecordQuery(scope=ANA, superseded=True)) == [ids[0]]
        assert listed(RecordQuery(scope=ANA, superseded=False)) == [ids[1]]
        assert listed(_all(None, created_before=later(3))) == ids[:2]
        assert listed(RecordQuery(scope=None, statuses=(Status.INVALID,))) == [ids[2]]
        assert listed(RecordQuery(scope=None, kinds=(Kind.SUMMARY,))) == []

    def test_recent_records_are_the_newest_active_ones(self, store: Store) -> None:
        turns = [_turn(ANA if i < 4 else ANA_T2, f"r{i}", at=later(i)) for i in range(6)]
        for turn in turns:
            _write(store, [turn])
        ids = [_nid(t) for t in turns]
        store.update_records([ids[5]], at=later(9), status=Status.DELETED)
        assert _ids(store.recent_records(ANA, kinds=(Kind.NOTE,), limit=3)) == [
            ids[4],
            ids[3],
            ids[2],
        ]
        assert _ids(store.recent_records(ANA_T2, kinds=(Kind.NOTE,), limit=5)) == [ids[4]]
        assert store.recent_records(ANA, kinds=(Kind.SUMMARY,), limit=5) == []


# -- counters -----------------------------------------------------------------------------------


class TestCounters(CapabilityGroup):
    capability = "records"

    def test_touch_counts_and_only_moves_last_access_forward(self, store: Store) -> None:
        turn = _turn(ANA, "touched", at=later(1))
        _write(store, [turn])
        rid = _nid(turn)
        store.books.touch([rid], at=later(10))
        store.books.touch([rid], at=later(5))
        got = store.get_record(rid)
        assert got is not None and got.access_count == 2 and got.last_access == later(10)
        store.books.touch(["nt_unknown"], at=later(11))
        store.books.touch([], at=later(11))

    def test_feedback_counts_uses_and_ignores_and_logs_uses(self, store: Store) -> None:
        a, b = _turn(ANA, "used"), _turn(ANA, "ignored")
        _write(store, [a, b])
        ra, rb = _nid(a), _nid(b)
        store.books.record_feedback(used=[ra], ignored=[rb], at=later(3))
        store.books.record_feedback(used=[ra], ignored=[], at=later(8))
        got_a, got_b = store.get_record(ra), store.get_record(rb)
        assert got_a is not None and got_b is not None
        assert (got_a.used_count, got_a.ignored_count, got_a.last_access) == (2, 0, later(8))
        assert (got_b.used_count, got_b.ignored_count, got_b.last_access) == (0, 1, T0)
        assert store.books.uses_since([ra, rb], later(0)) == {ra: 2}
        assert store.books.uses_since([ra, rb], later(5)) == {ra: 1}
        assert store.books.uses_since([ra], later(9)) == {}


# -- updates ------------------------------------------------------------------------------------


class TestUpdates(CapabilityGroup):
    capability = "records"

    def test_tier_and_status_changes_stamp_their_time(self, store: Store) -> None:
        turn = _turn(ANA, "tiered")
        _write(store, [turn])
        rid = _nid(turn)
        store.update_records([rid], at=later(4), tier=Tier.HOT)
        got = store.get_record(rid)
        assert got is not None and (got.tier, got.tier_since) == (Tier.HOT, later(4))
        assert got.status_since is None
        store.update_records([rid], at=later(6), status=Status.INVALID)
        got = store.get_record(rid, any_status=True)
        assert got is not None and (got.status, got.status_since) == (Status.INVALID, later(6))
        assert (got.tier, got.tier_since) == (Tier.HOT, later(4))

    def test_the_other_fields_and_nothing_else(self, store: Store) -> None:
        a, b = _turn(ANA, "a"), _turn(ANA, "b")
        _write(store, [a, b])
        ra, rb = _nid(a), _nid(b)
        tags = Tags(entities=("Tom",), importance=0.9, emotion="calm")
        store.update_records(
            [ra], at=later(2), pinned=True, valid_to=later(7), superseded_by=rb, tags=tags
        )
        got = store.get_record(ra)
        assert got is not None
        assert (got.pinned, got.valid_to, got.superseded_by, got.tags) == (True, later(7), rb, tags)
        assert (got.tier, got.tier_since, got.text) == (Tier.WARM, None, _note(a).text)
        assert _same(store.get_record(rb), _note(b))
        store.update_records([ra], at=later(3))  # nothing to set
        store.update_records([], at=later(3), tier=Tier.COLD)
        assert _same(store.get_record(ra), got)


# -- supersession and merges --------------------------------------------------------------------


class TestSupersession(CapabilityGroup):
    capability = "records"

    def test_a_new_fact_supersedes_the_old_one_and_invalidates_summaries(
        self, store: Store
    ) -> None:
        lisbon = _turn(
            ANA,
            "I live in Lisbon.",
            at=later(1),
            tags=Tags(key=FactKey("user", "city"), value="Lisbon"),
        )
        _write(store, [lisbon])
        old = _nid(lisbon)
        summary = note(
            lisbon.episode,
            "Ana lives in Lisbon.",
            kind=Kind.SUMMARY,
            record_id="su_city",
            provenance=[old],
        )
        other = note(
            lisbon.episode,
            "Unrelated.",
            kind=Kind.SUMMARY,
            record_id="su_other",
            provenance=["nt_something_else"],
        )
        store.put_records([summary, other], rows(unit(1.0), unit(0.0, 1.0)))
        porto = _turn(
            ANA,
            "I moved to Porto.",
            at=later(30),
            tags=Tags(key=FactKey("user", "city"), value="Porto"),
            supersedes=(old,),
        )
        assert _write(store, [porto]) == [True]
        new = _nid(porto)
        was = store.get_record(old)
        assert was is not None
        assert (was.valid_to, was.superseded_by, was.tier, was.tier_since) == (
            later(30),
            new,
            Tier.COLD,
            later(30),
        )
        got_summary = store.get_record("su_city", any_status=True)
        assert got_summary is not None and got_summary.status is Status.INVALID
        assert got_summary.status_since == later(30)
        assert store.get_record("su_other") is not None
        assert _ids(list(store.iter_records(RecordQuery(scope=ANA, superseded=False)))) == [new]

    def test_an_already_superseded_record_keeps_its_chain(self, store: Store) -> None:
        first = _turn(ANA, "one", at=later(1))
        _write(store, [first])
        rid = _nid(first)
        store.update_records([rid], at=later(2), superseded_by="nt_second", valid_to=later(2))
        third = _turn(ANA, "three", at=later(3), supersedes=(rid,))
        _write(store, [third])
        got = store.get_record(rid)
        assert got is not None and (got.superseded_by, got.valid_to) == ("nt_second", later(2))

    def test_a_merge_joins_provenance_refreshes_and_sets_tags_but_counts_no_access(
        self, store: Store
    ) -> None:
        original = _turn(ANA, "I love jazz.", at=later(1))
        _write(store, [original])
        rid = _nid(original)
        again = episode(ANA, "I really love jazz!", at=later(9))
        merged = Tags(entities=("jazz",), importance=0.8)
        merge = TurnWrite(again, None, merge_into=rid, merged_tags=merged)
        assert store.write_turns([merge], None) == [True]
        got = store.get_record(rid)
        assert got is not None
        assert sorted(got.provenance) == sorted([original.episode.id, again.id])
        # frequency is earned by use, never by merges: junk said often must not outrank facts
        assert (got.access_count, got.last_access, got.tags) == (0, later(9), merged)
        assert store.derived_from([again.id]) == [rid]
        # sending the same merge again changes nothing: its episode is already stored
        assert store.write_turns([merge], None) == [False]
        got_again = store.get_record(rid)
        assert got_again is not None and got_again.access_count == 0


# -- deletes ------------------------------------------------------------------------------------


class TestDeletes(CapabilityGroup):
    capability = "records"

    def test_delete_records_removes_them_with_their_traces(self, store: Store) -> None:
        a, b = _turn(ANA, "stay"), _turn(ANA, "go")
        _write(store, [a, b], unit(1.0), unit(1.0, 0.1))
        ra, rb = _nid(a), _nid(b)
        store.links.reinforce_links([(ra, rb, "entity")], delta=0.5, at=later(1))
        store.books.record_feedback(used=[rb], ignored=[], at=later(2))
        assert store.erasure.delete_records([rb, "nt_unknown"]) == [rb]
        assert store.get_record(rb, any_status=True) is None
        assert store.derived_from([b.episode.id]) == []
        assert store.links.links_of([ra], min_weight=0.0) == []
        assert store.books.uses_since([rb], T0) == {}
        assert _ids([c.record for c in store.search(ANA, unit(1.0), text="go", limit=5)]) == [ra]
        np.testing.assert_allclose(store.get_vectors([rb]), np.zeros((1, DIM)))
        assert store.count(ANA, Kind.NOTE) == 1
        assert store.get_episode(b.episode.id) == b.episode  # the evidence stays
        assert store.erasure.delete_records([rb]) == []

    def test_derived_from_lists_every_record_citing_a_source(self, store: Store) -> None:
        a, b = _turn(ANA, "a"), _turn(ANA, "b")
        _write(store, [a, b])
        summary = note(
            a.episode,
            "s",
            kind=Kind.SUMMARY,
            record_id="su_d",
            provenance=[_nid(a), _nid(b)],
            status=Status.INVALID,
        )
        store.put_records([summary], rows(unit(1.0)))
        assert sorted(store.derived_from([a.episode.id, b.episode.id])) == sorted(
            [_nid(a), _nid(b)]
        )
        assert store.derived_from([_nid(a)]) == ["su_d"]
        assert store.derived_from(["nothing"]) == []
