"""Moving a store of schema version 1 to version 2, when it is opened.

Version 1 kept the core's bookkeeping in collections of its own (``Audit``, ``Recall``,
``Conflict``, ``Card``), the use log as the "used" counter events, and the ids of
forgotten turns as locators in the tenant ``"-"``. Version 2 keeps all of it in the
ledger, as the entries ``commonplace.stores.Store`` writes: each old object is handed to
``Store`` (``append_audit``, ``log_recall``, ``add_conflict``, ``put_card``,
``record_feedback``) over a stand-in that only collects the entries it would put, so
their kinds, keys, ``data`` and refs are Store's own; only the ids of forgotten turns
are written here (kind ``forgotten``, keyed by the episode id, as ``Store`` keeps them).
The upgrade

1. copies every old entry into the ledger under a fixed id and a fixed seq (the old
   audit log's order, else the order the server created the objects in; audit entries
   and uses, which Store keys at random, are keyed by their old object ids), so running
   it again writes the same entries;
2. removes the old tombstone locators, then the old collections;
3. last, stamps version 2 on every collection (the commit point: a store whose
   collections all say 2 is not upgraded again).

An interrupted upgrade is finished by the next open. The counter events stay (they
are the counts); the "used" events that version 2 writes carry ``ledger`` (their use
is logged by the core), so a second process upgrading at the same moment copies only
the old ones. Stop the clients of the previous version first: they would go on
writing into the old collections.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any, cast

from commonplace.stores import (
    AuditEntry,
    Backend,
    Card,
    Conflict,
    LedgerEntry,
    LedgerKind,
    RecallLog,
    Store,
    WriteBatch,
)

from . import _schema as S
from ._errors import translate
from ._ledger import WeaviateLedger, seq_at
from ._mapping import EPOCH as _EPOCH
from ._mapping import parse_date, scope_of
from ._tenants import Tenants

FORGOTTEN = LedgerKind.FORGOTTEN.value

_WRITER = "upgrade-v1"  # the writer token of the copies (see WeaviateLedger.put)
_BATCH = 1_000

Item = tuple[LedgerEntry, int]  # an entry and its seq


def upgrade_v1(store: Tenants, ledger: WeaviateLedger) -> dict[str, int]:
    """Upgrade the store to schema version 2; how many entries of each kind were copied."""
    prefix = store._settings.prefix
    existing = store._call(
        lambda: store._client.collections.list_all(simple=False), "read the schema"
    )
    legacy = [
        spec
        for spec in S.LEGACY_SPECS
        if (found := existing.get(prefix + spec.suffix)) is not None
        and S.read_description(found.description) is not None
    ]
    copied: Counter[str] = Counter()
    convert: Mapping[str, Callable[[Any], list[Item]]] = {
        S.LEGACY_AUDIT.suffix: _audit,
        S.LEGACY_RECALL.suffix: _recall,
        S.LEGACY_CONFLICT.suffix: _conflict,
        S.LEGACY_CARD.suffix: _card,
    }
    for spec in legacy:
        _copy(ledger, _objects(store, prefix + spec.suffix), convert[spec.suffix], copied)
    _copy(ledger, _objects(store, prefix + S.COUNTER.suffix), _use, copied)
    copied[FORGOTTEN] += _forgotten(store, ledger)
    if legacy:
        names = S.names(legacy, prefix)
        store._call(lambda: store._client.collections.delete(names), "remove the old collections")
    for spec in S.SPECS:  # the commit point
        col = store._col(spec)
        config = store._call(col.config.get, f"read {spec.suffix}")
        marker = S.read_description(config.description)
        if marker is not None and marker[S.MARKER] < S.SCHEMA_VERSION:
            body = {**marker, S.MARKER: S.SCHEMA_VERSION}
            text = json.dumps(body, sort_keys=True)
            store._call(
                partial(col.config.update, description=text),
                f"stamp schema version {S.SCHEMA_VERSION} on {spec.suffix}",
            )
    store._legacy = False
    return dict(copied)


def _copy(
    ledger: WeaviateLedger,
    objects: Iterable[Any],
    convert: Callable[[Any], list[Item]],
    copied: Counter[str],
) -> None:
    batch: list[Item] = []
    for obj in objects:
        batch.extend(convert(obj))
        if len(batch) >= _BATCH:
            _flush(ledger, batch, copied)
    _flush(ledger, batch, copied)


def _flush(ledger: WeaviateLedger, batch: list[Item], copied: Counter[str]) -> None:
    if batch:
        ledger._write(batch, _WRITER)
        copied.update(e.kind for e, _ in batch)
        batch.clear()


def _objects(store: Tenants, name: str) -> Iterator[Any]:
    """Every object of a single-tenant collection, with its creation and update times."""
    from weaviate.classes.query import MetadataQuery

    col = store._client.collections.get(name)
    try:
        yield from col.iterator(
            return_metadata=MetadataQuery(creation_time=True, last_update_time=True)
        )
    except Exception as exc:  # the iterator raises the client's errors directly
        raise translate(exc, what=f"read {name}", where=store._settings.where) from exc


# -- one old object to ledger entries, in the shapes Store writes ------------------------------


class _Collected:
    """Stands in for a backend so that :class:`Store` hands over the entries it would put."""

    def __init__(self) -> None:
        self.entries: list[LedgerEntry] = []
        self.ledger = self

    def put(self, entries: Sequence[LedgerEntry], *, replace: bool = True) -> list[bool]:
        self.entries.extend(entries)
        return [True] * len(entries)

    def apply(self, batch: WriteBatch) -> list[bool]:
        """The batch's entries; counts are not the ledger's (the counter events stay where
        they are)."""
        self.entries.extend([*batch.entries, *batch.new_entries])
        return []


def _written(write: Callable[[Store], object]) -> list[LedgerEntry]:
    collected = _Collected()
    write(Store(cast(Backend, collected)))
    return collected.entries


def _micros(when: datetime | None) -> int:
    when = when or _EPOCH
    return int((when - _EPOCH).total_seconds() * 1_000_000)


def _created(obj: Any) -> int:
    return _micros(getattr(obj.metadata, "creation_time", None))


def _updated(obj: Any) -> int:
    return _micros(getattr(obj.metadata, "last_update_time", None))


def _date(value: Any) -> datetime:
    return parse_date(value) or _EPOCH


def _texts(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in (value or ()))


def _audit(obj: Any) -> list[Item]:
    p = obj.properties
    old = AuditEntry(
        _date(p.get("at")),
        scope_of(p),
        str(p.get("action") or ""),
        str(p.get("rule") or ""),
        str(p.get("record_id") or ""),
        str(p.get("detail") or ""),
    )
    key = obj.uuid.hex  # Store keys audit entries at random; a copy needs a fixed key
    seq = int(p.get("seq") or _created(obj))  # the old log's own order (microseconds too)
    return [
        (replace(e, key=key), seq_at(seq))
        for e in _written(lambda store: store.books.append_audit([old]))
    ]


def _recall(obj: Any) -> list[Item]:
    p = obj.properties
    log = RecallLog(
        str(p["recall_id"]),
        scope_of(p),
        _date(p.get("at")),
        _texts(p.get("item_ids")),
        parse_date(p.get("feedback_at")),
        _texts(p.get("shown_ids")),
    )
    entries = _written(lambda store: store.books.log_recall(log))
    # the log first, its feedback mark when the object was last changed
    return [(e, seq_at(_created(obj) if i == 0 else _updated(obj))) for i, e in enumerate(entries)]


def _conflict(obj: Any) -> list[Item]:
    p = obj.properties
    conflict = Conflict(
        str(p["conflict_id"]),
        scope_of(p),
        str(p.get("entity") or ""),
        str(p.get("reason") or ""),
        _texts(p.get("record_ids")),
        _date(p.get("created_at")),
        parse_date(p.get("resolved_at")),
        p.get("resolution"),
    )
    return [
        (e, seq_at(_created(obj)))
        for e in _written(lambda store: store.books.add_conflict(conflict))
    ]


def _card(obj: Any) -> list[Item]:
    p = obj.properties
    stored = json.loads(p.get("data") or "{}")
    card = Card(
        scope_of(p),
        str(p["kind"]),
        str(p.get("text") or ""),
        _date(p.get("updated_at")),
        stored if isinstance(stored, dict) else {},
    )
    return [(e, seq_at(_created(obj))) for e in _written(lambda store: store.books.put_card(card))]


def _use(obj: Any) -> list[Item]:
    p = obj.properties
    if p.get("field") != "used" or p.get("ledger"):
        return []  # another count, or a use the core logged itself
    rid, at = str(p["record_id"]), _date(p.get("at"))
    key = obj.uuid.hex  # Store keys uses at random; a copy needs a fixed key
    entries = _written(lambda store: store.books.record_feedback(used=[rid], ignored=[], at=at))
    return [(replace(e, key=key), seq_at(_created(obj))) for e in entries]


def _forgotten(store: Tenants, ledger: WeaviateLedger) -> int:
    """The old tombstone locators, as ``forgotten`` entries (their ids, no scope: the old
    ones kept none), each locator removed once its entry is written."""
    from weaviate.classes.query import Filter, MetadataQuery

    col = store._col(S.LOCATOR)
    where = Filter.by_property("tenant").equal(S.LEGACY_FORGOTTEN_TENANT)
    total = 0
    while True:
        found = store._call(
            partial(
                col.query.fetch_objects,
                filters=where,
                limit=_BATCH,
                return_metadata=MetadataQuery(last_update_time=True),
            ),
            "read the ids of forgotten turns",
        ).objects
        if not found:
            return total
        items = []
        for obj in found:
            eid = str(obj.properties["object_id"])
            forgotten_at = getattr(obj.metadata, "last_update_time", None) or _EPOCH
            entry = LedgerEntry(FORGOTTEN, eid, None, forgotten_at, refs=(eid,))
            items.append((entry, seq_at(_updated(obj))))
        ledger._write(items, _WRITER)
        total += len(items)
        store._delete_where(
            S.LOCATOR,
            None,
            Filter.by_id().contains_any([obj.uuid for obj in found]),
            "old tombstone locators",
        )
