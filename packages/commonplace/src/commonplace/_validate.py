"""Validation of what callers pass in: refuse early, with a message that says how to fix it.

Every public entry point validates all of its arguments before it touches the
store, so a refused call changes nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from ._clock import as_utc
from ._records import Role
from .errors import InvalidInputError, InvalidTypeError

MAX_META_CHARS = 65_536
# Times a store accepts, and the longest span a setting may look back over: enough for
# any conversation, and far enough from datetime's limits that no arithmetic overflows.
EARLIEST = datetime(1900, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(9000, 1, 1, tzinfo=timezone.utc)
MAX_DAYS = 365_000.0


def checked_text(text: object, *, limit: int, what: str) -> str:
    if not isinstance(text, str):
        raise InvalidTypeError(f"the {what} must be a str, not {type(text).__name__}")
    if not text.strip():
        raise InvalidInputError(f"the {what} is empty; skip the call for an empty {what}")
    if len(text) > limit:
        raise InvalidInputError(
            f"the {what} is {len(text)} characters, over the limit of {limit}; split it "
            f"or raise Config(max_{what}_chars=...)"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(
            f"the {what} contains lone surrogates (invalid unicode); decode it properly"
        ) from None
    return text


MAX_SPEAKER_CHARS = 100


def checked_speaker(speaker: object) -> str | None:
    """A speaker's name: one line of at most ``MAX_SPEAKER_CHARS`` characters, or None."""
    if speaker is None:
        return None
    if not isinstance(speaker, str):
        raise InvalidTypeError(f"speaker must be a str, not {type(speaker).__name__}")
    name = " ".join(speaker.split())
    if not name or len(name) > MAX_SPEAKER_CHARS:
        raise InvalidInputError(
            f"speaker must be a name of 1 to {MAX_SPEAKER_CHARS} characters, not {speaker!r}"
        )
    checked_text(name, limit=MAX_SPEAKER_CHARS, what="speaker")
    return name


def checked_role(role: object) -> Role:
    if isinstance(role, Role):
        return role
    if not isinstance(role, str):
        raise InvalidTypeError(f"role must be a str, not {type(role).__name__}")
    try:
        return Role(role.lower())
    except ValueError:
        raise InvalidInputError(
            f"unknown role {role!r}; use one of {', '.join(r.value for r in Role)}"
        ) from None


def checked_meta(meta: object) -> dict[str, Any]:
    if meta is None:
        return {}
    if not isinstance(meta, Mapping) or not all(isinstance(k, str) for k in meta):
        raise InvalidTypeError("meta must be a mapping with str keys")
    try:
        encoded = json.dumps(dict(meta), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"meta must be JSON-serialisable ({exc})") from None
    except RecursionError:
        raise InvalidInputError("meta is nested too deeply to store; flatten it") from None
    if len(encoded) > MAX_META_CHARS:
        raise InvalidInputError(f"meta is over {MAX_META_CHARS} characters as JSON; store less")
    return dict(json.loads(encoded))


def checked_int(name: str, value: object, *, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"{name} must be an int, not {type(value).__name__}")
    if not low <= value <= high:
        raise InvalidInputError(f"{name}={value} is out of range [{low}, {high}]")
    return value


def checked_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidTypeError(f"{name} must be True or False, not {type(value).__name__}")
    return value


def checked_float(name: str, value: object, *, high: float = math.inf) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 <= value <= high
    ):
        raise InvalidInputError(f"{name} must be a number in [0, {high:g}], not {value!r}")
    return float(value)


def checked_time(name: str, when: object) -> datetime:
    """An aware UTC datetime within [EARLIEST, LATEST); a naive one is taken to be UTC."""
    if not isinstance(when, datetime):
        raise InvalidTypeError(f"{name} must be a datetime, not {type(when).__name__}")
    try:
        utc: datetime | None = as_utc(when)
    except InvalidInputError:  # an offset pushes it past datetime's own limits
        utc = None
    if utc is None or not EARLIEST <= utc < LATEST:
        raise InvalidInputError(
            f"{name}={when!r} is out of range: times must fall between {EARLIEST:%Y} and "
            f"{LATEST:%Y} (UTC)"
        )
    return utc


def checked_id(name: str, value: object) -> str:
    """A record, episode or recall id: a str that can be looked up at all."""
    if not isinstance(value, str):
        raise InvalidTypeError(f"{name} must be a str, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(f"{name} {value!r} is not valid unicode; no id is") from None
    return value
