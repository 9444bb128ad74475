"""The write path: turn -> immutable episode -> note writer -> note."""

from ._rules import RuleNoteWriter
from ._types import NoteDraft, Skip, Turn, WriteResult

__all__ = ["NoteDraft", "RuleNoteWriter", "Skip", "Turn", "WriteResult"]
