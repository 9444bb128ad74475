"""The default note writer: deterministic rules and lexicons, no model, no network.

For one user turn it picks the most informative sentence, decides how it was
meant (statement, question, joke, hypothetical, quote of the assistant), tags
who or what was named, the emotion, any major life event and any fact that can
later change (subject/predicate/value), scores importance, and rewrites the
sentence in the present tense about "the user". Noise gets a :class:`Skip`.
"""

from __future__ import annotations

import re
import unicodedata

from .._records import FactKey, Modality, Tags
from .._text import STOPWORDS
from . import _lexicon as lex
from ._types import NoteDraft, Skip, Turn

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'“(])|\n+")
_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_CAPITALISED = re.compile(r"\b([A-Z][\w'’-]*(?:\s+(?:of\s+|de\s+|van\s+)?[A-Z][\w'’-]*)*)")
_NUMBER = re.compile(r"\d")
_MAX_NOTE_WORDS = 45

# (pattern, subject, predicate); an empty subject or predicate is read from the
# match's "s" or "p" group. The value is always the "v" group.
_FACT_PATTERNS: tuple[tuple[re.Pattern[str], str, str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), subject, predicate)
    for pattern, subject, predicate in (
        (r"\bmy name is (?P<v>[\w'’ -]{1,40}?)\s*(?:[.,!;]|$)", "user", "name"),
        (r"\b(?:call me|i go by) (?P<v>[\w'’-]{1,30})", "user", "name"),
        (
            r"\bi(?:'m| am) (?:now )?(?:living|based) in (?P<v>[A-Z][\w'’ -]{1,40}?)\s*(?:[.,!;]|$| now| since| with| for)",
            "user",
            "city",
        ),
        (
            r"\bi (?:now )?live in (?P<v>[A-Z][\w'’ -]{1,40}?)\s*(?:[.,!;]|$| now| since| with| for)",
            "user",
            "city",
        ),
        (
            r"\b(?:i|we) (?:just )?(?:moved|relocated) to (?P<v>[A-Z][\w'’ -]{1,40}?)\s*(?:[.,!;]|$| last| this| in| with| for)",
            "user",
            "city",
        ),
        (
            r"\bi (?:now )?work (?:at|for) (?P<v>[A-Z][\w&'’ .-]{1,40}?)\s*(?:[.,!;]|$| as| now| since)",
            "user",
            "employer",
        ),
        (
            r"\bi (?:just )?(?:joined|started at|got a job at) (?P<v>[A-Z][\w&'’ .-]{1,40}?)\s*(?:[.,!;]|$| as| last| this)",
            "user",
            "employer",
        ),
        (r"\bi work as (?:an? )?(?P<v>[\w -]{2,40}?)\s*(?:[.,!;]|$| at| for| in)", "user", "job"),
        (
            r"\bmy (?:job|profession|occupation) is (?:an? )?(?P<v>[\w -]{2,40}?)\s*(?:[.,!;]|$)",
            "user",
            "job",
        ),
        (
            r"\bmy (?:wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|spouse)(?:'s name)? is (?P<v>[A-Z][\w'’-]*)",
            "user",
            "partner",
        ),
        (
            r"\b(?:my|our) (?P<p>[a-z][a-z ]{1,30}?) is (?:now )?(?!\w+ing\b)(?P<v>[\w@.:/#'’ -]{1,40}?)\s*(?:[.,!;]|$)",
            "user",
            "",
        ),
        (
            r"\bthe (?P<p>[a-z][a-z ]{1,30}?) (?:is now|moved to|changed to|was moved to|was changed to|now runs on|runs on) (?P<v>[\w@.:/#'’ -]{1,40}?)\s*(?:[.,!;]|$)",
            "user",
            "",
        ),
    )
)
_TRAILING_FILLER = re.compile(r"(?:\s+(?:by the way|btw|now|again|too|lol|haha))+\s*$", re.I)
_UNIT_VALUE = re.compile(
    r"(port|version|number|room|floor|level|size|line|address|plan|tier)\s+(\S*\d\S*)",
    re.IGNORECASE,
)
_OCCUPATION = re.compile(
    r"\bi(?:'m| am) (?:an? )(?P<v>[a-z]+(?: [a-z]+)?)\s*(?:[.,!;]|$| at| for| in)", re.IGNORECASE
)

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
    ]
)


class RuleNoteWriter:
    """Writes at most one tagged note per user turn, by rule."""

    def write(self, turn: Turn) -> NoteDraft | Skip:
        text = unicodedata.normalize("NFKC", turn.text).strip()
        reason = _noise_reason(text)
        if reason is not None:
            return Skip(reason)
        sentence = _best_sentence(text)
        whole = text.lower().replace("’", "'")
        modality = _modality(sentence, whole)
        event = _life_event(whole) if modality is Modality.STATEMENT else None
        key, value = _fact(sentence) if modality is Modality.STATEMENT else (None, None)
        entities = _entities(sentence)
        emotion = _emotion(whole)
        importance = _importance(sentence, modality, event, key, entities)
        tags = Tags(
            modality=modality,
            entities=entities,
            emotion=emotion,
            importance=importance,
            key=key,
            value=value,
            event=event,
        )
        return NoteDraft(text=_note_text(sentence, modality), tags=tags)


def _noise_reason(text: str) -> str | None:
    words = [w.lower() for w in _WORDS.findall(text)]
    if not words:
        return "no words: emoji or punctuation only"
    joined = " ".join(words)
    if joined in lex.NOISE_PHRASES or (len(words) <= 3 and all(w in lex.NOISE for w in words)):
        return f"noise: {joined!r} carries nothing to remember"
    if len(words) == 1 and len(words[0]) <= 2:
        return f"noise: {joined!r} is too short to mean anything"
    return None


def _best_sentence(text: str) -> str:
    sentences = [s.strip() for s in _SENTENCE.split(text) if s and _WORDS.search(s)]
    if not sentences:
        return text

    def weight(sentence: str) -> float:
        lowered = sentence.lower()
        score = min(len(_WORDS.findall(sentence)), 25) / 25
        score += 2.0 if _life_event(lowered) else 0.0
        score += 1.5 if _fact(sentence)[0] is not None else 0.0
        score += 0.5 * len(_entities(sentence))
        score -= 1.0 if _noise_reason(sentence) else 0.0
        return score

    best = max(sentences, key=weight)
    words = best.split()
    if len(words) > _MAX_NOTE_WORDS:
        best = " ".join(words[:_MAX_NOTE_WORDS]) + " …"
    return best


def _has_marker(lowered: str, markers: tuple[str, ...]) -> bool:
    return any(re.search(r"(?<![\w])" + re.escape(m) + r"(?![\w])", lowered) for m in markers)


def _modality(sentence: str, whole: str) -> Modality:
    lowered = sentence.lower().strip()
    if _has_marker(whole, lex.QUOTE_MARKERS):
        return Modality.QUOTE
    if _has_marker(whole, lex.JOKE_MARKERS) or any(e in whole for e in lex.JOKE_EMOJI):
        return Modality.JOKE
    if _has_marker(lowered, lex.HYPOTHETICAL_MARKERS):
        return Modality.HYPOTHETICAL
    opener = _strip_openers(lowered)
    if lowered.endswith("?") or any(
        opener == q or opener.startswith(q + " ") for q in lex.QUESTION_OPENERS
    ):
        return Modality.QUESTION
    return Modality.STATEMENT


def _strip_openers(lowered: str) -> str:
    changed = True
    while changed:
        changed = False
        for opener in lex.DISCOURSE_OPENERS:
            if lowered.startswith(opener + " ") or lowered.startswith(opener + ", "):
                lowered = lowered[len(opener) :].lstrip(" ,")
                changed = True
    return lowered


def _life_event(lowered: str) -> str | None:
    for fragment, event in lex.LIFE_EVENTS:
        if re.search(r"(?<![\w])" + re.escape(fragment), lowered):
            return event
    return None


def _fact(sentence: str) -> tuple[FactKey | None, str | None]:
    for pattern, subject, predicate in _FACT_PATTERNS:
        match = pattern.search(sentence)
        if not match:
            continue
        groups = match.groupdict()
        value = _TRAILING_FILLER.sub("", match.group("v")).strip(" '’\"")
        subject = subject or (groups.get("s") or "").strip().lower()
        predicate = predicate or (groups.get("p") or "").strip().lower()
        # "the server moved to port 8001" and "our server port is 8000" share a key
        unit = _UNIT_VALUE.fullmatch(value)
        if unit and not predicate.endswith(unit.group(1).lower()):
            predicate, value = f"{predicate} {unit.group(1).lower()}", unit.group(2)
        if value and subject and predicate:
            return FactKey(subject, predicate), value
    match = _OCCUPATION.search(sentence)
    if match:
        value = match.group("v").lower()
        last = value.split()[-1]
        if last not in lex.NOT_OCCUPATIONS and (
            last in lex.OCCUPATIONS or last.endswith(lex.OCCUPATION_ENDINGS)
        ):
            return FactKey("user", "job"), value
    return None, None


def _entities(sentence: str) -> tuple[str, ...]:
    found: list[str] = []
    stripped = sentence.lstrip(" \"'“(")
    first_word = (_WORDS.findall(stripped) or [""])[0]
    for match in _CAPITALISED.finditer(sentence):
        name = match.group(1).strip()
        words = name.split()
        if (
            match.start() == sentence.find(stripped)
            and words[0] == first_word
            and _ordinary_word(first_word)
        ):
            words = words[1:]  # an ordinary first word is capitalised only by position
        words = [w for w in words if w not in ("I", "I'm", "I've", "I'll", "I'd")]
        if not words or (words[0].lower() in lex.MONTHS_AND_DAYS and len(words) == 1):
            continue
        candidate = " ".join(words).strip(" ,.'’")
        if candidate and candidate not in found:
            found.append(candidate)
    lowered = sentence.lower()
    for kin in lex.KIN_WORDS + lex.PARTNER_WORDS:
        if re.search(rf"\bmy {re.escape(kin)}\b", lowered) and kin not in found:
            found.append(kin)
    return tuple(found[:8])


def _ordinary_word(word: str) -> bool:
    lowered = word.lower()
    return (
        lowered in STOPWORDS
        or lowered in lex.SENTENCE_STARTERS
        or lowered in lex.NOISE
        or lowered in lex.DISCOURSE_OPENERS
    )


def _emotion(lowered: str) -> str | None:
    for emotion, words in lex.EMOTIONS.items():
        if _has_marker(lowered, words):
            return emotion
    return None


def _importance(
    sentence: str,
    modality: Modality,
    event: str | None,
    key: FactKey | None,
    entities: tuple[str, ...],
) -> float:
    score = 0.3
    score += 0.4 if event else 0.0
    score += 0.2 if key is not None else 0.0
    score += 0.1 if _NUMBER.search(sentence) else 0.0
    score += min(0.2, 0.1 * len(entities))
    score += min(0.1, len(_WORDS.findall(sentence)) / 200)
    if modality is Modality.JOKE:
        score *= 0.4
    elif modality in (Modality.QUESTION, Modality.HYPOTHETICAL, Modality.QUOTE):
        score *= 0.6
    return round(min(1.0, score), 3)


def _note_text(sentence: str, modality: Modality) -> str:
    body = sentence.strip().strip('"“”')
    body = re.sub(r"\s+", " ", body)
    body = re.sub(r"^(?:update|fyi|btw|news|edit|note|ps)\s*:\s*", "", body, flags=re.IGNORECASE)
    opener_free = _strip_openers(body.lower())
    body = body[len(body) - len(opener_free) :] if opener_free else body
    if modality is Modality.STATEMENT:
        return _capitalise(_third_person(body).rstrip(" .!") + ".")
    prefix = {
        Modality.QUESTION: "The user asks",
        Modality.JOKE: "The user jokes",
        Modality.HYPOTHETICAL: "The user wonders hypothetically",
        Modality.QUOTE: "The user refers to what the assistant said",
    }[modality]
    return f"{prefix}: “{body.rstrip()}”"


def _third_person(text: str) -> str:
    tokens = re.findall(r"[\w'’]+|[^\w\s]+|\s+", text)
    out: list[str] = []
    conjugate_next = False
    for token in tokens:
        word = token.lower().replace("’", "'")
        if token.isspace() or not re.match(r"[\w']", token):
            out.append(token)
            continue
        if word in _PRONOUNS:
            out.append(_PRONOUNS[word])
            conjugate_next = word in ("i", "we")
            continue
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
    if not lowered.isalpha() or lowered.endswith("ed") or lowered.endswith("s"):
        return verb
    if re.search(r"(sh|ch|x|z|o)$", lowered):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lowered):
        return verb[:-1] + "ies"
    return verb + "s"


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]
