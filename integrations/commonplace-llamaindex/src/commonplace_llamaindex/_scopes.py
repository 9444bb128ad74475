"""Whose memory it is: scopes from the ids LlamaIndex users pass around."""

from __future__ import annotations

from collections.abc import Mapping

from commonplace import Scope
from commonplace.errors import InvalidScopeError, InvalidTypeError

_SCOPE_FIELDS = ("user", "agent", "thread")


def as_scope(scope: object) -> Scope:
    """A :class:`commonplace.Scope` from a Scope, a user id or a mapping of scope fields."""
    if isinstance(scope, Scope):
        return scope
    if isinstance(scope, str):
        return Scope(user=scope)
    if isinstance(scope, Mapping):
        unknown = sorted(str(k) for k in scope if k not in _SCOPE_FIELDS)
        if unknown:
            raise InvalidScopeError(
                f"unknown scope field(s) {unknown}; the fields are {', '.join(_SCOPE_FIELDS)}"
            )
        return Scope(**{str(k): v for k, v in scope.items()})
    raise InvalidTypeError(
        "scope must be a commonplace.Scope, a user id string or a mapping with "
        f"user/agent/thread, not {type(scope).__name__}"
    )


def owner_scopes(
    *, user_id: str | None, agent_id: str | None, session_id: str | None, cross_session: bool
) -> tuple[Scope | None, Scope]:
    """The scope a session writes in (None without a session) and the scope it recalls from.

    Notes are written with the session as their thread, so the evidence says where it was
    said; recall looks across every session of the user (and agent) unless
    ``cross_session`` is off. A memory with neither a user nor an agent could never be
    recalled in a later session, so it is refused.
    """
    if user_id is None and agent_id is None:
        raise InvalidScopeError(
            "pass user_id=... (or agent_id=...): notes are recalled by who they are about, "
            "and a memory owned by no one could never be read again in another session"
        )
    owner = Scope(user=user_id, agent=agent_id)
    write = None if session_id is None else Scope(user=user_id, agent=agent_id, thread=session_id)
    recall = owner if cross_session or write is None else write
    return write, recall
