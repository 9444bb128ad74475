"""Excerpts: what a note's own turn says about the question that the note does not.

A note is compact, and a rule writer drops clauses. The note's vector is its turn's
embedding, so a question that matches what was said finds the note even when the
note lost the words; the context then shows, beside the note, the sentence of the
turn that holds the question's words the note lacks, quoted and short. One excerpt
per turn (a merged note shares its turns), for the best three notes only: an excerpt
costs budget that other notes could use (on LoCoMo, eight cost 0.006 of evidence, three
0.004, for the same gain in answer words).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .._records import Episode, Record
from .._text import WORD, content_terms, head, sentences

EXCERPT_NOTES = 3
"""How many of the best relevant notes may carry an excerpt."""

MAX_EXCERPT_WORDS = 30
"""An excerpt is one sentence, or this many of its words around what the question asks."""

MAX_TURNS_PER_NOTE = 3
"""A note's excerpt comes from one of its last this many turns (a merged note has several)."""
_LEAD_WORDS = 8  # words kept before the first one the note lacks


def excerpts_for(
    query: str,
    records: Iterable[Record],
    episode_of: Callable[[str], Episode | None],
) -> dict[str, str]:
    """The excerpt to show with each of ``records`` (best first) that needs one, by id.

    A note needs one when a turn it was written from holds content words of the query
    that the note's text lacks; the excerpt is that turn's sentence holding the most of
    them. A turn already excerpted for a better note is not quoted again.
    """
    wanted = content_terms(query)
    if not wanted:
        return {}
    out: dict[str, str] = {}
    quoted: set[str] = set()
    for record in records:
        missing = wanted - content_terms(record.text)
        if not missing:
            continue
        for episode_id in record.provenance[-MAX_TURNS_PER_NOTE:]:
            if episode_id in quoted:
                continue
            episode = episode_of(episode_id)
            if episode is None:
                continue
            quoted.add(episode_id)
            sentence = _best_sentence(episode.text, wanted, missing)
            if sentence is not None:
                out[record.id] = sentence
                break
    return out


def _best_sentence(text: str, wanted: frozenset[str], missing: frozenset[str]) -> str | None:
    best: str | None = None
    best_key = (0, 0)
    for sentence in sentences(head(text)):
        terms = content_terms(sentence)
        key = (len(terms & missing), len(terms & wanted))
        if key[0] and key > best_key:
            best, best_key = sentence, key
    return None if best is None else _clip(best, missing)


def _clip(sentence: str, missing: frozenset[str]) -> str:
    """The sentence, or a window of it that starts a little before the first word the
    note lacks, marked with an ellipsis where it was cut."""
    words = list(WORD.finditer(sentence))
    if len(words) <= MAX_EXCERPT_WORDS:
        return sentence
    first = next(n for n, w in enumerate(words) if content_terms(w.group()) & missing)
    start = max(0, min(first - _LEAD_WORDS, len(words) - MAX_EXCERPT_WORDS))
    end = start + MAX_EXCERPT_WORDS
    text = sentence[words[start].start() : words[end - 1].end()]
    return ("… " if start else "") + text + (" …" if end < len(words) else "")
