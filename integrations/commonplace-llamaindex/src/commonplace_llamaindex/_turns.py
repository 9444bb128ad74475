"""The state of the current turn: user messages not yet written, memory already compiled."""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence

from commonplace.write import Turn


class TurnState:
    """What one session's memory holds between a user message and the model's answer.

    A turn's memory is what was known *before* the turn: written first, the user's
    message would be recalled as its own best match and push the notes that answer it
    below commonplace's relevance gate. So user messages wait here (validated, with the
    time they were said) until the next recall has run, or the next message arrives.

    The compiled memory is kept per query for the rest of the turn: agents ask for memory
    once per model call, and each recall strengthens what it returns, so a tool loop
    would otherwise count as many recalls. A new user message starts a new turn.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: list[Turn] = []
        self._compiled: dict[Hashable, str] = {}

    def start(self, turns: Sequence[Turn]) -> None:
        """A user spoke: a new turn whose messages are written after its recall."""
        with self._lock:
            self._compiled.clear()
            self._pending.extend(turns)

    def take(self) -> list[Turn]:
        """The turns to write now (and forget, unless :meth:`give_back` returns them)."""
        with self._lock:
            taken, self._pending = self._pending, []
            return taken

    def give_back(self, turns: Sequence[Turn]) -> None:
        """Turns whose write failed go back in front, to be written next time."""
        with self._lock:
            self._pending[:0] = turns

    def compiled(self, key: Hashable) -> str | None:
        with self._lock:
            return self._compiled.get(key)

    def keep(self, key: Hashable, text: str) -> None:
        with self._lock:
            self._compiled[key] = text

    def forget(self) -> None:
        """Drop the compiled memory (the history it was compiled for changed)."""
        with self._lock:
            self._compiled.clear()
