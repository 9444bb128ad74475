"""The ledger and the protocol's own members, called directly on the backend.

The other groups reach a backend through :class:`~commonplace.stores.Store`, as the core
does; these check the members Store builds on, so a backend that gets one of them subtly
wrong (a ledger that forgets its order, a replace that moves an entry, a filter that
leaks another scope) fails here, by name.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...stores import Backend, LedgerEntry, ReadBatch, RecordQuery, RecordUpdate, Store, WriteBatch
from .._fixtures import DIM, T0, later, rows, unit
from ._core import ALL_KINDS, ALL_STATUSES, ANA, ANA_T1, BOB, CapabilityGroup, _nid, _turn, _write


def _entry(kind: str, key: str, **fields: object) -> LedgerEntry:
    return LedgerEntry(kind, key, **{"scope": ANA, "at": T0, **fields})  # type: ignore[arg-type]


class TestLedger(CapabilityGroup):
    capability = "bookkeeping"

    def test_entries_round_trip_and_list_last_written_first(self, backend: Backend) -> None:
        ledger = backend.ledger
        first = _entry("k", "one", data={"n": 1, "nested": {"a": [1, "two"]}}, refs=("r1", "r2"))
        second = _entry("k", "two", scope=ANA_T1, at=later(1))
        nobody = _entry("k", "three", scope=None, at=later(2))
        assert ledger.put([first, second, nobody]) == [True, True, True]
        assert ledger.get("k", "one") == first
        assert ledger.get("k", "missing") is None and ledger.get("other", "one") is None
        assert [e.key for e in ledger.list("k")] == ["three", "two", "one"]
        assert [e.key for e in ledger.list("k", limit=2)] == ["three", "two"]
        assert ledger.list("other") == []
        assert ledger.kinds() == ["k"]

    def test_replacing_keeps_the_place_and_put_if_absent_refuses(self, backend: Backend) -> None:
        ledger = backend.ledger
        ledger.put([_entry("k", "a"), _entry("k", "b")])
        changed = _entry("k", "a", data={"v": 2}, refs=("x",), at=later(5))
        assert ledger.put([changed]) == [True]
        assert ledger.get("k", "a") == changed
        assert [e.key for e in ledger.list("k")] == ["b", "a"]
        assert ledger.put([_entry("k", "a", data={"v": 3}), _entry("k", "c")], replace=False) == [
            False,
            True,
        ]
        assert ledger.get("k", "a") == changed

    def test_filters_by_scope_refs_and_time(self, backend: Backend) -> None:
        ledger = backend.ledger
        ledger.put(
            [
                _entry("k", "ana", refs=("r1",)),
                _entry("k", "ana-t1", scope=ANA_T1, at=later(2), refs=("r2", "r1")),
                _entry("k", "bob", scope=BOB, at=later(3), refs=("r3",)),
                _entry("k", "none", scope=None, at=later(4), refs=("r1",)),
            ]
        )
        assert {e.key for e in ledger.list("k", scope=ANA)} == {"ana", "ana-t1"}
        assert [e.key for e in ledger.list("k", scope=ANA_T1)] == ["ana-t1"]
        assert [e.key for e in ledger.list("k", refs=["r1"])] == ["none", "ana-t1", "ana"]
        assert [e.key for e in ledger.list("k", refs=["r3", "zz"])] == ["bob"]
        assert ledger.list("k", refs=[]) == []
        assert [e.key for e in ledger.list("k", since=later(3))] == ["none", "bob"]
        assert [e.key for e in ledger.list("k", scope=ANA, refs=["r1"], since=later(1))] == [
            "ana-t1"
        ]

    def test_deleted_entries_are_gone_and_others_stay(self, backend: Backend) -> None:
        ledger = backend.ledger
        ledger.put([_entry("k", "a", refs=("r",)), _entry("k", "b"), _entry("j", "a")])
        assert ledger.delete("k", ["a", "nothing"]) == 1
        assert ledger.get("k", "a") is None and ledger.list("k", refs=["r"]) == []
        assert [e.key for e in ledger.list("k")] == ["b"] and ledger.get("j", "a") is not None
        assert ledger.delete("k", []) == 0

    def test_the_ledger_persists(
        self, backend: Backend, backend_reopen: Callable[[Backend | Store], Store]
    ) -> None:
        entry = _entry("k", "kept", data={"text": "é ✓ \x00"}, refs=("r",))
        backend.ledger.put([entry])
        assert backend_reopen(backend).backend.ledger.get("k", "kept") == entry


class TestProtocolMembers(CapabilityGroup):
    capability = "records"

    def test_episodes_by_id_and_newest_first_in_pages(self, store: Store) -> None:
        turns = [_turn(ANA, f"turn {i}", at=later(i), with_note=False) for i in range(5)]
        _write(store, turns)
        backend = store.backend
        ids = [t.episode.id for t in turns]
        found = backend.read(ReadBatch(episode_ids=[ids[1], ids[3], "ep_none"])).found_episodes
        assert {e.id for e in found} == {ids[1], ids[3]}
        assert backend.read(ReadBatch()).found_episodes == []
        assert [e.id for e in backend.recent_episodes(ANA, limit=2)] == [ids[4], ids[3]]
        assert [e.id for e in backend.recent_episodes(ANA, limit=2, before=ids[3])] == [
            ids[2],
            ids[1],
        ]
        assert [e.id for e in backend.recent_episodes(None, limit=9)] == ids[::-1]
        assert backend.recent_episodes(BOB, limit=9) == []

    def test_records_by_source_newest_first_and_limited(self, store: Store) -> None:
        turns = [_turn(ANA, f"fact {i}", at=later(i)) for i in range(4)]
        _write(store, turns)
        backend = store.backend
        every = RecordQuery(scope=ANA, kinds=ALL_KINDS, statuses=ALL_STATUSES)
        notes = [_nid(t) for t in turns]
        assert [r.id for r in backend.iter_records(every)] == notes
        newest = RecordQuery(scope=ANA, newest_first=True, limit=3)
        assert [r.id for r in backend.iter_records(newest, batch=2)] == notes[:0:-1]
        derived = RecordQuery(kinds=ALL_KINDS, statuses=ALL_STATUSES, sources=[turns[2].episode.id])
        assert [r.id for r in backend.iter_records(derived)] == [notes[2]]
        assert list(backend.iter_records(RecordQuery(sources=[]))) == []

    def test_counters_count_and_move_the_last_access(self, store: Store) -> None:
        turn = _turn(ANA, "counted")
        _write(store, [turn])
        backend, rid = store.backend, _nid(turn)
        backend.apply(WriteBatch(updates=[RecordUpdate([rid], later(10), counter="access")]))
        counted = [RecordUpdate([rid], later(20), counter="used")]
        counted += [RecordUpdate([rid], later(n), counter="ignored") for n in (30, 40)]
        backend.apply(WriteBatch(updates=counted))  # in order, in one batch
        got = store.get_record(rid)
        assert got is not None
        assert (got.access_count, got.used_count, got.ignored_count) == (1, 1, 2)
        assert got.last_access == later(20)  # an ignore is not an access

    def test_put_records_replaces_only_when_asked(self, store: Store) -> None:
        turn = _turn(ANA, "original")
        _write(store, [turn])
        backend, rid = store.backend, _nid(turn)
        record = store.get_record(rid)
        assert record is not None
        from dataclasses import replace

        from ...errors import InvalidInputError

        changed = replace(record, text="rewritten", access_count=7)
        try:
            backend.apply(WriteBatch(records=[changed], record_vectors=rows(unit(0.0, 1.0))))
        except InvalidInputError:
            pass
        else:
            raise AssertionError("records without replace_records must refuse an existing id")
        assert store.get_record(rid) == record
        backend.apply(
            WriteBatch(records=[changed], record_vectors=rows(unit(0.0, 1.0)), replace_records=True)
        )
        got = store.get_record(rid)
        assert got is not None and got.text == "rewritten" and got.access_count == 7
        read = backend.read(ReadBatch(vector_ids=[rid, "nt_none"], record_ids=[rid]))
        assert read.record_vectors is not None and [r.id for r in read.records] == [rid]
        np.testing.assert_allclose(
            read.record_vectors, rows(unit(0.0, 1.0), np.zeros(DIM, np.float32)), atol=1e-6
        )

    def test_delete_reports_what_it_removed(self, store: Store) -> None:
        a, b = _turn(ANA, "gone"), _turn(ANA, "kept")
        _write(store, [a, b])
        removed = store.backend.delete(
            records=[_nid(a), "nt_none"], episodes=[a.episode.id, "ep_none"], erase=True
        )
        assert removed == {"records": [_nid(a)], "episodes": [a.episode.id]}
        assert store.get_record(_nid(a), any_status=True) is None
        assert store.get_episode(a.episode.id) is None
        assert store.get_record(_nid(b)) is not None and store.get_episode(b.episode.id)
