"""Progress bars for the long jobs (re-embed, copy, migrate, consolidation over every scope,
the benchmarks): one policy, kept here so every job behaves the same.

A job takes ``progress: bool | None``. ``True`` draws a bar, ``False`` draws none, and
``None`` (the default) draws one only when stderr is a terminal, so a job whose output is
piped, captured by a test or read as JSON prints nothing extra. The bar always goes to
stderr, never to stdout, where a command's report (or its JSON) goes. Drawing is tqdm's.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sized
from contextlib import contextmanager
from types import TracebackType
from typing import IO, Any, TypeVar

from .errors import InvalidTypeError

T = TypeVar("T")

PartCounter = Callable[[str, int], None]
"""What a job that goes part by part (a copy, a migration) can tell instead of drawing a
bar: called with the part's name and how many of it are done so far."""


def checked_progress(progress: object) -> bool | None:
    """``progress`` itself when it is True, False or None; an error otherwise."""
    if progress is not None and not isinstance(progress, bool):
        raise InvalidTypeError(
            "progress must be True (a bar on stderr), False (none) or None (a bar only "
            f"when stderr is a terminal), not {type(progress).__name__}"
        )
    return progress


def shows_progress(progress: bool | None, stream: IO[str] | None = None) -> bool:
    """Whether a job asked for ``progress`` draws a bar on ``stream`` (default stderr)."""
    if checked_progress(progress) is not None:
        return bool(progress)
    out = sys.stderr if stream is None else stream
    isatty = getattr(out, "isatty", None)
    if not callable(isatty):
        return False
    try:
        return bool(isatty())
    except (OSError, ValueError):  # a closed or detached stream is no terminal
        return False


class ProgressBar:
    """A bar on stderr drawn by tqdm, or nothing at all when the policy says none.

    Use it as a context manager (the bar is closed, its last state drawn, on the way out)
    and call :meth:`update` as the job goes.
    """

    def __init__(
        self,
        *,
        desc: str,
        unit: str,
        total: int | None = None,
        initial: int = 0,
        progress: bool | None = None,
        stream: IO[str] | None = None,
    ) -> None:
        out = sys.stderr if stream is None else stream
        self._bar: Any = None
        if shows_progress(progress, out):
            from tqdm import tqdm  # type: ignore[import-untyped,unused-ignore]

            self._bar = tqdm(
                total=total,
                initial=initial,
                desc=desc,
                unit=unit,
                file=out,
                disable=False,  # the policy above decided; tqdm is not asked again
                **_unsized(out),
            )

    @property
    def shown(self) -> bool:
        """Whether a bar is drawn."""
        return self._bar is not None

    def update(self, n: int = 1) -> None:
        """``n`` more items done."""
        if self._bar is not None:
            self._bar.update(n)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Lift the bar off the terminal while the caller prints a line of its own to the
        same stream, then draw it again below."""
        if self._bar is None:
            yield
            return
        self._bar.clear()
        try:
            yield
        finally:
            self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def _unsized(out: IO[str]) -> dict[str, int]:
    """What to tell tqdm of a terminal that reports no size (a pseudo-terminal nobody
    sized): tqdm takes zero rows and columns at their word and draws an empty line."""
    try:
        size = os.get_terminal_size(out.fileno())
    except (AttributeError, OSError, ValueError):  # not a real file: tqdm's own guess
        return {}
    fixed = {"ncols": 80} if size.columns <= 0 else {}
    return {**fixed, "nrows": 24} if size.lines <= 0 else fixed


def track(
    items: Iterable[T],
    *,
    desc: str,
    unit: str,
    total: int | None = None,
    progress: bool | None = None,
    stream: IO[str] | None = None,
) -> Iterator[T]:
    """``items`` one by one, counted on a bar as each is finished with (when the caller
    asks for the next). ``total`` defaults to ``len(items)`` when it has one."""
    checked_progress(progress)  # now, not at the first item
    if total is None and isinstance(items, Sized):
        total = len(items)
    return _tracked(items, desc, unit, total, progress, stream)


def _tracked(
    items: Iterable[T],
    desc: str,
    unit: str,
    total: int | None,
    progress: bool | None,
    stream: IO[str] | None,
) -> Iterator[T]:
    with ProgressBar(desc=desc, unit=unit, total=total, progress=progress, stream=stream) as bar:
        for item in items:
            yield item
            bar.update()
