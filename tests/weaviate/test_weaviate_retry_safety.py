"""No transactions in Weaviate: a failed write_turns is undone or finished by sending it again.

And counters are event objects, so writers in different processes never lose a count.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from commonplace import Kind, Scope, Tags
from commonplace.errors import StoreError
from commonplace.stores import RecordQuery, TurnWrite, WriteBatch
from commonplace.testing import T0, episode, note, unit
from commonplace_weaviate import WeaviateBackend

pytestmark = pytest.mark.weaviate
ANA = Scope(user="ana")


def _fail(*args: object, **kwargs: object) -> None:
    raise StoreError("injected: the server went away")


def test_a_failure_before_the_commit_point_leaves_no_trace(
    backend: WeaviateBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    eps = [episode(ANA, f"turn {i}") for i in range(3)]
    turns = [TurnWrite(e, note(e)) for e in eps]
    vectors = unit(1.0).reshape(1, -1).repeat(3, axis=0)
    monkeypatch.setattr(backend, "_put_episodes", _fail)
    with pytest.raises(StoreError, match="injected"):
        backend.apply(WriteBatch(turns, vectors))
    # the notes written before the failure were removed again: nothing half-stored
    assert backend.get_episodes([e.id for e in eps]) == []
    assert backend.count(ANA, Kind.NOTE) == 0
    assert backend.search(ANA, unit(1.0), text="turn", limit=10) == []
    monkeypatch.undo()
    assert backend.apply(WriteBatch(turns, vectors)) == [True, True, True]
    assert backend.count(ANA, Kind.NOTE) == 3 and backend.count(ANA, Kind.EPISODE) == 3


def test_sending_a_failed_call_again_applies_merges_once(
    backend: WeaviateBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = episode(ANA, "I love jazz.")
    backend.apply(WriteBatch([TurnWrite(original, note(original))], unit(1.0).reshape(1, -1)))
    rid = note(original).id
    again = episode(ANA, "I really love jazz.", at=T0.replace(hour=10))
    merge = TurnWrite(again, None, merge_into=rid, merged_tags=Tags(importance=0.9))
    monkeypatch.setattr(backend, "_put_episodes", _fail)
    with pytest.raises(StoreError, match="injected"):
        backend.apply(WriteBatch([merge], None))  # the merge was applied, the episode was not
    monkeypatch.undo()
    assert backend.apply(WriteBatch([merge], None)) == [True]
    assert backend.apply(WriteBatch([merge], None)) == [False]
    [record] = backend.get_records([rid])
    # the merge refreshed the note once (its "seen" event has a fixed id) and, being no
    # use, counted no access
    assert record.access_count == 0 and record.last_access == again.at
    assert sorted(record.provenance) == sorted([original.id, again.id])
    assert record.tags.importance == 0.9


def test_a_failure_after_the_commit_point_is_finished_by_a_retry(
    backend: WeaviateBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    e = episode(ANA, "committed")
    real = backend._insert
    calls = {"n": 0}

    def flaky_insert(spec, tenant, objects, what, labels):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if what == "episode locators":
            real(spec, tenant, objects, what, labels)
            raise StoreError("injected: the acknowledgement was lost")
        return real(spec, tenant, objects, what, labels)

    monkeypatch.setattr(backend, "_insert", flaky_insert)
    with pytest.raises(StoreError, match="acknowledgement"):
        backend.apply(WriteBatch([TurnWrite(e, note(e))], unit(1.0).reshape(1, -1)))
    monkeypatch.undo()
    assert backend.apply(WriteBatch([TurnWrite(e, note(e))], unit(1.0).reshape(1, -1))) == [False]
    assert backend.count(ANA, Kind.NOTE) == 1 and backend.count(ANA, Kind.EPISODE) == 1
    assert len(list(backend.iter_records(RecordQuery(scope=ANA)))) == 1


_TOUCHER = textwrap.dedent("""
    import sys
    from datetime import datetime, timezone
    from commonplace_weaviate import WeaviateBackend

    url, record_id, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with WeaviateBackend(url) as backend:
        for i in range(n):
            at = datetime(2026, 2, 1, tzinfo=timezone.utc)
            backend.update_records([record_id], at=at, counter="access")
            backend.update_records([record_id], at=at, counter="used")
""")


def test_writers_in_different_processes_lose_no_count(backend: WeaviateBackend) -> None:
    e = episode(ANA, "popular")
    backend.apply(WriteBatch([TurnWrite(e, note(e))], unit(1.0).reshape(1, -1)))
    rid = note(e).id
    workers = [
        subprocess.Popen([sys.executable, "-c", _TOUCHER, backend.url, rid, "25"]) for _ in range(3)
    ]
    assert [w.wait(timeout=300) for w in workers] == [0, 0, 0]
    [record] = backend.get_records([rid])
    assert (record.access_count, record.used_count) == (75, 75)
