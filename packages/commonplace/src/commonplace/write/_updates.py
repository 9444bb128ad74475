"""Updates said in words: which older statements a new one takes back or replaces.

A fact key settles most updates ("I moved to Porto" replaces the city). Two kinds of
update carry no key the older statement shares, and are read here:

* a retraction: "I'm not vegetarian anymore", "I no longer eat meat", "I used to live in
  Lisbon" take back an older statement that says no more than the retracted clause
  ("The user is vegetarian.");
* a subject that changed: "The office relocated to Harbour Lane" (keyed ``office``)
  replaces "The office is on Elm Road", which was said without a key.

Only statements are ever replaced, never questions or jokes, and never a statement that
is itself a negation or a retraction.
"""

from __future__ import annotations

import re

from .._text import content_terms

# "not ... anymore", "no longer", "used to", "stopped", "quit", "gave up": a change, not a
# plain negation ("I'm not a fan of jazz" takes nothing back)
_RETRACTION = re.compile(
    r"\b(?:no longer|used to|stopped|quit|gave up|not\b[^.;,!?]*?\b(?:anymore|any more)"
    r"|(?:don't|doesn't|isn't|aren't|am not|is not|are not)\b[^.;,!?]*?\b(?:anymore|any more|"
    r"these days|now))\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"[^.;,!?]+")
# words a retraction adds that the statement it takes back never had
_CHANGE_WORDS = frozenset(
    content_terms(
        "no longer used anymore any more stopped quit gave give up now these days user "
        "don't doesn't isn't aren't not never"
    )
)


def retracted(text: str) -> frozenset[str] | None:
    """The content words of the clause a retraction takes back, or None if ``text`` takes
    nothing back."""
    for clause in _CLAUSE.findall(text):
        if _RETRACTION.search(clause):
            words = content_terms(clause) - _CHANGE_WORDS
            return words or None
    return None


def takes_back(retraction: frozenset[str], older_text: str) -> bool:
    """Whether an older statement says no more than the retracted clause."""
    words = content_terms(older_text) - _CHANGE_WORDS
    return bool(words) and words <= retraction and retracted(older_text) is None


def about(predicate: str, text: str) -> bool:
    """Whether a statement is about the subject ``predicate`` names ("The office is ...")."""
    pattern = r"^(?:the |our |my |the user's )?" + re.escape(predicate) + r"\b"
    return re.match(pattern, text.strip(), re.IGNORECASE) is not None
