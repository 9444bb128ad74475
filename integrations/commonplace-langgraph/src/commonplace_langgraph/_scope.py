"""Which memory scope a LangGraph run belongs to, read from its context and config.

Every adapter piece (checkpointer, nodes, middleware, tools) uses this one rule, so the
episodes the checkpointer taps and the notes the nodes recall are in the same scopes:

- written records get ``Scope(user=..., agent=agent, thread=thread_id)``;
- recall reads ``Scope(user=..., agent=...)``: a user's memory from all their threads;
- without a user id the memory is the thread's own (``Scope(thread=thread_id)``), and a
  :class:`NoUserWarning` says so once per thread.

The user is looked up, first found wins, in:

1. the run's context (LangGraph 1.x ``graph.invoke(..., context=Ctx(user_id="ana"))``
   with ``context_schema=Ctx``): an attribute or key named ``user_key``;
2. ``config["configurable"][user_key]``;
3. ``config["configurable"]["langgraph_user_id"]``, then ``["langgraph_auth_user_id"]``
   (what LangGraph Platform and langmem use).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from commonplace import Scope
from commonplace.errors import InvalidInputError, InvalidScopeError, InvalidTypeError
from commonplace.validation import checked_user_names

from ._messages import Speakers
from ._text import SURROGATE_FIX, has_surrogates

# Where LangGraph keeps the run's Runtime (context, store) inside a config. Every config
# LangGraph hands a node, a tool or a checkpointer during a run carries it.
_RUNTIME_KEY = "__pregel_runtime"
_PLATFORM_KEYS = ("langgraph_user_id", "langgraph_auth_user_id")
_MISSING = object()


class NoUserWarning(UserWarning):
    """A run named no user: its memory is its thread's own, invisible to other threads."""


_warned_lock = threading.Lock()
_warned: set[tuple[str, str | None]] = set()
_MAX_WARNED = 10_000


@dataclass(frozen=True, slots=True, kw_only=True)
class ScopeRule:
    """``user_key``: the context field or ``configurable`` key holding the user id;
    ``agent``: a fixed agent id added to every scope; ``user_names``: the names a human
    message may carry and still be the user's, besides the user id (see
    :func:`commonplace.said_by`)."""

    user_key: str = "user_id"
    agent: str | None = None
    user_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "user_names", checked_user_names(self.user_names))
        if not isinstance(self.user_key, str) or not self.user_key:
            raise InvalidTypeError("user_key must be a non-empty str (e.g. 'user_id')")
        if self.agent is not None and not isinstance(self.agent, str):
            raise InvalidTypeError(f"agent must be a str or None, not {type(self.agent).__name__}")

    def user(self, config: Mapping[str, Any] | None, *, context: object = _MISSING) -> str | None:
        """The user id of a run, from its context, else its config (see the module doc)."""
        if context is _MISSING:
            context = run_context(config)
        found = _field(context, self.user_key)
        if found is not None:
            return _user_id(found, where=f"the run's context field {self.user_key!r}")
        configurable = _configurable(config)
        for key in (self.user_key, *_PLATFORM_KEYS):
            value = configurable.get(key)
            if value is not None:
                return _user_id(value, where=f"config['configurable'][{key!r}]")
        return None

    def speakers(self, user: str | None) -> Speakers:
        """Whose human messages speak for ``user`` (the user of a run) in this rule."""
        return Speakers(user=user, names=self.user_names)

    def thread(self, config: Mapping[str, Any] | None) -> str | None:
        value = _configurable(config).get("thread_id")
        return None if value is None else thread_id(value)

    def write_scope(self, config: Mapping[str, Any] | None, *, context: object = _MISSING) -> Scope:
        """The full scope records of this run are written in."""
        user, thread = self.user(config, context=context), self.thread(config)
        if user is None and thread is None:
            raise InvalidInputError(
                f"cannot tell whose memory this is: pass context=...({self.user_key}=...) "
                f"or config['configurable'][{self.user_key!r}], or a thread_id"
            )
        if user is None:
            self.warn_no_user(thread)
        return Scope(user=user, agent=self.agent, thread=thread)

    def read_scope(self, config: Mapping[str, Any] | None, *, context: object = _MISSING) -> Scope:
        """The scope recall reads: the user's (all threads), else the thread's."""
        user = self.user(config, context=context)
        if user is not None:
            return Scope(user=user, agent=self.agent)
        thread = self.thread(config)
        if thread is None:
            raise InvalidInputError(
                f"cannot tell whose memory to recall: pass context=...({self.user_key}=...) "
                f"or config['configurable'][{self.user_key!r}], or a thread_id"
            )
        self.warn_no_user(thread)
        return Scope(agent=self.agent, thread=thread)

    def warn_no_user(self, thread: str | None) -> None:
        """Say once per thread that its memory stays in the thread."""
        with _warned_lock:
            if (self.user_key, thread) in _warned:
                return
            if len(_warned) >= _MAX_WARNED:
                _warned.clear()
            _warned.add((self.user_key, thread))
        warnings.warn(
            f"thread {thread!r} names no user, so its memory is the thread's own and no "
            f"other thread will recall it. Name the user with context=...({self.user_key}="
            f"...) (context_schema), config['configurable'][{self.user_key!r}] or "
            "'langgraph_user_id'",
            NoUserWarning,
            stacklevel=3,
        )


def run_context(config: Mapping[str, Any] | None) -> object:
    """The context of the run a config belongs to (None outside a run or without one)."""
    runtime = _configurable(config).get(_RUNTIME_KEY)
    return getattr(runtime, "context", None)


def forget_warnings() -> None:
    """Warn again about threads already warned about (for tests)."""
    with _warned_lock:
        _warned.clear()


def _field(context: object, name: str) -> object:
    if context is None:
        return None
    if isinstance(context, Mapping):
        return context.get(name)
    return getattr(context, name, None)


def _user_id(value: object, *, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InvalidTypeError(f"{where} must be a str user id, not {type(value).__name__}")
    user = str(value)
    # Checked as a scope value here, before the id is written anywhere (the tap records
    # which user a thread belongs to before it writes the thread's messages).
    try:
        Scope(user=user)
    except InvalidScopeError as exc:
        raise InvalidScopeError(f"{where} is not a usable user id: {exc}") from None
    return user


def thread_id(value: object) -> str:
    """A run's ``thread_id`` as text, refused if no SQLite table could hold it."""
    thread = str(value)
    if has_surrogates(thread):
        raise InvalidInputError(
            f"config['configurable']['thread_id'] holds lone surrogates (invalid Unicode); "
            f"{SURROGATE_FIX}"
        )
    return thread


def _configurable(config: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if config is None:
        return {}
    configurable = config.get("configurable") or {}
    if not isinstance(configurable, Mapping):
        raise InvalidTypeError("config['configurable'] must be a mapping")
    return configurable
