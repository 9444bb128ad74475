"""Rewriting a sentence about its speaker in the third person: "I moved" -> "Maya moved".

First-person pronouns become the speaker ("the user", or a named speaker such as
"Caroline"), and the verb after a first-person subject is conjugated ("I live" -> "the
user lives", "I no longer eat" -> "the user no longer eats"). Past tenses and modal verbs
stay as they are.

A rewrite is made only where it is sure to be right, and refused (``None``) where it is
not, so that the note keeps the speaker's own words instead: a word after "I" that is
not a known verb ("I def love it" would become "Maya defs love it"), "us" and "let's",
"our" before what is not the speaker's alone ("our army", "our dreams"), and "you" (the
listener, whom the note would not name). "We" is rewritten as the speaker: "we moved to
Porto" is true of them too.
"""

from __future__ import annotations

import re

from . import _lexicon as lex
from ._verbs import (
    ADVERBS,
    BASE_VERBS,
    INFORMAL,
    IRREGULAR_THIRD_PERSON,
    LY_VERBS,
    PAST_FORMS,
    UNCHANGED_AFTER_SUBJECT,
)

# pronoun -> (its rewrite, whether it is a subject whose verb follows)
_PRONOUNS = {
    "i": ("{who}", True),
    "me": ("{who}", False),
    "my": ("{who}'s", False),
    "mine": ("{who}'s", False),
    "myself": ("themself", False),
    "i'm": ("{who} is", False),
    "im": ("{who} is", False),
    "i've": ("{who} has", False),
    "i'll": ("{who} will", False),
    "i'd": ("{who} would", False),
    # "we moved to Porto" is true of the speaker too
    "we": ("{who}", True),
    "we're": ("{who} is", False),
    "we've": ("{who} has", False),
    "we'll": ("{who} will", False),
    "we'd": ("{who} would", False),
}
_PAST = frozenset(PAST_FORMS)
_TOKENS = re.compile(r"[\w'’]+|[^\w\s]+|\s+")
_INFORMAL = re.compile(
    r"(?<![\w'’])(?:" + "|".join(re.escape(w) for w in INFORMAL) + r")(?![\w'’])", re.IGNORECASE
)


def is_wordlike(token: str) -> bool:
    """Whether a token starts as a word does: ``re.match(r"[\\w']", token)``, without a
    regular expression (for a str pattern, \\w is what ``str.isalnum`` holds, and "_")."""
    first = token[:1]
    return first.isalnum() or first == "_" or first == "'"


_ES_ENDING = re.compile(r"(sh|ch|ss|x|z|o)$")
_Y_ENDING = re.compile(r"[^aeiou]y$")


def formal(text: str) -> str:
    """``text`` with its informal forms written out: "gonna" -> "going to"."""
    return _INFORMAL.sub(lambda m: INFORMAL[m.group(0).lower().replace("’", "'")], text)


def third_person(text: str, who: str = "the user") -> str | None:
    """``text`` about ``who`` in the third person, or None when the rewrite cannot be
    trusted to be grammatical and about the right person."""
    tokens = _TOKENS.findall(formal(text))
    words = [t.lower().replace("’", "'") for t in tokens]
    out: list[str] = []
    conjugate = False  # the word before was a first-person subject
    for n, (token, word) in enumerate(zip(tokens, words)):
        if not is_wordlike(token):  # spaces, punctuation, a "’s" on its own
            out.append(token)
            continue
        if word in lex.SECOND_PERSON_WORDS or word in _PLURAL_FIRST_PERSON:
            return None
        if word in ("our", "ours"):
            # "our kids" are Maya's, "our army" and "our last chat" are not hers alone
            if _owned_noun(words, n) in lex.SHARED_WORDS:
                return None
            out.append(f"{who}'s")
            continue
        if word == "we" and _next_word(words, n) in _TALKING:
            return None  # "since we talked": the two who talk, not the speaker alone
        if word in _PRONOUNS:
            rewrite, subject = _PRONOUNS[word]
            out.append(rewrite.format(who=who))
            # "my brother and I haven't": a plural subject keeps its verb ("..., and I
            # want" is a clause of its own)
            conjugate = subject and not _with_someone(tokens, n)
            continue
        if conjugate:
            if word in ADVERBS or (word.endswith("ly") and word not in LY_VERBS):
                out.append(token)
                continue
            verb = _conjugated(token, word)
            if verb is None:
                return None
            out.append(verb)
            conjugate = False
            continue
        out.append(token)
    return "".join(out)


# "it brings us closer", "we all", "let's": the others cannot be left out of the note
_PLURAL_FIRST_PERSON = frozenset("us ourselves let's".split())


def _next_word(words: list[str], n: int) -> str:
    return next((w for w in words[n + 1 :] if is_wordlike(w)), "")


_TALKING = frozenset("talked spoke chatted met caught texted last hung spoken".split())


def _owned_noun(words: list[str], n: int) -> str:
    """The noun an "our" at ``n`` owns, past the words that describe it ("our last chat")."""
    after = (w for w in words[n + 1 :] if is_wordlike(w))
    return next((w for w in after if w not in _DESCRIBING), "")


_DESCRIBING = frozenset("last first next new old little big whole very dear".split())


def _with_someone(tokens: list[str], n: int) -> bool:
    """Whether the "I" at ``n`` ends a subject of several: "my brother and I", "Joana and I"
    (the word before "and" names someone), not "..., and I want"."""
    before = [t for t in tokens[:n] if is_wordlike(t)]
    if len(before) < 2 or before[-1].lower() != "and":
        return False
    named = before[-2]
    return named.lower().replace("’", "'") in _PEOPLE or named[:1].isupper()


_PEOPLE = (
    frozenset(lex.KIN_WORDS)
    | frozenset(lex.PARTNER_WORDS)
    | frozenset("kids children family friends husband wife me".split())
)


def _conjugated(verb: str, lowered: str) -> str | None:
    """``verb`` after a third-person subject, or None when it is not a verb known to be
    one (the caller then keeps the speaker's own words)."""
    if lowered in IRREGULAR_THIRD_PERSON:
        return IRREGULAR_THIRD_PERSON[lowered]
    if lowered in UNCHANGED_AFTER_SUBJECT or lowered in _PAST:
        return verb
    if lowered.endswith("ed") and len(lowered) > 3:
        return verb  # a regular past, of any verb: "I moved" -> "Maya moved"
    if lowered not in BASE_VERBS:
        return None
    if _ES_ENDING.search(lowered):
        return verb + "es"
    if _Y_ENDING.search(lowered):
        return verb[:-1] + "ies"
    return verb + "s"


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]
