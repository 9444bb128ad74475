"""Reads asked together (``read``) and a recall's end (``apply`` of its accesses and log) on a real
server: what they send, and the paging the conformance suite's small stores never reach.
The answers themselves are checked against the reads one by one in the conformance suite
(``TestReadBatches``, ``TestRecallWrites``)."""

from __future__ import annotations

import numpy as np
import pytest

from commonplace import Kind, Scope, Tier
from commonplace.stores import (
    PROFILE_CARD,
    Card,
    LedgerEntry,
    Reads,
    RecordQuery,
    RecordUpdate,
    SearchQuery,
    Store,
    TurnWrite,
    WriteBatch,
)
from commonplace.testing import T0, episode, note, unit
from commonplace.testing._fixtures import later, rows
from commonplace_weaviate import WeaviateBackend, _batch
from commonplace_weaviate import _schema as S
from commonplace_weaviate._recall_bench import Tally, count_requests

pytestmark = pytest.mark.weaviate

ANA = Scope(user="ana")
ANA_T1 = Scope(user="ana", thread="t1")


def _fill(backend: WeaviateBackend) -> list[str]:
    """Three notes of ana's and two in her thread, one of them hot; their ids."""
    turns = [episode(ANA if i < 3 else ANA_T1, f"tea note {i}", at=later(i)) for i in range(5)]
    notes = [note(t) for t in turns]
    backend.apply(
        WriteBatch(
            [TurnWrite(t, n) for t, n in zip(turns, notes)],
            rows(*[unit(1.0, 0.2 * i) for i in range(5)]),
        )
    )
    backend.update_records([notes[3].id], at=later(9), tier=Tier.HOT)
    return [n.id for n in notes]


def _listings() -> tuple[RecordQuery, ...]:
    return (
        RecordQuery(scope=ANA, kinds=(Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE), tiers=(Tier.HOT,)),
        RecordQuery(scope=ANA, newest_first=True, limit=4),
        RecordQuery(scope=ANA),
    )


def test_a_listing_longer_than_its_first_page_reads_the_rest(
    backend: WeaviateBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(backend)
    store = Store(backend)
    monkeypatch.setattr(_batch, "FIRST_PAGE", 2)
    listings = _listings()
    got = store.read_batch(listings=listings, vectors=True)
    assert got.listings == tuple(list(backend.iter_records(q)) for q in listings)
    assert [len(records) for records in got.listings] == [1, 4, 5]
    ids = [r.id for r in got.listings[2]]
    np.testing.assert_allclose(
        np.stack([got.vectors[rid] for rid in ids]), backend.get_vectors(ids), atol=1e-6
    )


def test_a_batch_looks_up_the_tenants_and_reads_the_counters_once(
    backend: WeaviateBackend,
) -> None:
    _fill(backend)
    store = Store(backend)
    store.books.put_card(Card(ANA, PROFILE_CARD, "Ana drinks tea.", T0))

    def read() -> Reads:
        # a search deep enough to find every note by vector: no keyword-only hits to measure
        search = SearchQuery(ANA, unit(1.0), "tea note", 5)
        return store.read_batch(
            listings=_listings(), search=search, cards=((ANA, PROFILE_CARD),), vectors=True
        )

    read()  # the scope's tenants seen
    tally = Tally(active=True, capture=True)
    count_requests(backend.client, tally)
    got = read()
    tally.active = False
    assert got.cards[0] is not None and len(got.hits) == 5
    tenant = backend.settings.prefix + S.TENANT.suffix
    lookups = [r for r in tally.searches if r.collection == tenant]
    assert len(lookups) == 1, tally.requests
    assert tally.requests["grpc Aggregate"] == 1, tally.requests
    # three listings, on two tenants of one collection, a near-vector and a BM25 query
    # on each, and the card
    assert tally.requests["grpc Search"] == 1 + 3 * 2 + 2 * 2 + 1, tally.requests


def test_a_recalls_end_writes_the_events_and_the_entries_only(backend: WeaviateBackend) -> None:
    ids = _fill(backend)
    backend.get_records(ids)  # their locations are known now
    tally = Tally(active=True)
    count_requests(backend.client, tally)
    entry = LedgerEntry("recall", "rc_new", ANA, later(20), {"retrieved": ids[:2]})
    touched = RecordUpdate(ids[:2], later(20), counter="access")
    backend.apply(WriteBatch(updates=[touched], new_entries=[entry]))
    tally.active = False
    assert dict(tally.requests) == {"grpc BatchObjects": 2}
    assert backend.ledger.get("recall", "rc_new") == entry
    touched = {r.id: r.access_count for r in backend.get_records(ids)}
    assert touched == {ids[0]: 1, ids[1]: 1, ids[2]: 0, ids[3]: 0, ids[4]: 0}
