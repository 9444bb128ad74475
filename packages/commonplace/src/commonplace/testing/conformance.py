"""The backend conformance suite: what every commonplace store must do.

Import it into a test module that defines a ``backend_factory`` fixture (a
callable returning a new, empty backend each call; the fixture closes what it
made)::

    from commonplace.testing.conformance import *  # noqa: F403

Optionally override ``backend_reopen`` (``backend -> a second backend on the
same store``); by default it opens ``backend.url`` through the installed
``commonplace_backend`` hooks, as ``Memory(url)`` would.

The tests cover records and episodes, idempotency, scope isolation, candidate
generation, counters and tiers, supersession and merges, deletes, links and
bookkeeping, atomicity (or, for stores without transactions, retry safety), the
embedder pin, and concurrent writers. They assert behaviour only, never timings.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta

import numpy as np
import pytest

from .._records import FactKey, Kind, Record, Role, Status, Tags, Tier
from .._scope import Scope
from ..errors import (
    CommonplaceError,
    EmbedderMismatchError,
    InvalidInputError,
    StoreClosedError,
    StoreError,
)
from ..stores import (
    AuditEntry,
    Backend,
    Card,
    Conflict,
    EmbedderPin,
    RecallLog,
    RecordQuery,
    ReembedState,
    TurnWrite,
)
from ._fixtures import DIM, PIN, T0, episode, later, note, rows, unit

__all__ = [
    "TestAtomicity",
    "TestBookkeeping",
    "TestConcurrency",
    "TestCounters",
    "TestDeletes",
    "TestEpisodes",
    "TestLinks",
    "TestPin",
    "TestRecords",
    "TestReembed",
    "TestScopes",
    "TestSearch",
    "TestStoreLifecycle",
    "TestSupersession",
    "TestUpdates",
    "backend",
    "backend_reopen",
    "store",
]

ANA = Scope(user="ana")
ANA_T1 = Scope(user="ana", thread="t1")
ANA_T2 = Scope(user="ana", thread="t2")
BOB = Scope(user="bob")
ALL_KINDS = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE)
ALL_STATUSES = tuple(Status)


# -- fixtures -----------------------------------------------------------------------------------


@pytest.fixture
def backend(backend_factory: Callable[[], Backend]) -> Backend:
    """A new, empty store with no embedder pin."""
    made = backend_factory()
    assert isinstance(made, Backend), "backend_factory must return a commonplace Backend"
    return made


@pytest.fixture
def store(backend: Backend) -> Backend:
    """A new, empty store pinned to the suite's 8-dimensional test embedder."""
    backend.write_pin(PIN)
    return backend


@pytest.fixture
def backend_reopen() -> Iterator[Callable[[Backend], Backend]]:
    """Open a second backend on the same store, through the plugin hooks (closed after)."""
    from .._plugins import make_plugin_manager, url_scheme

    opened: list[Backend] = []

    def reopen(backend: Backend) -> Backend:
        manager = make_plugin_manager()
        url = backend.url
        again = manager.hook.commonplace_backend(url=url, scheme=url_scheme(url))
        assert again is not None, f"no installed backend serves {url!r}"
        opened.append(again)
        return again  # type: ignore[no-any-return]

    yield reopen
    for again in opened:
        again.close()


# -- helpers ------------------------------------------------------------------------------------


def _turn(
    scope: Scope,
    text: str,
    *,
    at: datetime = T0,
    with_note: bool = True,
    tags: Tags | None = None,
    role: Role = Role.USER,
    supersedes: tuple[str, ...] = (),
) -> TurnWrite:
    ep = episode(scope, text, role=role, at=at)
    made = note(ep, f"The user says {text}", tags=tags) if with_note else None
    return TurnWrite(ep, made, supersedes=supersedes)


def _nid(turn: TurnWrite) -> str:
    """The id of a turn's note (the turn must have one)."""
    assert turn.note is not None
    return turn.note.id


def _note(turn: TurnWrite) -> Record:
    assert turn.note is not None
    return turn.note


def _write(backend: Backend, turns: Sequence[TurnWrite], *vectors: np.ndarray) -> list[bool]:
    with_notes = [t for t in turns if t.note is not None]
    matrix = None
    if with_notes:
        chosen = list(vectors) or [unit(1.0, 0.1 * i) for i in range(len(with_notes))]
        matrix = rows(*chosen)
    return backend.write_turns(list(turns), matrix)


def _same(got: Record | None, want: Record) -> bool:
    return got is not None and replace(got, provenance=tuple(sorted(got.provenance))) == replace(
        want, provenance=tuple(sorted(want.provenance))
    )


def _ids(records: Sequence[Record]) -> list[str]:
    return [r.id for r in records]


def _all(scope: Scope | None = None, *, created_before: datetime | None = None) -> RecordQuery:
    return RecordQuery(
        scope=scope, kinds=ALL_KINDS, statuses=ALL_STATUSES, created_before=created_before
    )


# -- the embedder pin ---------------------------------------------------------------------------


class TestPin:
    def test_a_new_store_has_no_pin(self, backend: Backend) -> None:
        assert backend.read_pin() is None

    def test_the_pin_round_trips_and_survives_reopening(
        self, backend: Backend, backend_reopen: Callable[[Backend], Backend]
    ) -> None:
        backend.write_pin(PIN)
        assert backend.read_pin() == PIN
        assert backend_reopen(backend).read_pin() == PIN

    def test_writing_the_same_pin_again_changes_nothing(self, backend: Backend) -> None:
        backend.write_pin(PIN)
        backend.write_pin(PIN)
        assert backend.read_pin() == PIN

    def test_another_model_is_refused_unless_replacing(self, backend: Backend) -> None:
        backend.write_pin(PIN)
        other = EmbedderPin("another-model-v2", DIM * 2)
        with pytest.raises(EmbedderMismatchError):
            backend.write_pin(other)
        assert backend.read_pin() == PIN
        backend.write_pin(other, replace=True)
        assert backend.read_pin() == other


# -- episodes -----------------------------------------------------------------------------------


class TestEpisodes:
    def test_episodes_round_trip_exactly(self, store: Backend) -> None:
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

    def test_a_turn_already_stored_writes_nothing_again(self, store: Backend) -> None:
        first = _turn(ANA, "I live in Lisbon.")
        assert _write(store, [first]) == [True]
        stored = store.get_record(_nid(first))
        assert stored is not None
        changed = TurnWrite(first.episode, replace(_note(first), text="something else"))
        assert _write(store, [changed], unit(0.0, 1.0)) == [False]
        assert _same(store.get_record(_nid(first)), stored)
        assert store.count(ANA, Kind.EPISODE) == 1 and store.count(ANA, Kind.NOTE) == 1

    def test_the_same_turn_twice_in_one_call_is_stored_once(self, store: Backend) -> None:
        turn = _turn(ANA, "I have a cat.")
        assert _write(store, [turn, turn]) == [True, False]
        assert store.count(None, Kind.EPISODE) == 1 and store.count(None, Kind.NOTE) == 1

    def test_existing_episode_ids(self, store: Backend) -> None:
        a, b = _turn(ANA, "one", with_note=False), _turn(BOB, "two", with_note=False)
        _write(store, [a, b])
        assert store.existing_episode_ids({a.episode.id, b.episode.id, "ep_x"}) == {
            a.episode.id,
            b.episode.id,
        }
        assert store.existing_episode_ids(set()) == set()

    def test_get_episodes_is_newest_first_limited_and_scoped(self, store: Backend) -> None:
        turns = [
            _turn(ANA_T1 if i % 2 else ANA, f"turn {i}", at=later(i), with_note=False)
            for i in range(6)
        ]
        for turn in turns:
            _write(store, [turn])
        _write(store, [_turn(BOB, "bob's turn", with_note=False)])
        got = store.get_episodes(ANA, limit=10)
        assert [e.text for e in got] == [f"turn {i}" for i in reversed(range(6))]
        assert [e.text for e in store.get_episodes(ANA, limit=2)] == ["turn 5", "turn 4"]
        assert [e.text for e in store.get_episodes(ANA_T1, limit=10)] == [
            "turn 5",
            "turn 3",
            "turn 1",
        ]
        assert [e.text for e in store.get_episodes(BOB, limit=10)] == ["bob's turn"]

    def test_assistant_turns_are_stored_as_episodes_only(self, store: Backend) -> None:
        turn = _turn(ANA, "Say hi to Tom!", role=Role.ASSISTANT, with_note=False)
        assert _write(store, [turn]) == [True]
        assert store.get_episode(turn.episode.id) == turn.episode
        assert store.count(ANA, Kind.NOTE) == 0 and store.count(ANA, Kind.EPISODE) == 1

    def test_delete_episodes_keeps_only_their_ids(self, store: Backend) -> None:
        a, b = _turn(ANA, "keep", with_note=False), _turn(ANA, "forget", with_note=False)
        _write(store, [a, b])
        assert store.delete_episodes([b.episode.id, "ep_unknown"]) == [b.episode.id]
        assert store.get_episode(b.episode.id) is None
        assert [e.id for e in store.get_episodes(ANA, limit=5)] == [a.episode.id]
        assert store.count(ANA, Kind.EPISODE) == 1
        # a forgotten turn is recognised, so replaying it does not store it again
        assert store.existing_episode_ids({a.episode.id, b.episode.id}) == {
            a.episode.id,
            b.episode.id,
        }
        assert _write(store, [b]) == [False]
        assert store.get_episode(b.episode.id) is None
        assert store.delete_episodes([b.episode.id]) == []


# -- records ------------------------------------------------------------------------------------


class TestRecords:
    def test_a_note_round_trips_with_every_field(self, store: Backend) -> None:
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

    def test_derived_records_round_trip_with_data_and_provenance(self, store: Backend) -> None:
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
        store.add_records([summary, procedure], rows(unit(0.0, 1.0), unit(0.0, 0.0, 1.0)))
        assert _same(store.get_record("su_test_1"), summary)
        assert _same(store.get_record("pr_test_1"), procedure)
        assert store.count(ANA, Kind.SUMMARY) == 1 and store.count(ANA, Kind.PROCEDURE) == 1

    def test_an_existing_id_is_refused_and_nothing_changes(self, store: Backend) -> None:
        ep = episode(ANA, "x")
        rec = note(ep, kind=Kind.SUMMARY, record_id="su_dup")
        store.add_records([rec], rows(unit(1.0)))
        clash = [
            note(ep, "other", kind=Kind.SUMMARY, record_id="su_new"),
            replace(rec, text="changed"),
        ]
        with pytest.raises(CommonplaceError):
            store.add_records(clash, rows(unit(1.0), unit(0.0, 1.0)))
        assert _same(store.get_record("su_dup"), rec)
        assert store.get_record("su_new", any_status=True) is None

    def test_replace_records_swaps_records_with_their_provenance(self, store: Backend) -> None:
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
        store.add_records([first], rows(unit(1.0)))
        store.touch(["pr_r"], at=later(2))
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
        store.replace_records([second, fresh], rows(unit(0.0, 1.0), unit(0.0, 0.0, 1.0)))
        assert _same(store.get_record("pr_r"), second)
        assert _same(store.get_record("pr_new"), fresh)
        assert sorted(store.derived_from([eps[0].id, eps[1].id])) == []
        assert sorted(store.derived_from([eps[2].id])) == ["pr_new", "pr_r"]
        np.testing.assert_allclose(store.get_vectors(["pr_r"])[0], unit(0.0, 1.0), atol=1e-6)
        assert store.count(ANA, Kind.PROCEDURE) == 2

    def test_a_wrong_number_of_vectors_is_refused_before_writing(self, store: Backend) -> None:
        turns = [_turn(ANA, "a"), _turn(ANA, "b")]
        with pytest.raises(InvalidInputError):
            store.write_turns(turns, rows(unit(1.0)))
        with pytest.raises(InvalidInputError):
            store.write_turns(turns, None)
        with pytest.raises(InvalidInputError):
            store.add_records([_note(turns[0])], rows(unit(1.0), unit(0.0, 1.0)))
        assert store.count(None, Kind.EPISODE) == 0 and store.count(None, Kind.NOTE) == 0

    def test_get_record_hides_inactive_records_unless_asked(self, store: Backend) -> None:
        turn = _turn(ANA, "hidden soon")
        _write(store, [turn])
        rid = _nid(turn)
        store.update_records([rid], at=later(5), status=Status.DELETED)
        assert store.get_record(rid) is None
        found = store.get_record(rid, any_status=True)
        assert found is not None and found.status is Status.DELETED
        assert _ids(store.get_records([rid, "nt_unknown"])) == [rid]

    def test_get_vectors_in_order_with_zeros_for_unknown_ids(self, store: Backend) -> None:
        a, b = _turn(ANA, "a"), _turn(ANA, "b")
        va, vb = unit(1.0, 2.0), unit(0.0, 0.0, 3.0, 1.0)
        _write(store, [a, b], va, vb)
        got = store.get_vectors([_nid(b), "nt_unknown", _nid(a)])
        assert got.shape == (3, DIM) and got.dtype == np.float32
        np.testing.assert_allclose(got[0], vb, atol=1e-6)
        np.testing.assert_allclose(got[1], np.zeros(DIM), atol=0)
        np.testing.assert_allclose(got[2], va, atol=1e-6)

    def test_count_counts_active_records_and_all_episodes(self, store: Backend) -> None:
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
        self, store: Backend
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

    def test_recent_records_are_the_newest_active_ones(self, store: Backend) -> None:
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


# -- scopes -------------------------------------------------------------------------------------


class TestScopes:
    def test_a_query_scope_sees_exactly_the_scopes_it_contains(self, store: Backend) -> None:
        places = [
            ANA,
            ANA_T1,
            ANA_T2,
            Scope(user="ana", agent="helper"),
            BOB,
            Scope(user="bob", thread="t1"),
            Scope(agent="helper"),
        ]
        same = unit(1.0, 1.0)
        for i, scope in enumerate(places):
            _write(store, [_turn(scope, f"I like tea {i}")], same)

        def seen(scope: Scope) -> set[Scope]:
            found = store.search(scope, same, text="tea", limit=50)
            return {c.record.scope for c in found}

        assert seen(ANA) == {ANA, ANA_T1, ANA_T2, Scope(user="ana", agent="helper")}
        assert seen(ANA_T1) == {ANA_T1}
        assert seen(Scope(thread="t1")) == {ANA_T1, Scope(user="bob", thread="t1")}
        assert seen(Scope(agent="helper")) == {
            Scope(user="ana", agent="helper"),
            Scope(agent="helper"),
        }
        assert seen(Scope(user="carol")) == set()
        assert {r.scope for r in store.iter_records(RecordQuery(scope=BOB))} == {
            BOB,
            Scope(user="bob", thread="t1"),
        }
        assert {r.scope for r in store.recent_records(ANA_T2, kinds=(Kind.NOTE,), limit=9)} == {
            ANA_T2
        }
        assert store.count(Scope(user="bob"), Kind.NOTE) == 2

    def test_scope_values_are_data_never_query_syntax(self, store: Backend) -> None:
        hostile = [
            "ana' OR '1'='1",
            "*",
            "%",
            'ana" || true',
            "a/b\\c",
            "über ümlaut 東京",
            "$where",
            "ana)",
            "ana OR bob",
        ]
        same = unit(0.5, 1.0)
        for value in [*hostile, "ana"]:
            _write(store, [_turn(Scope(user=value), f"secret of {value}")], same)
        for value in hostile:
            found = store.search(Scope(user=value), same, text="secret of ana", limit=50)
            assert {c.record.scope.user for c in found} == {value}
            assert store.count(Scope(user=value), Kind.NOTE) == 1

    def test_bookkeeping_is_scoped_too(self, store: Backend) -> None:
        for scope in (ANA, ANA_T1, BOB):
            store.append_audit([AuditEntry(T0, scope, "demote", "rule", f"id-{scope}")])
            store.add_conflict(Conflict(f"c-{scope}", scope, "Tom", "two Toms", ("a", "b"), T0))
        assert {e.scope for e in store.audit_log(ANA, limit=10)} == {ANA, ANA_T1}
        assert {e.scope for e in store.audit_log(None, limit=10)} == {ANA, ANA_T1, BOB}
        assert {c.scope for c in store.conflicts(BOB, open_only=True)} == {BOB}

    def test_delete_scope_removes_everything_it_sees_and_nothing_else(self, store: Backend) -> None:
        keep = _turn(BOB, "bob stays")
        gone = [_turn(ANA, "ana 1"), _turn(ANA_T1, "ana 2"), _turn(ANA, "ana 3", with_note=False)]
        _write(store, [keep, *gone])
        summary = note(gone[0].episode, "ana summary", kind=Kind.SUMMARY, record_id="su_ana")
        store.add_records([summary], rows(unit(1.0)))
        store.append_audit([AuditEntry(T0, ANA, "a", "r", "x"), AuditEntry(T0, BOB, "a", "r", "y")])
        store.log_recall(RecallLog("rc_ana", ANA, T0, ("x",)))
        store.add_conflict(Conflict("cf_ana", ANA_T1, "Tom", "why", ("x",), T0))
        store.put_card(Card(ANA, "profile", "Ana", T0))
        store.put_card(Card(BOB, "profile", "Bob", T0))
        counts = store.delete_scope(ANA)
        assert counts["records"] == 3 and counts["episodes"] == 3
        assert counts["audit"] == 1 and counts["recalls"] == 1 and counts["conflicts"] == 1
        assert counts["cards"] == 1
        assert store.count(ANA, Kind.NOTE) == 0 and store.count(ANA, Kind.EPISODE) == 0
        assert store.search(ANA, unit(1.0), text="ana", limit=10) == []
        assert store.get_record("su_ana", any_status=True) is None
        assert store.get_recall("rc_ana") is None and store.get_card(ANA, "profile") is None
        assert store.count(BOB, Kind.NOTE) == 1 and store.get_card(BOB, "profile") is not None
        assert store.get_episode(keep.episode.id) == keep.episode
        # the scope can be written to again afterwards
        assert _write(store, [gone[0]]) == [True]
        assert store.count(ANA, Kind.NOTE) == 1

    def test_delete_scope_removes_its_traces_elsewhere(self, store: Backend) -> None:
        gone, kept = _turn(ANA_T1, "thread secret"), _turn(ANA, "kept fact")
        _write(store, [gone, kept])
        summary = note(
            kept.episode,
            "Ana summary",
            kind=Kind.SUMMARY,
            record_id="su_from_t1",
            provenance=[_nid(gone)],
        )
        procedure = note(
            kept.episode,
            "Ana procedure",
            kind=Kind.PROCEDURE,
            record_id="pr_from_su",
            provenance=["su_from_t1"],
        )
        other = note(
            kept.episode,
            "Other summary",
            kind=Kind.SUMMARY,
            record_id="su_kept",
            provenance=[_nid(kept)],
        )
        store.add_records(
            [summary, procedure, other], rows(unit(1.0), unit(0.0, 1.0), unit(0.0, 0.0, 1.0))
        )
        store.append_audit(
            [
                AuditEntry(T0, ANA, "merge", "r", _nid(gone)),
                AuditEntry(T0, ANA, "merge", "r", _nid(kept)),
                AuditEntry(T0, ANA_T1, "demote", "r", "x"),
            ]
        )
        store.add_conflict(Conflict("cf_gone", BOB, "Tom", "why", (_nid(gone), "y"), T0))
        store.add_conflict(Conflict("cf_kept", ANA, "Tom", "why", (_nid(kept),), T0))
        for scope in (ANA, ANA_T1, ANA_T2, Scope(thread="t1"), BOB):
            store.put_card(Card(scope, "profile", f"card of {scope}", T0))
        counts = store.delete_scope(ANA_T1)
        assert counts["records"] == 3 and counts["audit"] == 2
        for rid in (_nid(gone), "su_from_t1", "pr_from_su"):
            assert store.get_record(rid, any_status=True) is None
        assert store.get_record("su_kept") is not None and store.get_record(_nid(kept))
        assert [e.record_id for e in store.audit_log(None, limit=10)] == [_nid(kept)]
        assert [c.id for c in store.conflicts(None, open_only=False)] == ["cf_kept"]
        # the cards written from the forgotten notes go (Ana's, the thread's); a thread card
        # of user-less runs was never written from Ana's notes (``Scope.owns``) and stays
        assert {
            s
            for s in (ANA, ANA_T1, ANA_T2, Scope(thread="t1"), BOB)
            if store.get_card(s, "profile") is not None
        } == {ANA_T2, BOB, Scope(thread="t1")}


# -- candidates ---------------------------------------------------------------------------------


class TestSearch:
    def test_nearest_first_with_the_cosine_similarity(self, store: Backend) -> None:
        vectors = [unit(1.0), unit(1.0, 1.0), unit(0.0, 1.0), unit(-1.0, 0.2)]
        turns = [_turn(ANA, f"v{i}") for i in range(4)]
        _write(store, turns, *vectors)
        query = unit(1.0, 0.2)
        found = store.search(ANA, query, text=None, limit=10)
        expected = sorted(range(4), key=lambda i: -float(vectors[i] @ query))
        assert _ids([c.record for c in found]) == [_nid(turns[i]) for i in expected]
        for c, i in zip(found, expected):
            assert c.similarity == pytest.approx(float(vectors[i] @ query), abs=1e-4)
            assert c.keyword == 0.0

    def test_limit_applies_to_the_vector_candidates(self, store: Backend) -> None:
        turns = [_turn(ANA, f"n{i}") for i in range(12)]
        _write(store, turns, *[unit(1.0, 0.1 * i) for i in range(12)])
        found = store.search(ANA, unit(1.0), text=None, limit=5)
        assert len(found) == 5
        assert _ids([c.record for c in found]) == [_nid(t) for t in turns[:5]]

    def test_keyword_hits_join_with_their_own_cosine(self, store: Backend) -> None:
        near = _turn(ANA, "nothing in common")
        lexical = _turn(ANA, "kayaking zucchini")
        _write(store, [near, lexical], unit(1.0), unit(0.0, 1.0))
        query = unit(1.0)
        found = store.search(ANA, query, text="zucchini", limit=1)
        by_id = {c.record.id: c for c in found}
        assert set(by_id) == {_nid(near), _nid(lexical)}
        hit = by_id[_nid(lexical)]
        assert hit.keyword == pytest.approx(1.0)
        assert hit.similarity == pytest.approx(0.0, abs=1e-4)
        assert by_id[_nid(near)].keyword == 0.0
        assert by_id[_nid(near)].similarity == pytest.approx(1.0, abs=1e-4)
        assert found[0].record.id == _nid(near)

    def test_keyword_scores_are_normalised(self, store: Backend) -> None:
        """A full match scores 1, a partial one less, a miss 0 (whatever the scale inside)."""
        turns = [
            _turn(ANA, "quince quince quince jam"),
            _turn(ANA, "quince and a lot of other words about the weather"),
            _turn(ANA, "no match here"),
        ]
        fillers = [_turn(ANA, f"filler number {i} about tea") for i in range(5)]
        _write(
            store,
            turns + fillers,
            unit(0.0, 1.0),
            unit(0.0, 0.0, 1.0),
            unit(1.0),
            *[unit(1.0, 0.5, 0.1 * i) for i in range(5)],
        )
        found = {
            c.record.id: c.keyword
            for c in store.search(ANA, unit(1.0), text="quince jam", limit=10)
        }
        scores = [found[_nid(t)] for t in turns]
        assert scores[0] == pytest.approx(1.0)
        assert 0.0 < scores[1] < 1.0
        assert scores[2] == 0.0

    def test_only_active_records_of_the_asked_kinds_are_candidates(self, store: Backend) -> None:
        turns = [_turn(ANA, "active"), _turn(ANA, "invalid"), _turn(ANA, "deleted")]
        _write(store, turns)
        store.update_records([_nid(turns[1])], at=later(1), status=Status.INVALID)
        store.update_records([_nid(turns[2])], at=later(1), status=Status.DELETED)
        summary = note(turns[0].episode, "summary", kind=Kind.SUMMARY, record_id="su_k")
        store.add_records([summary], rows(unit(1.0)))
        every = store.search(ANA, unit(1.0), text="active invalid deleted summary", limit=10)
        assert {c.record.id for c in every} == {_nid(turns[0]), "su_k"}
        notes = store.search(ANA, unit(1.0), text="summary", limit=10, kinds=(Kind.NOTE,))
        assert {c.record.id for c in notes} == {_nid(turns[0])}
        assert {
            c.record.id
            for c in store.search(ANA, unit(1.0), text=None, limit=10, kinds=(Kind.SUMMARY,))
        } == {"su_k"}

    def test_an_empty_store_or_scope_has_no_candidates(self, store: Backend) -> None:
        assert store.search(ANA, unit(1.0), text="anything", limit=10) == []
        _write(store, [_turn(BOB, "bob")])
        assert store.search(ANA, unit(1.0), text="bob", limit=10) == []

    def test_nearest_finds_the_closest_active_note_for_each_row(self, store: Backend) -> None:
        turns = [_turn(ANA, "east"), _turn(ANA_T1, "north"), _turn(ANA, "gone"), _turn(BOB, "b")]
        _write(store, turns, unit(1.0), unit(0.0, 1.0), unit(1.0, 1.0), unit(0.0, 1.0))
        store.update_records([_nid(turns[2])], at=later(1), status=Status.DELETED)
        summary = note(turns[0].episode, "s", kind=Kind.SUMMARY, record_id="su_n")
        store.add_records([summary], rows(unit(1.0, 1.0)))
        got = store.nearest(ANA, rows(unit(1.0, 0.9), unit(0.1, 1.0)))
        assert [g[0] if g else None for g in got] == [_nid(turns[0]), _nid(turns[1])]
        assert got[0] is not None and got[0][1] == pytest.approx(
            float(unit(1.0) @ unit(1.0, 0.9)), abs=1e-4
        )
        assert store.nearest(ANA_T2, rows(unit(1.0))) == [None]
        assert store.nearest(Scope(user="carol"), rows(unit(1.0), unit(0.0, 1.0))) == [None, None]

    def test_candidates_carry_counters_and_provenance(self, store: Backend) -> None:
        turn = _turn(ANA, "counted")
        _write(store, [turn])
        rid = _nid(turn)
        store.touch([rid], at=later(2))
        (hit,) = store.search(ANA, unit(1.0), text=None, limit=3)
        assert hit.record.access_count == 1 and hit.record.last_access == later(2)
        assert hit.record.provenance == (turn.episode.id,)


# -- counters -----------------------------------------------------------------------------------


class TestCounters:
    def test_touch_counts_and_only_moves_last_access_forward(self, store: Backend) -> None:
        turn = _turn(ANA, "touched", at=later(1))
        _write(store, [turn])
        rid = _nid(turn)
        store.touch([rid], at=later(10))
        store.touch([rid], at=later(5))
        got = store.get_record(rid)
        assert got is not None and got.access_count == 2 and got.last_access == later(10)
        store.touch(["nt_unknown"], at=later(11))
        store.touch([], at=later(11))

    def test_feedback_counts_uses_and_ignores_and_logs_uses(self, store: Backend) -> None:
        a, b = _turn(ANA, "used"), _turn(ANA, "ignored")
        _write(store, [a, b])
        ra, rb = _nid(a), _nid(b)
        store.record_feedback(used=[ra], ignored=[rb], at=later(3))
        store.record_feedback(used=[ra], ignored=[], at=later(8))
        got_a, got_b = store.get_record(ra), store.get_record(rb)
        assert got_a is not None and got_b is not None
        assert (got_a.used_count, got_a.ignored_count, got_a.last_access) == (2, 0, later(8))
        assert (got_b.used_count, got_b.ignored_count, got_b.last_access) == (0, 1, T0)
        assert store.uses_since([ra, rb], later(0)) == {ra: 2}
        assert store.uses_since([ra, rb], later(5)) == {ra: 1}
        assert store.uses_since([ra], later(9)) == {}


# -- updates ------------------------------------------------------------------------------------


class TestUpdates:
    def test_tier_and_status_changes_stamp_their_time(self, store: Backend) -> None:
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

    def test_the_other_fields_and_nothing_else(self, store: Backend) -> None:
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


class TestSupersession:
    def test_a_new_fact_supersedes_the_old_one_and_invalidates_summaries(
        self, store: Backend
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
        store.add_records([summary, other], rows(unit(1.0), unit(0.0, 1.0)))
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

    def test_an_already_superseded_record_keeps_its_chain(self, store: Backend) -> None:
        first = _turn(ANA, "one", at=later(1))
        _write(store, [first])
        rid = _nid(first)
        store.update_records([rid], at=later(2), superseded_by="nt_second", valid_to=later(2))
        third = _turn(ANA, "three", at=later(3), supersedes=(rid,))
        _write(store, [third])
        got = store.get_record(rid)
        assert got is not None and (got.superseded_by, got.valid_to) == ("nt_second", later(2))

    def test_a_merge_joins_provenance_refreshes_and_sets_tags_but_counts_no_access(
        self, store: Backend
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


class TestDeletes:
    def test_delete_records_removes_them_with_their_traces(self, store: Backend) -> None:
        a, b = _turn(ANA, "stay"), _turn(ANA, "go")
        _write(store, [a, b], unit(1.0), unit(1.0, 0.1))
        ra, rb = _nid(a), _nid(b)
        store.reinforce_links([(ra, rb, "entity")], delta=0.5, at=later(1))
        store.record_feedback(used=[rb], ignored=[], at=later(2))
        assert store.delete_records([rb, "nt_unknown"]) == [rb]
        assert store.get_record(rb, any_status=True) is None
        assert store.derived_from([b.episode.id]) == []
        assert store.links_of([ra], min_weight=0.0) == []
        assert store.uses_since([rb], T0) == {}
        assert _ids([c.record for c in store.search(ANA, unit(1.0), text="go", limit=5)]) == [ra]
        np.testing.assert_allclose(store.get_vectors([rb]), np.zeros((1, DIM)))
        assert store.count(ANA, Kind.NOTE) == 1
        assert store.get_episode(b.episode.id) == b.episode  # the evidence stays
        assert store.delete_records([rb]) == []

    def test_derived_from_lists_every_record_citing_a_source(self, store: Backend) -> None:
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
        store.add_records([summary], rows(unit(1.0)))
        assert sorted(store.derived_from([a.episode.id, b.episode.id])) == sorted(
            [_nid(a), _nid(b)]
        )
        assert store.derived_from([_nid(a)]) == ["su_d"]
        assert store.derived_from(["nothing"]) == []


# -- links --------------------------------------------------------------------------------------


class TestLinks:
    def test_links_are_undirected_capped_and_reinforced(self, store: Backend) -> None:
        store.reinforce_links([("b", "a", "entity"), ("a", "a", "self")], delta=0.4, at=later(1))
        store.reinforce_links([("a", "b", "entity")], delta=0.4, at=later(2))
        store.reinforce_links(
            [("a", "c", "session"), ("a", "c", "session")], delta=0.3, at=later(3)
        )
        links = {
            (link.a, link.b, link.kind): link for link in store.links_of(["a"], min_weight=0.0)
        }
        assert set(links) == {("a", "b", "entity"), ("a", "c", "session")}
        assert links[("a", "b", "entity")].weight == pytest.approx(0.8)
        assert links[("a", "b", "entity")].updated_at == later(2)
        assert links[("a", "c", "session")].weight == pytest.approx(0.6)
        store.reinforce_links([("a", "b", "entity")], delta=0.5, at=later(4))
        assert [link.weight for link in store.links_of(["b"], min_weight=0.0)] == [
            pytest.approx(1.0)
        ]
        assert [link.kind for link in store.links_of(["a"], min_weight=0.7)] == ["entity"]

    def test_links_decay_and_weak_ones_are_pruned(self, store: Backend) -> None:
        store.reinforce_links([("a", "b", "entity")], delta=0.8, at=later(1))
        store.reinforce_links([("c", "d", "entity")], delta=0.2, at=later(1))
        store.decay_links(factor=0.5, at=later(2))
        weights = {link.a: link.weight for link in store.links_of(["a", "c"], min_weight=0.0)}
        assert weights == {"a": pytest.approx(0.4), "c": pytest.approx(0.1)}
        assert store.prune_links(min_weight=0.15) == 1
        assert [link.a for link in store.links_of(["a", "c"], min_weight=0.0)] == ["a"]


# -- bookkeeping --------------------------------------------------------------------------------


class TestBookkeeping:
    def test_the_audit_log_is_newest_first(self, store: Backend) -> None:
        entries = [
            AuditEntry(later(i), ANA, "demote", "tier.demote", f"nt_{i}", f"detail {i}")
            for i in range(5)
        ]
        store.append_audit(entries[:2])
        store.append_audit(entries[2:])
        assert store.audit_log(ANA, limit=3) == list(reversed(entries))[:3]
        assert store.audit_log(BOB, limit=3) == []

    def test_recall_logs_take_feedback_once(self, store: Backend) -> None:
        log = RecallLog("rc_1", ANA, later(1), ("nt_a", "nt_b"), shown_ids=("nt_a", "nt_b", "nt_c"))
        store.log_recall(log)
        assert store.get_recall("rc_1") == log
        assert store.mark_recall_feedback("rc_1", at=later(2)) is True
        assert store.mark_recall_feedback("rc_1", at=later(3)) is False
        assert store.get_recall("rc_1") == replace(log, feedback_at=later(2))
        assert store.mark_recall_feedback("rc_unknown", at=later(3)) is False
        assert store.get_recall("rc_unknown") is None

    def test_conflicts_are_added_once_listed_and_resolved(self, store: Backend) -> None:
        first = Conflict("cf_1", ANA, "Tom", "two Toms", ("nt_a", "nt_b"), later(1))
        second = Conflict("cf_2", ANA_T1, "Rita", "two Ritas", ("nt_c",), later(2))
        store.add_conflict(first)
        store.add_conflict(replace(first, reason="changed"))  # already there: ignored
        store.add_conflict(second)
        assert store.conflicts(ANA, open_only=True) == [first, second]
        store.resolve_conflict("cf_1", resolution="separate", at=later(5))
        assert store.conflicts(ANA, open_only=True) == [second]
        assert store.conflicts(ANA, open_only=False) == [
            replace(first, resolved_at=later(5), resolution="separate"),
            second,
        ]

    def test_cards_are_replaced_and_bound_to_their_exact_scope(self, store: Backend) -> None:
        card = Card(ANA, "profile", "Ana lives in Porto.", later(1), {"rules": ["city"]})
        store.put_card(card)
        assert store.get_card(ANA, "profile") == card
        newer = replace(card, text="Ana lives in Braga.", updated_at=later(2))
        store.put_card(newer)
        assert store.get_card(ANA, "profile") == newer
        assert store.get_card(ANA_T1, "profile") is None
        assert store.get_card(ANA, "summary") is None


# -- atomicity ----------------------------------------------------------------------------------


class TestAtomicity:
    def test_a_refused_call_changes_nothing(self, store: Backend) -> None:
        turns = [_turn(ANA, "first"), _turn(BOB, "second")]
        with pytest.raises(InvalidInputError):
            store.write_turns(turns, rows(unit(1.0), unit(1.0), unit(1.0)))
        assert store.existing_episode_ids({t.episode.id for t in turns}) == set()
        assert store.count(None, Kind.NOTE) == 0 and store.count(None, Kind.EPISODE) == 0

    def test_a_stored_turn_is_stored_whole(self, store: Backend) -> None:
        turns = [
            _turn(Scope(user=f"u{i % 3}"), f"turn {i}", with_note=i % 2 == 0) for i in range(9)
        ]
        assert _write(store, turns) == [True] * 9
        for turn in turns:
            assert store.get_episode(turn.episode.id) == turn.episode
            if turn.note is not None:
                assert _same(store.get_record(_nid(turn)), _note(turn))

    def test_sending_a_batch_again_is_safe(self, store: Backend) -> None:
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


class TestConcurrency:
    def test_concurrent_counters_lose_no_update(self, store: Backend) -> None:
        turns = [_turn(ANA, f"hot {i}") for i in range(3)]
        _write(store, turns)
        ids = [_nid(t) for t in turns]

        def job(i: int) -> None:
            for n in range(10):
                store.touch(ids, at=later(n))
                store.record_feedback(used=[ids[0]], ignored=[ids[1]], at=later(n))

        _run(6, job)
        got = {r.id: r for r in store.get_records(ids)}
        assert [got[i].access_count for i in ids] == [60, 60, 60]
        assert (got[ids[0]].used_count, got[ids[1]].ignored_count) == (60, 60)
        assert store.uses_since([ids[0]], T0) == {ids[0]: 60}

    def test_concurrent_writers_of_different_turns(self, store: Backend) -> None:
        def job(i: int) -> list[bool]:
            turns = [_turn(Scope(user=f"w{i}"), f"thread {i} turn {n}") for n in range(8)]
            return _write(store, turns)

        assert _run(4, job) == [[True] * 8] * 4
        assert store.count(None, Kind.NOTE) == 32 and store.count(None, Kind.EPISODE) == 32
        for i in range(4):
            assert store.count(Scope(user=f"w{i}"), Kind.NOTE) == 8

    def test_concurrent_writes_of_one_turn_store_it_once(self, store: Backend) -> None:
        turn = _turn(ANA, "the same turn from everywhere")
        results = _run(6, lambda i: _write(store, [turn]))
        assert [True] in results
        assert store.count(None, Kind.EPISODE) == 1 and store.count(None, Kind.NOTE) == 1
        assert _same(store.get_record(_nid(turn)), _note(turn))

    def test_concurrent_updates_of_different_fields_all_land(self, store: Backend) -> None:
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
                    store.touch([rid], at=later(n))

        _run(4, job)
        got = store.get_record(rid)
        assert got is not None
        assert (got.tier, got.pinned, got.valid_to, got.access_count) == (
            Tier.HOT,
            True,
            later(100),
            10,
        )

    def test_two_instances_on_one_store_see_and_add_up(
        self, store: Backend, backend_reopen: Callable[[Backend], Backend]
    ) -> None:
        other = backend_reopen(store)
        turn = _turn(ANA, "shared")
        _write(store, [turn])
        rid = _nid(turn)
        assert _ids([c.record for c in other.search(ANA, unit(1.0), text=None, limit=3)]) == [rid]
        assert _write(other, [turn]) == [False]

        def job(i: int) -> None:
            for n in range(10):
                (store if i % 2 else other).touch([rid], at=later(n))

        _run(4, job)
        for backend in (store, other):
            got = backend.get_record(rid)
            assert got is not None and got.access_count == 40


# -- re-embedding -------------------------------------------------------------------------------

NEW = EmbedderPin("commonplace-conformance-v2", DIM * 2)  # another model, another dimension


def _new_vector(i: int) -> np.ndarray:
    """Record ``i``'s vector under the new model: one axis each, beyond the old ones."""
    return unit(*([0.0] * ((DIM + i) % NEW.dim) + [1.0]), dim=NEW.dim)


def _mixed_store(store: Backend) -> list[str]:
    """Three notes in two scopes (one soft-deleted), a summary and a procedure."""
    turns = [_turn(ANA, "tea"), _turn(ANA_T1, "coffee"), _turn(BOB, "juice")]
    _write(store, turns)
    summary = note(turns[0].episode, "About tea.", kind=Kind.SUMMARY, record_id="su_tea")
    procedure = note(turns[1].episode, "Asks for coffee.", kind=Kind.PROCEDURE, record_id="pr_c")
    store.add_records([summary, procedure], rows(unit(0.0, 1.0), unit(0.0, 0.0, 1.0)))
    store.update_records([_nid(turns[2])], at=later(1), status=Status.DELETED)
    return sorted([*map(_nid, turns), "su_tea", "pr_c"])


def _stage_all(store: Backend, target: EmbedderPin, order: dict[str, int]) -> list[str]:
    staged: list[str] = []
    while records := store.reembed_pending(target, limit=2):
        ids = [r.id for r in records]
        store.reembed_stage(target, ids, rows(*(_new_vector(order[i]) for i in ids)))
        staged += ids
    return staged


class TestReembed:
    def test_pending_lists_every_record_with_a_vector_whatever_its_kind_and_status(
        self, store: Backend
    ) -> None:
        ids = _mixed_store(store)
        assert store.reembed_state() is None
        assert sorted(r.id for r in store.reembed_pending(NEW, limit=100)) == ids
        assert store.reembed_state() == ReembedState(NEW, staged=0, pending=len(ids))
        assert len(store.reembed_pending(NEW, limit=2)) == 2

    def test_staged_vectors_wait_for_finish_then_replace_the_live_ones(
        self, store: Backend, backend_reopen: Callable[[Backend], Backend]
    ) -> None:
        ids = _mixed_store(store)
        order = {rid: i for i, rid in enumerate(ids)}
        first = store.reembed_pending(NEW, limit=1)[0]
        store.reembed_stage(NEW, [first.id], rows(_new_vector(order[first.id])))
        assert store.reembed_state() == ReembedState(NEW, staged=1, pending=len(ids) - 1)
        # the progress is in the store, and until the end the store keeps its old model
        assert backend_reopen(store).reembed_state() == ReembedState(NEW, 1, len(ids) - 1)
        assert store.read_pin() == PIN
        found = store.search(ANA, unit(0.0, 1.0), text=None, limit=1)
        assert [c.record.id for c in found] == ["su_tea"]
        assert store.reembed_finish(NEW) is None  # not everything is staged
        assert store.read_pin() == PIN
        assert sorted([first.id, *_stage_all(store, NEW, order)]) == ids
        assert store.reembed_finish(NEW) == len(ids)
        assert store.read_pin() == NEW and store.reembed_state() is None
        assert backend_reopen(store).read_pin() == NEW
        # the new vectors are live: searched, returned, and new writes take the new dimension
        for rid in ("su_tea", "pr_c"):
            hit = store.search(ANA, _new_vector(order[rid]), text=None, limit=1)
            assert [c.record.id for c in hit] == [rid] and hit[0].similarity > 0.99
        np.testing.assert_allclose(
            store.get_vectors(ids), rows(*(_new_vector(i) for i in range(len(ids)))), atol=1e-6
        )
        later_turn = _turn(ANA, "water")
        _write(store, [later_turn], _new_vector(9))
        hit = store.search(ANA, _new_vector(9), text=None, limit=1)
        assert [c.record.id for c in hit] == [_nid(later_turn)]

    def test_records_written_replaced_or_deleted_meanwhile_are_accounted_for(
        self, store: Backend
    ) -> None:
        ids = _mixed_store(store)
        order = {rid: i for i, rid in enumerate(ids)}
        _stage_all(store, NEW, order)
        late = _turn(ANA, "lemonade")  # written with the old model while re-embedding
        _write(store, [late], unit(0.5, 0.5))
        order[_nid(late)] = len(order)
        summary = store.get_record("su_tea")
        assert summary is not None
        store.replace_records([replace(summary, text="About tea, again.")], rows(unit(0.0, 1.0)))
        store.delete_records(["pr_c"])
        assert store.reembed_finish(NEW) is None
        assert sorted(r.id for r in store.reembed_pending(NEW, limit=100)) == sorted(
            [_nid(late), "su_tea"]
        )
        _stage_all(store, NEW, order)
        assert store.reembed_finish(NEW) == len(ids)  # one more note, one procedure less
        assert store.reembed_state() is None

    def test_another_target_abandons_the_unfinished_one(self, store: Backend) -> None:
        ids = _mixed_store(store)
        _stage_all(store, NEW, {rid: i for i, rid in enumerate(ids)})
        other = EmbedderPin("commonplace-conformance-v3", DIM)
        assert len(store.reembed_pending(other, limit=100)) == len(ids)
        assert store.reembed_state() == ReembedState(other, staged=0, pending=len(ids))
        with pytest.raises(StoreError, match="in progress"):
            store.reembed_stage(NEW, ids[:1], rows(_new_vector(0)))
        with pytest.raises(StoreError, match="in progress"):
            store.reembed_finish(NEW)
        assert store.read_pin() == PIN

    def test_vectors_of_the_wrong_shape_are_refused(self, store: Backend) -> None:
        ids = _mixed_store(store)
        store.reembed_pending(NEW, limit=1)
        with pytest.raises(InvalidInputError):
            store.reembed_stage(NEW, ids[:1], rows(unit(1.0)))  # the old dimension
        with pytest.raises(InvalidInputError):
            store.reembed_stage(NEW, ids[:2], rows(_new_vector(0)))  # one row for two ids
        assert store.reembed_state() == ReembedState(NEW, staged=0, pending=len(ids))

    def test_a_store_without_vectors_is_just_pinned(self, backend: Backend) -> None:
        assert backend.reembed_pending(NEW, limit=10) == []
        assert backend.reembed_finish(NEW) == 0
        assert backend.read_pin() == NEW and backend.reembed_state() is None


# -- the store as a whole -----------------------------------------------------------------------


class TestStoreLifecycle:
    def test_a_closed_store_refuses_every_call(
        self, backend_factory: Callable[[], Backend]
    ) -> None:
        closed = backend_factory()
        closed.write_pin(PIN)
        turn = _turn(ANA, "before closing")
        _write(closed, [turn])
        closed.close()
        closed.close()  # twice is fine
        calls: list[Callable[[], object]] = [
            closed.read_pin,
            lambda: closed.get_record(_nid(turn)),
            lambda: closed.search(ANA, unit(1.0), text="x", limit=3),
            lambda: closed.count(ANA, Kind.NOTE),
            lambda: closed.touch([_nid(turn)], at=later(1)),
            lambda: _write(closed, [_turn(ANA, "after closing")]),
        ]
        for call in calls:
            with pytest.raises(StoreClosedError):
                call()

    def test_the_url_opens_the_same_store(
        self, store: Backend, backend_reopen: Callable[[Backend], Backend]
    ) -> None:
        turn = _turn(ANA, "persisted")
        _write(store, [turn])
        again = backend_reopen(store)
        assert again.read_pin() == PIN
        assert _same(again.get_record(_nid(turn)), _note(turn))
        assert again.get_episode(turn.episode.id) == turn.episode

    def test_times_keep_their_microseconds(self, store: Backend) -> None:
        at = T0 + timedelta(microseconds=123_457)
        turn = _turn(ANA, "precise", at=at)
        _write(store, [turn])
        got = store.get_record(_nid(turn))
        assert got is not None and got.created_at == at
        stored = store.get_episode(turn.episode.id)
        assert stored is not None and stored.at == at
