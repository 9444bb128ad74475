"""Injectable time: every rule that depends on time reads it from a clock."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from typing import Protocol, runtime_checkable

from ._validate import EARLIEST, LATEST, checked_time
from ._validate import as_utc as as_utc
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
    """A clock that only moves when told to: for tests, demos and simulations.

    It holds only times a store accepts (``checked_time``): a clock set outside them
    would make every later call refuse, so it is refused when set instead.
    """

    def __init__(self, start: datetime) -> None:
        self._now = checked_time("start", start)

    def now(self) -> datetime:
        return self._now

    def set(self, when: datetime) -> None:
        self._now = checked_time("when", when)

    def advance(
        self, *, days: float = 0, hours: float = 0, minutes: float = 0, seconds: float = 0
    ) -> datetime:
        steps = {"days": days, "hours": hours, "minutes": minutes, "seconds": seconds}
        for name, amount in steps.items():
            if isinstance(amount, bool) or not isinstance(amount, (int, float)):
                raise InvalidTypeError(f"{name} must be a number, not {type(amount).__name__}")
            if isinstance(amount, float) and not math.isfinite(amount):
                raise InvalidInputError(f"{name} must be a finite number, not {amount!r}")
        try:
            self._now = checked_time("now", self._now + timedelta(**steps))
        except (OverflowError, InvalidInputError):  # past a datetime's or a store's limits
            shown = ", ".join(f"{k}={v!r}" for k, v in steps.items() if v)
            raise InvalidInputError(
                f"advancing the clock from {self._now:%Y-%m-%d} by {shown} leaves the times a "
                f"store accepts ({EARLIEST:%Y} to {LATEST:%Y}, UTC); advance it by less"
            ) from None
        return self._now


def to_epoch(when: datetime) -> float:
    return as_utc(when).timestamp()


def from_epoch(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)
