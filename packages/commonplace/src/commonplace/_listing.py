"""What a scope remembers, as data: a page of records, or everything for an export.

``Memory.records`` and ``Memory.export`` (and the ``list`` and ``export`` commands) read
through the public ``Store`` listings, so every backend answers the same. Records and
episodes become JSON-ready dicts here, in one shape, so a listing, an export and the
command line's ``--json`` never disagree on a field's name. The words of what was
forgotten are not here to list: forgetting deletes the rows these read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ._records import Episode, Kind, Record, Status
from ._scope import Scope
from ._validate import checked_int
from .errors import InvalidInputError, InvalidTypeError
from .stores import RecordQuery, Store

#: what a listing shows unless asked otherwise: every derived kind, episodes apart
DERIVED_KINDS = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE)
# a summary waiting to be rewritten still says what it says; a decayed record does not
_LISTED = (Status.ACTIVE, Status.INVALID)
_EPISODE_PAGE = 500
#: the most records one page may hold
MAX_PAGE = 10_000


@dataclass(frozen=True, slots=True)
class RecordPage:
    """One page of a scope's records (:meth:`Memory.records`), oldest first.

    ``items`` are JSON-ready dicts (:func:`record_json`); ``next_offset`` is the offset of
    the next page, or None after the last one.
    """

    items: tuple[dict[str, Any], ...]
    next_offset: int | None


def record_json(record: Record) -> dict[str, Any]:
    """A note, summary or procedure as plain data: its id, what it says, where it comes
    from (``provenance``: the ids it was derived from) and its state."""
    return {
        "id": record.id,
        "kind": record.kind.value,
        "scope": _scope_json(record.scope),
        "text": record.text,
        "provenance": list(record.provenance),
        "created_at": record.created_at.isoformat(),
        "tier": record.tier.value,
        "status": record.status.value,
        "pinned": record.pinned,
        "valid_from": None if record.valid_from is None else record.valid_from.isoformat(),
        "valid_to": None if record.valid_to is None else record.valid_to.isoformat(),
        "superseded_by": record.superseded_by,
        "tags": record.tags.to_json(turn_terms=False),
        "counts": {
            "accessed": record.access_count,
            "used": record.used_count,
            "ignored": record.ignored_count,
        },
    }


def episode_json(episode: Episode) -> dict[str, Any]:
    """A raw turn as plain data, exactly as it was stored."""
    return {
        "id": episode.id,
        "kind": Kind.EPISODE.value,
        "scope": _scope_json(episode.scope),
        "role": episode.role.value,
        "text": episode.text,
        "at": episode.at.isoformat(),
        "meta": dict(episode.meta),
    }


def list_records(
    store: Store, scope: Scope, *, kinds: Iterable[Kind | str], limit: object, offset: object
) -> RecordPage:
    """Records ``offset`` to ``offset + limit`` of ``scope``, oldest first (the arguments
    checked here, as the caller gave them)."""
    checked = _checked_kinds(kinds)
    limit = checked_int("limit", limit, low=1, high=MAX_PAGE)
    offset = checked_int("offset", offset, low=0)
    query = RecordQuery(scope=scope, kinds=checked, statuses=_LISTED)
    # the store lists in its own order; a page is cut from the records sorted by time, so
    # that pages do not depend on how a backend walks its rows (a page costs a walk over
    # the scope: this is for people and exports, not for the recall path)
    found = sorted(store.iter_records(query), key=lambda r: (r.created_at, r.id))
    window = found[offset : offset + limit + 1]
    items = tuple(record_json(r) for r in window[:limit])
    return RecordPage(items, offset + limit if len(window) > limit else None)


def export_scope(store: Store, scope: Scope, *, episodes: bool) -> Iterator[dict[str, Any]]:
    """Every record of ``scope`` (oldest first), then, with ``episodes``, every turn it
    holds (oldest first): the whole of what it remembers and the evidence behind it."""
    query = RecordQuery(scope=scope, kinds=DERIVED_KINDS, statuses=_LISTED)
    for record in sorted(store.iter_records(query), key=lambda r: (r.created_at, r.id)):
        yield record_json(record)
    if not episodes:
        return
    # the store pages episodes newest first; an export reads best oldest first
    newest_first: list[Episode] = []
    before: str | None = None
    while True:
        page = store.recent_episodes(scope, limit=_EPISODE_PAGE, before=before)
        newest_first.extend(page)
        if len(page) < _EPISODE_PAGE:
            break
        before = page[-1].id
    for episode in reversed(newest_first):
        yield episode_json(episode)


def _checked_kinds(kinds: Iterable[Kind | str]) -> tuple[Kind, ...]:
    if isinstance(kinds, (str, Kind)):
        kinds = (kinds,)
    if not isinstance(kinds, Iterable):
        raise InvalidTypeError(f"kinds must be a kind or kinds, not {type(kinds).__name__}")
    out = []
    for kind in kinds:
        try:
            out.append(Kind(kind))
        except ValueError:
            names = [k.value for k in DERIVED_KINDS]
            raise InvalidInputError(f"unknown kind {kind!r}; use some of {names}") from None
    if not out or Kind.EPISODE in out:
        raise InvalidInputError(
            "kinds lists notes, summaries or procedures; episodes come with export()"
        )
    return tuple(out)


def _scope_json(scope: Scope) -> dict[str, str]:
    fields = {"user": scope.user, "agent": scope.agent, "thread": scope.thread}
    return {name: value for name, value in fields.items() if value is not None}
