"""How a store is laid out in Weaviate: explicit schema, a tenant per scope, the pin, errors."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from commonplace import Scope
from commonplace.errors import SchemaVersionError, StoreError
from commonplace.stores import TurnWrite
from commonplace.testing import PIN, episode, note, unit
from commonplace_weaviate import WeaviateBackend
from commonplace_weaviate import _schema as S
from commonplace_weaviate._mapping import tenant_name

pytestmark = pytest.mark.weaviate


@pytest.fixture
def backend(weaviate_backend_factory: Callable[[], WeaviateBackend]) -> WeaviateBackend:
    made = weaviate_backend_factory()
    made.write_pin(PIN)
    return made


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
        backend.write_turns([TurnWrite(ep, note(ep))], unit(1.0).reshape(1, -1))
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
    backend.client.collections.create(prefix + S.AUDIT.suffix, description="someone else's")
    try:
        with pytest.raises(StoreError, match=r"not created by commonplace.*prefix"):
            WeaviateBackend(backend.url)
    finally:
        backend.client.collections.delete(prefix + S.AUDIT.suffix)


def test_a_newer_schema_is_refused(weaviate_backend_factory: Callable[[], WeaviateBackend]) -> None:
    backend = weaviate_backend_factory()
    card = _collection(backend, S.CARD)
    card.config.update(description=json.dumps({"commonplace": S.SCHEMA_VERSION + 1}))
    try:
        with pytest.raises(SchemaVersionError, match="upgrade commonplace-weaviate"):
            WeaviateBackend(backend.url)
    finally:
        card.config.update(description=S.description(S.CARD))


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
    backend.client.collections.delete(prefix + S.RECALL.suffix)
    older = S.create_kwargs(S.RECALL, prefix + S.RECALL.suffix, replication=1)
    older["properties"] = [p for p in older["properties"] if p.name != "shown_ids"]
    backend.client.collections.create(**older)
    with WeaviateBackend(backend.url):
        names = {p.name for p in _collection(backend, S.RECALL).config.get().properties}
    assert "shown_ids" in names


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
        backend.write_turns([TurnWrite(first, note(first))], unit(1.0).reshape(1, -1))
        other.delete_scope(Scope(user="ana"))  # backend still believes the tenant exists
        second = episode(Scope(user="ana"), "second")
        assert backend.write_turns([TurnWrite(second, note(second))], unit(1.0).reshape(1, -1)) == [
            True
        ]
        assert [
            r.text
            for r in backend.recent_records(Scope(user="ana"), kinds=(note(first).kind,), limit=5)
        ] == [note(second).text]
    finally:
        other.close()
