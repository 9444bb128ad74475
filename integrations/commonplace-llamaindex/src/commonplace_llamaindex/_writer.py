"""Any LlamaIndex LLM as commonplace's note writer."""

from __future__ import annotations

from llama_index.core.llms.llm import LLM

from commonplace import RuleNoteWriter
from commonplace.errors import InvalidTypeError
from commonplace.write import LLMNoteWriter


def llm_note_writer(llm: LLM, *, fallback: RuleNoteWriter | None = None) -> LLMNoteWriter:
    """A note-writer plugin that asks ``llm`` to write the note for each user turn.

    Register it with ``commonplace.Memory(url, plugins=[llm_note_writer(llm)])``. The
    prompt, the strict validation of the model's JSON reply and the fallback to the
    rule writer (``fallback``) on junk or errors are commonplace's; this only turns the
    LLM into the ``complete(prompt) -> str`` callable they need. The model only ever sees
    user turns: commonplace never sends it the assistant's replies.
    """
    if not isinstance(llm, LLM):
        raise InvalidTypeError(f"llm must be a LlamaIndex LLM, not {type(llm).__name__}")

    def complete(prompt: str) -> str:
        return llm.complete(prompt).text

    return LLMNoteWriter(complete, fallback=fallback)
