"""The firewall's one rule for named messages: whose words may speak for the user.

Chat frameworks let any message carry a ``name``: multi-agent graphs hand work between
agents as human messages named after the sender, tools and models sign what they send,
and a group chat names each person. A name can say anything, so no list of agent-like
words can tell an agent's name from a person's. The rule is therefore the other way
round: a message speaks for the user only when it has no name, when its name is the
configured user's, or when the application declared it as one of the user's names
(``user_names``). Any other named message is someone else's words: it is kept as evidence
(an episode with its role and ``said_by``), never a note. Every adapter asks here, so the
rule is the same in LangGraph, LlamaIndex and MCP.

Names are compared as a reader would take them to be the same name: compatibility forms
folded (NFKC), case folded, runs of spaces as one. Nothing else is folded: a look-alike
letter (a Cyrillic "а" in "аna") makes another name, so a forged name fails closed.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from ._validate import MAX_SPEAKER_CHARS, checked_speaker
from .errors import InvalidInputError, InvalidTypeError


def speaks_for_user(
    name: object, *, user: str | None = None, user_names: Iterable[str] = ()
) -> bool:
    """Whether a message whose ``name`` is this speaks for the user: it has none (None,
    or only spaces), or it is ``user`` (the configured user's id or name), or one of
    ``user_names`` (names the application declared as the user's)."""
    return said_by(name, user=user, user_names=user_names) is None


def said_by(name: object, *, user: str | None = None, user_names: Iterable[str] = ()) -> str | None:
    """None when a message named ``name`` speaks for the user (see :func:`speaks_for_user`),
    else who said it: the name as a turn's ``said_by`` takes it (one line, at most 100
    characters; a longer name is cut, a non-text one written out as text).
    Pass the result to :meth:`Memory.turn` as ``said_by``: a turn said by someone else is an
    episode, never a note."""
    if name is None:
        return None
    text = name if isinstance(name, str) else str(name)
    spoken = " ".join(text.split())
    if not spoken:
        return None  # an empty name names no one (serialisers write "" for no name)
    if _same_name(spoken, user) or any(_same_name(spoken, n) for n in user_names):
        return None
    # a name the core would refuse as text (a lone surrogate) is kept by its escapes, and
    # cut after escaping, so the result always fits a turn's said_by
    escaped = spoken.encode("utf-8", "backslashreplace").decode("utf-8")
    return escaped[:MAX_SPEAKER_CHARS].strip() or "unnamed"


def checked_user_names(names: object) -> tuple[str, ...]:
    """The names an application declares as its user's (a ``user_names`` option): a list
    of non-empty one-line names, in order, without repeats."""
    if names is None:
        return ()
    if isinstance(names, (str, bytes)) or not isinstance(names, Iterable):
        raise InvalidTypeError(
            f"user_names must be a list of names, not {type(names).__name__}; "
            'write user_names=["Ana"] for one name'
        )
    out: list[str] = []
    for name in names:
        if not isinstance(name, str):
            raise InvalidTypeError(f"user_names holds a {type(name).__name__}; give names as str")
        try:
            checked = checked_speaker(name)
        except InvalidInputError:
            raise InvalidInputError(
                f"user_names holds {name!r}; each must be a name of 1 to {MAX_SPEAKER_CHARS} "
                "characters on one line"
            ) from None
        if checked is not None and not any(_same_name(checked, n) for n in out):
            out.append(checked)
    return tuple(out)


def _same_name(name: str, other: object) -> bool:
    return isinstance(other, str) and bool(other.strip()) and _folded(name) == _folded(other)


def _folded(name: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())
