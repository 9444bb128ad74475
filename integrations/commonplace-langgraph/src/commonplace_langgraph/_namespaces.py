"""How LangGraph store namespaces and commonplace scopes map onto each other.

A scope is written as ``(*prefix, user)``, with ``("agents", agent)`` and ``("threads",
thread)`` pairs appended when those fields are set: ``Scope(user="ana")`` is
``("memories", "ana")`` and ``Scope(user="ana", thread="t1")`` is ``("memories", "ana",
"threads", "t1")``. Containment then matches namespace prefixes, as it matches scopes:
searching ``("memories", "ana")`` finds Ana's items from every thread and nobody else's,
because namespace prefixes are compared label by label (``("a", "b")`` is never a
prefix of ``("a", "bc")``).

LangGraph forbids ``.`` in a label, and user ids are often emails, so each scope value
is written with ``%`` and ``.`` percent-encoded: ``Scope(user="ana@example.com")`` is
``("memories", "ana@example%2Ecom")``, and ``"50%"`` is ``"50%25"``. The mapping is one
to one: a label is a scope value only in that canonical form (a label with any other
``%`` is a namespace of its own, outside the memory), so no two scopes share a
namespace and no namespace belongs to two scopes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langgraph.store.base import InvalidNamespaceError

from commonplace import Scope
from commonplace.errors import InvalidInputError, InvalidScopeError, InvalidTypeError

from ._text import SURROGATE_FIX, has_surrogates, shown

_AGENTS = "agents"
_THREADS = "threads"
_ESCAPES = {"%25": "%", "%2E": "."}
_ESCAPED = re.compile("|".join(_ESCAPES))


class InvalidStoreNamespaceError(InvalidInputError, InvalidNamespaceError):
    """A namespace the store refuses.

    Both commonplace's :class:`~commonplace.errors.InvalidInputError` and LangGraph's
    ``InvalidNamespaceError``, so code written against either store catches it.
    """


def check_labels(labels: object, *, what: str) -> tuple[str, ...]:
    """LangGraph's label rules (non-empty strings without ``.`` or NUL), and valid Unicode."""
    if not isinstance(labels, (tuple, list)):
        raise InvalidStoreNamespaceError(
            f"{what} must be a tuple of str labels such as ('memories', 'ana'), not "
            f"{type(labels).__name__} {shown(labels)}"
        )
    for label in labels:
        where = f"{what} {shown(tuple(labels))}"
        if not isinstance(label, str):
            raise InvalidStoreNamespaceError(
                f"{where} has a {type(label).__name__} label; labels are str"
            )
        if not label:
            raise InvalidStoreNamespaceError(
                f"{where} has an empty label; labels are non-empty str"
            )
        if "." in label:
            raise InvalidStoreNamespaceError(
                f"{where} has the label {shown(label)}: labels cannot contain periods ('.'). "
                "For a user id such as an email, build the namespace with "
                "store.namespace_for(Scope(user=...)), which encodes '.' as '%2E'"
            )
        if "\x00" in label:
            raise InvalidStoreNamespaceError(
                f"{where} has the label {shown(label)}: labels cannot contain NUL ('\\x00')"
            )
        if has_surrogates(label):
            raise InvalidStoreNamespaceError(
                f"{where} has the label {shown(label)}, which holds lone surrogates (invalid "
                f"Unicode); {SURROGATE_FIX}"
            )
    return tuple(labels)


def check_put_namespace(namespace: object) -> tuple[str, ...]:
    """The namespace of a put with a value: valid labels, at least one, not under "langgraph"."""
    checked = check_labels(namespace, what="namespace")
    if not checked:
        raise InvalidStoreNamespaceError(
            "Namespace cannot be empty: put items under a namespace such as ('memories', 'ana')"
        )
    if checked[0] == "langgraph":
        raise InvalidStoreNamespaceError(
            f'Root label for namespace cannot be "langgraph" (LangGraph keeps it for itself). '
            f"Got: {shown(checked)}"
        )
    return checked


def label_of(value: str) -> str:
    """A scope value as a namespace label (``%`` and ``.`` percent-encoded)."""
    return value.replace("%", "%25").replace(".", "%2E")


def value_of(label: str) -> str | None:
    """The scope value a label encodes, or None when the label is not in canonical form."""
    value = _ESCAPED.sub(lambda m: _ESCAPES[m.group(0)], label)
    return value if label_of(value) == label else None


def namespace_for(scope: Scope, *, prefix: tuple[str, ...]) -> tuple[str, ...]:
    """The namespace of a scope's items."""
    if not isinstance(scope, Scope):
        raise InvalidTypeError(f"scope must be a commonplace.Scope, not {type(scope).__name__}")
    if scope.user is None:
        raise InvalidScopeError(
            "store namespaces are per user; this scope has no user. Set "
            "config['configurable']['user_id'] (or the user_key you configured)"
        )
    labels = [*prefix, label_of(scope.user)]
    if scope.agent is not None:
        labels += [_AGENTS, label_of(scope.agent)]
    if scope.thread is not None:
        labels += [_THREADS, label_of(scope.thread)]
    # A scope value is never empty and holds no NUL nor surrogate (Scope refuses them),
    # so its encoded labels always pass.
    return check_labels(labels, what="the namespace of this scope")


def scope_for(namespace: Sequence[str], *, prefix: tuple[str, ...]) -> Scope | None:
    """The scope a namespace belongs to, or None when it is outside the memory prefix."""
    n = len(prefix)
    if len(namespace) <= n or tuple(namespace[:n]) != prefix:
        return None
    user = value_of(namespace[n])
    rest = namespace[n + 1 :]
    fields: dict[str, str] = {}
    for name, field in ((_AGENTS, "agent"), (_THREADS, "thread")):
        if len(rest) >= 2 and rest[0] == name:
            value = value_of(rest[1])
            if value is None:
                return None
            fields[field] = value
            rest = rest[2:]
    if user is None:
        return None
    try:
        return Scope(user=user, **fields)
    except InvalidScopeError:
        return None
