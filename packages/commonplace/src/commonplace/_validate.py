"""Validation of what callers pass in: refuse early, with a message that says how to fix it.

Every public entry point validates all of its arguments before it touches the
store, so a refused call changes nothing. The public value types a caller builds by
hand (``Turn``, ``Scope``, ``Config``, the embedders, ``ManualClock``) validate
themselves with these same functions when built, so a hand-built value is refused with
the error and message the matching :class:`~commonplace.Memory` call gives.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ._records import FactKey, Role
from .errors import InvalidInputError, InvalidTypeError

MAX_META_CHARS = 65_536
# Times a store accepts, and the longest span a setting may look back over: enough for
# any conversation, and far enough from datetime's limits that no arithmetic overflows.
EARLIEST = datetime(1900, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(9000, 1, 1, tzinfo=timezone.utc)
MAX_DAYS = 365_000.0
# The longest text a Turn can hold: the largest Config(max_turn_chars=...) allows. A Turn
# knows no Config, so Memory.write_many checks each turn against its own, smaller limit.
MAX_TURN_CHARS = 2**31 - 1
MAX_KEY_CHARS = 256
# The widest vectors a store takes. The widest embedding models in use make 4,096
# dimensions; the vector index holds at least 64 rows per scope in memory (64 x 65,536
# float32 is 16 MiB), and a model declaring more (2**40, say) would pin a store that no
# process can ever embed into, or open to re-embed, again.
MAX_EMBEDDER_DIM = 65_536


def checked_text(text: object, *, limit: int, what: str) -> str:
    """``text`` if it is a str that is not blank, holds at most ``limit`` characters and
    is valid unicode; ``what`` names it in the error (``"turn"``, ``"query"``)."""
    if not isinstance(text, str):
        raise InvalidTypeError(f"the {what} must be a str, not {type(text).__name__}")
    if not text.strip():
        raise InvalidInputError(f"the {what} is empty; skip the call for an empty {what}")
    checked_length(text, limit=limit, what=what)
    _check_unicode(text, f"the {what}")
    return text


def checked_length(text: str, *, limit: int, what: str) -> str:
    """``text`` (already a checked str) if it fits ``limit``, the ``max_{what}_chars`` setting."""
    if len(text) > limit:
        raise InvalidInputError(
            f"the {what} is {len(text)} characters, over the limit of {limit}; split it "
            f"or raise Config(max_{what}_chars=...)"
        )
    return text


def _check_unicode(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(
            f"{what} contains lone surrogates (invalid unicode); decode it properly"
        ) from None


def checked_key(key: object) -> str | None:
    """A turn's key (the message id of the caller's framework), or None."""
    if key is None:
        return None
    if not isinstance(key, str):
        raise InvalidTypeError(
            f"key must be a str (a message id) or None, not {type(key).__name__}"
        )
    if not key or len(key) > MAX_KEY_CHARS:
        raise InvalidInputError(
            f"key must be a non-empty str of at most {MAX_KEY_CHARS} characters"
        )
    return key


MAX_SPEAKER_CHARS = 100


def checked_speaker(speaker: object, *, what: str = "speaker") -> str | None:
    """A speaker's name: one line of at most ``MAX_SPEAKER_CHARS`` characters, or None."""
    if speaker is None:
        return None
    if not isinstance(speaker, str):
        raise InvalidTypeError(f"{what} must be a str, not {type(speaker).__name__}")
    name = " ".join(speaker.split())
    if not name or len(name) > MAX_SPEAKER_CHARS:
        raise InvalidInputError(
            f"{what} must be a name of 1 to {MAX_SPEAKER_CHARS} characters, not {speaker!r}"
        )
    checked_text(name, limit=MAX_SPEAKER_CHARS, what=what)
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


def checked_int(name: str, value: object, *, low: int, high: int | None = None) -> int:
    """An int (not a bool) from ``low`` to ``high`` (no upper bound when None)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"{name} must be an int, not {type(value).__name__}")
    if high is None and value < low:
        raise InvalidInputError(f"{name} must be at least {low}, not {value}")
    if high is not None and not low <= value <= high:
        raise InvalidInputError(f"{name}={value} is out of range [{low}, {high}]")
    return value


def checked_number(name: str, value: object, *, low: float, high: float = math.inf) -> float:
    """A finite int or float (not a bool) from ``low`` to ``high``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidTypeError(f"{name} must be a number, not {type(value).__name__}")
    if not finite(value) or not low <= value <= high:
        raise InvalidInputError(f"{name}={value!r} is out of range [{low}, {high}]")
    return float(value)


def checked_bool(name: str, value: object) -> bool:
    """``value`` if it is ``True`` or ``False`` (not merely truthy: ``1`` is refused)."""
    if not isinstance(value, bool):
        raise InvalidTypeError(f"{name} must be True or False, not {type(value).__name__}")
    return value


def finite(value: float) -> bool:
    """Whether ``value`` is a finite number a float can hold (an int past 1.8e308 is not)."""
    try:
        return math.isfinite(value)
    except OverflowError:  # math.isfinite converts an int to a float first
        return False


def checked_float(name: str, value: object, *, high: float = math.inf) -> float:
    """A finite int or float (not a bool) from 0 to ``high``, as a float. Unlike
    :func:`checked_number`, a value of the wrong type is an ``InvalidInputError`` too."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not finite(value)
        or not 0 <= value <= high
    ):
        raise InvalidInputError(f"{name} must be a number in [0, {high:g}], not {value!r}")
    return float(value)


def checked_dim(name: str, value: object, *, low: int = 1) -> int:
    """The length of an embedder's vectors: an int from ``low`` to ``MAX_EMBEDDER_DIM``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(
            f"{name} must be an int from {low} to {MAX_EMBEDDER_DIM}, not {type(value).__name__}"
        )
    if not low <= value <= MAX_EMBEDDER_DIM:
        raise InvalidInputError(
            f"{name} must be from {low} to {MAX_EMBEDDER_DIM} (the length of the model's "
            f"vectors, e.g. 384), not {value}"
        )
    return value


def checked_fact(fact: object) -> FactKey | None:
    """A fact key given by a caller: a subject and a predicate, both non-empty text.

    Checked where a caller hands one in (``put_note``), not when a FactKey is built:
    FactKeys are also rebuilt from what a store holds, and reading must never refuse.
    """
    if fact is None:
        return None
    if not isinstance(fact, FactKey):
        raise InvalidTypeError("fact must be a commonplace.FactKey(subject, predicate) or None")
    for part in ("subject", "predicate"):
        value = getattr(fact, part)
        if not isinstance(value, str):
            raise InvalidTypeError(f"fact.{part} must be a str, not {type(value).__name__}")
        if not value.strip():
            raise InvalidInputError(
                f"fact.{part} is empty; name the fact, e.g. FactKey('user', 'city')"
            )
        _check_unicode(value, f"fact.{part}")
    return fact


def as_utc(when: object) -> datetime:
    """An aware UTC datetime; naive datetimes are taken to be UTC."""
    if not isinstance(when, datetime):
        raise InvalidTypeError(f"expected a datetime, not {type(when).__name__}")
    if when.tzinfo is None:
        return when.replace(tzinfo=timezone.utc)
    try:
        return when.astimezone(timezone.utc)
    except OverflowError:  # its offset pushes it past year 1 or 9999
        raise InvalidInputError(f"{when!r} has no UTC equivalent; use a time in range") from None


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


def checked_path(name: str, value: object) -> Path:
    """A file's path, as a str or an ``os.PathLike``: one the file system can be asked about."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise InvalidTypeError(f"{name} must be a str or a path, not {type(value).__name__}")
    if "\x00" in value:
        raise InvalidInputError(f"{name} contains a NUL character, which no file name can hold")
    _check_unicode(value, name)
    return Path(value)


def checked_id(name: str, value: object) -> str:
    """A record, episode or recall id: a str that can be looked up at all."""
    if not isinstance(value, str):
        raise InvalidTypeError(f"{name} must be a str, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(f"{name} {value!r} is not valid unicode; no id is") from None
    return value
