"""Mapping between commonplace records and Weaviate objects: ids, tenants, properties.

Object ids are UUIDv5 of the commonplace id (so a write sent twice lands on the
same object), tenants are derived from the exact scope (a readable prefix and a
128-bit hash, so two scopes never share a tenant), and every object keeps its
scope fields as properties as well.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from commonplace import Episode, Kind, Record, Role, Scope, Status, Tags, Tier
from commonplace.stores import search_text

if TYPE_CHECKING:
    from weaviate.collections.classes.filters import _Filters

NAMESPACE = uuid.UUID("6b1f3a52-35a8-5d3e-9c1e-2f6c0a7d4e19")
_SLUG = re.compile(r"[^A-Za-z0-9]+")

Parts = tuple[str, str, str]


def object_uuid(kind: str, *key: str) -> uuid.UUID:
    """The object id of ``key`` in the collection family ``kind`` (stable across runs)."""
    return uuid.uuid5(NAMESPACE, kind + ":" + "\x00".join(key))


def tenant_name(parts: Parts) -> str:
    """A valid, stable, collision-free tenant name for an exact scope.

    ``[A-Za-z0-9-]``, at most 64 characters: up to 24 readable characters from the
    first set scope field, then 32 hex digits of a SHA-256 over all three fields.
    """
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    readable = next((p for p in parts if p), "")
    slug = _SLUG.sub("", readable)[:24]
    return f"{slug}-{digest[:32]}" if slug else f"s-{digest[:32]}"


def scope_of(props: Mapping[str, Any]) -> Scope:
    return _scope(
        props.get("scope_user") or None,
        props.get("scope_agent") or None,
        props.get("scope_thread") or None,
    )


@functools.lru_cache(maxsize=4096)
def _scope(user: str | None, agent: str | None, thread: str | None) -> Scope:
    # a Scope is frozen and checks its fields when made: every row of a scope shares one
    return Scope(user=user, agent=agent, thread=thread)


def scope_props(scope: Scope) -> dict[str, str]:
    user, agent, thread = scope.parts()
    return {"scope_user": user, "scope_agent": agent, "scope_thread": thread}


class Sequencer:
    """Increasing sequence numbers (microseconds since the epoch, never repeated here).

    Weaviate has no auto-increment; these order records and episodes oldest to
    newest. Within one process they strictly increase; across processes they follow
    the wall clock.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0

    def next(self) -> int:
        with self._lock:
            self._last = max(self._last + 1, time.time_ns() // 1000)
            return self._last


#: Before anything was stored (the default for times an object lacks).
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def as_utc(when: datetime) -> datetime:
    """An aware UTC datetime; naive ones are taken to be UTC (as commonplace does)."""
    if when.tzinfo is None:
        return when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc)


def _when(value: datetime | None) -> datetime | None:
    return None if value is None else as_utc(value)


def _compact(props: dict[str, Any]) -> dict[str, Any]:
    """Leave unset values out: Weaviate stores them as null (filterable by is_none)."""
    return {k: v for k, v in props.items() if v is not None}


def record_properties(record: Record, *, seq: int) -> dict[str, Any]:
    key = record.tags.key
    state = {
        "text": record.text,
        "kind": record.kind.value,
        **scope_props(record.scope),
        "created_at": as_utc(record.created_at).isoformat(),
        "last_access": as_utc(record.last_access).isoformat(),
        "access_count": record.access_count,
        "used_count": record.used_count,
        "ignored_count": record.ignored_count,
        "valid_from": None if record.valid_from is None else as_utc(record.valid_from).isoformat(),
        "data": dict(record.data),
        "provenance": list(record.provenance),
    }
    return _compact(
        {
            "record_id": record.id,
            "kind": record.kind.value,
            **scope_props(record.scope),
            "state": json.dumps(state, ensure_ascii=False),
            "search": search_text(record.text, record.tags),
            "tags": json.dumps(record.tags.to_json(), ensure_ascii=False),
            "tier": record.tier.value,
            "subject": "" if key is None else key.subject,
            "predicate": "" if key is None else key.predicate,
            "entities": [e.lower() for e in record.tags.entities],
            "created_at": as_utc(record.created_at),
            "valid_to": _when(record.valid_to),
            "superseded_by": record.superseded_by,
            "pinned": record.pinned,
            "status": record.status.value,
            "status_since": _when(record.status_since),
            "tier_since": _when(record.tier_since),
            "merged": False,
            "seq": seq,
        }
    )


def flatten(props: Mapping[str, Any]) -> dict[str, Any]:
    """A record row as one dict: the unchanging ``state`` JSON merged with the live fields."""
    row = dict(props)
    state = row.pop("state", None)
    if state:
        for key, value in json.loads(state).items():
            row.setdefault(key, value)
    return row


#: How many decoded rows and records (see ``_reads``) a reader keeps at most.
DECODED = 20_000


def tag_properties(tags: Tags) -> dict[str, Any]:
    """The properties that change with a record's tags (its key and entities too)."""
    key = tags.key
    return {
        "tags": json.dumps(tags.to_json(), ensure_ascii=False),
        "subject": "" if key is None else key.subject,
        "predicate": "" if key is None else key.predicate,
        "entities": [e.lower() for e in tags.entities],
    }


@dataclass(frozen=True, slots=True)
class Counts:
    """Counter events folded for one record."""

    access: int = 0
    used: int = 0
    ignored: int = 0
    last: datetime | None = None


def record_from(row: Mapping[str, Any], *, provenance: tuple[str, ...], counts: Counts) -> Record:
    """A record from a flattened row, with its counter events and full provenance."""
    last = _date(row["last_access"])
    if counts.last is not None and counts.last > last:
        last = counts.last
    return Record(
        id=str(row["record_id"]),
        kind=Kind(row["kind"]),
        scope=scope_of(row),
        text=str(row["text"]),
        tags=Tags.from_json(json.loads(row["tags"])),
        provenance=provenance,
        created_at=_date(row["created_at"]),
        last_access=last,
        access_count=int(row.get("access_count") or 0) + counts.access,
        tier=Tier(row["tier"]),
        valid_from=_maybe_date(row.get("valid_from")),
        valid_to=_maybe_date(row.get("valid_to")),
        superseded_by=row.get("superseded_by") or None,
        used_count=int(row.get("used_count") or 0) + counts.used,
        ignored_count=int(row.get("ignored_count") or 0) + counts.ignored,
        pinned=bool(row.get("pinned")),
        status=Status(row["status"]),
        status_since=_maybe_date(row.get("status_since")),
        tier_since=_maybe_date(row.get("tier_since")),
        data=row.get("data") or {},
    )


def episode_properties(episode: Episode, *, seq: int) -> dict[str, Any]:
    return {
        "episode_id": episode.id,
        **scope_props(episode.scope),
        "role": episode.role.value,
        "text": episode.text,
        "at": as_utc(episode.at),
        "seq": seq,
        "meta": json.dumps(dict(episode.meta), ensure_ascii=False),
    }


def episode_from(props: Mapping[str, Any]) -> Episode:
    return Episode(
        id=str(props["episode_id"]),
        scope=scope_of(props),
        role=Role(props["role"]),
        text=str(props["text"]),
        at=_date(props["at"]),
        meta=json.loads(props.get("meta") or "{}"),
    )


def _date(value: Any) -> datetime:
    if isinstance(value, datetime):
        return as_utc(value)
    text = str(value)
    if text.endswith("Z"):  # Python 3.10's fromisoformat does not read "Z"
        text = text[:-1] + "+00:00"
    return datetime.fromisoformat(text).astimezone(timezone.utc)


def _maybe_date(value: Any) -> datetime | None:
    return None if value is None else _date(value)


def parse_date(value: Any) -> datetime | None:
    """A date from a property or an aggregate (which returns RFC 3339 text)."""
    return _maybe_date(value)


def scope_filter(scope: Scope | None) -> _Filters | None:
    """Equality on every field the scope sets (values are bound, never interpolated)."""
    from weaviate.classes.query import Filter

    if scope is None:
        return None
    clauses = [
        Filter.by_property(name).equal(value)
        for name, value in zip(("scope_user", "scope_agent", "scope_thread"), scope.parts())
        if value
    ]
    return Filter.all_of(clauses) if len(clauses) > 1 else clauses[0]


def scope_where(scope: Scope) -> _Filters:
    where = scope_filter(scope)
    assert where is not None  # a Scope always sets at least one field
    return where
