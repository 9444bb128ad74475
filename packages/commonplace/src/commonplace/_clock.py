"""Injectable time: every rule that depends on time reads it from a clock."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Protocol, runtime_checkable

from .errors import InvalidInputError, InvalidTypeError


@runtime_checkable
class Clock(Protocol):
    """Anything with a ``now()`` returning an aware UTC datetime."""

    def now(self) -> datetime: ...


class SystemClock:
    """The wall clock, in UTC."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)


class ManualClock:
    """A clock that only moves when told to: for tests, demos and simulations."""

    def __init__(self, start: datetime) -> None:
        self._now = as_utc(start)

    def now(self) -> datetime:
        return self._now

    def set(self, when: datetime) -> None:
        self._now = as_utc(when)

    def advance(
        self, *, days: float = 0, hours: float = 0, minutes: float = 0, seconds: float = 0
    ) -> datetime:
        self._now += timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)
        return self._now


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


def to_epoch(when: datetime) -> float:
    return as_utc(when).timestamp()


def from_epoch(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)
