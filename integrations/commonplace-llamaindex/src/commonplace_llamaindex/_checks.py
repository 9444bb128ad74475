"""Option checks that fail with commonplace's errors and say how to fix the call."""

from __future__ import annotations

from commonplace.errors import InvalidInputError, InvalidTypeError


def check_int(name: str, value: object, *, low: int, high: int | None = None) -> int:
    """An int within bounds, or an error saying which option is wrong and why."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < low or (high is not None and value > high):
        bound = f"at least {low}" if high is None else f"in [{low}, {high}]"
        raise InvalidInputError(f"{name}={value} must be {bound}")
    return value


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidTypeError(f"{name} must be a bool, not {type(value).__name__}")
    return value
