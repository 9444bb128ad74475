"""What a slot of the profile card may hold: a job is an occupation, a city is a place.

A fact the writer reads ("I'm a huge Celtic supporter" has the shape of "I'm a nurse")
reaches the card only when its value is of its slot's kind; the rule writer drops a key
whose value is not, and the card refuses one from any writer (an LLM's included). The
checks are cheap and lean to refusing: a missing field is a smaller harm than a false one.
"""

from __future__ import annotations

import re

from .._text import STOPWORDS, content_terms
from . import _lexicon as lex

_NAME_WORD = re.compile(r"[A-Z][\w'’.-]*")
_MAX_AGE = 120
_NOT_A_PLACE = (
    STOPWORDS
    | lex.MONTHS_AND_DAYS
    | lex.GENERIC_SUBJECTS
    | lex.SENTENCE_STARTERS
    | frozenset(lex.KIN_WORDS)
    | frozenset(lex.PARTNER_WORDS)
    | frozenset("home here there town city country place house flat work bed".split())
)


def fits(slot: str, value: str) -> bool:
    """Whether ``value`` is of the kind ``slot`` holds (``job``, ``city``, ``employer``,
    ``name``, ``partner``, ``age``); any other slot takes any non-empty value."""
    value = value.strip()
    if not value:
        return False
    check = _CHECKS.get(slot)
    return check(value) if check is not None else True


def _occupation(value: str) -> bool:
    """ "nurse", "bank teller", "senior developer"; not "huge Celtic supporter"."""
    words = value.split()
    if any(_NAME_WORD.fullmatch(w) for w in words) and not value.isupper():
        return False  # a team, a club, a band: "Celtic supporter", "Swiftie"
    lowered = [w.lower() for w in words]
    if set(lowered) & lex.FAN_WORDS:
        return False
    if lowered[0] in _ABILITY and len(lowered) > 1:
        return False  # "a terrible cook", "a great listener": how well, not a job
    head = lowered[-1]
    if head in lex.NOT_OCCUPATIONS:
        return False
    return head in lex.OCCUPATIONS or head.endswith(lex.OCCUPATION_ENDINGS)


# words that make "a ... cook" a judgement of someone's skill rather than their trade
_ABILITY = frozenset(
    """terrible awful bad good great decent horrible lousy excellent hopeless poor brilliant
    amazing fantastic natural born keen avid okay ok rubbish shocking crap useless""".split()
)


def _place(value: str) -> bool:
    words = value.split()
    return (
        len(words) <= 4
        and not any(c.isdigit() for c in value)
        and value.lower() not in _NOT_A_PLACE
        and words[0].lower() not in _NOT_A_PLACE
    )


def _organisation(value: str) -> bool:
    return len(value.split()) <= 6 and value.lower() not in _NOT_A_PLACE


def _person(value: str) -> bool:
    words = value.split()
    return (
        len(words) <= 3
        and all(_NAME_WORD.fullmatch(w) for w in words)
        and not any(w.lower() in STOPWORDS | lex.SENTENCE_STARTERS for w in words)
    )


def _age(value: str) -> bool:
    return value.isdigit() and 0 < int(value) <= _MAX_AGE


_CHECKS = {
    "job": _occupation,
    "city": _place,
    "employer": _organisation,
    "name": _person,
    "partner": _person,
    "age": _age,
}


# The words people name one slot of their life with, in other words each time: "I bank
# with Millennium" and "moved my account to Revolut" are one slot, as are "my manager is
# Beatriz" and "now I report to Duarte". An update that names none of the old statement's
# own words is read as being about it when both use words of one group.
_SLOT_GROUPS = (
    "bank banking account savings",
    "manager boss report reports reporting supervisor lead",
    "live lives living settled city town flat apartment house neighbourhood neighborhood renting",
    "work works working job employer company hired joined",
    "phone mobile smartphone",
    "car drive drives driving vehicle",
    "gym train trains training workout member membership fitness bouldering climbing",
    "doctor gp dentist practice",
    "coffee order cafe café latte espresso",
    "shell terminal",
    "editor ide",
    "school class teacher",
    "diet vegetarian vegan pescatarian keto",
    "language speak speaks speaking",
    "card pay pays paying spending",
    "team group squad",
    "password passcode code pin",
    "breakfast lunch dinner meal meals food eat eats eating morning mornings",
    "shift shifts nights days",
)


def slot_groups(terms: frozenset[str]) -> frozenset[int]:
    """Which slot groups these (stemmed) words name."""
    return frozenset(n for n, group in enumerate(_GROUP_TERMS) if terms & group)


_GROUP_TERMS = tuple(content_terms(g) for g in _SLOT_GROUPS)
