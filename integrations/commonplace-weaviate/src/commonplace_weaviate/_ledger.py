"""The ledger: keyed entries beside the records, in one single-tenant collection.

The core keeps its audit log, recall logs, conflicts, cards, use log and the ids of
forgotten turns here (``commonplace.stores.Store``); this module only stores and finds
entries. Each entry is one object whose id is a UUIDv5 of (kind, key), so a retried
write lands on the same object. Its ``seq`` is the order of first writing: a
replacement keeps the seq it found, and lists read newest seq first.

Weaviate has no conditional insert, so ``put(..., replace=False)`` writes each absent
entry with a single-object create, which the server refuses for an id that exists, and
then reads back the ``writer`` token each call stamps on what it writes: the entry is
this call's when the token is its own. That also recognises a create refused because
an earlier try of the same call landed (its answer lost), and of two creates that
passed the server's existence check at the same moment, the one overwritten reports
that it wrote nothing. In one process the calls are serialised; across processes two
calls could still both report a write if one read its token back between the other's
check and its write (not seen in a thousand six-way races on one server).
"""

from __future__ import annotations

import builtins
import json
import threading
import time
import uuid
from collections.abc import Collection, Iterator, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from commonplace import Scope
from commonplace.errors import CorruptStoreError, InvalidInputError, StoreError
from commonplace.stores import LedgerEntry

from . import _schema as S
from ._connection import MAX_RESULTS, chunks
from ._mapping import as_utc, object_uuid, parse_date, scope_filter, scope_of, scope_props

if TYPE_CHECKING:
    from weaviate.collections.classes.filters import _Filters

    from ._tenants import Tenants

_PAGE = 1_000
_FEW = 4  # entries a put creates one by one before it reads seqs (see _upsert)
_SETTLE = (0.005, 0.02, 0.05, 0.1, 0.2)  # seconds between reads of an entry being overwritten
# Seqs stay below 2**53: the server orders integer properties through float64, so larger
# seqs a few units apart can sort the wrong way round (seen: an upgraded audit log out of
# order). Microseconds since the epoch fit until the year 2255; two processes writing in
# the same microsecond tie, which paging by seq handles (ties are read together).


class LedgerSeq:
    """Increasing ledger seqs: microseconds since the epoch.

    Within one process they strictly increase; across processes they follow the wall
    clock (two writes of the same microsecond may tie).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0

    def next(self) -> int:
        with self._lock:
            now = time.time_ns() // 1000
            self._last = max(self._last + 1, now)
            return self._last


def seq_at(micros: int) -> int:
    """The fixed seq of an entry first written at ``micros`` (the upgrade's copies: the same
    seq every time it runs)."""
    return micros


class WeaviateLedger:
    """The :class:`~commonplace.stores.Ledger` of a Weaviate store (``WeaviateBackend.ledger``)."""

    def __init__(self, store: Tenants) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._seq = LedgerSeq()

    # -- writing ----------------------------------------------------------------------------

    def put(self, entries: Sequence[LedgerEntry], *, replace: bool = True) -> builtins.list[bool]:
        entries = list(entries)
        for e in entries:
            _check(e)
        if not entries:
            return []
        with self._lock:
            if replace:
                self._upsert(entries)
                return [True] * len(entries)
            return self._create(entries)

    def put_new(self, entries: Sequence[LedgerEntry]) -> None:
        """Store entries whose keys are new (never written before, as a recall's log): one
        batch insert, without the look for an entry to replace that ``put`` makes (a
        replaced entry keeps its seq)."""
        entries = list(entries)
        for e in entries:
            _check(e)
        if entries:
            self._write([(e, self._seq.next()) for e in entries], uuid.uuid4().hex)

    def _upsert(self, entries: Sequence[LedgerEntry]) -> None:
        last = {(e.kind, e.key): e for e in entries}  # a key given twice: the last one stays
        writer = uuid.uuid4().hex
        if len(last) <= _FEW:
            # A few entries are mostly new ones (a recall's log): each is created with one
            # request, which the server refuses for an id that exists; only those are then
            # read for the seq they keep. Two requests saved for a new entry.
            jobs = [partial(self._insert_new, e, self._seq.next(), writer) for e in last.values()]
            made = self._store._parallel(jobs)
            last = {k: e for (k, e), new in zip(last.items(), made) if not new}
            if not last:
                return
        found = self._seqs(list(last))
        seqs = {k: found.get(k) or self._seq.next() for k in last}  # a replacement keeps its seq
        self._write([(e, seqs[k]) for k, e in last.items()], writer)

    def _insert_new(self, entry: LedgerEntry, seq: int, writer: str) -> bool:
        """Create the entry; False, writing nothing, when one with its key exists."""
        from weaviate.exceptions import UnexpectedStatusCodeError

        col = self._store._col(S.LEDGER)
        try:
            self._store._call(
                lambda: col.data.insert(
                    properties=_properties(entry, seq, writer), uuid=_uuid(entry.kind, entry.key)
                ),
                "write a ledger entry",
            )
        except StoreError as exc:
            cause = exc.__cause__
            if (
                isinstance(cause, UnexpectedStatusCodeError)
                and "already exists" in str(cause).lower()
            ):
                return False
            raise
        return True

    def _write(self, items: Sequence[tuple[LedgerEntry, int]], writer: str) -> None:
        """Upsert entries under the given seqs (the upgrade's copies come through here too)."""
        from weaviate.classes.data import DataObject

        objects = [
            DataObject(uuid=_uuid(e.kind, e.key), properties=_properties(e, seq, writer))
            for e, seq in items
        ]
        self._store._insert(
            S.LEDGER, None, objects, "ledger entries", [f"{e.kind}/{e.key}" for e, _ in items]
        )

    def _create(self, entries: Sequence[LedgerEntry]) -> builtins.list[bool]:
        keys = [(e.kind, e.key) for e in entries]
        taken = set(self._seqs(keys))
        writer = uuid.uuid4().hex
        first: dict[tuple[str, str], int] = {}
        for i, k in enumerate(keys):
            if k not in taken:
                first.setdefault(k, i)  # a key given twice: the first one is written
        jobs = [
            partial(self._create_one, entries[i], self._seq.next(), writer)
            for i in sorted(first.values())
        ]
        made = dict(zip(sorted(first.values()), self._store._parallel(jobs)))
        return [made.get(i, False) for i in range(len(entries))]

    def _create_one(self, entry: LedgerEntry, seq: int, writer: str) -> bool:
        col = self._store._col(S.LEDGER)
        oid = _uuid(entry.kind, entry.key)
        self._insert_new(entry, seq, writer)
        # Whose is it? Refused: another writer's, or this call's own earlier try whose
        # answer was lost. Accepted: ours, unless a create that passed the server's check
        # at the same moment overwrote it (then that one reports the write).
        for pause in (*_SETTLE, None):
            found: Any = self._store._call(
                lambda: col.query.fetch_object_by_id(oid, return_properties=["writer"]),
                "read a ledger entry",
            )
            if found is not None:
                return str(found.properties.get("writer")) == writer
            if pause is not None:
                # an object being overwritten is briefly not found by its id
                time.sleep(pause)
        return False  # deleted meanwhile

    def _seqs(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """The seqs of the entries that exist among ``keys``."""
        from weaviate.classes.query import Filter

        by_uuid = {_uuid(*k): k for k in keys}
        out: dict[tuple[str, str], int] = {}
        for chunk in chunks(list(by_uuid)):
            found = self._store._call(
                partial(
                    self._store._col(S.LEDGER).query.fetch_objects,
                    filters=Filter.by_id().contains_any(chunk),
                    limit=len(chunk),
                    return_properties=["seq"],
                ),
                "read ledger entries",
            ).objects
            for obj in found:
                key = by_uuid.get(uuid.UUID(str(obj.uuid)))
                if key is not None:
                    out[key] = int(obj.properties.get("seq") or 0)
        return out

    def delete(self, kind: str, keys: Collection[str]) -> int:
        from weaviate.classes.query import Filter

        removed = 0
        for chunk in chunks(list(dict.fromkeys(keys))):
            removed += self._store._delete_where(
                S.LEDGER,
                None,
                Filter.by_id().contains_any([_uuid(kind, k) for k in chunk]),
                "ledger entries",
            )
        return removed

    # -- reading ----------------------------------------------------------------------------

    def get(self, kind: str, key: str) -> LedgerEntry | None:
        obj: Any = self._store._call(
            lambda: self._store._col(S.LEDGER).query.fetch_object_by_id(_uuid(kind, key)),
            "read a ledger entry",
        )
        if obj is None:
            return None
        return _entry(obj.properties)

    def list(
        self,
        kind: str,
        *,
        scope: Scope | None = None,
        refs: Collection[str] | None = None,
        since: datetime | None = None,
        limit: int | None = None,
    ) -> builtins.list[LedgerEntry]:
        from weaviate.classes.query import Filter

        if limit is not None and limit <= 0:
            return []
        clauses = [Filter.by_property("kind").equal(kind)]
        scoped = scope_filter(scope)
        if scoped is not None:
            clauses.append(scoped)
        if since is not None:
            clauses.append(Filter.by_property("at").greater_or_equal(as_utc(since)))
        if refs is None:
            wheres = [Filter.all_of(clauses)]
        else:
            named = list(dict.fromkeys(refs))
            wheres = [
                Filter.all_of([*clauses, Filter.by_property("refs").contains_any(chunk)])
                for chunk in chunks(named)
            ]
        found: dict[str, tuple[int, Mapping[str, Any]]] = {}
        for where in wheres:
            for oid, seq, props in self._newest(where, limit):
                found[oid] = (seq, props)
        ordered = sorted(found.values(), key=lambda pair: -pair[0])
        return [_entry(props) for _, props in ordered[:limit]]

    def _newest(
        self, where: _Filters, limit: int | None
    ) -> Iterator[tuple[str, int, Mapping[str, Any]]]:
        """Matching entries, newest seq first, ``limit`` at most, paged by seq."""
        from weaviate.classes.query import Filter, Sort

        col = self._store._col(S.LEDGER)
        last: int | None = None
        at_last: set[str] = set()  # entries already given whose seq is ``last`` (ties)
        strict = False
        left = limit
        while left is None or left > 0:
            page = where
            if last is not None:
                bound = Filter.by_property("seq")
                page = where & (bound.less_than(last) if strict else bound.less_or_equal(last))
            size = min(_PAGE if left is None else left + len(at_last), MAX_RESULTS)
            found = self._store._call(
                partial(
                    col.query.fetch_objects,
                    filters=page,
                    sort=Sort.by_property("seq", ascending=False),
                    limit=size,
                ),
                "list ledger entries",
            ).objects
            fresh = [o for o in found if str(o.uuid) not in at_last]
            for obj in fresh:
                seq = int(obj.properties.get("seq") or 0)
                if seq != last:
                    last, at_last = seq, set()
                at_last.add(str(obj.uuid))
                yield str(obj.uuid), seq, obj.properties
            if left is not None:
                left -= len(fresh)
            if len(found) < size:
                return
            # a full page of ties seen before: step past that seq
            strict = not fresh

    def kinds(self) -> builtins.list[str]:
        from weaviate.classes.aggregate import GroupByAggregate

        result: Any = self._store._call(
            partial(
                self._store._col(S.LEDGER).aggregate.over_all,
                group_by=GroupByAggregate(prop="kind", limit=MAX_RESULTS),
                total_count=True,
            ),
            "list the ledger's kinds",
        )
        return sorted(str(group.grouped_by.value) for group in result.groups if group.total_count)


def _uuid(kind: str, key: str) -> uuid.UUID:
    return object_uuid("ledger", kind, key)


def _check(entry: LedgerEntry) -> None:
    if not isinstance(entry.kind, str) or not entry.kind:
        raise InvalidInputError(f"a ledger entry needs a kind (a non-empty str): {entry!r}")
    if not isinstance(entry.key, str) or not entry.key:
        raise InvalidInputError(f"a ledger entry needs a key (a non-empty str): {entry!r}")
    if not isinstance(entry.data, Mapping):
        raise InvalidInputError(f"a ledger entry's data must be a JSON object: {entry!r}")


def _properties(entry: LedgerEntry, seq: int, writer: str) -> dict[str, Any]:
    try:
        data = json.dumps(dict(entry.data), ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"the data of the ledger entry {entry.kind}/{entry.key} is not JSON: {exc}"
        ) from exc
    parts = (
        scope_props(entry.scope)
        if entry.scope is not None
        else {"scope_user": "", "scope_agent": "", "scope_thread": ""}
    )
    return {
        "kind": entry.kind,
        "key": entry.key,
        **parts,
        "at": as_utc(entry.at),
        "data": data,
        "refs": [str(r) for r in entry.refs],
        "seq": seq,
        "writer": writer,
    }


def _entry(props: Mapping[str, Any]) -> LedgerEntry:
    kind, key = str(props.get("kind")), str(props.get("key"))
    try:
        data = json.loads(str(props.get("data") or "{}"))
        at = parse_date(props.get("at"))
    except ValueError:
        data, at = None, None
    if not isinstance(data, dict) or at is None:
        raise CorruptStoreError(
            f"the ledger entry {kind}/{key} is damaged (data {props.get('data')!r}, at "
            f"{props.get('at')!r}); restore the store from a backup"
        )
    scoped = any(props.get(f) for f in ("scope_user", "scope_agent", "scope_thread"))
    return LedgerEntry(
        kind,
        key,
        scope_of(props) if scoped else None,
        at,
        data,
        tuple(str(r) for r in (props.get("refs") or ())),
    )
