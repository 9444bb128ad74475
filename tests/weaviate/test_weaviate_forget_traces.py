"""Forget means gone on Weaviate too: after ``Memory.forget`` of one note, no object of any
collection or tenant of the store holds its words (records, episodes, provenance, the
ledger's recall logs, audit entries and cards), read back through the server's API.

What the server keeps on its disk is not read here: a deleted object of a tenant that
still holds others is tombstoned and leaves the server's files when it next compacts
them (see ``commonplace_weaviate._forget``); a scope forgotten whole drops its tenants.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone

import pytest

from commonplace import Config, ConsolidationRules, ManualClock, Memory, ProfileRules, Scope
from commonplace_weaviate import WeaviateBackend

pytestmark = pytest.mark.weaviate
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
BUSY = Config(
    search_min_notes=0,
    consolidation=ConsolidationRules(min_age_days=0, min_cluster_size=2),
    profile=ProfileRules(rewrite_every=3),
)
SECRET = "zq7xk4pl"
ANA = Scope(user="ana")
ANA_T1 = Scope(user="ana", thread="t1")


def scan(backend: WeaviateBackend, word: str) -> list[tuple[str, str | None]]:
    """Every object of the store (each collection, each tenant) whose properties hold
    ``word``, case-insensitively: (collection, tenant)."""
    client = backend.client
    prefix = backend.settings.prefix
    hits: list[tuple[str, str | None]] = []
    for name, config in client.collections.list_all(simple=False).items():
        if not name.startswith(prefix):
            continue
        collection = client.collections.get(name)
        tenants: list[str | None] = [None]
        if config.multi_tenancy_config.enabled:
            tenants = sorted(collection.tenants.get())
        for tenant in tenants:
            objects = collection.with_tenant(tenant) if tenant else collection
            for obj in objects.iterator():
                if word.lower() in json.dumps(obj.properties, default=str).lower():
                    hits.append((name.removeprefix(prefix), tenant))
    return hits


# a move that replaces the old city (an audit entry names it, the cards are written from
# it), other notes, and a question that names the secret (a recall log holds it)
TURNS = (
    "I live in Lisbon.",
    "My sister Mia plays chess.",
    f"I moved to {SECRET.title()} last week, we sold the flat in Lisbon.",
    "My sister Mia bakes bread.",
)


def fill(memory: Memory, clock: ManualClock) -> str:
    """The turns, a recall, the lifecycle and the cards; the id of the move's note."""
    moved = ""
    for text in TURNS:
        written = memory.write(text, scope=ANA_T1)
        if SECRET in text.lower() and written.note is not None:
            moved = written.note.id
        clock.advance(days=1)
    recall = memory.recall(f"when did I move to {SECRET.upper()}?", scope=ANA)
    assert moved in recall.retrieved
    memory.feedback(recall.id, used=[moved])
    for scope in (ANA, ANA_T1):
        memory.consolidate(scope=scope)
        memory.sleep(scope=scope)
        memory.rewrite_profile(scope=scope)
    return moved


@pytest.mark.parametrize("evidence", [True, False], ids=["with_evidence", "without_evidence"])
def test_forget_leaves_no_object_holding_the_words(
    weaviate_backend_factory: Callable[[], WeaviateBackend], evidence: bool
) -> None:
    reader = weaviate_backend_factory()
    clock = ManualClock(T0)
    with Memory(reader.url, config=BUSY, clock=clock) as memory:
        note = fill(memory, clock)
        assert {c for c, _ in scan(reader, SECRET)} >= {"Note", "Episode", "Ledger"}
        memory.forget(note, scope=ANA, include_evidence=evidence)
        hits = scan(reader, SECRET)
        # without the evidence, the turn stays as it was said: the one object left
        assert [c for c, _ in hits] == ([] if evidence else ["Episode"])
        assert scan(reader, "chess"), "the kept notes lost their own words"
