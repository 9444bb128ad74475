"""LlamaIndex chat messages as commonplace sees them: text, role, token cost."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence, Sized

from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock

from commonplace import Memory, Scope, Turn, said_by
from commonplace.errors import InvalidTypeError

Tokenizer = Callable[[str], Sized]

# A trimmed history may only begin where a turn begins: starting on an assistant
# reply or a tool result would orphan it from the call that produced it.
_TURN_STARTS = frozenset({MessageRole.USER, MessageRole.SYSTEM, MessageRole.DEVELOPER})


def message_key() -> str:
    """The core's ``key`` for one user message: a new one for every message put.

    A LlamaIndex ``ChatMessage`` has no id, and without a key the core would take the
    text as the message's identity, so a user saying "yes" twice in a session would be
    one episode. Every put (and every message ``Memory`` flushes to a block, which it
    does once per message) is one message said, so it gets a key of its own there; the
    key travels with the validated turn, so a retried write, or a copy of the memory
    writing the same pending turn, still stores it once.
    """
    return "llamaindex:" + uuid.uuid4().hex


def llama_index_tokenizer(text: str) -> Sized:
    """Tokens of ``text`` with LlamaIndex's tokenizer, looked up at each call.

    That is ``Settings.tokenizer`` when one is set, else tiktoken's ``cl100k_base``
    (the encoding commonplace counts its budgets in), which llama-index-core builds
    from the rank file it ships, so counting never needs the network. Looking it up
    per call follows a later change of ``Settings.tokenizer`` and builds nothing at
    import.
    """
    from llama_index.core.utils import get_tokenizer

    return get_tokenizer()(text)


def checked_message(message: object) -> ChatMessage:
    if not isinstance(message, ChatMessage):
        raise InvalidTypeError(
            f"expected a llama_index ChatMessage, not {type(message).__name__}; wrap text as "
            "ChatMessage(role='user', content=text)"
        )
    return message


def checked_messages(messages: object) -> list[ChatMessage]:
    if isinstance(messages, (str, bytes, ChatMessage)) or not isinstance(messages, Iterable):
        raise InvalidTypeError(
            f"expected a list of llama_index ChatMessage, not {type(messages).__name__}"
        )
    return [checked_message(m) for m in messages]


def message_text(message: ChatMessage) -> str:
    """The text of a message: its text blocks joined (images, tool calls carry none)."""
    return "\n".join(b.text for b in message.blocks if isinstance(b, TextBlock) and b.text)


def sender(message: ChatMessage, *, user: str | None, user_names: Sequence[str]) -> str | None:
    """None for a message that speaks for the user, else who it names as its sender: a
    ``name`` in ``additional_kwargs`` (as OpenAI-style messages carry it) that is not the
    user's id nor one of ``user_names`` (the core's rule, :func:`commonplace.said_by`)."""
    name = message.additional_kwargs.get("name")
    return said_by(name, user=user, user_names=user_names)


def is_user(message: ChatMessage, *, user: str | None, user_names: Sequence[str]) -> bool:
    """Whether the user said this: a user message that names no one else as its sender."""
    return (
        message.role == MessageRole.USER
        and sender(message, user=user, user_names=user_names) is None
    )


def user_role_turns(
    memory: Memory,
    messages: Iterable[tuple[ChatMessage, Scope]],
    *,
    user: str | None,
    user_names: Sequence[str],
) -> list[Turn]:
    """The user-role messages with text as validated turns, each with a key of its own:
    the user's, and those named as another sender's (``said_by``: evidence, never a note).
    Assistant, tool and system messages are never written."""
    turns = []
    for message, scope in messages:
        if message.role != MessageRole.USER:
            continue
        text = message_text(message)
        if not text.strip():  # an image-only or empty turn says nothing
            continue
        by = sender(message, user=user, user_names=user_names)
        turns.append(memory.turn(text, role="user", scope=scope, key=message_key(), said_by=by))
    return turns


def query_text(
    given: object, history: Sequence[ChatMessage], *, user: str | None, user_names: Sequence[str]
) -> str:
    """What to recall for: the input given, else the latest user message in ``history``."""
    if given is not None:
        if isinstance(given, ChatMessage):
            return message_text(given).strip()
        if not isinstance(given, str):
            raise InvalidTypeError(
                f"input must be a str or a ChatMessage, not {type(given).__name__}"
            )
        return given.strip()
    for message in reversed(history):
        if is_user(message, user=user, user_names=user_names):
            text = message_text(message).strip()
            if text:
                return text
    return ""


def message_tokens(message: ChatMessage, tokenizer: Tokenizer) -> int:
    text = message_text(message)
    return len(tokenizer(text)) if text else 0


def fit_history(
    history: Sequence[ChatMessage], *, budget: int, tokenizer: Tokenizer
) -> list[ChatMessage]:
    """The newest messages of ``history`` that fit ``budget`` tokens, whole turns only.

    As with LlamaIndex's own buffers, the latest message is kept even when it alone is
    over the budget, so an oversized turn fails loudly at the model instead of vanishing.
    """
    costs = [message_tokens(m, tokenizer) for m in history]
    total = sum(costs)
    start = 0
    last = len(history) - 1
    while start < last and total > budget:
        total -= costs[start]
        start += 1
        while start < last and history[start].role not in _TURN_STARTS:
            total -= costs[start]
            start += 1
    return list(history[start:])
