"""Use feedback: which recalled records an answer actually used.

Explicit feedback names the records. The automatic mode reads the
assistant's reply: a record counts as used when the reply repeats its
distinctive words (its fact value, the entities it names, or enough of its
rarer content words). It errs on the side of "ignored", since a false "used"
would promote a record that did not earn it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from .._records import Record
from .._text import TOKEN
from ..stores import RecallLog, Store

_COMMON = frozenset(
    """the a an and or but of to in on at by for with from as is am are was were be been the
    user user's users has have had do does did this that it its they them their he she his
    her you your i me my we our not no yes so than then there here what which who how when
    where why asks jokes wonders hypothetically refers said assistant""".split()
)
_MIN_SHARED = 2
_CO_USE_DELTA = 0.2
_MIN_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class Feedback:
    """What a feedback call recorded."""

    recall_id: str
    used: tuple[str, ...]
    ignored: tuple[str, ...]
    already_given: bool = False


def infer_used(reply: str, records: Sequence[Record]) -> list[str]:
    """Ids of the records ``reply`` draws on."""
    reply_words = _content(reply)
    lowered = reply.lower()
    used = []
    for record in records:
        value = (record.tags.value or "").lower()
        names = [e.lower() for e in record.tags.entities if len(e) > 2]
        if value and len(value) > 1 and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", lowered):
            used.append(record.id)
            continue
        words = _content(record.text)
        shared = words & reply_words
        named = any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", lowered) for n in names)
        if (
            words
            and len(shared) >= _MIN_SHARED
            and (named or len(shared) / len(words) >= _MIN_SHARE)
        ):
            used.append(record.id)
    return used


def _content(text: str) -> set[str]:
    return {w for w in TOKEN.findall(text.lower()) if w not in _COMMON and len(w) > 2}


def apply_feedback(
    backend: Store, log: RecallLog, used: Sequence[str], *, now: datetime
) -> Feedback:
    """Record which records of a recall were used, once per recall.

    Used records get stronger (frequency, recency, promotion to hot) and are linked to
    each other; only what the search put forward can be "ignored": recent notes and hot
    records are shown every time, and not using them says nothing against them.
    """
    if not backend.books.mark_recall_feedback(log.id, at=now):
        return Feedback(log.id, (), (), already_given=True)
    ignored = [i for i in log.item_ids if i not in used]
    backend.books.record_feedback(used=used, ignored=ignored, at=now)
    pairs = [(a, b, "co_used") for n, a in enumerate(used) for b in used[n + 1 :]]
    if pairs:
        backend.links.reinforce_links(pairs, delta=_CO_USE_DELTA, at=now)
    return Feedback(log.id, tuple(used), tuple(ignored))
