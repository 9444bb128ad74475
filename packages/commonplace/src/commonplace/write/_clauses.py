"""What of a chat turn is worth a note: who spoke, and which sentences carry something.

A real chat turn wraps its substance in small talk: "Hey Mel! Good to see you! I went to
a support group yesterday. How have you been?" holds one thing to remember. The rule
writer keeps the informative sentences of a turn, in order and bounded in words, and
drops greetings, thanks, check-ins and reactions to the other person; a turn made only
of those is skipped, and the skip says so.

A transcript names its speaker before a colon ("Caroline: I went to ..."); the note then
says "Caroline went to ..." instead of "the user went to ...". The name is read here,
once, for the writer and for :meth:`Memory.turn`.
"""

from __future__ import annotations

import re

from .._text import STOPWORDS, WORD
from . import _lexicon as lex

_SPEAKER = re.compile(r"^\s*(?P<name>[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,2})\s*:\s+(?=\S)")
_PLEASANTRY = re.compile(r"(?:" + "|".join(f"(?:{p})" for p in lex.PLEASANTRY_PATTERNS) + r")")
# Capitalised words: names said to the listener ("Hey Mel!", "Thanks, Caroline.") are
# left out before small talk is recognised; "I" stays.
_NAME_WORD = re.compile(r"\b(?!I\b|I['’])[A-Z][\w'’-]*")
# "[shares a photo: a photo of a cake]", as transcripts note an image
_PHOTO = re.compile(r"\[shares? an? (photo|picture|image|video)\s*:\s*(?:an? \1 of\s+)?([^\]]+)\]")
_MAX_REACTION_WORDS = 6
_MAX_CHECK_IN_WORDS = 4
_MAX_SPEAKER_CHARS = 60


def split_speaker(text: str) -> tuple[str | None, str]:
    """``("Caroline", "I went ...")`` for ``"Caroline: I went ..."``; ``(None, text)`` when
    the turn names no speaker (a label such as "Update:" or "Note:" is not a speaker)."""
    match = _SPEAKER.match(text)
    if match is None:
        return None, text
    name = match.group("name").strip(" .")
    first = name.split()[0].lower().replace("’", "'")
    if (
        not name
        or len(name) > _MAX_SPEAKER_CHARS
        or first in lex.NOT_SPEAKERS
        or first in lex.FIRST_PERSON_WORDS
        or first in lex.SECOND_PERSON_WORDS
        or first in lex.SENTENCE_STARTERS
        or first in lex.GREETINGS
        or first in lex.MONTHS_AND_DAYS
    ):
        return None, text
    return name, text[match.end() :]


def without_speaker(text: str, speaker: str | None) -> str:
    """The turn's words without a leading "Speaker: " that repeats ``speaker``."""
    if speaker is None:
        return text
    named, rest = split_speaker(text)
    return rest if named is not None and named.lower() == speaker.lower() else text


def pleasantry(sentence: str, *, among_people: bool = False) -> str | None:
    """Why ``sentence`` is small talk (a greeting, thanks, a check-in, a reaction), or None
    when it may carry something to remember. ``among_people``: the turn is from a named
    speaker talking to another person, so a statement about "you" is about that person
    (talking to an assistant, "your recipe was a hit" refers to what it said)."""
    folded = " ".join(WORD.findall(_NAME_WORD.sub(_unnamed, sentence).lower().replace("’", "'")))
    if not folded:
        return None  # only names: an answer such as "Porto!"
    if _PLEASANTRY.fullmatch(folded):
        return f"small talk: {folded!r}"
    words = folded.split()
    if any(w in lex.FIRST_PERSON_WORDS for w in words) or any(c.isdigit() for c in folded):
        return None
    addressed = any(w in lex.SECOND_PERSON_WORDS for w in words)
    question = is_question(sentence)
    if not question and len(words) <= _MAX_REACTION_WORDS and lex.EVALUATIVE_WORDS & set(words):
        return f"a reaction: {folded!r}"
    if question and addressed and len(words) <= _MAX_CHECK_IN_WORDS:
        return f"a check-in with the listener: {folded!r}"
    if among_people and addressed and not question:
        # a statement about the listener alone ("Your empathy will help people") says
        # nothing about the one who speaks
        return f"about the listener, not the speaker: {folded!r}"
    return None


def _unnamed(match: re.Match[str]) -> str:
    """A capitalised word, unless it is a name (ordinary words capitalised by position stay)."""
    word = match.group(0)
    lowered = word.lower().replace("’", "'")
    return word if lowered in _ORDINARY_CAPS else " "


_ORDINARY_CAPS = (
    lex.NOISE
    | lex.EVALUATIVE_WORDS
    | lex.SECOND_PERSON_WORDS
    | lex.SENTENCE_STARTERS
    | frozenset(lex.GREETINGS)
    | frozenset(lex.DISCOURSE_OPENERS)
    | frozenset(lex.QUESTION_WORDS)
    | STOPWORDS
    | frozenset("good take look check here see glad sounds keep have congrats well".split())
)


def photo_sentence(text: str) -> str:
    """A transcript's "[shares a photo: a photo of X]" as a sentence of its own."""
    return _PHOTO.sub(lambda m: f". I share a {m.group(1)} of {m.group(2).strip()}.", text)


_GREETING_LEAD = re.compile(
    r"^(?:(?:hey|hi|hello|heya|hiya|yo|oh|wow|so)(?: there)?(?:\s+[A-Z][\w'’-]*)?\s*[,!.]\s*)+",
    re.IGNORECASE,
)


def without_greeting(sentence: str) -> str:
    """``"since we last chatted ..."`` for ``"Hey Caroline, since we last chatted ..."``."""
    stripped = _GREETING_LEAD.sub("", sentence)
    return stripped[:1].upper() + stripped[1:] if stripped.strip() else sentence


def is_question(sentence: str) -> bool:
    return sentence.rstrip(" \"'”)").endswith("?")
