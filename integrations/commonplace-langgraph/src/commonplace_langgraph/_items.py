"""Store items as memory records, and records as store items.

A store item is a note in the memory (``Memory.put_note``): its text is what the index
config picks from the value, and the note's ``data`` keeps what only a store needs (the
namespace, the key, the value, when the item was first put, its TTL). Its fact key
``("langgraph-store", '["ns", ..., "key"]')`` names the item, so a new put supersedes the
previous version (which keeps its history, for ``as_of`` recalls) and the current
version is found by an indexed lookup. Every other record of the memory (the notes
written from the user's turns, summaries, procedures) is an item too, read only as far
as its value goes: key = record id, value = its text, kind, tier, importance and
provenance, in the namespace of its scope.

Namespaces and scopes (see ``_namespaces``): ``(*prefix, user, ...)`` is
``Scope(user, agent, thread)``; any other namespace belongs to the scope
``Scope(agent="langgraph-store:<first label>")``, so each top-level namespace is one
scope of its own, and no user's recall ever shows it.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from commonplace import FactKey, Kind, Record, Scope
from commonplace.errors import InvalidInputError

from ._namespaces import namespace_for, scope_for

STORE_SUBJECT = "langgraph-store"
STORE_AGENT = "langgraph-store:"
DATA_KEY = "langgraph_store"
ITEM_KINDS = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE)
_MAX_AGENT_LABEL = 200


@dataclass(frozen=True, slots=True)
class ItemView:
    """One record seen as a store item."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    record: Record
    stored: bool  # put through the store (else: a record the memory wrote itself)
    indexed: bool
    ttl_minutes: float | None
    refresh: bool

    def expires_at(self) -> datetime | None:
        """When the item expires: its TTL after its last use (or after the put)."""
        if self.ttl_minutes is None:
            return None
        start = self.updated_at
        if self.refresh:
            start = max(start, self.record.last_access)
        return start + timedelta(minutes=self.ttl_minutes)

    def expired(self, now: datetime) -> bool:
        expiry = self.expires_at()
        return expiry is not None and expiry <= now


def item_scope(namespace: tuple[str, ...], *, prefix: tuple[str, ...]) -> Scope:
    """The scope an item of ``namespace`` is written in."""
    scope = scope_for(namespace, prefix=prefix)
    if scope is not None:
        return scope
    return outside_scope(namespace[0])


def outside_scope(label: str) -> Scope:
    """The scope of the items under a top-level namespace outside the memory prefix."""
    # A label may be anything LangGraph allows, a scope value may not (too long, control
    # characters): such a label is named by its hash. Items of two labels that share a
    # scope stay apart all the same, as every read also compares whole namespaces.
    if len(label) > _MAX_AGENT_LABEL or any(unicodedata.category(c) == "Cc" for c in label):
        label = "#" + hashlib.sha256(label.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return Scope(agent=STORE_AGENT + label)


def search_scope(prefix_ns: tuple[str, ...], *, prefix: tuple[str, ...]) -> Scope | None:
    """The one scope holding everything under ``prefix_ns``, or None when it spans several."""
    n = len(prefix)
    if len(prefix_ns) > n and prefix_ns[:n] == prefix:
        found = scope_for(prefix_ns, prefix=prefix)
        return found if found is not None else outside_scope(prefix_ns[0])
    if not prefix_ns or tuple(prefix[: len(prefix_ns)]) == prefix_ns:
        return None  # (), or a prefix of the memory prefix: every user's and more
    return outside_scope(prefix_ns[0])


def fact_for(namespace: tuple[str, ...], key: str) -> FactKey:
    """The fact key naming an item (one current version per namespace and key)."""
    return FactKey(STORE_SUBJECT, json.dumps([*namespace, key], ensure_ascii=False))


def item_data(
    namespace: tuple[str, ...],
    key: str,
    value: Mapping[str, Any],
    *,
    created_at: datetime,
    indexed: bool,
    ttl_minutes: float | None,
    refresh: bool,
) -> dict[str, Any]:
    return {
        DATA_KEY: {
            "namespace": list(namespace),
            "key": key,
            "value": dict(value),
            "created_at": created_at.isoformat(),
            "indexed": indexed,
            "ttl_minutes": ttl_minutes,
            "refresh": refresh,
        }
    }


def view(record: Record, *, prefix: tuple[str, ...]) -> ItemView | None:
    """A record as a store item, or None for a record outside any namespace."""
    stored = record.data.get(DATA_KEY) if isinstance(record.data, Mapping) else None
    if isinstance(stored, Mapping):
        return ItemView(
            namespace=tuple(str(label) for label in stored.get("namespace", ())),
            key=str(stored.get("key")),
            value=dict(stored.get("value") or {}),
            created_at=datetime.fromisoformat(str(stored["created_at"])),
            updated_at=record.created_at,
            record=record,
            stored=True,
            indexed=bool(stored.get("indexed", True)),
            ttl_minutes=stored.get("ttl_minutes"),
            refresh=bool(stored.get("refresh", True)),
        )
    if record.kind not in ITEM_KINDS or record.scope.user is None:
        return None
    if record.scope.agent is not None and record.scope.agent.startswith(STORE_AGENT):
        return None
    try:
        namespace = namespace_for(record.scope, prefix=prefix)
    except InvalidInputError:  # a scope no namespace can name
        return None
    return ItemView(
        namespace=namespace,
        key=record.id,
        value={
            "text": record.text,
            "kind": record.kind.value,
            "tier": record.tier.value,
            "importance": record.tags.importance,
            "provenance": list(record.provenance),
        },
        created_at=record.created_at,
        updated_at=record.created_at,
        record=record,
        stored=False,
        indexed=True,
        ttl_minutes=None,
        refresh=False,
    )


def under(namespace: Sequence[str], prefix_ns: Sequence[str]) -> bool:
    """Whether ``namespace`` is ``prefix_ns`` or below it (whole labels only)."""
    return tuple(namespace[: len(prefix_ns)]) == tuple(prefix_ns)


def plain_text(value: object) -> str:
    """The text of a whole value: its string leaves, not its JSON syntax.

    (LangGraph embeds the JSON text; embedding only the words keeps field names and
    punctuation, shared by every item, from making all items look alike.)
    """
    parts: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, str):
            if node.strip():
                parts.append(node)
        elif isinstance(node, Mapping):
            for child in node.values():
                walk(child)
        elif isinstance(node, (list, tuple)):
            for child in node:
                walk(child)

    walk(value)
    return "\n".join(parts) or json.dumps(value, ensure_ascii=False, sort_keys=True)
