"""The profile card: a short portrait of the user, rewritten (never appended to).

Six parts, each with its own rule:

* identity (name, city, job, employer, partner ...) stays until a newer note
  states another value for it;
* people stay until the user says they are gone (died, broke up, left);
* major life events stay for good;
* stated preferences and standing instructions ("always answer in Portuguese")
  stay until newer ones rotate them out;
* voice (how the user talks lately) and open threads (recent questions and
  hypotheticals) rotate with every rewrite.

Whatever rewrites the card (the rules here or an LLM through
``commonplace_rewrite_profile``), :func:`enforce_sticky` puts back anything the
rules say must stay, and :func:`render_card` keeps the text under a hard token
cap by dropping what may rotate first.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._records import Modality, Record
from .._tokens import count_tokens
from . import _lexicon as lex
from ._slots import fits

# "my sister Mia", "the user's coworker Mia": the relation words are the lexicon's, one home
_RELATION = re.compile(
    r"\b(?:[Mm]y|[Tt]he user's|[Oo]ur)\s+("
    + "|".join(
        re.escape(w) for w in sorted(lex.KIN_WORDS + lex.PARTNER_WORDS, key=len, reverse=True)
    )
    + r")\s+([A-Z][\w'-]+)"
)


def relations(text: str) -> list[tuple[str, str]]:
    """(relation, name) pairs such as ("sister", "Mia") in a note's text."""
    return [(m.group(1).lower(), m.group(2)) for m in _RELATION.finditer(text)]


IDENTITY = ("name", "city", "job", "employer", "partner", "school", "age", "pronouns")
_GONE = re.compile(
    r"\b(?:passed away|died|funeral|brokes? up|split up|divorc\w*|left me|moved away|"
    r"no longer (?:with|friends)|is gone|isn't in my life|not talking to)\b",
    re.IGNORECASE,
)
_KEEP_THREADS = 3
_KEEP_PREFERENCES = 4
_NOTE_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_PREFERENCE = re.compile(
    r"\b(?:always|never|from now on|don't ever|do not ever|prefers?|would rather|'d rather)\b",
    re.IGNORECASE,
)
_PLEASE = re.compile(r"^(?:please|pls|kindly)\s+", re.IGNORECASE)
_THE_USER = re.compile(r"^the user\s+", re.IGNORECASE)
_VOICE_WINDOW = 20


@dataclass(frozen=True, slots=True)
class ProfileCard:
    """The structured card; ``render_card`` turns it into bounded text."""

    identity: dict[str, str] = field(default_factory=dict)
    people: dict[str, str] = field(default_factory=dict)
    events: tuple[tuple[str, str], ...] = ()
    voice: tuple[str, ...] = ()
    threads: tuple[str, ...] = ()
    preferences: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "identity": self.identity,
            "people": self.people,
            "events": [list(e) for e in self.events],
            "voice": list(self.voice),
            "threads": list(self.threads),
            "preferences": list(self.preferences),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProfileCard:
        return cls(
            identity={str(k): str(v) for k, v in dict(data.get("identity", {})).items()},
            people={str(k): str(v) for k, v in dict(data.get("people", {})).items()},
            events=tuple((str(d), str(e)) for d, e in data.get("events", [])),
            voice=tuple(str(v) for v in data.get("voice", [])),
            threads=tuple(str(t) for t in data.get("threads", [])),
            preferences=tuple(str(p) for p in data.get("preferences", [])),
        )


def update_card(
    card: ProfileCard,
    notes: Sequence[Record],
    recent: Sequence[Record],
    *,
    replaced: Mapping[str, Sequence[Record]] | None = None,
) -> ProfileCard:
    """The rule-based rewrite: fold new notes (oldest first) into the card. ``replaced``:
    by note id, the older statements the note replaced; what the card holds of them goes
    (the same decisions revise the card and the notes)."""
    identity = dict(card.identity)
    people = dict(card.people)
    events = list(card.events)
    threads = list(card.threads)
    preferences = list(card.preferences)
    for note in notes:
        for old in (replaced or {}).get(note.id, ()):
            _take_off(old, identity, people, preferences)
        tags = note.tags
        if tags.modality is Modality.STATEMENT:
            for stated in preferences_in(note.text):
                if stated in preferences:
                    preferences.remove(stated)
                preferences.append(stated)  # the newest last: the oldest rotates out first
            if (
                tags.key is not None
                and tags.key.subject == "user"
                and tags.value
                and tags.key.predicate in IDENTITY
                and fits(tags.key.predicate, tags.value)  # a job is an occupation
            ):
                identity[tags.key.predicate] = tags.value
            for relation, name in relations(note.text):
                people[name] = relation
            if tags.event:
                entry = (f"{note.created_at:%Y-%m-%d}", tags.event.replace("_", " "))
                if entry not in events:
                    events.append(entry)
            if _GONE.search(note.text):
                for name in [p for p in people if re.search(rf"\b{re.escape(p)}\b", note.text)]:
                    del people[name]
        elif tags.modality in (Modality.QUESTION, Modality.HYPOTHETICAL):
            threads.append(_short(note.text))
    return ProfileCard(
        identity,
        people,
        tuple(events),
        _voice(recent),
        tuple(threads[-_KEEP_THREADS:]),
        tuple(preferences[-_KEEP_PREFERENCES:]),
    )


def _take_off(
    old: Record, identity: dict[str, str], people: dict[str, str], preferences: list[str]
) -> None:
    """Remove from the card's parts what a replaced statement put there."""
    key, value = old.tags.key, old.tags.value
    if (
        key is not None
        and key.subject == "user"
        and value
        and identity.get(key.predicate, "").lower() == value.lower()
    ):
        del identity[key.predicate]
    for relation, name in relations(old.text):
        if people.get(name) == relation:
            del people[name]
    for stated in preferences_in(old.text):
        if stated in preferences:
            preferences.remove(stated)


def preferences_in(note_text: str) -> list[str]:
    """Stated preferences and standing instructions in a note ("Please always answer the
    user in Portuguese.", "The user prefers tea."), as card entries."""
    out = []
    for sentence in _NOTE_SENTENCE.split(note_text):
        if _PREFERENCE.search(sentence):
            entry = _PLEASE.sub("", sentence.strip().rstrip(".")).strip()
            entry = _THE_USER.sub("", entry, count=1)
            if entry:
                out.append(entry[:1].lower() + entry[1:])
    return out


def enforce_sticky(
    previous: ProfileCard,
    proposed: ProfileCard,
    notes: Sequence[Record],
    *,
    floor: ProfileCard | None = None,
    replaced: Mapping[str, Sequence[Record]] | None = None,
) -> ProfileCard:
    """Put back what the sticky rules keep, whatever the rewriter proposed.

    What the rules extract from the new notes is the floor: identity facts and
    named people the notes state, and their life events, are always on the card.
    ``floor`` is ``update_card(previous, notes, ())`` when the caller has it already.
    """
    floor = update_card(previous, notes, (), replaced=replaced) if floor is None else floor
    contradicted = {
        n.tags.key.predicate
        for n in notes
        if n.tags.key is not None and n.tags.modality is Modality.STATEMENT
    }
    identity = dict(proposed.identity)
    for predicate, value in previous.identity.items():
        # what a replaced statement put on the card goes, whatever the rewriter kept
        if predicate not in floor.identity and identity.get(predicate) == value:
            del identity[predicate]
    for predicate, value in floor.identity.items():
        if predicate in contradicted or predicate not in identity:
            identity[predicate] = value  # identity stays until the user contradicts it
    gone = {p for p in previous.people if p not in floor.people}
    people = {n: r for n, r in proposed.people.items() if n not in gone}
    for name, relation in floor.people.items():
        people.setdefault(name, relation)  # people stay until the user says they are gone
    events = list(floor.events)
    for event in proposed.events:  # life events stay for good
        if event not in events:
            events.append(event)
    # stated preferences and instructions stay until newer ones rotate them out
    preferences = [p for p in proposed.preferences if p not in floor.preferences]
    preferences = (preferences + list(floor.preferences))[-_KEEP_PREFERENCES:]
    return ProfileCard(
        identity, people, tuple(events), proposed.voice, proposed.threads, tuple(preferences)
    )


def render_card(card: ProfileCard, *, max_tokens: int) -> str:
    """The card as text, never over ``max_tokens``: rotating parts go first."""
    parts: list[tuple[int, str]] = []  # (priority: lower is dropped first, text)
    if card.identity:
        ordered = sorted(
            card.identity.items(), key=lambda kv: IDENTITY.index(kv[0]) if kv[0] in IDENTITY else 99
        )
        parts.append((5, "Identity: " + "; ".join(f"{k} {v}" for k, v in ordered)))
    if card.preferences:
        parts.append((4, "Preferences: " + "; ".join(card.preferences)))
    if card.people:
        # closest first, so a full card sheds acquaintances before family
        people = sorted(card.people.items(), key=lambda nr: _closeness(nr[1]))
        parts.append((4, "People: " + "; ".join(f"{n} ({r})" for n, r in people)))
    if card.events:
        parts.append((4, "Life events: " + "; ".join(f"{e} {d}" for d, e in card.events)))
    if card.voice:
        parts.append((2, "Voice: " + "; ".join(card.voice)))
    if card.threads:
        parts.append((1, "Open threads: " + " | ".join(card.threads)))
    lines = [text for _, text in parts]
    while lines and count_tokens("\n".join(lines)) > max_tokens:
        drop = min(range(len(parts)), key=lambda i: parts[i][0])
        priority, text = parts[drop]
        shorter = _shorten(text)
        if priority >= 4 and shorter != text:
            parts[drop] = (priority, shorter)  # compress sticky lines before dropping them
        else:
            parts.pop(drop)
        lines = [t for _, t in parts]
    return "\n".join(lines)


def _shorten(line: str) -> str:
    """Make a sticky line shorter: life events lose their dates first, then the
    oldest event; people lose the least close person."""
    label, _, body = line.partition(": ")
    entries = body.split("; ")
    dated = re.compile(r" \d{4}-\d{2}-\d{2}$")
    if label == "Life events" and any(dated.search(e) for e in entries):
        return f"{label}: " + "; ".join(dated.sub("", e) for e in entries)
    if len(entries) <= 1:
        return line
    kept = entries[:-1] if label == "People" else entries[1:]
    return f"{label}: " + "; ".join(kept)


_CLOSE = (
    "partner",
    "wife",
    "husband",
    "fiance",
    "fiancé",
    "fiancee",
    "fiancée",
    "girlfriend",
    "boyfriend",
    "mom",
    "mum",
    "mother",
    "dad",
    "father",
    "son",
    "daughter",
    "sister",
    "brother",
    "dog",
    "cat",
    "friend",
)


def _closeness(relation: str) -> int:
    return _CLOSE.index(relation) if relation in _CLOSE else len(_CLOSE)


def _voice(recent: Sequence[Record]) -> tuple[str, ...]:
    window = list(recent)[:_VOICE_WINDOW]
    if not window:
        return ()
    modalities = Counter(n.tags.modality for n in window)
    emotions = Counter(n.tags.emotion for n in window if n.tags.emotion)
    voice = []
    if modalities[Modality.JOKE] * 4 >= len(window):
        voice.append("jokes a lot")
    if modalities[Modality.QUESTION] * 3 >= len(window):
        voice.append("asks many questions")
    if emotions:
        mood, _ = emotions.most_common(1)[0]
        voice.append(f"mood lately: {mood}")
    return tuple(voice)


def _short(text: str, words: int = 12) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")
