"""Which memory scope a LangGraph run belongs to, read from its config.

Every adapter piece (checkpointer, nodes, tools) uses this one rule, so the episodes
the checkpointer taps and the notes the nodes recall are in the same scopes:

- written records get ``Scope(user=config user, agent=agent, thread=thread_id)``;
- recall reads ``Scope(user=..., agent=...)``: a user's memory from all their threads;
- without a user id the memory is the thread's own (``Scope(thread=thread_id)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from commonplace import Scope
from commonplace.errors import InvalidInputError, InvalidTypeError


@dataclass(frozen=True, slots=True, kw_only=True)
class ScopeRule:
    """``user_key``: the ``configurable`` key holding the user id; ``agent``: a fixed agent id."""

    user_key: str = "user_id"
    agent: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.user_key, str) or not self.user_key:
            raise InvalidTypeError("user_key must be a non-empty str (e.g. 'user_id')")
        if self.agent is not None and not isinstance(self.agent, str):
            raise InvalidTypeError(f"agent must be a str or None, not {type(self.agent).__name__}")

    def user(self, config: Mapping[str, Any] | None) -> str | None:
        value = _configurable(config).get(self.user_key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise InvalidTypeError(
                f"config['configurable'][{self.user_key!r}] must be a str user id, "
                f"not {type(value).__name__}"
            )
        return str(value)

    def thread(self, config: Mapping[str, Any] | None) -> str | None:
        value = _configurable(config).get("thread_id")
        return None if value is None else str(value)

    def write_scope(self, config: Mapping[str, Any] | None) -> Scope:
        """The full scope records of this run are written in."""
        user, thread = self.user(config), self.thread(config)
        if user is None and thread is None:
            raise InvalidInputError(
                f"cannot tell whose memory this is: set config['configurable'][{self.user_key!r}]"
                " or a thread_id"
            )
        return Scope(user=user, agent=self.agent, thread=thread)

    def read_scope(self, config: Mapping[str, Any] | None) -> Scope:
        """The scope recall reads: the user's (all threads), else the thread's."""
        user = self.user(config)
        if user is not None:
            return Scope(user=user, agent=self.agent)
        thread = self.thread(config)
        if thread is None:
            raise InvalidInputError(
                f"cannot tell whose memory to recall: set config['configurable']"
                f"[{self.user_key!r}] or a thread_id"
            )
        return Scope(agent=self.agent, thread=thread)


def _configurable(config: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if config is None:
        return {}
    configurable = config.get("configurable") or {}
    if not isinstance(configurable, Mapping):
        raise InvalidTypeError("config['configurable'] must be a mapping")
    return configurable
