"""Scopes: who a memory belongs to (user, agent, thread).

A record is written with a full scope. A query scope matches every record whose
scope agrees on each field the query sets: ``Scope(user="ana")`` sees Ana's
memories from every thread, ``Scope(user="ana", thread="t1")`` only that thread's.
A scope with no field at all is refused, so no query can see everyone's memory.
Scope values are plain data: they are compared for equality, never parsed, never
interpolated into a query.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import InvalidScopeError, InvalidTypeError

_FIELDS = ("user", "agent", "thread")
MAX_SCOPE_VALUE_CHARS = 256


@dataclass(frozen=True, slots=True)
class Scope:
    """Who a memory belongs to. At least one of the fields must be set."""

    user: str | None = None
    agent: str | None = None
    thread: str | None = None

    def __post_init__(self) -> None:
        for name in _FIELDS:
            _check_value(name, getattr(self, name))
        if self.user is None and self.agent is None and self.thread is None:
            raise InvalidScopeError(
                "a scope needs at least one of user, agent or thread; "
                "pass e.g. scope=Scope(user='ana') or scope='ana'"
            )

    @classmethod
    def coerce(cls, scope: object) -> Scope:
        """A Scope from a Scope, a user id string or a mapping of scope fields."""
        return coerce_scope(scope)

    def parts(self) -> tuple[str, str, str]:
        """The three fields with ``""`` for unset, as stored."""
        return (self.user or "", self.agent or "", self.thread or "")

    def contains(self, other: Scope) -> bool:
        """Whether a record written in ``other`` is visible to a query in ``self``."""
        return all(
            mine is None or mine == theirs
            for mine, theirs in zip(
                (self.user, self.agent, self.thread),
                (other.user, other.agent, other.thread),
            )
        )

    def owns(self, other: Scope) -> bool:
        """Whether a write in this scope may read, change, merge into or supersede a
        record written in ``other`` (and whether a card kept in this scope is written from
        it): its scope chain.

        Queries keep containment (``Scope(agent="coach")`` sees every user's memories
        under that agent, as its caller asked). A write is narrower: it stays with its own
        user. A write with a user reaches only that user's records through containment.
        A write without one (an anonymous run under an agent) reaches only records that
        have no user either, or one stranger's turn would supersede, merge into or
        reshape every user's memory; with neither a user nor an agent, only records with
        neither.
        """
        if not self.contains(other):
            return False
        if self.user is not None:
            return True
        return other.user is None and (self.agent is not None or other.agent is None)

    def __str__(self) -> str:
        return ", ".join(f"{n}={v!r}" for n, v in zip(_FIELDS, self.parts()) if v)


# A batch asks this of each of its turns several times, and checking a new Scope's values
# costs more than a lookup (a Scope is immutable, compared by value).
@functools.lru_cache(maxsize=4096)
def owner_scope(scope: Scope) -> Scope:
    """The user (and agent) a scope belongs to, across threads.

    Facts about the user, the profile card and supersession live at this level:
    moving city in one thread is moving city.
    """
    if scope.user is None and scope.agent is None:
        return scope
    return Scope(user=scope.user, agent=scope.agent)


def _check_value(name: str, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise InvalidTypeError(
            f"scope field {name!r} must be a str or None, not {type(value).__name__}"
        )
    if not value:
        raise InvalidScopeError(
            f"scope field {name!r} is an empty string; leave it unset (None) instead"
        )
    if len(value) > MAX_SCOPE_VALUE_CHARS:
        raise InvalidScopeError(
            f"scope field {name!r} is {len(value)} characters long; "
            f"the limit is {MAX_SCOPE_VALUE_CHARS}: use a stable id, not content"
        )
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in value):
        raise InvalidScopeError(
            f"scope field {name!r} contains control characters or lone surrogates; "
            "use printable ids"
        )


def coerce_scope(scope: object) -> Scope:
    """Accept a :class:`Scope`, a user id string, or a mapping of scope fields."""
    if isinstance(scope, Scope):
        return scope
    if isinstance(scope, str):
        return Scope(user=scope)
    if isinstance(scope, Mapping):
        unknown = set(scope) - set(_FIELDS)
        if unknown:
            raise InvalidScopeError(
                f"unknown scope field(s) {sorted(map(str, unknown))}; "
                f"the fields are {', '.join(_FIELDS)}"
            )
        return Scope(**{str(k): v for k, v in scope.items()})
    raise InvalidTypeError(
        "scope must be a Scope, a user id string or a mapping with user/agent/thread, "
        f"not {type(scope).__name__}"
    )
