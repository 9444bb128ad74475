"""Prebuilt graph nodes: recall before the model, note-writing and consolidation after it.

Each node reads the conversation from the ``messages`` key of the state (a
``MessagesState``-style list with the ``add_messages`` reducer) and the user from the
run's config, with the same scope rule as :class:`CommonplaceSaver`, so a graph may use
the nodes, the checkpointer, or both, and the episodes are the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import RemoveMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from commonplace import Memory, Scope, Turn
from commonplace.errors import InvalidInputError, InvalidTypeError
from commonplace.validation import checked_user_names

from ._messages import (
    HumanTurn,
    count_human,
    current_turn,
    ends_a_turn,
    human_turns,
    is_human,
    last_message,
)
from ._scope import ScopeRule

MEMORY_MESSAGE_ID = "commonplace-memory"
"""The id of the system message the recall node maintains (one per conversation).

It is reserved: ``add_messages`` replaces a message by id, so any other message with this
id would replace the memory block, or be replaced by it. :class:`RecallNode` refuses a
conversation holding one (leave message ids to ``add_messages``, or pick others).
"""


class _MemoryNode:
    def __init__(
        self,
        memory: Memory,
        *,
        messages_key: str = "messages",
        user_key: str = "user_id",
        agent: str | None = None,
        user_names: Sequence[str] = (),
    ) -> None:
        self._setup(memory, messages_key, user_key, agent, user_names)

    def _setup(
        self,
        memory: Memory,
        messages_key: str,
        user_key: str,
        agent: str | None,
        user_names: Sequence[str],
    ) -> None:
        if not isinstance(memory, Memory):
            raise InvalidTypeError(
                f"memory must be a commonplace.Memory, not {type(memory).__name__}"
            )
        if not isinstance(messages_key, str) or not messages_key:
            raise InvalidTypeError("messages_key must be a non-empty str")
        self.memory = memory
        self.messages_key = messages_key
        names = checked_user_names(user_names)
        self.rule = ScopeRule(user_key=user_key, agent=agent, user_names=names)

    def _messages(self, state: Mapping[str, Any]) -> list[Any]:
        if not isinstance(state, Mapping):
            raise InvalidTypeError(
                f"{type(self).__name__} needs a dict-like state, not {type(state).__name__}"
            )
        messages = state.get(self.messages_key) or []
        if not isinstance(messages, list):
            raise InvalidTypeError(f"state[{self.messages_key!r}] must be a list of messages")
        return messages


class RecallNode(_MemoryNode):
    """Puts the compiled memory for the user's latest message into the conversation.

    It runs on a new user turn (the last message is human) and then replaces its
    previous memory message, if any, with a fresh one placed after any leading system
    prompt, so the model always sees exactly one current memory block. On other runs
    (after a tool call, say) it changes nothing. ``top_k`` and ``budget_tokens`` go to
    ``Memory.recall``.
    """

    def __init__(
        self,
        memory: Memory,
        *,
        messages_key: str = "messages",
        user_key: str = "user_id",
        agent: str | None = None,
        user_names: Sequence[str] = (),
        top_k: int = 10,
        budget_tokens: int | None = None,
    ) -> None:
        self._setup(memory, messages_key, user_key, agent, user_names)
        self.top_k = top_k
        self.budget_tokens = budget_tokens

    def __call__(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        messages = self._messages(state)
        # before anything else: by the time this node runs, add_messages may already have
        # put the message in the block's place, whatever the last message is
        _refuse_reserved_ids(messages)
        who = self.rule.speakers(self.rule.user(config))
        if not is_human(last_message(messages), who):
            return {}
        query = human_turns(messages[-1:], who)
        if not query:
            return {}
        recall = self.memory.recall(
            query[-1].text[: self.memory.config.max_query_chars],
            scope=self.rule.read_scope(config),
            top_k=self.top_k,
            budget_tokens=self.budget_tokens,
        )
        kept = [m for m in messages if not _is_memory_block(m)]
        had_memory = len(kept) != len(messages)
        if not recall.text and not had_memory:
            return {}
        lead = 0
        while lead < len(kept) and getattr(kept[lead], "type", None) == "system":
            lead += 1
        block = [SystemMessage(content=recall.text, id=MEMORY_MESSAGE_ID)] if recall.text else []
        # add_messages can only append or replace in place; putting the block right after
        # the system prompt means rewriting the list (every message keeps its id).
        return {
            self.messages_key: [
                RemoveMessage(id=REMOVE_ALL_MESSAGES),
                *kept[:lead],
                *block,
                *kept[lead:],
            ]
        }


def _is_memory_block(message: object) -> bool:
    return _field(message, "id") == MEMORY_MESSAGE_ID and _kind(message) == "system"


def _refuse_reserved_ids(messages: Sequence[object]) -> None:
    """Refuse a message other than the memory block that carries the block's id.

    ``add_messages`` would let it replace the block in place (the user's question then
    sits where the memory was, out of order), or let the next block replace it (the
    user's words vanish from the conversation). Refusing says what to fix, before the
    model answers a conversation in the wrong order.
    """
    for message in messages:
        if _field(message, "id") == MEMORY_MESSAGE_ID and not _is_memory_block(message):
            raise InvalidInputError(
                f"a {_kind(message) or type(message).__name__} message has the id "
                f"{MEMORY_MESSAGE_ID!r}, which RecallNode keeps for its memory block "
                "(add_messages replaces messages by id, so one would overwrite the other). "
                "Give the message another id, or none: add_messages assigns one"
            )


def _field(message: object, name: str) -> Any:
    if isinstance(message, Mapping):
        return message.get(name)
    return getattr(message, name, None)


def _kind(message: object) -> str | None:
    found = _field(message, "type")
    if found is None and isinstance(message, Mapping):
        found = message.get("role")
    return found if isinstance(found, str) else None


class NoteNode(_MemoryNode):
    """Writes the user's turn to memory once it is answered (notes come from user turns only).

    It runs after the model and writes the human messages of the current turn when the
    model's reply ends the turn (it calls no tool). While a tool loop is still working on
    the question, nothing is written, so the recall tool (or a recall node on the next
    model call) never finds the question as its own memory. Each message is written with
    its message id as the core's ``key``: the same message twice is one episode, two
    identical messages are two, and a message the checkpointer already tapped is not
    written again. Earlier turns were written when they were current (rewriting them
    would bring back what ``forget`` removed). Assistant, tool and system messages are
    never written.
    """

    def __call__(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        messages = self._messages(state)
        if not ends_a_turn(messages):
            return {}
        who = self.rule.speakers(self.rule.user(config))
        turns = human_turns(current_turn(messages, who), who)
        if not turns:
            return {}
        write_turns(self.memory, turns, scope=self.rule.write_scope(config), config=config)
        return {}


def write_turns(
    memory: Memory, turns: Sequence[HumanTurn], *, scope: Scope, config: Mapping[str, Any] | None
) -> None:
    """Write human turns as user turns keyed by message id, skipping what memory refuses
    (a turn said by someone else than the user is written as evidence only)."""
    batch = turn_batch(memory, turns, scope=scope, config=config)
    if batch:
        memory.write_many(batch)


def turn_batch(
    memory: Memory, turns: Sequence[HumanTurn], *, scope: Scope, config: Mapping[str, Any] | None
) -> list[Turn]:
    """Human turns as validated user turns (key: the message id), without what is refused;
    one ``said_by`` another sender stays an episode, never a note."""
    thread = _configurable(config).get("thread_id")
    meta: dict[str, Any] = {"source": "langgraph"}
    if thread is not None:
        meta["thread_id"] = str(thread)
    batch = []
    for turn in turns:
        try:
            batch.append(turn.validated(memory, scope=scope, meta=meta))
        except InvalidInputError:
            continue  # an empty or oversized message is not memory; the graph goes on
    return batch


def _configurable(config: Mapping[str, Any] | None) -> Mapping[str, Any]:
    found = (config or {}).get("configurable") or {}
    return found if isinstance(found, Mapping) else {}


class ConsolidationNode(_MemoryNode):
    """Runs ``Memory.consolidate`` for the user at the end of every ``every``-th turn.

    A turn has ended when the last message is an assistant reply that calls no tool;
    intermediate model calls of a tool loop do not count.
    """

    def __init__(
        self,
        memory: Memory,
        *,
        every: int = 1,
        messages_key: str = "messages",
        user_key: str = "user_id",
        agent: str | None = None,
        user_names: Sequence[str] = (),
    ) -> None:
        self._setup(memory, messages_key, user_key, agent, user_names)
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise InvalidInputError(f"every must be a positive int, not {every!r}")
        self.every = every

    def __call__(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        messages = self._messages(state)
        who = self.rule.speakers(self.rule.user(config))
        if not ends_a_turn(messages) or count_human(messages, who) % self.every:
            return {}
        self.memory.consolidate(scope=self.rule.read_scope(config))
        return {}
