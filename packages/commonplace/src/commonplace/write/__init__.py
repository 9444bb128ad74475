"""The write path: turn -> immutable episode -> note writer -> note."""

from ._bulk import ImportReport
from ._llm import (
    NOTE_WRITER_PROMPT,
    LLMNoteWriter,
    LLMProfileRewriter,
    NoteReplyError,
    note_prompt,
    parse_note_reply,
)
from ._profile import ProfileCard
from ._rules import RuleNoteWriter
from ._types import NoteDraft, Skip, Turn, WriteResult

__all__ = [
    "ImportReport",
    "LLMNoteWriter",
    "LLMProfileRewriter",
    "NOTE_WRITER_PROMPT",
    "NoteDraft",
    "NoteReplyError",
    "ProfileCard",
    "RuleNoteWriter",
    "Skip",
    "Turn",
    "WriteResult",
    "note_prompt",
    "parse_note_reply",
]
