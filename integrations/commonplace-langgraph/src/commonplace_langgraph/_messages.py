"""Reading messages out of graph state: which are the user's, and their text.

This is where the firewall starts on the LangGraph side: only a human message (a
``HumanMessage``, or a dict with role ``user``/``human``) is ever handed to memory as a
user turn. AI, tool and system messages, including the memory block the recall node
injects, never are; nor is a human message whose ``name`` says an agent sent it
(``HumanMessage(name="researcher_agent")``, as multi-agent graphs hand work between
nodes): the message type alone does not make a message the user's.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage

from ._text import has_surrogates

_HUMAN_ROLES = frozenset({"human", "user"})
# A participant name that is an identifier rather than a person's name: what graph nodes
# and agents are called ("researcher_agent", "planner-2", "SupervisorBot").
_AGENT_WORDS = frozenset(
    "agent agents bot bots assistant assistants ai llm gpt model tool tools node nodes "
    "supervisor planner researcher research writer critic coder reviewer router worker "
    "orchestrator executor analyst retriever summarizer summariser system".split()
)
_NAME_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_MAX_ID_CHARS = 200


@dataclass(frozen=True, slots=True)
class HumanTurn:
    """A human message's stable id and its plain text."""

    message_id: str
    text: str


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


def is_human(message: object) -> bool:
    """Whether a person (the user) sent this message: a human message whose ``name``, if
    it has one, is not an agent's."""
    if isinstance(message, BaseMessage):
        return message.type == "human" and not is_agent_name(message.name)
    if isinstance(message, Mapping):
        role = message.get("role", message.get("type"))
        human = isinstance(role, str) and role.lower() in _HUMAN_ROLES
        return human and not is_agent_name(message.get("name"))
    return False


def is_agent_name(name: object) -> bool:
    """Whether a message's ``name`` says an agent or a graph node sent it, not a person:
    it holds digits, underscores or agent words ("researcher_agent", "planner-2",
    "SupervisorBot"). A person's name ("Ana", "mary-jane") is not one."""
    if not isinstance(name, str) or not name.strip():
        return False
    if "_" in name or any(ch.isdigit() for ch in name):
        return True
    return any(part.lower() in _AGENT_WORDS for part in _NAME_PARTS.findall(name))


def human_turns(messages: object) -> list[HumanTurn]:
    """The human messages in a messages channel value, in order."""
    if not isinstance(messages, (list, tuple)):
        return []
    turns = []
    for message in messages:
        if not is_human(message):
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
        turns.append(HumanTurn(message_id, text))
    return turns


def current_turn(messages: object) -> list[object]:
    """The messages of the latest user turn: its human messages and what came after."""
    if not isinstance(messages, (list, tuple)):
        return []
    start = len(messages)
    while start > 0 and not is_human(messages[start - 1]):
        start -= 1
    while start > 0 and is_human(messages[start - 1]):
        start -= 1
    return list(messages[start:])


def last_message(messages: object) -> object | None:
    if isinstance(messages, (list, tuple)) and messages:
        last: object = messages[-1]
        return last
    return None


def latest_human_text(messages: object) -> str | None:
    turns = human_turns(messages)
    return turns[-1].text if turns else None


def ends_a_turn(messages: object) -> bool:
    """Whether the last message is an assistant reply that calls no tool (a turn ended)."""
    last = last_message(messages)
    if isinstance(last, BaseMessage):
        return last.type == "ai" and not getattr(last, "tool_calls", None)
    if isinstance(last, Mapping):
        role = last.get("role", last.get("type"))
        return role in ("ai", "assistant") and not last.get("tool_calls")
    return False


def settled(messages: object) -> list[object]:
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
    return list(messages[: len(messages) - len(current_turn(messages))])


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _field(message: object, name: str) -> Any:
    if isinstance(message, Mapping):
        return message.get(name)
    return getattr(message, name, None)


def count_human(messages: Iterable[object]) -> int:
    return sum(1 for m in messages if is_human(m))
