"""Mapping between SQLite rows and records, and the SQL fragments built from scopes.

Every value that comes from a user is bound as a parameter; the fragments here
only ever contain column names and placeholders.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from .._clock import from_epoch, to_epoch
from .._records import Episode, Kind, Record, Role, Status, Tags, Tier, search_text
from .._scope import Scope
from .._text import STOPWORDS, TOKEN
from ..errors import CorruptStoreError

RECORD_COLUMNS = (
    "seq, id, kind, scope_user, scope_agent, scope_thread, text, tags, tier, created_at, "
    "last_access, access_count, valid_from, valid_to, superseded_by, used_count, "
    "ignored_count, pinned, status, status_since, tier_since, data"
)
EPISODE_COLUMNS = "id, scope_user, scope_agent, scope_thread, role, text, at, meta"
ENTITY_SEPARATOR = "\x1f"


@contextlib.contextmanager
def decoding(what: str) -> Iterator[None]:
    """A value SQLite returned that cannot be read back as what was stored is damage that
    SQLite's own checks missed (a byte changed inside a value, say): say so."""
    try:
        yield
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        raise CorruptStoreError(
            f"a stored {what} cannot be read back ({exc}); the store is damaged: restore it "
            "from a backup (commonplace will not overwrite it)"
        ) from exc


def records_from_rows(rows: Sequence[Any], sources: Mapping[str, list[str]]) -> list[Record]:
    """Records from rows of ``RECORD_COLUMNS``, each with its sources (by record id)."""
    # one guard for the whole batch: entering one per row cost more than decoding a row
    with decoding("record"):
        return [_record_from_row(row, tuple(sources.get(row[1], ()))) for row in rows]


def _record_from_row(row: Any, provenance: tuple[str, ...]) -> Record:
    (
        _seq,
        rid,
        kind,
        user,
        agent,
        thread,
        text,
        tags,
        tier,
        created,
        last,
        count,
        valid_from,
        valid_to,
        superseded_by,
        used,
        ignored,
        pinned,
        status,
        status_since,
        tier_since,
        data,
    ) = row
    created_at = from_epoch(created)
    return Record(
        id=rid,
        kind=_KINDS[kind],
        scope=scope_from_parts(user, agent, thread),
        text=text,
        tags=_tags(tags),
        provenance=provenance,
        created_at=created_at,
        last_access=created_at if last == created else from_epoch(last),
        access_count=count,
        tier=_TIERS[tier],
        valid_from=maybe_datetime(valid_from),
        valid_to=maybe_datetime(valid_to),
        superseded_by=superseded_by,
        used_count=used,
        ignored_count=ignored,
        pinned=bool(pinned),
        status=_STATUSES[status],
        status_since=maybe_datetime(status_since),
        tier_since=maybe_datetime(tier_since),
        data={} if data == "{}" else json.loads(data),
    )


# the stored values, looked up (a KeyError is damage, reported by ``decoding``)
_KINDS = {k.value: k for k in Kind}
_TIERS = {t.value: t for t in Tier}
_STATUSES = {s.value: s for s in Status}


@functools.lru_cache(maxsize=16_384)  # Tags are immutable; recalls meet the same rows again
def _tags(encoded: str) -> Tags:
    return Tags.from_json(json.loads(encoded))


def record_values(record: Record) -> tuple[Any, ...]:
    """Values for ``INSERT INTO records (INSERT_COLUMNS)``, vector excluded."""
    key = record.tags.key
    return (
        record.id,
        record.kind.value,
        *record.scope.parts(),
        record.text,
        json.dumps(record.tags.to_json(), ensure_ascii=False),
        record.tier.value,
        None if key is None else key.subject,
        None if key is None else key.predicate,
        to_epoch(record.created_at),
        to_epoch(record.last_access),
        record.access_count,
        maybe_epoch(record.valid_from),
        maybe_epoch(record.valid_to),
        record.superseded_by,
        record.used_count,
        record.ignored_count,
        int(record.pinned),
        record.status.value,
        maybe_epoch(record.status_since),
        maybe_epoch(record.tier_since),
        json.dumps(dict(record.data), ensure_ascii=False),
        entity_column(record.tags.entities),
        search_column(record.text, record.tags, record.scope),
    )


def search_column(text: str, tags: Tags, scope: Scope) -> str:
    """What a record's keyword index holds: its words and its scope's tokens."""
    return search_text(text, tags) + " " + " ".join(scope_tokens(scope))


INSERT_COLUMNS = (
    "id, kind, scope_user, scope_agent, scope_thread, text, tags, tier, subject, predicate, "
    "created_at, last_access, access_count, valid_from, valid_to, superseded_by, used_count, "
    "ignored_count, pinned, status, status_since, tier_since, data, entities, search, vector"
)


def entity_column(entities: tuple[str, ...]) -> str:
    if not entities:
        return ""
    return ENTITY_SEPARATOR + ENTITY_SEPARATOR.join(e.lower() for e in entities) + ENTITY_SEPARATOR


def episode_from_row(row: Any) -> Episode:
    with decoding("episode"):
        return _episode_from_row(row)


def _episode_from_row(row: Any) -> Episode:
    eid, user, agent, thread, role, text, at, meta = row
    return Episode(
        id=eid,
        scope=scope_from_parts(user, agent, thread),
        role=Role(role),
        text=text,
        at=from_epoch(at),
        meta=json.loads(meta),
    )


@functools.lru_cache(maxsize=4096)  # Scope is immutable and checks its values when made
def scope_from_parts(user: str, agent: str, thread: str) -> Scope:
    return Scope(user=user or None, agent=agent or None, thread=thread or None)


def scope_clause(scope: Scope | None, table: str = "") -> tuple[str, tuple[str, ...]]:
    """A WHERE fragment matching every row visible in ``scope`` (values bound, never inlined)."""
    if scope is None:
        return "1", ()
    prefix = f"{table}." if table else ""
    clauses, params = [], []
    for column, value in zip(("scope_user", "scope_agent", "scope_thread"), scope.parts()):
        if value:
            clauses.append(f"{prefix}{column} = ?")
            params.append(value)
    return " AND ".join(clauses), tuple(params)


def scope_tokens(scope: Scope) -> list[str]:
    """One opaque word per scope field, indexed with a record's text, so keyword search can
    intersect a query with the asker's scope inside FTS5 instead of filtering afterwards."""
    return [
        "cps"
        + hashlib.sha256(f"{field}\x00{value}".encode("utf-8", "surrogatepass")).hexdigest()[:20]
        for field, value in zip(("user", "agent", "thread"), scope.parts())
        if value
    ]


def fts_words(text: str) -> list[str]:
    """The content words of ``text`` as FTS5 literals (quoted), at most 32.

    Stop words are left out: "what did I do" would match nearly every record and make
    BM25 rank the whole table."""
    words = list(dict.fromkeys(w for w in TOKEN.findall(text.lower()) if w not in STOPWORDS))[:32]
    return ['"' + w.replace('"', '""') + '"' for w in words]


def fts_match(words: list[str], scope: Scope, *, every: bool, within_scope: bool) -> str:
    """An FTS5 MATCH expression: records holding ``every`` one of ``words`` (or any of
    them) within ``scope``. ``within_scope=False`` leaves the scope's own tokens out: for a
    scope that holds most of the store they match nearly every row, and intersecting with
    them costs more than the caller's row filter."""
    within = "".join(" AND " + t for t in scope_tokens(scope)) if within_scope else ""
    if every or len(words) == 1:
        return " AND ".join(words) + within
    return f"({' OR '.join(words)})" + within


def maybe_epoch(when: datetime | None) -> float | None:
    return None if when is None else to_epoch(when)


def maybe_datetime(seconds: float | None) -> datetime | None:
    return None if seconds is None else from_epoch(seconds)


def chunks(items: list[Any], size: int = 500) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def marks(n: int) -> str:
    return ",".join("?" * n)
