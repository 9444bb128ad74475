"""Notes stated directly: a memory an application keeps on purpose, not a turn's note.

:meth:`Memory.write` hands a conversation turn to the note writer, which may keep one
note (in its own words), merge it into a near-duplicate or keep nothing. A store item,
or a fact a tool was asked to keep, is different: the caller has already decided what
the memory is and what it says. :func:`put_note` keeps it as it is, in one
transaction, as the same two records any memory is made of:

- an episode holding exactly what was given (the evidence, immutable), and
- a note with that text, derived from it (provenance), embedded and searchable.

With a ``fact`` key, a new note supersedes the current notes with that key in the
owner's scope (they get ``valid_to``, ``superseded_by`` and go cold, and summaries
built on them are invalidated), so an update keeps its history and ``as_of`` recalls
still answer what was true before. From then on the note lives like any other:
recalled, touched, promoted, consolidated, decayed and forgotten by the lifecycle.

The firewall holds: an assistant's words never become a note, here either. What an
agent asks a tool to keep comes in with role ``tool``; what an application stores,
with role ``system``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ._records import (
    Episode,
    FactKey,
    Kind,
    Record,
    Role,
    Tags,
    Tier,
    embedded_text,
    episode_id,
    note_id,
)
from ._scope import Scope, owner_scope
from ._validate import checked_fact, finite
from .embedders import Embedder
from .embedders._protocol import embed_checked
from .errors import InvalidInputError, InvalidTypeError, NotFoundError
from .stores import RecordQuery, Store, TurnWrite, WriteBatch
from .write import WriteResult
from .write._cards import CardKeeper

MAX_DATA_CHARS = 2_000_000
_MAX_KEY_CHARS = 256


def checked_note_options(
    *,
    key: object,
    data: object,
    importance: object,
    role: Role,
    fact: object,
    replaces: object,
) -> tuple[str, dict[str, Any], float | None, FactKey | None, tuple[str, ...]]:
    """The options of :meth:`Memory.put_note`, validated before anything is written
    (``importance`` None: not stated)."""
    if not isinstance(key, str) or not key or len(key) > _MAX_KEY_CHARS:
        raise InvalidInputError(
            f"key must be a non-empty str of at most {_MAX_KEY_CHARS} characters that names "
            "this put (a new key for a new version)"
        )
    if role is Role.ASSISTANT:
        raise InvalidInputError(
            "an assistant's words never become a note; keep what an agent saved through a "
            "tool with role='tool', and what the application stores with role='system'"
        )
    if importance is not None and (
        isinstance(importance, bool) or not isinstance(importance, (int, float))
    ):
        raise InvalidTypeError(f"importance must be a number in [0, 1] or None, not {importance!r}")
    if importance is not None and not finite(importance):
        raise InvalidInputError(f"importance must be a finite number in [0, 1], not {importance}")
    fact_key = checked_fact(fact)
    if isinstance(replaces, str) or not isinstance(replaces, Iterable):
        raise InvalidTypeError("replaces must be a list of record ids")
    replaced = tuple(replaces)
    if not all(isinstance(r, str) and r for r in replaced):
        raise InvalidTypeError("replaces must be a list of record ids (non-empty str)")
    stated = None if importance is None else min(1.0, max(0.0, float(importance)))
    return key, _checked_data(data), stated, fact_key, replaced


def put_note(
    backend: Store,
    embedder: Embedder,
    *,
    cards: CardKeeper,
    text: str,
    scope: Scope,
    key: str,
    data: Mapping[str, Any],
    importance: float | None,
    role: Role,
    fact: FactKey | None,
    replaces: tuple[str, ...],
    at: datetime,
) -> WriteResult:
    """Store the episode and its note; returns what was stored (``created`` is False
    when the same put was stored before).

    The same ``key`` in the same scope is the same put: sending it again changes
    nothing and returns the note already stored.
    """
    eid = episode_id(scope, role, text, key, at=at)
    nid = note_id(eid)
    if backend.existing_episode_ids({eid}):
        existing = backend.get_record(nid)
        if existing is None:
            raise NotFoundError(
                f"the put {key!r} was stored before and its note is gone (forgotten); put "
                "again with a new key"
            )
        return WriteResult(eid, False, existing)
    owner = owner_scope(scope)
    old: list[str] = []
    for rid in replaces:
        record = backend.get_record(rid)
        if record is None or not owner.owns(record.scope):
            raise NotFoundError(f"no active record {rid!r} to replace in scope {owner}")
        old.append(rid)
    if fact is not None:
        old += [
            r.id
            for r in backend.iter_records(
                RecordQuery(
                    scope=owner, subject=fact.subject, predicate=fact.predicate, superseded=False
                )
            )
            if r.id not in old and owner.owns(r.scope)
        ]
    episode = Episode(id=eid, scope=scope, role=role, text=text, at=at, meta={"put_note": key})
    note = Record(
        id=nid,
        kind=Kind.NOTE,
        scope=scope,
        text=text,
        # no importance given: Tags' own default, and not counted as stated
        tags=Tags(key=fact)
        if importance is None
        else Tags(importance=importance, key=fact, importance_stated=True),
        provenance=(eid,),
        created_at=at,
        last_access=at,
        tier=Tier.WARM,
        valid_from=at if fact is not None else None,
        data=dict(data),
    )
    # the fact key names the note for lookups; it says nothing about what the note is about
    vectors = embed_checked(embedder, [embedded_text(text)])
    write = TurnWrite(episode, note, supersedes=tuple(old))
    # the cards it rewrites are committed with it
    rewritten = cards.planned([scope], now=at, changed=[scope] if old else [], writes=[write])
    backend.apply(WriteBatch([write], vectors, rewritten))
    return WriteResult(eid, True, note, superseded=tuple(old))


def _checked_data(data: object) -> dict[str, Any]:
    if data is None:
        return {}
    if not isinstance(data, Mapping) or not all(isinstance(k, str) for k in data):
        raise InvalidTypeError("data must be a mapping with str keys")
    try:
        encoded = json.dumps(dict(data), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"data must be JSON-serialisable ({exc})") from None
    except RecursionError:
        raise InvalidInputError("data is nested too deeply to store; flatten it") from None
    if len(encoded) > MAX_DATA_CHARS:
        raise InvalidInputError(f"data is over {MAX_DATA_CHARS} characters as JSON; store less")
    return dict(json.loads(encoded))
