"""A store of schema version 1 is moved to the ledger when it is opened.

Version 1 kept the audit log, recall logs, conflicts and cards in collections of their
own, the use log as "used" counter events and the ids of forgotten turns as locators in
the tenant "-". The fixture builds such a store: records written by this version (their
layout did not change), then taken back to version 1 exactly as that version laid it out
(its markers, its ``Counter`` collection without the ``ledger`` property, no ``Ledger``
collection, its four collections, its objects under the ids it gave them).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from commonplace import Kind, Scope
from commonplace.stores import PROFILE_CARD, RecordQuery, Store, TurnWrite, WriteBatch
from commonplace.testing import PIN, T0, episode, note, unit
from commonplace_weaviate import WeaviateBackend, _upgrade
from commonplace_weaviate import _schema as S
from commonplace_weaviate._mapping import object_uuid, scope_props

pytestmark = pytest.mark.weaviate
ANA, BOB = Scope(user="ana"), Scope(user="bob")


@dataclass
class OldStore:
    url: str
    notes: list[str]
    forgotten: str
    kept: str


def _create(backend: WeaviateBackend, spec: S.Spec, *, without: str | None = None) -> Any:
    """A collection as version 1 made it (its marker says 1)."""
    name = backend.settings.prefix + spec.suffix
    kwargs = S.create_kwargs(spec, name, replication=1)
    kwargs["description"] = S.description(spec, version=1)
    kwargs["properties"] = [p for p in kwargs["properties"] if p.name != without]
    return backend.client.collections.create(**kwargs)


def _objects(items: list[tuple[uuid.UUID, dict[str, Any]]]) -> list[Any]:
    from weaviate.classes.data import DataObject

    return [DataObject(uuid=oid, properties=props) for oid, props in items]


def _to_version_1(backend: WeaviateBackend, used: str, forgotten: str) -> None:
    """Take a store written by this version back to schema version 1, and give it what
    version 1 kept of its bookkeeping, under the ids version 1 gave it."""
    from weaviate.classes.query import Filter

    client, prefix = backend.client, backend.settings.prefix
    client.collections.delete(prefix + S.LEDGER.suffix)
    for spec in S.SPECS:
        if spec in (S.LEDGER, S.COUNTER):
            continue
        col = client.collections.get(prefix + spec.suffix)
        body = json.loads(col.config.get().description)
        col.config.update(description=json.dumps({**body, "commonplace": 1}, sort_keys=True))
    # version 1's Counter had no "ledger" property (and a property cannot be dropped)
    assert client.collections.get(prefix + S.COUNTER.suffix).aggregate.over_all().total_count == 0
    client.collections.delete(prefix + S.COUNTER.suffix)
    day = T0 + timedelta(days=1)
    _create(backend, S.COUNTER, without="ledger").data.insert_many(
        _objects(
            [
                (uuid.uuid4(), {"key": f"{f}:{used}", "record_id": used, "field": f, "at": at})
                for f, at in (("used", day), ("used", day + timedelta(hours=1)), ("access", day))
            ]
        )
    )
    # written out of time order: the log's order is its seq, not its times
    _create(backend, S.LEGACY_AUDIT).data.insert_many(
        _objects(
            [
                (
                    uuid.uuid4(),
                    {
                        "at": T0 + timedelta(hours=3 - i),
                        **scope_props(ANA if i < 2 else BOB),
                        "action": f"action{i}",
                        "rule": "tier.demote",
                        "record_id": f"nt_{i}",
                        "detail": f"detail {i}",
                        "seq": 1_700_000_000_000_000 + i,
                    },
                )
                for i in range(3)
            ]
        )
    )
    _create(backend, S.LEGACY_RECALL).data.insert_many(
        _objects(
            [
                (
                    object_uuid("recall", "rc_answered"),
                    {
                        "recall_id": "rc_answered",
                        **scope_props(ANA),
                        "at": T0,
                        "item_ids": ["nt_1", "nt_2"],
                        "shown_ids": ["nt_1", "nt_2", "nt_3"],
                        "feedback_at": T0 + timedelta(minutes=5),
                    },
                ),
                (
                    object_uuid("recall", "rc_open"),
                    {
                        "recall_id": "rc_open",
                        **scope_props(BOB),
                        "at": T0,
                        "item_ids": [],
                        "shown_ids": ["nt_9"],
                    },
                ),
            ]
        )
    )
    _create(backend, S.LEGACY_CONFLICT).data.insert_many(
        _objects(
            [
                (
                    object_uuid("conflict", "cf_open"),
                    {
                        "conflict_id": "cf_open",
                        **scope_props(ANA),
                        "entity": "Tom",
                        "reason": "two Toms",
                        "record_ids": ["nt_a"],
                        "created_at": T0,
                    },
                ),
                (
                    object_uuid("conflict", "cf_done"),
                    {
                        "conflict_id": "cf_done",
                        **scope_props(BOB),
                        "entity": "Lena",
                        "reason": "two Lenas",
                        "record_ids": ["nt_b", "nt_c"],
                        "created_at": T0 + timedelta(hours=1),
                        "resolved_at": T0 + timedelta(hours=2),
                        "resolution": "merged",
                    },
                ),
            ]
        )
    )
    _create(backend, S.LEGACY_CARD).data.insert_many(
        _objects(
            [
                (
                    object_uuid("card", *ANA.parts(), PROFILE_CARD),
                    {
                        **scope_props(ANA),
                        "kind": PROFILE_CARD,
                        "text": "Identity: city Porto",
                        "data": json.dumps({"card": {"identity": {"city": "Porto"}}}),
                        "updated_at": T0 + timedelta(days=2),
                    },
                )
            ]
        )
    )
    # version 1 forgot a turn by deleting it and keeping a bare locator in the tenant "-"
    episodes = client.collections.get(prefix + S.EPISODE.suffix)
    for tenant in episodes.tenants.get():
        episodes.with_tenant(tenant).data.delete_many(
            where=Filter.by_id().equal(object_uuid("episode", forgotten))
        )
    client.collections.get(prefix + S.LOCATOR.suffix).data.insert_many(
        _objects(
            [
                (
                    object_uuid("locator", forgotten),
                    {
                        "object_id": forgotten,
                        "kind": Kind.EPISODE.value,
                        "tenant": S.LEGACY_FORGOTTEN_TENANT,
                        "scope_user": "",
                        "scope_agent": "",
                        "scope_thread": "",
                    },
                )
            ]
        )
    )


@pytest.fixture
def old_store(weaviate_backend_factory: Callable[[], WeaviateBackend]) -> OldStore:
    backend = weaviate_backend_factory()
    backend.write_pin(PIN)
    kept, other, gone = (
        episode(ANA, "I live in Porto."),
        episode(BOB, "I play jazz."),
        episode(BOB, "bye"),
    )
    backend.apply(
        WriteBatch(
            [TurnWrite(kept, note(kept)), TurnWrite(other, note(other)), TurnWrite(gone)],
            unit(1.0).reshape(1, -1).repeat(2, axis=0),
        )
    )
    notes = [note(kept).id, note(other).id]
    _to_version_1(backend, notes[0], gone.id)
    url = backend.url
    backend.close()
    return OldStore(url, notes, gone.id, kept.id)


def _collections(backend: WeaviateBackend) -> dict[str, Any]:
    prefix = backend.settings.prefix
    return {
        name[len(prefix) :]: config
        for name, config in backend.client.collections.list_all(simple=False).items()
        if name.startswith(prefix)
    }


def _check_upgraded(old: OldStore, backend: WeaviateBackend) -> None:
    store = Store(backend)
    found = _collections(backend)
    assert not {s.suffix for s in S.LEGACY_SPECS} & set(found)
    assert {s.suffix for s in S.SPECS} <= set(found)
    for spec in S.SPECS:
        assert json.loads(found[spec.suffix].description)["commonplace"] == S.SCHEMA_VERSION
    assert backend.read_pin() == PIN  # the pin, in the Note collection's marker, stayed
    # the audit log, newest first by the old log's own order
    audit = store.books.audit_log(None, limit=10)
    assert [(e.action, e.record_id, e.scope) for e in audit] == [
        ("action2", "nt_2", BOB),
        ("action1", "nt_1", ANA),
        ("action0", "nt_0", ANA),
    ]
    assert audit[0].detail == "detail 2" and audit[0].at == T0 + timedelta(hours=1)
    assert [e.action for e in store.books.audit_log(ANA, limit=10)] == ["action1", "action0"]
    # recall logs, with the feedback they already had
    answered = store.books.get_recall("rc_answered")
    assert answered is not None and answered.scope == ANA and answered.at == T0
    assert answered.item_ids == ("nt_1", "nt_2") and answered.shown_ids == ("nt_1", "nt_2", "nt_3")
    assert answered.feedback_at == T0 + timedelta(minutes=5)
    assert store.books.mark_recall_feedback("rc_answered", at=T0 + timedelta(days=9)) is False
    assert store.books.mark_recall_feedback("rc_open", at=T0 + timedelta(days=9)) is True
    # conflicts, open and resolved
    conflicts = {c.id: c for c in store.books.conflicts(None, open_only=False)}
    assert set(conflicts) == {"cf_open", "cf_done"}
    assert conflicts["cf_done"].resolved_at == T0 + timedelta(hours=2)
    assert conflicts["cf_done"].resolution == "merged"
    assert conflicts["cf_done"].record_ids == ("nt_b", "nt_c")
    assert [c.id for c in store.books.conflicts(None, open_only=True)] == ["cf_open"]
    # cards, found by their exact scope
    card = store.books.get_card(ANA, PROFILE_CARD)
    assert card is not None and card.text == "Identity: city Porto"
    assert card.data == {"card": {"identity": {"city": "Porto"}}}
    assert card.updated_at == T0 + timedelta(days=2)
    assert store.books.get_card(BOB, PROFILE_CARD) is None
    # the use log, and the counts (the events stay)
    since = T0 + timedelta(days=1, minutes=30)
    assert store.books.uses_since(old.notes, T0) == {old.notes[0]: 2}
    assert store.books.uses_since(old.notes, since) == {old.notes[0]: 1}
    [counted] = backend.get_records([old.notes[0]])
    assert (counted.access_count, counted.used_count) == (1, 2)
    # the forgotten turn stays forgotten, and is no longer a locator
    assert store.existing_episode_ids({old.forgotten, old.kept}) == {old.forgotten, old.kept}
    assert backend.get_episodes([old.forgotten]) == []
    replay = episode(BOB, "bye")
    assert replay.id == old.forgotten
    assert store.write_turns([TurnWrite(replay)], None) == [False]
    assert backend.ledger.kinds() == sorted(
        ["audit", "card", "conflict", "forgotten", "recall", "recall_feedback", "use"]
    )
    # and the records themselves are as they were
    records = list(backend.iter_records(RecordQuery(kinds=(Kind.NOTE,))))
    assert sorted(r.id for r in records) == sorted(old.notes)


def _ledger_counts(backend: WeaviateBackend) -> dict[str, int]:
    return {kind: len(backend.ledger.list(kind)) for kind in backend.ledger.kinds()}


def test_a_version_1_store_is_upgraded_on_open(old_store: OldStore) -> None:
    with WeaviateBackend(old_store.url) as backend:
        _check_upgraded(old_store, backend)
        counts = _ledger_counts(backend)
    assert counts == {
        "audit": 3,
        "card": 1,
        "conflict": 2,
        "forgotten": 1,
        "recall": 2,
        "recall_feedback": 2,  # one copied, one marked above
        "use": 2,
    }
    with WeaviateBackend(old_store.url) as again:  # opening again changes nothing
        assert _ledger_counts(again) == counts


def test_an_interrupted_upgrade_is_finished_by_the_next_open(
    old_store: OldStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _upgrade._forgotten

    def crash(*args: object) -> int:
        raise RuntimeError("injected: the process died mid-upgrade")

    monkeypatch.setattr(_upgrade, "_forgotten", crash)
    with pytest.raises(RuntimeError, match="injected"):
        WeaviateBackend(old_store.url)
    monkeypatch.setattr(_upgrade, "_forgotten", real)
    with WeaviateBackend(old_store.url) as backend:  # copies again, under the same ids
        _check_upgraded(old_store, backend)
        assert _ledger_counts(backend)["use"] == 2 and _ledger_counts(backend)["audit"] == 3


def test_uses_logged_by_this_version_are_not_copied_twice(old_store: OldStore) -> None:
    with WeaviateBackend(old_store.url) as backend:
        store = Store(backend)
        at = T0 + timedelta(days=3)
        store.books.record_feedback(used=[old_store.notes[1]], ignored=[], at=at)
        # a second process that started its upgrade before this one finished reads the
        # Counter collection again: the new "used" event carries the ledger mark
        _upgrade.upgrade_v1(backend, backend.ledger)
        assert store.books.uses_since(old_store.notes, T0) == {
            old_store.notes[0]: 2,
            old_store.notes[1]: 1,
        }
