"""How LangGraph store namespaces and commonplace scopes map onto each other.

A scope is written as ``(*prefix, user)``, with ``("agents", agent)`` and ``("threads",
thread)`` pairs appended when those fields are set: ``Scope(user="ana")`` is
``("memories", "ana")`` and ``Scope(user="ana", thread="t1")`` is ``("memories", "ana",
"threads", "t1")``. Containment then matches namespace prefixes, as it matches scopes:
searching ``("memories", "ana")`` finds Ana's items from every thread and nobody else's,
because namespace prefixes are compared label by label (``("a", "b")`` is never a
prefix of ``("a", "bc")``).
"""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.store.base import InvalidNamespaceError

from commonplace import Scope
from commonplace.errors import InvalidScopeError, InvalidTypeError

_AGENTS = "agents"
_THREADS = "threads"


def check_labels(labels: Sequence[object], *, what: str) -> tuple[str, ...]:
    """LangGraph's label rules: non-empty strings without ``.`` or NUL."""
    if not isinstance(labels, (tuple, list)):
        raise InvalidNamespaceError(f"{what} must be a tuple of str labels, not {labels!r}")
    for label in labels:
        if not isinstance(label, str):
            raise InvalidNamespaceError(
                f"{what} {tuple(labels)!r} has a {type(label).__name__} label; labels are str"
            )
        if not label or "." in label or "\x00" in label:
            raise InvalidNamespaceError(
                f"{what} {tuple(labels)!r} has the label {label!r}; labels are non-empty "
                "and contain no '.' or NUL"
            )
    return tuple(str(label) for label in labels)


def namespace_for(scope: Scope, *, prefix: tuple[str, ...]) -> tuple[str, ...]:
    """The namespace of a scope's items."""
    if not isinstance(scope, Scope):
        raise InvalidTypeError(f"scope must be a commonplace.Scope, not {type(scope).__name__}")
    if scope.user is None:
        raise InvalidScopeError(
            "store namespaces are per user; this scope has no user. Set "
            "config['configurable']['user_id'] (or the user_key you configured)"
        )
    labels = [*prefix, scope.user]
    if scope.agent is not None:
        labels += [_AGENTS, scope.agent]
    if scope.thread is not None:
        labels += [_THREADS, scope.thread]
    return check_labels(labels, what="the namespace of this scope")


def scope_for(namespace: tuple[str, ...], *, prefix: tuple[str, ...]) -> Scope | None:
    """The scope a namespace belongs to, or None when it is outside the memory prefix."""
    n = len(prefix)
    if len(namespace) <= n or namespace[:n] != prefix:
        return None
    rest = namespace[n + 1 :]
    fields: dict[str, str] = {}
    for name, field in ((_AGENTS, "agent"), (_THREADS, "thread")):
        if len(rest) >= 2 and rest[0] == name:
            fields[field] = rest[1]
            rest = rest[2:]
    try:
        return Scope(user=namespace[n], **fields)
    except InvalidScopeError:
        return None
