"""Scope isolation, the required ``"scopes"`` capability.

A query scope sees exactly the scopes it contains, scope values are data and never query
syntax, and ``delete_scope`` removes everything the scope sees, and its traces, and nothing
else. Every backend has it.
"""

from __future__ import annotations

from ..._records import Kind
from ..._scope import Scope
from ...lifecycle._forget import delete_scope
from ...stores import AuditEntry, Card, Conflict, RecallLog, RecordQuery, Store
from .._fixtures import T0, note, rows, unit
from ._core import ANA, ANA_T1, ANA_T2, BOB, CapabilityGroup, _nid, _turn, _write

# -- scopes -------------------------------------------------------------------------------------


class TestScopes(CapabilityGroup):
    capability = "scopes"

    def test_a_query_scope_sees_exactly_the_scopes_it_contains(self, store: Store) -> None:
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

    def test_scope_values_are_data_never_query_syntax(self, store: Store) -> None:
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

    def test_bookkeeping_is_scoped_too(self, store: Store) -> None:
        for scope in (ANA, ANA_T1, BOB):
            store.books.append_audit([AuditEntry(T0, scope, "demote", "rule", f"id-{scope}")])
            store.books.add_conflict(
                Conflict(f"c-{scope}", scope, "Tom", "two Toms", ("a", "b"), T0)
            )
        assert {e.scope for e in store.books.audit_log(ANA, limit=10)} == {ANA, ANA_T1}
        assert {e.scope for e in store.books.audit_log(None, limit=10)} == {ANA, ANA_T1, BOB}
        assert {c.scope for c in store.books.conflicts(BOB, open_only=True)} == {BOB}

    def test_delete_scope_removes_everything_it_sees_and_nothing_else(self, store: Store) -> None:
        keep = _turn(BOB, "bob stays")
        gone = [_turn(ANA, "ana 1"), _turn(ANA_T1, "ana 2"), _turn(ANA, "ana 3", with_note=False)]
        _write(store, [keep, *gone])
        summary = note(gone[0].episode, "ana summary", kind=Kind.SUMMARY, record_id="su_ana")
        store.put_records([summary], rows(unit(1.0)))
        store.books.append_audit(
            [AuditEntry(T0, ANA, "a", "r", "x"), AuditEntry(T0, BOB, "a", "r", "y")]
        )
        store.books.log_recall(RecallLog("rc_ana", ANA, T0, ("x",)))
        store.books.add_conflict(Conflict("cf_ana", ANA_T1, "Tom", "why", ("x",), T0))
        store.books.put_card(Card(ANA, "profile", "Ana", T0))
        store.books.put_card(Card(BOB, "profile", "Bob", T0))
        counts = delete_scope(store, ANA)
        assert counts["records"] == 3 and counts["episodes"] == 3
        assert counts["audit"] == 1 and counts["recalls"] == 1 and counts["conflicts"] == 1
        assert counts["cards"] == 1
        assert store.count(ANA, Kind.NOTE) == 0 and store.count(ANA, Kind.EPISODE) == 0
        assert store.search(ANA, unit(1.0), text="ana", limit=10) == []
        assert store.get_record("su_ana", any_status=True) is None
        assert (
            store.books.get_recall("rc_ana") is None
            and store.books.get_card(ANA, "profile") is None
        )
        assert store.count(BOB, Kind.NOTE) == 1 and store.books.get_card(BOB, "profile") is not None
        assert store.get_episode(keep.episode.id) == keep.episode
        # the scope can be written to again afterwards
        assert _write(store, [gone[0]]) == [True]
        assert store.count(ANA, Kind.NOTE) == 1

    def test_delete_scope_removes_its_traces_elsewhere(self, store: Store) -> None:
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
        store.put_records(
            [summary, procedure, other], rows(unit(1.0), unit(0.0, 1.0), unit(0.0, 0.0, 1.0))
        )
        store.books.append_audit(
            [
                AuditEntry(T0, ANA, "merge", "r", _nid(gone)),
                AuditEntry(T0, ANA, "merge", "r", _nid(kept)),
                AuditEntry(T0, ANA_T1, "demote", "r", "x"),
            ]
        )
        store.books.add_conflict(Conflict("cf_gone", BOB, "Tom", "why", (_nid(gone), "y"), T0))
        store.books.add_conflict(Conflict("cf_kept", ANA, "Tom", "why", (_nid(kept),), T0))
        for scope in (ANA, ANA_T1, ANA_T2, Scope(thread="t1"), BOB):
            store.books.put_card(Card(scope, "profile", f"card of {scope}", T0))
        counts = delete_scope(store, ANA_T1)
        assert counts["records"] == 3 and counts["audit"] == 2
        for rid in (_nid(gone), "su_from_t1", "pr_from_su"):
            assert store.get_record(rid, any_status=True) is None
        assert store.get_record("su_kept") is not None and store.get_record(_nid(kept))
        assert [e.record_id for e in store.books.audit_log(None, limit=10)] == [_nid(kept)]
        assert [c.id for c in store.books.conflicts(None, open_only=False)] == ["cf_kept"]
        # the cards written from the forgotten notes go (Ana's, the thread's); a thread card
        # of user-less runs was never written from Ana's notes (``Scope.owns``) and stays
        assert {
            s
            for s in (ANA, ANA_T1, ANA_T2, Scope(thread="t1"), BOB)
            if store.books.get_card(s, "profile") is not None
        } == {ANA_T2, BOB, Scope(thread="t1")}
