"""The write path: turn -> immutable episode -> note writer -> note."""

from ._bulk import ImportReport
from ._decide import RuleUpdateDecider
from ._llm import (
    NOTE_WRITER_PROMPT,
    LLMNoteWriter,
    LLMProfileRewriter,
    NoteReplyError,
    note_prompt,
    parse_note_reply,
)
from ._llm_updates import UPDATE_DECIDER_PROMPT, LLMUpdateDecider
from ._profile import ProfileCard
from ._rules import RuleNoteWriter
from ._types import NoteDraft, Skip, Turn, UpdateCandidate, UpdateDecision, WriteResult

__all__ = [
    "ImportReport",
    "LLMNoteWriter",
    "LLMProfileRewriter",
    "LLMUpdateDecider",
    "NOTE_WRITER_PROMPT",
    "NoteDraft",
    "NoteReplyError",
    "ProfileCard",
    "RuleNoteWriter",
    "RuleUpdateDecider",
    "Skip",
    "Turn",
    "UPDATE_DECIDER_PROMPT",
    "UpdateCandidate",
    "UpdateDecision",
    "WriteResult",
    "note_prompt",
    "parse_note_reply",
]
