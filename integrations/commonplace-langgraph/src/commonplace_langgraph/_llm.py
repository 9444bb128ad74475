"""Any langchain-core chat model as commonplace's note writer, update decider, summariser or
profile writer.

The prompt, the validation of the reply and the fallback to the rule writer live in the
core (``commonplace.write.LLMNoteWriter``); this only turns a ``BaseChatModel`` into the
``complete(prompt) -> str`` callable it takes. The core only ever calls it for user
turns, so the model never writes a note about an assistant reply.
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from commonplace.errors import InvalidTypeError
from commonplace.lifecycle import LLMSummariser
from commonplace.write import (
    LLMNoteWriter,
    LLMProfileRewriter,
    LLMUpdateDecider,
    RuleNoteWriter,
    RuleUpdateDecider,
)

from ._messages import message_text


def chat_model_complete(model: BaseChatModel) -> Callable[[str], str]:
    """``complete(prompt)``: one human message in, the reply's text out."""
    if not isinstance(model, BaseChatModel):
        raise InvalidTypeError(
            f"model must be a langchain-core BaseChatModel, not {type(model).__name__}"
        )

    def complete(prompt: str) -> str:
        reply = model.invoke([HumanMessage(content=prompt)])
        return message_text(reply.content)

    return complete


def chat_model_note_writer(
    model: BaseChatModel, *, fallback: RuleNoteWriter | None = None
) -> LLMNoteWriter:
    """A note-writer plugin: ``Memory(plugins=[chat_model_note_writer(model)])``."""
    return LLMNoteWriter(chat_model_complete(model), fallback=fallback)


def chat_model_update_decider(
    model: BaseChatModel, *, fallback: RuleUpdateDecider | None = None
) -> LLMUpdateDecider:
    """An update-decider plugin: ``Memory(plugins=[chat_model_update_decider(model)])``.

    The model names the older statements a new one replaces or disputes; a reply that is
    not the JSON asked for, or names a statement it was not shown, is never applied: the
    rule decider (``fallback``) decides that note instead."""
    return LLMUpdateDecider(chat_model_complete(model), fallback=fallback)


def chat_model_summariser(model: BaseChatModel) -> LLMSummariser:
    """A summariser plugin for consolidation; every sentence still faces the
    hallucination guard, and junk falls back to the extractive summariser."""
    return LLMSummariser(chat_model_complete(model))


def chat_model_profile_rewriter(model: BaseChatModel) -> LLMProfileRewriter:
    """A profile-card rewriter plugin; the sticky rules and the token cap still hold."""
    return LLMProfileRewriter(chat_model_complete(model))
