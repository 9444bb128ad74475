"""What a backend remembers to save round trips never changes what it reads.

A recall's reads skip requests: the tenants a scope had last time are queried while the
registry is asked again, a record read once is read again by id without its locator, a
turn is read in its note's tenant while its locator is checked. Each test has another
client change the store behind the backend's back, and checks the backend answers what
a fresh one would. The last test counts the requests a recall sends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest

from commonplace import HashingEmbedder, Kind, ManualClock, Memory, Recall, Record, Scope, Tags
from commonplace.stores import RecordQuery, TurnWrite, WriteBatch
from commonplace.testing import T0, episode, note, unit
from commonplace_weaviate import WeaviateBackend
from commonplace_weaviate import _schema as S
from commonplace_weaviate._mapping import object_uuid
from commonplace_weaviate._recall_bench import Tally, count_requests

pytestmark = pytest.mark.weaviate

ANA = Scope(user="ana")


@pytest.fixture
def other(backend: WeaviateBackend) -> Iterator[WeaviateBackend]:
    """A second client of the same store (another process, as far as caches go)."""
    second = WeaviateBackend(backend.url)
    try:
        yield second
    finally:
        second.close()


def _write(backend: WeaviateBackend, scope: Scope, text: str, axis: float = 1.0) -> Record:
    turn = episode(scope, text)
    made = note(turn)
    backend.apply(WriteBatch([TurnWrite(turn, made)], unit(axis).reshape(1, -1)))
    return made


def _texts(backend: WeaviateBackend, scope: Scope) -> tuple[list[str], list[str]]:
    """What a search and a newest-first listing of ``scope`` find."""
    found = backend.search(scope, unit(1.0), text="tea", limit=10)
    listed = backend.iter_records(RecordQuery(scope=scope, newest_first=True, limit=10))
    return sorted(h.record.text for h in found), sorted(r.text for r in listed)


def test_a_scope_finds_a_tenant_another_client_made_since_it_last_looked(
    backend: WeaviateBackend, other: WeaviateBackend
) -> None:
    first = _write(backend, Scope(user="ana", thread="t1"), "tea in the morning")
    assert _texts(backend, ANA) == ([first.text], [first.text])
    # a new thread of ana's: a tenant this backend has never seen
    second = _write(other, Scope(user="ana", thread="t2"), "tea at night")
    both = sorted([first.text, second.text])
    assert _texts(backend, ANA) == (both, both)
    assert backend.count(ANA, Kind.NOTE) == 2


def test_a_tenant_another_client_erased_is_no_longer_read(
    backend: WeaviateBackend, other: WeaviateBackend
) -> None:
    kept = _write(backend, Scope(user="ana", thread="t1"), "tea in the morning")
    gone = _write(backend, Scope(user="ana", thread="t2"), "tea at night")
    assert len(_texts(backend, ANA)[0]) == 2
    other.delete(records=[gone.id], episodes=[gone.provenance[0]], erase=True)
    assert _texts(backend, ANA) == ([kept.text], [kept.text])


def test_a_record_another_client_deleted_is_not_read_where_it_was(
    backend: WeaviateBackend, other: WeaviateBackend
) -> None:
    made = _write(backend, ANA, "tea in the morning")
    assert [h.record.id for h in backend.search(ANA, unit(1.0), text=None, limit=5)] == [made.id]
    other.delete(records=[made.id])
    assert backend.get_records([made.id]) == []
    assert not np.any(backend.get_vectors([made.id]))


def test_a_record_another_client_moved_is_read_where_it_is_now(
    backend: WeaviateBackend, other: WeaviateBackend
) -> None:
    turn = episode(ANA, "tea in the morning")
    summary = Record("sm_tea", Kind.SUMMARY, ANA, "Ana drinks tea.", Tags(), (turn.id,), T0, T0)
    backend.put_records([summary], unit(1.0).reshape(1, -1))
    assert [r.scope for r in backend.get_records([summary.id])] == [ANA]
    # the same id, replaced in another scope and kind by another client
    moved = Record(
        "sm_tea", Kind.PROCEDURE, Scope(user="bob"), "Bob drinks tea.", Tags(), (), T0, T0
    )
    other.put_records([moved], unit(2.0).reshape(1, -1), replace=True)
    got = backend.get_records([summary.id])
    assert [(r.kind, r.scope, r.text) for r in got] == [
        (Kind.PROCEDURE, Scope(user="bob"), "Bob drinks tea.")
    ]
    assert np.allclose(backend.get_vectors([summary.id])[0], unit(2.0))


def test_a_turn_is_read_only_once_its_locator_says_it_is_stored(
    backend: WeaviateBackend, other: WeaviateBackend
) -> None:
    made = _write(other, ANA, "tea in the morning")
    turn = made.provenance[0]
    backend.search(ANA, unit(1.0), text=None, limit=5)  # the note names its turn
    assert [e.id for e in backend.get_episodes([turn])] == [turn]
    # the episode object without its locator: what a write that failed before its commit
    # point leaves behind; it does not count as stored
    reader = WeaviateBackend(backend.url)
    try:
        reader.search(ANA, unit(1.0), text=None, limit=5)
        locators = backend.client.collections.get(backend.settings.prefix + S.LOCATOR.suffix)
        locators.data.delete_by_id(object_uuid("locator", turn))
        assert reader.get_episodes([turn]) == []
    finally:
        reader.close()


def test_a_turn_outside_its_records_tenant_is_found_by_its_locator(
    backend: WeaviateBackend, other: WeaviateBackend
) -> None:
    bob_turn = episode(Scope(user="bob"), "bob likes tea")
    other.apply(WriteBatch([TurnWrite(bob_turn)], None))
    # a summary of ana's naming bob's turn: the guess (ana's tenant) is wrong
    summary = Record("sm_x", Kind.SUMMARY, ANA, "Tea.", Tags(), (bob_turn.id,), T0, T0)
    other.put_records([summary], unit(1.0).reshape(1, -1))
    backend.search(ANA, unit(1.0), text=None, limit=5, kinds=(Kind.SUMMARY,))
    assert [e.text for e in backend.get_episodes([bob_turn.id])] == ["bob likes tea"]


_FACTS = (
    "I drink green tea every morning.",
    "My sister Joana lives in Porto.",
    "I am learning the cello.",
    "I moved to Lisbon last year.",
    "My dog is called Pastel.",
)


def _counted_recall(
    url: str, facts: tuple[str, ...], query: str, *, latency: float = 0.0
) -> tuple[Recall, Tally]:
    """A recall of ``query`` on a store of ``facts`` (ana's, an hour apart), with the
    requests it sent (a first recall has seen the scope's tenants)."""
    clock = ManualClock(T0)
    with Memory(url, embedder=HashingEmbedder(), clock=clock) as memory:
        for text in facts:
            memory.write(text, scope="ana")
            clock.advance(hours=1)
        clock.advance(days=1)
        memory.recall("what does the user drink?", scope="ana")  # the scope's tenants seen
        tally = Tally(active=True, latency=latency)
        count_requests(memory.backend.client, tally)  # type: ignore[attr-defined]
        recall = memory.recall(query, scope="ana")
        tally.active = False
    return recall, tally


def test_a_recall_sends_few_requests(
    weaviate_backend_factory: Callable[[], WeaviateBackend],
) -> None:
    recall, tally = _counted_recall(weaviate_backend_factory().url, _FACTS, "who is Joana?")
    assert "Porto" in recall.text
    # The core asks for its first reads together (read_batch: the hot records, the recent
    # notes, the candidates with their links, disputes and turns, the profile card), then
    # counts the accesses and logs the recall in one call (apply). The batch waits
    # twice (the rows, then their counters, the keyword hits' cosines, the links, the
    # disputes and the turns): three rounds, which a request finishing before the next of
    # its round is sent may split. The tenant lookup, the keyword query and the turns'
    # locators travel alongside; the two writes go side by side.
    assert tally.rounds <= 6, tally
    assert sum(tally.requests.values()) <= 13, tally


def test_a_recall_waits_for_the_server_three_times_at_most(
    weaviate_backend_factory: Callable[[], WeaviateBackend],
) -> None:
    """A recall that searches waits three times: its first reads, what they name (counters,
    the keyword hits' cosines, links, disputes, the turns excerpts quote), and its end (the
    access events and its log). Each request is held back a little, as over a network, so
    the requests of one round overlap for certain and the count is what waits for what,
    not how fast the server answered. (A dispute naming a record the recall did not read
    yet, or a chain of supersessions, costs the rounds of reading it.)"""
    facts = (
        *_FACTS,
        "Joana is a nurse at the Santo António hospital.",
        "I play the cello with Joana on Sundays.",
        "I walk Pastel along the river after work.",
    )
    url = weaviate_backend_factory().url
    recall, tally = _counted_recall(url, facts, "where does Joana work?", latency=0.03)
    assert recall.searched and "Joana" in recall.text
    assert tally.rounds <= 3, tally.per_round
