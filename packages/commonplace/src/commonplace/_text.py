"""Words: the tokenizer, stop words and light stemmer that every lexical part shares.

The hashing embedder, the keyword signal and the feedback inference all see
text through these functions, so "moved", "moves" and "moving" are one word to
all of them.
"""

from __future__ import annotations

import functools
import re
from typing import cast

# How much of a turn the write path reads: the note writer's rules and the text a note
# is embedded from. A note keeps at most 50 words and the embedders read the first few
# hundred tokens, so the rest of a very long turn (a pasted log, a chapter) could change
# nothing but the time, which grows with the text to tens of seconds for megabytes. The
# episode keeps the whole turn.
MAX_READ_CHARS = 8_000


def head(text: str) -> str:
    """The part of a turn the write path reads: all of it, or its first
    ``MAX_READ_CHARS`` characters cut after the last sentence end (or space) they hold."""
    if len(text) <= MAX_READ_CHARS:
        return text
    start = text[:MAX_READ_CHARS]
    cut = max(start.rfind(". "), start.rfind("! "), start.rfind("? "), start.rfind("\n"))
    if cut < MAX_READ_CHARS // 2:
        cut = start.rfind(" ")
    return start[: cut + 1] if cut > 0 else start


# a word, apostrophes inside it included ("don't", "Ana's"); a token: letters and digits only
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
# what says a statement does not hold ("not", "no longer"): the writer's negated emotions
# and the read path's disagreement flags both read it from here
NEGATIONS = (
    "not",
    "no longer",
    "never",
    "no",
    "don't",
    "doesn't",
    "didn't",
    "isn't",
    "aren't",
    "wasn't",
    "weren't",
    "won't",
    "can't",
    "cannot",
    "hardly",
)
STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is am are was were be been
    being it its this that these those i me my mine we our you your he him his she her they
    them their do does did so than then there here what which who whom how when where why
    not no yes just very really can could would should will shall may might must have has
    had about into over under up down out off again also too s t doing done after before
    during ever lately days day thing things something anything tell know remember think
    going go one any some all more most much many well back""".split()
)


# where a turn breaks into sentences: after end punctuation (not after "Dr." or "e.g."),
# at a spaced dash, at a line break. The end punctuation is looked for first: the
# abbreviations' look-behinds then run only where it is, not at every position.
_SENTENCE_BREAK = re.compile(
    r"(?<=[.!?])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bSt\.)(?<!\bProf\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)"
    r"\s+(?=[\w\"'“(])|\s+[—–]\s+|\s+-{1,2}\s+|\n+"
)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` that hold a word, stripped (``[text]`` when none does)."""
    return [s.strip() for s in _SENTENCE_BREAK.split(text) if s and WORD.search(s)] or [text]


def stem(word: str) -> str:
    """A deliberately light stemmer: 'live', 'lives', 'lived', 'living' -> 'liv'."""
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "zes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ingly", "edly", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def content_terms(text: str) -> frozenset[str]:
    """The stemmed words of ``text`` that are not stop words."""
    return _content_terms(text)


@functools.lru_cache(maxsize=65_536)  # record texts come back in recall after recall
def _content_terms(text: str) -> frozenset[str]:
    # mapped, not generated: a recall reads dozens of texts it has not met before
    terms = set(map(_term, WORD.findall(text.lower())))
    terms.discard(None)
    return frozenset(cast("set[str]", terms))  # its None is discarded


@functools.lru_cache(maxsize=65_536)  # a store's texts are many, its words far fewer
def _term(word: str) -> str | None:
    """A lower-cased word's stemmed term, or None for a stop word."""
    folded = _folded(word)
    return None if folded in STOPWORDS else stem(folded)


def _folded(word: str) -> str:
    """A lower-cased word as terms compare it: one apostrophe, no possessive."""
    return word.replace("’", "'").removesuffix("'s")


def keyword_coverage(query: str, document: str) -> float:
    """The share of the query's content terms that ``document`` contains, in [0, 1]."""
    wanted = content_terms(query)
    if not wanted:
        return 0.0
    return len(wanted & content_terms(document)) / len(wanted)


def missing_words(source: str, kept: str, *, limit: int) -> str:
    """The content words of ``source`` whose stems ``kept`` lacks: in order, each once, at
    most ``limit``, lower-cased and space-separated."""
    have = content_terms(kept)
    out: list[str] = []
    seen: set[str] = set()
    for word in WORD.findall(head(source).lower()):
        stemmed = _term(word)  # cached: None for a stop word
        if stemmed is None or stemmed in have or stemmed in seen:
            continue
        seen.add(stemmed)
        out.append(_folded(word))
        if len(out) == limit:
            break
    return " ".join(out)
