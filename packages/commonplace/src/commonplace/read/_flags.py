"""Disagreement flags: logical contradictions, not mere similarity.

Two records disagree when they state the same subject and predicate with
different values, or when one says what the other says with a negation
("the user eats meat" / "the user no longer eats meat"). A record that was
superseded by the other does not disagree with it: supersession already
settled which one holds.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from .._prefilter import Guarded, folded
from .._records import Modality, Record
from .._text import NEGATIONS, content_terms
from ._recall import Disagreement

_NEGATION = re.compile(
    r"\b(?:" + "|".join(re.escape(n) for n in sorted(NEGATIONS, key=len, reverse=True)) + r")\b\s*",
    re.IGNORECASE,
)


# "switched from vim to emacs": what it left is named, the key it changed is not
_SWITCHED = re.compile(
    r"\b(?:switched|changed|moved|converted|migrated|went)(?: over| back)? from "
    r"(?P<old>[^.;,!?]+?) to\b",
    re.IGNORECASE,
)
# most records hold no negation and no switch: a scan for the words either needs says so
# (every record a recall may show is read, most of them for the first time)
_NEGATION_GUARD = Guarded(_NEGATION)
_SWITCHED_GUARD = Guarded(_SWITCHED)


@dataclass(frozen=True, slots=True)
class _Reading:
    """What the flags need of one record, read once (the pairs are many)."""

    record: Record
    negated: bool
    switched_from: frozenset[str] | None
    switched_text: str
    # the word sets cost most of a reading: made only when a negation or a switch among
    # the records could use them (most recalls have neither)
    content: frozenset[str] = frozenset()
    terms: frozenset[str] = frozenset()


def _read(record: Record, *, words: bool) -> _Reading:
    negated_, left, old = _cheap_reading(record.text)
    if not words:
        return _Reading(record, negated_, left, old)
    return _Reading(record, negated_, left, old, *_word_reading(record.text))


@functools.lru_cache(maxsize=65_536)  # record texts come back in recall after recall
def _cheap_reading(text: str) -> tuple[bool, frozenset[str] | None, str]:
    lowered = folded(text)
    switched = _SWITCHED_GUARD.search(text, lowered)
    left = None if switched is None else (content_terms(switched.group("old")) - {"user"}) or None
    negated_ = _NEGATION_GUARD.search(text, lowered) is not None
    return negated_, left, "" if switched is None else switched.group("old").strip()


@functools.lru_cache(maxsize=65_536)
def _word_reading(text: str) -> tuple[frozenset[str], frozenset[str]]:
    return _content(text), content_terms(text)


def find_disagreements(records: Sequence[Record]) -> list[Disagreement]:
    """Every contradicting pair among ``records`` (each pair once).

    Only pairs that can disagree are compared: the same fact key, the same content with
    and without a negation, or a switch away from what another record states. So the
    cost grows with the records, not with their pairs.
    """
    statements = [r for r in records if r.tags.modality is Modality.STATEMENT]
    cheap = [_cheap_reading(r.text) for r in statements]
    # content pairs need a negated record and switches a switched one: else keys alone
    words = any(neg or left is not None for neg, left, _ in cheap)
    factual = [_read(r, words=words) for r in statements]
    groups: dict[object, list[int]] = defaultdict(list)
    for n, reading in enumerate(factual):
        if reading.record.tags.key is not None:
            groups[("key", reading.record.tags.key)].append(n)
        if reading.content:
            groups[("content", reading.content)].append(n)
    pairs = {(i, j) for members in groups.values() for i in members for j in members if i < j}
    switching = [n for n, r in enumerate(factual) if r.switched_from is not None]
    pairs |= {(min(i, j), max(i, j)) for i in switching for j in range(len(factual)) if i != j}
    out: list[Disagreement] = []
    for i, j in sorted(pairs):
        a, b = factual[i], factual[j]
        ra, rb = a.record, b.record
        if ra.id == rb.id or ra.superseded_by == rb.id or rb.superseded_by == ra.id:
            continue
        reason = _disagree(a, b)
        if reason:
            out.append(Disagreement(ra.id, rb.id, reason))
    return out


def _disagree(a: _Reading, b: _Reading) -> str | None:
    ka, kb = a.record.tags.key, b.record.tags.key
    va, vb = a.record.tags.value, b.record.tags.value
    if ka is not None and ka == kb and va and vb:
        if va.strip().lower() != vb.strip().lower():
            return f"{ka.subject}.{ka.predicate} is {va!r} in one and {vb!r} in the other"
        return None
    for new, old in ((a, b), (b, a)):
        left = new.switched_from
        if left is not None and old.switched_from is None and left <= old.terms:
            return f"one says it switched from {new.switched_text}"
    if a.negated != b.negated and a.content and a.content == b.content:
        return "one negates the other"
    return None


def _content(text: str) -> frozenset[str]:
    return frozenset(content_terms(_NEGATION.sub("", text.lower())) - {"user"})


def negated(text: str) -> bool:
    """Whether ``text`` says something with a negation."""
    return _NEGATION_GUARD.search(text, folded(text)) is not None
