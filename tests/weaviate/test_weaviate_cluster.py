"""Three Weaviate nodes on loopback, replication factor 3: one node dies mid-workload.

Writes and recalls go on through the surviving quorum, and every write that was
acknowledged is still there afterwards (and after the dead node comes back).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from commonplace import Kind, ManualClock, Memory, Scope
from commonplace_weaviate import WeaviateBackend
from commonplace_weaviate.server import LocalCluster, install

pytestmark = pytest.mark.weaviate
T0 = datetime(2026, 3, 1, 8, 0, tzinfo=timezone.utc)
USERS = [f"user{i}" for i in range(4)]
BATCHES, KILL_AFTER, PER_BATCH = 24, 8, 5


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    nodes = LocalCluster(install().path, base_dir=tmp_path_factory.mktemp("cluster"), nodes=3)
    nodes.start()
    yield nodes
    nodes.stop()


def _turns(batch: int) -> list[tuple[str, str]]:
    return [
        (
            f"I visited museum number {batch * PER_BATCH + i} in town {batch}.",
            USERS[(batch + i) % len(USERS)] if batch < BATCHES // 2 else f"late{i % 2}",
        )
        for i in range(PER_BATCH)
    ]


def test_a_node_lost_mid_workload_loses_nothing_acknowledged(cluster: LocalCluster) -> None:
    url = cluster.servers[0].url + "&replication=3&consistency=quorum&retries=12&prefix=Cluster"
    clock = ManualClock(T0)
    acknowledged: list[str] = []
    notes: list[str] = []
    recalls = {"ok": 0, "failed": 0}
    errors: list[str] = []
    stop = threading.Event()

    def recaller() -> None:
        with Memory(url, clock=ManualClock(T0 + timedelta(days=30))) as reader:
            n = 0
            while not stop.is_set():
                try:
                    reader.recall("which museum did the user visit?", scope=USERS[n % 4])
                    recalls["ok"] += 1
                except Exception as exc:  # counted, and named in the failure message
                    recalls["failed"] += 1
                    errors.append(repr(exc))
                n += 1

    with Memory(url, clock=clock) as writer:
        reading = threading.Thread(target=recaller)
        reading.start()
        try:
            for batch in range(BATCHES):
                if batch == KILL_AFTER:
                    ok_before = recalls["ok"]
                    cluster.servers[2].kill()  # a crash, not a clean shutdown
                clock.advance(minutes=5)
                results = writer.write_many(
                    [writer.turn(text, scope=user) for text, user in _turns(batch)]
                )
                acknowledged.extend(r.episode_id for r in results if r.created)
                notes.extend(r.note.id for r in results if r.note is not None)
        finally:
            stop.set()
            reading.join(timeout=120)
    assert len(acknowledged) == BATCHES * PER_BATCH
    assert recalls["failed"] == 0, errors  # recalls went on
    assert recalls["ok"] > ok_before
    with WeaviateBackend(url) as backend:
        assert {e.id for e in backend.get_episodes(acknowledged)} == set(acknowledged)
        users = [*USERS, "late0", "late1"]
        assert sum(backend.count(Scope(user=u), Kind.EPISODE) for u in users) == len(acknowledged)
        assert {r.id for r in backend.get_records(notes)} == set(notes)
    # the dead node comes back, catches up, and the cluster still holds everything
    cluster.servers[2].start()
    with WeaviateBackend(url.replace("consistency=quorum", "consistency=all")) as backend:
        assert {e.id for e in backend.get_episodes(acknowledged)} == set(acknowledged)
        assert {r.id for r in backend.get_records(notes)} == set(notes)
        backend.drop()
