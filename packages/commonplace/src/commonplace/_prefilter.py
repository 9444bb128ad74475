"""Literal pre-checks that skip regular expressions that cannot match: the note writer's
patterns, and the negations and switches the disagreement flags look for in every record a
recall may show.

Python's ``re`` tries a pattern at every position of a text, and a pattern of many
alternatives tries each of them at each position: the rule writer's few dozen patterns
cost most of a turn's time though most of them match nothing. Nearly every one of them
can only match a text holding some literal word ("died", "laid off", "my "), and ``in``
finds a word in a str far faster than a regular expression scans it.

:func:`needles` reads those words from a compiled pattern's parse tree: a set of strings
one of which every match contains. A pattern whose text holds none of its needles cannot
match, so it is not run; otherwise it runs as before (:class:`GuardedRules` checks the
needles of many patterns tried on one text in a single pass). Nothing is ever decided by a
needle, so the writer's output is the same with and without the checks (a test runs both
on generated text).

Needles are lower case and are looked for in :func:`folded` text, which holds, lower
cased, every literal that a match (case-sensitive or not) takes from the text.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

Needles = tuple[str, ...]

# The non-ASCII characters that re.IGNORECASE matches to an ASCII letter ("ſ" to "s", the
# Kelvin sign to "k", "İ" and "ı" to "i"); str.lower() leaves them different (or, for
# "İ", two characters), so they are mapped before lower-casing. A test checks the list
# against every code point.
ASCII_TWINS = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}
# Compiled subsets of a pattern's alternatives, per Alternation: turns name few
# combinations of needles, so a small bound is plenty.
_SUBSETS_CACHED = 256


def folded(text: str) -> str:
    """``text`` as needles are looked for in it: lower-cased, the ASCII twins mapped."""
    return text.lower() if text.isascii() else text.translate(ASCII_TWINS).lower()


def _parser() -> Any:
    """The standard library's regular-expression parser (``re._parser`` since 3.11,
    ``sre_parse`` before; importing the old name warns on 3.11 and later)."""
    try:
        return importlib.import_module("re._parser")
    except ImportError:  # pragma: no cover - Python 3.10
        return importlib.import_module("sre_parse")


def needles(pattern: re.Pattern[str]) -> Needles | None:
    """Lower-case strings, one of which the folded text of every match of ``pattern``
    contains; None when the pattern has no such literal (or cannot be read)."""
    try:
        tree = _parser().parse(pattern.pattern, pattern.flags)
    except Exception:
        return None
    return _sequence(list(tree))


def _sequence(items: Sequence[tuple[Any, Any]]) -> Needles | None:
    """What a sequence of nodes needs: the most selective need of any one of its parts (a
    run of literals, a group, a branch), as every part must match."""
    best: Needles | None = None
    for need in _needs(items):
        if best is None or _selectivity(need) > _selectivity(best):
            best = need
    return best


def _needs(items: Sequence[tuple[Any, Any]]) -> Iterator[Needles]:
    run: list[str] = []
    for op, value in items:
        name = getattr(op, "name", str(op))
        if name == "LITERAL" and value < 128:
            run.append(chr(value).lower())
            continue
        if run:
            yield ("".join(run),)
            run = []
        need = _node(name, value)
        if need is not None:
            yield need
    if run:
        yield ("".join(run),)


def _node(name: str, value: Any) -> Needles | None:
    if name == "SUBPATTERN":  # (group, add_flags, del_flags, pattern)
        return _sequence(list(value[-1]))
    if name == "ATOMIC_GROUP":
        return _sequence(list(value))
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):  # (min, max, pattern)
        return _sequence(list(value[2])) if value[0] >= 1 else None
    if name == "BRANCH":  # (None, [pattern, ...]): any branch may match, so any need may
        found: list[str] = []
        for branch in value[1]:
            need = _sequence(list(branch))
            if need is None:
                return None
            found += need
        return _minimal(found)
    return None  # a class, an assertion, a back-reference: no literal it must hold


def _minimal(strings: Iterable[str]) -> Needles:
    """The strings without those that contain another (whose presence that one implies)."""
    unique = sorted(set(strings), key=len)
    kept: list[str] = []
    for s in unique:
        if not any(k in s for k in kept):
            kept.append(s)
    return tuple(kept)


def _selectivity(need: Needles) -> tuple[int, int]:
    """Longer needles are rarer in text; fewer of them are quicker to test."""
    return min(len(n) for n in need), -len(need)


class Guarded:
    """A compiled pattern and its needles."""

    __slots__ = ("needles", "pattern")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.needles = needles(pattern)

    def possible(self, folded_text: str) -> bool:
        """False when the pattern cannot match the text ``folded_text`` was folded from
        (nor any part of that text)."""
        # map over a bound method: no Python frame per needle, unlike a generator
        return self.needles is None or any(map(folded_text.__contains__, self.needles))

    def search(self, text: str, folded_text: str) -> re.Match[str] | None:
        """``pattern.search(text)``; ``folded_text`` is ``folded(text)``."""
        return self.pattern.search(text) if self.possible(folded_text) else None


class GuardedRules:
    """Guarded patterns tried in turn on the same text: which of them may match it, with
    one pass over all their needles.

    The writer tries its fact rules one after the other on each sentence, and checking
    each rule's needles on its own cost more than the rules' few matches (a method call
    and a ``map`` per rule): one comprehension over every rule's needles finds the rules
    to run at a third of the cost.
    """

    __slots__ = ("_always", "_needles", "guards")

    def __init__(self, guards: Sequence[Guarded]) -> None:
        self.guards = tuple(guards)
        # every rule's needles in one flat list, each with the rule it is for
        self._needles = tuple((n, i) for i, g in enumerate(self.guards) for n in g.needles or ())
        self._always = frozenset(i for i, g in enumerate(self.guards) if g.needles is None)

    def possible(self, folded_text: str) -> list[int]:
        """The positions of the rules that may match the text ``folded_text`` was folded
        from, in order: each of the others is one whose ``possible`` is False."""
        return sorted({i for n, i in self._needles if n in folded_text} | self._always)


class Alternation:
    """``(?P<name>alternative)|...`` compiled with only the alternatives a text may match.

    An alternative whose needles a text lacks fails at every position, so leaving it out
    changes no match (the group names stay, so ``lastgroup`` still tells which matched).
    """

    def __init__(self, alternatives: Sequence[tuple[str, str]], flags: int = 0) -> None:
        self._alternatives = tuple(alternatives)
        self._flags = flags
        guards = [Guarded(re.compile(a, flags)) for _, a in self._alternatives]
        # every alternative's needles in one flat list, each with the alternative it is for
        self._needles = tuple((n, i) for i, g in enumerate(guards) for n in g.needles or ())
        self._always = frozenset(i for i, g in enumerate(guards) if g.needles is None)
        self._any = tuple(dict.fromkeys(n for n, _ in self._needles))
        self.pattern = self._compile(tuple(range(len(self._alternatives))))
        self._subset: Callable[[tuple[int, ...]], re.Pattern[str]] = functools.lru_cache(
            maxsize=_SUBSETS_CACHED
        )(self._compile)

    def _compile(self, which: tuple[int, ...]) -> re.Pattern[str]:
        return re.compile(
            "|".join(f"(?P<{self._alternatives[i][0]}>{self._alternatives[i][1]})" for i in which),
            self._flags,
        )

    def narrowed(self, folded_text: str) -> re.Pattern[str] | None:
        """The pattern to run on the text ``folded_text`` was folded from, or None when no
        alternative can match it."""
        if not self._always and not any(map(folded_text.__contains__, self._any)):
            return None  # most texts hold none: one pass in C says so
        found = {i for n, i in self._needles if n in folded_text}
        which = tuple(sorted(found | self._always))
        if len(which) == len(self._alternatives):
            return self.pattern
        return self._subset(which)
