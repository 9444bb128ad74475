"""How a store is laid out in Weaviate: explicit schema, a tenant per scope, the pin, errors."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

import pytest

from commonplace import Kind, Scope
from commonplace.errors import SchemaVersionError, StoreError
from commonplace.stores import LedgerEntry, RecordQuery, TurnWrite, WriteBatch
from commonplace.testing import PIN, T0, episode, note, unit
from commonplace_weaviate import WeaviateBackend
from commonplace_weaviate import _schema as S
from commonplace_weaviate._mapping import tenant_name

pytestmark = pytest.mark.weaviate


def _collection(backend: WeaviateBackend, spec: S.Spec):  # type: ignore[no-untyped-def]
    return backend.client.collections.get(backend.settings.prefix + spec.suffix)


def test_every_collection_has_an_explicit_schema(backend: WeaviateBackend) -> None:
    from weaviate.classes.config import Tokenization

    for spec in S.SPECS:
        config = _collection(backend, spec).config.get()
        assert config.multi_tenancy_config.enabled is spec.multi_tenant
        assert config.multi_tenancy_config.auto_tenant_creation is False
        declared = {p.name: p for p in config.properties}
        assert set(declared) == {p.name for p in spec.props}
        for prop in spec.props:
            assert str(declared[prop.name].data_type.value) == prop.type
            if prop.type == S.TEXT:
                want = Tokenization.WORD if prop.searchable else Tokenization.FIELD
                assert declared[prop.name].tokenization == want
        vectors = config.vector_config or {}
        assert all(v.vectorizer.vectorizer.value == "none" for v in vectors.values())
        marker = json.loads(config.description)
        assert marker["commonplace"] == S.SCHEMA_VERSION


def test_the_embedder_pin_lives_in_the_collection_metadata(backend: WeaviateBackend) -> None:
    marker = json.loads(_collection(backend, S.NOTE).config.get().description)
    assert marker["embedder"] == {"name": PIN.name, "dim": PIN.dim}


def test_each_scope_is_its_own_tenant(backend: WeaviateBackend) -> None:
    scopes = [
        Scope(user="ana"),
        Scope(user="ana", thread="t1"),
        Scope(user="bob"),
        Scope(user="ana' OR 1=1 --", agent="🤖"),
    ]
    for i, scope in enumerate(scopes):
        ep = episode(scope, f"turn {i}")
        backend.apply(WriteBatch([TurnWrite(ep, note(ep))], unit(1.0).reshape(1, -1)))
    tenants = set(_collection(backend, S.NOTE).tenants.get())
    assert tenants == {tenant_name(s.parts()) for s in scopes}
    assert set(_collection(backend, S.EPISODE).tenants.get()) == tenants
    for name in tenants:
        assert len(name) <= 64 and all(c.isascii() and (c.isalnum() or c == "-") for c in name)
    assert tenant_name(("ana", "", "")) != tenant_name(("", "ana", ""))
    assert tenant_name(("a", "b", "")) != tenant_name(("a", "", "b"))
    # a tenant holds exactly its scope's objects
    only_bob = _collection(backend, S.NOTE).with_tenant(tenant_name(("bob", "", "")))
    assert [o.properties["scope_user"] for o in only_bob.query.fetch_objects().objects] == ["bob"]


def test_a_collection_commonplace_did_not_create_is_left_alone(
    weaviate_server: object, weaviate_backend_factory: Callable[[], WeaviateBackend]
) -> None:
    backend = weaviate_backend_factory()
    prefix = backend.settings.prefix
    backend.drop()
    backend.client.collections.create(prefix + S.LEDGER.suffix, description="someone else's")
    try:
        with pytest.raises(StoreError, match=r"not created by commonplace.*prefix"):
            WeaviateBackend(backend.url)
    finally:
        backend.client.collections.delete(prefix + S.LEDGER.suffix)


def test_a_newer_schema_is_refused(weaviate_backend_factory: Callable[[], WeaviateBackend]) -> None:
    backend = weaviate_backend_factory()
    ledger = _collection(backend, S.LEDGER)
    ledger.config.update(description=json.dumps({"commonplace": S.SCHEMA_VERSION + 1}))
    try:
        with pytest.raises(SchemaVersionError, match="upgrade commonplace-weaviate"):
            WeaviateBackend(backend.url)
    finally:
        ledger.config.update(description=S.description(S.LEDGER))


def test_a_hand_edited_schema_is_reported(
    weaviate_backend_factory: Callable[[], WeaviateBackend],
) -> None:
    from weaviate.classes.config import DataType, Property

    backend = weaviate_backend_factory()
    prefix = backend.settings.prefix
    backend.client.collections.delete(prefix + S.LINK.suffix)
    backend.client.collections.create(
        prefix + S.LINK.suffix,
        description=S.description(S.LINK),
        properties=[Property(name="a", data_type=DataType.INT)],
    )
    try:
        with pytest.raises(StoreError, match=r"'a' is int, not text"):
            WeaviateBackend(backend.url)
    finally:
        backend.client.collections.delete(prefix + S.LINK.suffix)
        backend.client.collections.create(
            **S.create_kwargs(S.LINK, prefix + S.LINK.suffix, replication=1)
        )


def test_properties_a_newer_version_declares_are_added_on_open(
    weaviate_backend_factory: Callable[[], WeaviateBackend],
) -> None:
    backend = weaviate_backend_factory()
    prefix = backend.settings.prefix
    backend.client.collections.delete(prefix + S.LEDGER.suffix)
    older = S.create_kwargs(S.LEDGER, prefix + S.LEDGER.suffix, replication=1)
    older["properties"] = [p for p in older["properties"] if p.name != "writer"]
    backend.client.collections.create(**older)
    assert "writer" not in {p.name for p in _collection(backend, S.LEDGER).config.get().properties}
    with WeaviateBackend(backend.url) as again:
        names = {p.name for p in _collection(backend, S.LEDGER).config.get().properties}
        entry = LedgerEntry("audit", "a1", Scope(user="ana"), T0)
        assert again.ledger.put([entry], replace=False) == [True]
        assert again.ledger.put([entry], replace=False) == [False]
    assert "writer" in names


def test_refused_objects_are_reported_one_by_one(backend: WeaviateBackend) -> None:
    from weaviate.classes.data import DataObject

    good = DataObject(properties={"a": "x", "b": "y", "kind": "entity", "weight": 0.5})
    bad = DataObject(properties={"a": "x", "b": "z", "kind": "entity", "weight": "heavy"})
    with pytest.raises(StoreError, match=r"refused 1 of 2 links: #1 \(second\): .*weight"):
        backend._insert(S.LINK, None, [good, bad], "links", ["first", "second"])


def test_a_scope_removed_by_another_client_is_recreated_on_write(backend: WeaviateBackend) -> None:
    other = WeaviateBackend(backend.url)
    try:
        first = episode(Scope(user="ana"), "first")
        backend.apply(WriteBatch([TurnWrite(first, note(first))], unit(1.0).reshape(1, -1)))
        # an erasing delete removes the tenants it empties; backend still believes they exist
        other.delete(records=[note(first).id], episodes=[first.id], erase=True)
        assert tenant_name(("ana", "", "")) not in set(_collection(backend, S.NOTE).tenants.get())
        second = episode(Scope(user="ana"), "second")
        assert backend.apply(
            WriteBatch([TurnWrite(second, note(second))], unit(1.0).reshape(1, -1))
        ) == [True]
        newest = RecordQuery(scope=Scope(user="ana"), newest_first=True, limit=5)
        assert [r.text for r in backend.iter_records(newest)] == [note(second).text]
    finally:
        other.close()


def test_an_erasing_delete_removes_the_tenants_it_empties_and_only_those(
    backend: WeaviateBackend,
) -> None:
    ana_t1, ana_t2 = Scope(user="ana", thread="t1"), Scope(user="ana", thread="t2")
    a, b, c = episode(ana_t1, "one"), episode(ana_t1, "two"), episode(ana_t2, "three")
    backend.apply(
        WriteBatch(
            [TurnWrite(e, note(e)) for e in (a, b, c)], unit(1.0).reshape(1, -1).repeat(3, axis=0)
        )
    )
    t1, t2 = tenant_name(ana_t1.parts()), tenant_name(ana_t2.parts())
    assert backend.delete(records=[note(a).id], episodes=[a.id]) == {
        "records": [note(a).id],
        "episodes": [a.id],
    }
    # without erase the tenants stay, even an emptied one
    backend.delete(records=[note(c).id], episodes=[c.id])
    assert {t1, t2} <= set(_collection(backend, S.NOTE).tenants.get())
    backend.apply(WriteBatch([TurnWrite(c, note(c))], unit(1.0).reshape(1, -1)))
    removed = backend.delete(records=[note(c).id, note(b).id], episodes=[c.id], erase=True)
    assert sorted(removed["records"]) == sorted([note(b).id, note(c).id])
    # t2 is empty now: its note and episode tenants (and registry entries) are gone; t1
    # still holds an episode, so its episode tenant stays (its emptied note tenant goes)
    assert t2 not in set(_collection(backend, S.NOTE).tenants.get())
    assert t2 not in set(_collection(backend, S.EPISODE).tenants.get())
    assert t1 not in set(_collection(backend, S.NOTE).tenants.get())
    assert t1 in set(_collection(backend, S.EPISODE).tenants.get())
    registry = {o.properties["tenant"] for o in _collection(backend, S.TENANT).iterator()}
    assert t2 not in registry and t1 in registry
    assert [e.id for e in backend.recent_episodes(Scope(user="ana"), limit=5)] == [b.id]
    assert backend.count(Scope(user="ana"), Kind.NOTE) == 0


def test_newest_first_reads_are_right_past_a_limit(backend: WeaviateBackend) -> None:
    # Weaviate 1.35 answers a lone range filter on the sort property, sorted descending
    # with a limit, with the lowest values; the reads must not send one
    ana = Scope(user="ana")
    eps = [episode(ana, f"turn {i}", at=T0) for i in range(12)]
    backend.apply(WriteBatch([TurnWrite(e) for e in eps], None))
    ids = [e.id for e in eps]
    assert [e.id for e in backend.recent_episodes(ana, limit=3, before=ids[9])] == [
        ids[8],
        ids[7],
        ids[6],
    ]
    assert [e.id for e in backend.recent_episodes(None, limit=2, before=ids[11])] == [
        ids[10],
        ids[9],
    ]


def _race(instances: list[WeaviateBackend], entry: LedgerEntry) -> list[bool]:
    """Every instance puts ``entry`` if absent at the same moment; who wrote it."""
    start = threading.Barrier(len(instances))
    won: list[bool] = []

    def answer(b: WeaviateBackend) -> None:
        start.wait()
        won.extend(b.ledger.put([entry], replace=False))

    threads = [threading.Thread(target=answer, args=(b,)) for b in instances]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return won


def test_put_if_absent_has_one_winner_across_instances(backend: WeaviateBackend) -> None:
    # what Store.mark_recall_feedback relies on: of clients answering one recall at once,
    # one counts (separate instances, as separate processes: no shared lock)
    others = [WeaviateBackend(backend.url) for _ in range(3)]
    try:
        for k in range(60):
            entry = LedgerEntry("recall_feedback", f"rc_{k}", Scope(user="ana"), T0)
            assert sorted(_race([backend, *others], entry)) == [False, False, False, True], k
    finally:
        for other in others:
            other.close()
