"""Any LlamaIndex LLM as commonplace's note writer, update decider, summariser or profile
writer."""

from __future__ import annotations

from collections.abc import Callable

from llama_index.core.llms.llm import LLM

from commonplace import RuleNoteWriter
from commonplace.errors import InvalidTypeError
from commonplace.lifecycle import LLMSummariser
from commonplace.write import (
    LLMNoteWriter,
    LLMProfileRewriter,
    LLMUpdateDecider,
    RuleUpdateDecider,
)


def llm_note_writer(llm: LLM, *, fallback: RuleNoteWriter | None = None) -> LLMNoteWriter:
    """A note-writer plugin that asks ``llm`` to write the note for each user turn.

    Register it with ``commonplace.Memory(url, plugins=[llm_note_writer(llm)])``. The
    prompt, the strict validation of the model's JSON reply and the fallback to the
    rule writer (``fallback``) on junk or errors are commonplace's; this only turns the
    LLM into the ``complete(prompt) -> str`` callable they need. The model only ever sees
    user turns: commonplace never sends it the assistant's replies.
    """
    return LLMNoteWriter(llm_complete(llm), fallback=fallback)


def llm_update_decider(llm: LLM, *, fallback: RuleUpdateDecider | None = None) -> LLMUpdateDecider:
    """An update-decider plugin that asks ``llm`` what each new statement changes.

    Register it with ``commonplace.Memory(url, plugins=[llm_update_decider(llm)])``: the
    LLM names the older statements a new one replaces or disputes. A reply that is not
    the JSON asked for, or names a statement it was not shown, is never applied: the rule
    decider (``fallback``) decides that note instead.
    """
    return LLMUpdateDecider(llm_complete(llm), fallback=fallback)


def llm_summariser(llm: LLM) -> LLMSummariser:
    """A summariser plugin for consolidation; every sentence still faces the
    hallucination guard, and junk falls back to the extractive summariser."""
    return LLMSummariser(llm_complete(llm))


def llm_profile_rewriter(llm: LLM) -> LLMProfileRewriter:
    """A profile-card rewriter plugin; the sticky rules and the token cap still hold."""
    return LLMProfileRewriter(llm_complete(llm))


def llm_complete(llm: LLM) -> Callable[[str], str]:
    """``complete(prompt)``: the LLM's completion text."""
    if not isinstance(llm, LLM):
        raise InvalidTypeError(f"llm must be a LlamaIndex LLM, not {type(llm).__name__}")

    def complete(prompt: str) -> str:
        return llm.complete(prompt).text

    return complete
