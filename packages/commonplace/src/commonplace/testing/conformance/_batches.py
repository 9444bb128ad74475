"""Reads asked together (one :meth:`Backend.read`) and a recall's end in one call (one
:meth:`Backend.apply` of its accesses and its log), through :class:`Store`: the answers are
those of the reads one by one.

They belong to the required ``"search"`` and ``"bookkeeping"`` capabilities: every backend
runs them.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..._records import Kind, Tier
from ..._scope import Scope
from ...stores import (
    PROFILE_CARD,
    Card,
    LinkGraph,
    RecallLog,
    RecordQuery,
    SearchQuery,
    Store,
    TurnWrite,
)
from .._fixtures import episode, later, unit
from ._core import ALL_KINDS, ANA, ANA_T1, BOB, CapabilityGroup, _nid, _same, _turn, _write


def _store_a_scope(store: Store) -> list[str]:
    """Notes of ana's (one hot, one merged into, one touched), one in a thread of hers, one
    of bob's, and ana's profile card; the ids of ana's notes, oldest first."""
    turns = [_turn(ANA, f"ana's note {i} about tea" if i % 2 else f"note {i}") for i in range(4)]
    turns.append(_turn(ANA, "kayaking zucchini"))  # found by keyword only (see the search)
    _write(store, turns, *[unit(1.0, 0.2 * i) for i in range(4)], unit(0.0, 1.0))
    _write(store, [_turn(ANA_T1, "tea in a thread")], unit(1.0, 0.1))
    _write(store, [_turn(BOB, "bob's tea")], unit(1.0))
    ids = [_nid(t) for t in turns]
    store.update_records([ids[1]], at=later(1), tier=Tier.HOT)
    store.books.touch([ids[2]], at=later(2))
    merge = TurnWrite(episode(ANA, "note 0, said again", at=later(3)), None, merge_into=ids[0])
    store.write_turns([merge], None)
    store.books.put_card(Card(ANA, PROFILE_CARD, "Ana drinks tea.", later(4)))
    return ids


class TestReadBatches(CapabilityGroup):
    capability = "search"

    def test_a_batch_reads_what_each_read_reads_alone(self, store: Store) -> None:
        _store_a_scope(store)
        listings = (
            RecordQuery(scope=ANA, kinds=ALL_KINDS, tiers=(Tier.HOT,)),
            RecordQuery(scope=ANA, kinds=(Kind.NOTE,), newest_first=True, limit=3),
            RecordQuery(scope=ANA),
        )
        search = SearchQuery(ANA, unit(1.0), "zucchini tea", 2)
        cards = ((ANA, PROFILE_CARD), (ANA_T1, PROFILE_CARD))
        got = store.read_batch(listings=listings, search=search, cards=cards, vectors=True)
        assert got.listings == tuple(list(store.iter_records(q)) for q in listings)
        assert [len(records) for records in got.listings] == [1, 3, 6]
        assert got.hits == store.search(ANA, unit(1.0), text="zucchini tea", limit=2)
        assert any(h.keyword and h.similarity < 0.5 for h in got.hits)  # a keyword-only hit
        assert got.cards == tuple(store.books.get_card(s, k) for s, k in cards)
        assert got.cards[0] is not None and got.cards[1] is None
        # the vectors sent along (a backend may send none) are the listed records' own
        listed = list(dict.fromkeys(r.id for records in got.listings for r in records))
        sent = [rid for rid in listed if rid in got.vectors]
        assert set(got.vectors) == set(sent)
        for rid in sent:
            np.testing.assert_allclose(got.vectors[rid], store.get_vectors([rid])[0], atol=1e-6)

    def test_the_counters_and_provenance_of_what_it_reads_are_folded_in(self, store: Store) -> None:
        ids = _store_a_scope(store)
        got = store.read_batch(
            listings=(RecordQuery(scope=ANA),), search=SearchQuery(ANA, unit(1.0), None, 5)
        )
        listed = {r.id: r for r in got.listings[0]}
        assert listed[ids[2]].access_count == 1 and listed[ids[2]].last_access == later(2)
        assert len(listed[ids[0]].provenance) == 2  # the merge added its turn
        found = {h.record.id: h.record for h in got.hits}
        assert _same(found[ids[0]], listed[ids[0]]) and _same(found[ids[2]], listed[ids[2]])

    def test_listings_of_other_scopes_and_by_source_are_read_as_well(self, store: Store) -> None:
        ids = _store_a_scope(store)
        source = store.get_record(ids[4])
        assert source is not None
        listings = (
            RecordQuery(scope=BOB),
            RecordQuery(scope=None, sources=source.provenance),
            RecordQuery(scope=ANA_T1, newest_first=True, limit=1),
            RecordQuery(scope=ANA, limit=0),
        )
        got = store.read_batch(listings=listings, search=SearchQuery(ANA, unit(1.0), "tea", 3))
        assert got.listings == tuple(list(store.iter_records(q)) for q in listings)
        assert [len(records) for records in got.listings] == [1, 1, 1, 0]
        assert {h.record.scope for h in got.hits} <= {ANA, ANA_T1}
        assert got.vectors == {}  # not asked

    def test_the_links_of_the_best_hits_come_along_when_asked(self, store: Store) -> None:
        ids = _store_a_scope(store)
        store.links.reinforce_links(
            [(ids[0], ids[4], "co_use"), (ids[2], ids[3], "co_use")], delta=0.5, at=later(5)
        )
        search = SearchQuery(ANA, unit(1.0), None, 5)
        got = store.read_batch(search=search, link_seeds=2, link_min_weight=0.1)
        if not isinstance(store.backend, LinkGraph):
            assert (got.linked, got.links) == (frozenset(), [])
            return
        best = [h.record.id for h in sorted(got.hits, key=lambda h: -h.similarity)[:2]]
        assert ids[0] in best and got.linked == frozenset(best)
        assert set(got.links) == set(store.links.links_of(best, min_weight=0.1))
        assert [(k.a, k.b) for k in got.links] == [tuple(sorted((ids[0], ids[4])))]
        assert store.read_batch(search=search).links == []  # not asked

    def test_an_empty_scope_or_batch_reads_nothing(self, store: Store) -> None:
        _store_a_scope(store)
        carol = Scope(user="carol")
        got = store.read_batch(
            listings=(RecordQuery(scope=carol, newest_first=True, limit=5),),
            search=SearchQuery(carol, unit(1.0), "tea", 5),
            cards=((carol, PROFILE_CARD),),
            vectors=True,
        )
        assert (got.listings, got.hits, got.cards, dict(got.vectors)) == (([],), [], (None,), {})
        nothing = store.read_batch()
        assert (nothing.listings, nothing.hits, nothing.cards) == ((), [], ())
        listed = store.read_batch(listings=(RecordQuery(scope=BOB),))
        assert [r.text for r in listed.listings[0]] == ["The user says bob's tea"]


class TestRecallWrites(CapabilityGroup):
    capability = "bookkeeping"

    def test_a_recall_log_counts_the_accesses_it_names(self, store: Store) -> None:
        ids = _store_a_scope(store)
        log = RecallLog("rc_batch", ANA, later(10), (ids[1], ids[2]), shown_ids=tuple(ids[:3]))
        store.books.log_recall(log, accessed=[ids[1], ids[2], "nt_unknown"])
        assert store.books.get_recall("rc_batch") == log
        got = {r.id: r for r in store.get_records(ids)}
        assert (got[ids[1]].access_count, got[ids[1]].last_access) == (1, later(10))
        assert (got[ids[2]].access_count, got[ids[2]].last_access) == (2, later(10))
        assert got[ids[3]].access_count == 0
        # without accesses, only the log is written
        store.books.log_recall(replace(log, id="rc_alone", at=later(11)))
        assert store.books.get_recall("rc_alone") == replace(log, id="rc_alone", at=later(11))
        assert store.get_records([ids[1]])[0].access_count == 1
