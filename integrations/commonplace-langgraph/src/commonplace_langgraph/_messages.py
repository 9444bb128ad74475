"""Reading messages out of graph state: which are the user's, and their text.

This is where the firewall starts on the LangGraph side: only a human message (a
``HumanMessage``, or a dict with role ``user``/``human``) is ever handed to memory as a
user turn. AI, tool and system messages, including the memory block the recall node
injects, never are. Nor is the type alone enough: multi-agent graphs hand work between
nodes as human messages named after the sender (``HumanMessage(name="researcher")``),
so a named human message is the user's only by the core's one rule for names
(:func:`commonplace.said_by`): no name, the configured user's, or one the application
declared (``user_names=``). Any other is kept as evidence, an episode ``said_by`` its
sender, and never starts a turn, asks a recall or becomes a note.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage

from commonplace import Memory, Scope, Turn, said_by

from ._text import has_surrogates

_HUMAN_ROLES = frozenset({"human", "user"})
_MAX_ID_CHARS = 200


@dataclass(frozen=True, slots=True)
class Speakers:
    """Who speaks for the user in a run: the configured user (its id) and the names the
    application declared as theirs."""

    user: str | None = None
    names: tuple[str, ...] = ()

    def said_by(self, message: object) -> str | None:
        """None for the user's own message, else who the message names as its sender."""
        return said_by(_field(message, "name"), user=self.user, user_names=self.names)


@dataclass(frozen=True, slots=True)
class HumanTurn:
    """A human message's stable id, its plain text, and who sent it when that is not
    the user (then it is evidence only)."""

    message_id: str
    text: str
    said_by: str | None = None

    def validated(self, memory: Memory, *, scope: Scope, meta: Mapping[str, Any]) -> Turn:
        """This message as a validated user-role turn keyed by its message id (one said by
        someone else is an episode, never a note); raises what ``Memory.turn`` raises."""
        return memory.turn(
            self.text,
            role="user",
            scope=scope,
            meta=meta,
            key=self.message_id,
            said_by=self.said_by,
        )


def message_text(content: object) -> str:
    """Plain text of a message's content: a string, or the text parts of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        return "".join(parts)
    return ""


def is_human_type(message: object) -> bool:
    """Whether a message has the human role, whoever it names as its sender."""
    if isinstance(message, BaseMessage):
        return message.type == "human"
    if isinstance(message, Mapping):
        role = message.get("role", message.get("type"))
        return isinstance(role, str) and role.lower() in _HUMAN_ROLES
    return False


def is_human(message: object, who: Speakers) -> bool:
    """Whether the user sent this message: a human message that names no one else."""
    return is_human_type(message) and who.said_by(message) is None


def human_turns(messages: object, who: Speakers) -> list[HumanTurn]:
    """The human messages in a messages channel value, in order: the user's, and those
    named as someone else's (with ``said_by`` set: evidence only)."""
    if not isinstance(messages, (list, tuple)):
        return []
    turns = []
    for message in messages:
        if not is_human_type(message):
            continue
        text = message_text(_field(message, "content")).strip()
        if not text:
            continue
        raw_id = _field(message, "id")
        # add_messages gives every message an id; a channel without that reducer may not,
        # and then the text itself is the identity (as it is for the core's episodes).
        message_id = str(raw_id) if raw_id else "text:" + _digest(text)
        # the core's key is at most 256 characters, and the tap's ledger (SQLite) holds
        # valid Unicode only: any other id is kept as its digest
        if len(message_id) > _MAX_ID_CHARS or has_surrogates(message_id):
            message_id = "id:" + _digest(message_id)
        turns.append(HumanTurn(message_id, text, who.said_by(message)))
    return turns


def current_turn(messages: object, who: Speakers) -> list[object]:
    """The messages of the latest user turn: its human messages and what came after."""
    if not isinstance(messages, (list, tuple)):
        return []
    start = len(messages)
    while start > 0 and not is_human(messages[start - 1], who):
        start -= 1
    while start > 0 and is_human(messages[start - 1], who):
        start -= 1
    return list(messages[start:])


def last_message(messages: object) -> object | None:
    if isinstance(messages, (list, tuple)) and messages:
        last: object = messages[-1]
        return last
    return None


def ends_a_turn(messages: object) -> bool:
    """Whether the last message is an assistant reply that calls no tool (a turn ended)."""
    last = last_message(messages)
    if isinstance(last, BaseMessage):
        return last.type == "ai" and not getattr(last, "tool_calls", None)
    if isinstance(last, Mapping):
        role = last.get("role", last.get("type"))
        return role in ("ai", "assistant") and not last.get("tool_calls")
    return False


def settled(messages: object, who: Speakers) -> list[object]:
    """The messages of every turn that has been answered.

    A turn is answered once the assistant replied without calling a tool; until then its
    human messages are the question being worked on, and are left out. Writing them only
    once answered is what keeps a question from being recalled as its own memory, by the
    recall node, the middleware or the recall tool, whatever the durability mode.
    """
    if not isinstance(messages, (list, tuple)):
        return []
    if ends_a_turn(messages):
        return list(messages)
    return list(messages[: len(messages) - len(current_turn(messages, who))])


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _field(message: object, name: str) -> Any:
    if isinstance(message, Mapping):
        return message.get(name)
    return getattr(message, name, None)


def count_human(messages: Iterable[object], who: Speakers) -> int:
    return sum(1 for m in messages if is_human(m, who))
