"""The lines of a JSON Lines file of turns (``commonplace import``), each checked.

Every line is read and checked before anything is stored, and a bad one stops the import
with one line that names it and says what to change: a line that is not UTF-8, not JSON,
nested too deeply to read, not an object, without a "text" string, with a field this
format does not have, or with a scope field that is not a non-empty string (a number, a
list, null or "" is never read as "no scope given" and so as the default user's).
"""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from ._memory import Memory
from ._scope import Scope
from .errors import CommonplaceError, InvalidInputError
from .write import Turn

TURN_FIELDS = frozenset({"text", "role", "user", "agent", "thread", "at", "key", "speaker", "meta"})
_SCOPE_FIELDS = ("user", "agent", "thread")
_NOTHING = "nothing was stored"


def read_lines(file: str) -> list[tuple[int, str]]:
    """The non-blank lines of ``file`` ('-': stdin) with their numbers (from 1)."""
    try:
        # bytes, so that a line that is not UTF-8 is named (a stdin replaced by text, as
        # in tests and some shells' wrappers, is read as text)
        stdin = getattr(sys.stdin, "buffer", None)
        if file != "-":
            raw = Path(file).read_bytes()
        elif stdin is not None:
            raw = stdin.read()
        else:
            raw = sys.stdin.read().encode("utf-8", "surrogateescape")
    except OSError as exc:
        raise InvalidInputError(f"cannot read {file!r}: {exc.strerror or exc}") from None
    lines = []
    for n, line in enumerate(raw.splitlines(), 1):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInputError(
                f"line {n} is not UTF-8 (byte {exc.start + 1} of the line); save the file "
                f"as UTF-8; {_NOTHING}"
            ) from None
        if text.strip():
            lines.append((n, text))
    return lines


def line_fields(n: int, line: str) -> dict[str, Any]:
    """Line ``n``'s fields, their shapes checked (before any store is opened)."""
    try:
        fields = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"line {n} is not JSON ({exc.msg}); {_NOTHING}") from None
    except RecursionError:
        raise InvalidInputError(
            f"line {n} is nested too deeply to read; flatten its meta; {_NOTHING}"
        ) from None
    if not isinstance(fields, dict) or not isinstance(fields.get("text"), str):
        raise InvalidInputError(f'line {n} must be an object with a "text" string; {_NOTHING}')
    unknown = sorted(set(fields) - TURN_FIELDS)
    if unknown:
        raise InvalidInputError(
            f"line {n} has unknown fields {unknown}; known: {sorted(TURN_FIELDS)}; {_NOTHING}"
        )
    for name in _SCOPE_FIELDS:
        # a scope field given is a string: null, a number or a list is never "none given"
        # (the Scope checks the string itself: "" is refused there, with its reason)
        if name in fields and not isinstance(fields[name], str):
            raise InvalidInputError(
                f"line {n}: {name!r} is {_shown(fields[name])}; a scope field is a non-empty "
                f"string, or is left out to take --{name}; {_NOTHING}"
            )
    if "at" in fields:
        try:
            fields["at"] = datetime.fromisoformat(fields["at"])
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"line {n}: at {_shown(fields['at'])} is not an ISO 8601 time; {_NOTHING}"
            ) from None
    return fields


def line_turn(
    memory: Memory, n: int, fields: dict[str, Any], *, scope: Scope | None, at: datetime | None
) -> Turn:
    """Line ``n``'s checked fields as a checked turn (``scope`` and ``at`` unless it
    names its own); an error names the line.

    A line with neither its own time, nor a time for the whole import (``at``), nor a key
    is known by its words: a file gives no other way to tell the same line imported again
    from the same words said again, so running an import again stores only what is
    missing (give each line its "at" to keep repeated words as turns of their own).
    """
    own = {k: fields[k] for k in _SCOPE_FIELDS if k in fields}
    whose: Scope | dict[str, Any] | None = own or scope
    if whose is None:
        raise InvalidInputError(
            f"line {n} names no user, agent or thread; give them in the line, or --user NAME "
            f"for every line that names none; {_NOTHING}"
        )
    at = fields.get("at", at)
    key = fields.get("key")
    if at is None and key is None:
        key = "text:" + hashlib.sha256(fields["text"].encode("utf-8", "surrogatepass")).hexdigest()
    try:
        # a Turn checks and coerces the scope as Memory.write does
        return memory.turn(
            fields["text"],
            role=fields.get("role", "user"),
            scope=whose,
            at=at,
            meta=fields.get("meta"),
            key=key,
            speaker=fields.get("speaker"),
        )
    except CommonplaceError as exc:
        said = " ".join(str(exc).split())  # one line, whatever the check said
        raise InvalidInputError(f"line {n}: {said}; {_NOTHING}") from None


def _shown(value: object) -> str:
    """A field's value as the error shows it: short, on one line."""
    text = " ".join(json.dumps(value, ensure_ascii=False).split())
    return text if len(text) <= 40 else text[:37] + "..."
