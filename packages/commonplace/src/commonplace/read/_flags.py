"""Disagreement flags: logical contradictions, not mere similarity.

Two records disagree when they state the same subject and predicate with
different values, or when one says what the other says with a negation
("the user eats meat" / "the user no longer eats meat"). A record that was
superseded by the other does not disagree with it: supersession already
settled which one holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .._records import Modality, Record
from .._text import content_terms
from ._recall import Disagreement

_NEGATION = re.compile(
    r"\b(?:not|no longer|never|don't|doesn't|didn't|isn't|aren't|wasn't|won't|can't|"
    r"cannot|no)\b\s*",
    re.IGNORECASE,
)


# "switched from vim to emacs": what it left is named, the key it changed is not
_SWITCHED = re.compile(
    r"\b(?:switched|changed|moved|converted|migrated|went)(?: over| back)? from (?P<old>[^.;,!?]+?) to\b",
    re.IGNORECASE,
)


def find_disagreements(records: Sequence[Record]) -> list[Disagreement]:
    """Every contradicting pair among ``records`` (each pair once)."""
    out: list[Disagreement] = []
    factual = [r for r in records if r.tags.modality is Modality.STATEMENT]
    for i, a in enumerate(factual):
        for b in factual[i + 1 :]:
            if a.id == b.id or a.superseded_by == b.id or b.superseded_by == a.id:
                continue
            reason = _disagree(a, b)
            if reason:
                out.append(Disagreement(a.id, b.id, reason))
    return out


def _disagree(a: Record, b: Record) -> str | None:
    ka, kb = a.tags.key, b.tags.key
    if ka is not None and ka == kb and a.tags.value and b.tags.value:
        if a.tags.value.strip().lower() != b.tags.value.strip().lower():
            return (
                f"{ka.subject}.{ka.predicate} is {a.tags.value!r} in one and "
                f"{b.tags.value!r} in the other"
            )
        return None
    for new, old in ((a, b), (b, a)):
        switched = _SWITCHED.search(new.text)
        if switched is None or _SWITCHED.search(old.text):
            continue
        left = content_terms(switched.group("old")) - {"user"}
        if left and left <= content_terms(old.text):
            return f"one says it switched from {switched.group('old').strip()}"
    neg_a, neg_b = negated(a.text), negated(b.text)
    if neg_a != neg_b and _content(a.text) == _content(b.text) and _content(a.text):
        return "one negates the other"
    return None


def _content(text: str) -> frozenset[str]:
    return frozenset(content_terms(_NEGATION.sub("", text.lower())) - {"user"})


def negated(text: str) -> bool:
    """Whether ``text`` says something with a negation."""
    return bool(_NEGATION.search(text))
