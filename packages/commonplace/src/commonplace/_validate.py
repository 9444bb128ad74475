"""Validation of what callers pass in: refuse early, with a message that says how to fix it.

Every public entry point validates all of its arguments before it touches the
store, so a refused call changes nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ._records import Role
from .errors import InvalidInputError, InvalidTypeError

MAX_META_CHARS = 65_536


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


def checked_float(name: str, value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise InvalidInputError(f"{name} must be a non-negative number, not {value!r}")
    return float(value)
