"""Rewriting a sentence about its speaker in the present tense: "I moved" -> "the user moved".

First-person pronouns become the speaker ("the user", or a named speaker such as
"Caroline"), and the verb after a first-person subject is conjugated for the third person
("I live" -> "the user lives", "I no longer eat" -> "the user no longer eats"). Past tenses
and modal verbs are left as they are.
"""

from __future__ import annotations

import re

from . import _lexicon as lex

_PRONOUNS = {
    "i": "the user",
    "me": "the user",
    "my": "the user's",
    "mine": "the user's",
    "myself": "themself",
    "i'm": "the user is",
    "im": "the user is",
    "i've": "the user has",
    "i'll": "the user will",
    "i'd": "the user would",
    "we": "the user",
    "our": "the user's",
    "us": "the user",
    "we're": "the user is",
    "we've": "the user has",
    "we'll": "the user will",
    "ours": "the user's",
}
_IRREGULAR = {
    "am": "is",
    "have": "has",
    "do": "does",
    "go": "goes",
    "was": "was",
    "can": "can",
    "will": "will",
    "would": "would",
    "could": "could",
    "should": "should",
    "might": "might",
    "must": "must",
    "may": "may",
    "did": "did",
    "had": "had",
    "don't": "doesn't",
    "can't": "can't",
    "won't": "won't",
    "didn't": "didn't",
    "wasn't": "wasn't",
    "haven't": "hasn't",
    "got": "got",
    "shall": "shall",
}
_PAST_TENSE = frozenset(lex.PAST_TENSE)
_ADVERBS = frozenset(
    [
        "just",
        "also",
        "still",
        "never",
        "always",
        "often",
        "usually",
        "really",
        "actually",
        "finally",
        "now",
        "sometimes",
        "recently",
        "already",
        "kinda",
        "last",
        "first",
        "once",
        "no",
        "longer",
    ]
)


_TOKENS = re.compile(r"[\w'’]+|[^\w\s]+|\s+")


def is_wordlike(token: str) -> bool:
    """Whether a token starts as a word does: ``re.match(r"[\\w']", token)``, without a
    regular expression (for a str pattern, \\w is what ``str.isalnum`` holds, and "_")."""
    first = token[:1]
    return first.isalnum() or first == "_" or first == "'"


_CLAUSE_BREAK = re.compile(r"[,.;:!?]")
_ES_ENDING = re.compile(r"(sh|ch|ss|x|z|o)$")
_Y_ENDING = re.compile(r"[^aeiou]y$")


def third_person(text: str, who: str = "the user") -> str:
    tokens = _TOKENS.findall(text)
    out: list[str] = []
    conjugate_next = False
    subject_seen = False  # a clause that already has "I" joins clauses with "and I"
    previous = ""
    for token in tokens:
        if not is_wordlike(token):  # spaces, punctuation, a "’s" on its own
            out.append(token)
            if _CLAUSE_BREAK.search(token):
                subject_seen = False
            continue
        word = token.lower().replace("’", "'")
        if word in _PRONOUNS:
            out.append(_PRONOUNS[word].replace("the user", who))
            subject = word in ("i", "we")
            # "my brother and I haven't": a plural subject keeps its verb
            conjugate_next = subject and not (previous == "and" and not subject_seen)
            subject_seen = subject_seen or subject or word in ("i'm", "im", "i've", "i'll", "i'd")
            previous = word
            continue
        previous = word
        if conjugate_next:
            if word in _ADVERBS:
                out.append(token)
                continue
            out.append(_conjugate(token))
            conjugate_next = False
            continue
        out.append(token)
    return "".join(out)


def _conjugate(verb: str) -> str:
    lowered = verb.lower().replace("’", "'")
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    if lowered in _PAST_TENSE or not lowered.isalpha() or lowered.endswith("ed"):
        return verb
    if lowered.endswith("s") and not lowered.endswith("ss"):
        return verb
    if _ES_ENDING.search(lowered):
        return verb + "es"
    if _Y_ENDING.search(lowered):
        return verb[:-1] + "ies"
    return verb + "s"


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]
