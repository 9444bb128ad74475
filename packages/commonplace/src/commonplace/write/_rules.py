"""The default note writer: deterministic rules and lexicons, no model, no network.

For one user turn it picks the most informative sentence, decides how it was
meant (statement, question, joke, hypothetical, quote of the assistant), tags
who or what was named, the emotion, any major life event and any fact that can
later change (subject/predicate/value), scores importance, and rewrites the
sentence in the present tense about "the user". Noise gets a :class:`Skip`.

Every lexicon is compiled into one regular expression at import time, and a pattern
runs only on a text that holds one of the literal words every match of it needs
(``_prefilter``), so a turn costs the few scans that can match, whatever the size of
the word lists.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable

from .._prefilter import Alternation, Guarded, GuardedRules, folded
from .._records import FactKey, Modality, Tags
from .._text import NEGATIONS, STOPWORDS, WORD, head
from .._text import sentences as split_sentences
from . import _lexicon as lex
from ._clauses import (
    QUESTION_START,
    dropped_subject,
    is_photo,
    is_question,
    photo_sentence,
    skip_reason,
    split_questions,
    split_speaker,
    without_greeting,
    without_speaker,
    without_vocative,
)
from ._decide import says_change
from ._fact_patterns import END as _END
from ._fact_patterns import FACT_PATTERNS, THE_X_IS
from ._slots import fits
from ._tense import capitalise, formal, third_person
from ._types import NoteDraft, Skip, Turn

# A sentence ends at . ! ? (not after a title or a common abbreviation), at a
# spaced dash, or at a line break.
_CAPITALISED = re.compile(
    r"\b((?:(?:Dr|Mr|Mrs|Ms|Prof|St)\.\s+)?[A-Z][\w'’-]*(?:\s+(?:of\s+|de\s+|del\s+|da\s+|van\s+|von\s+|la\s+)?[A-Z][\w'’-]*)*)"
)
_NUMBER = re.compile(r"\d")
_REPEATS = re.compile(r"(.)\1{2,}")
_CONTRACTION = re.compile(r"['’](?:s|re|ll|ve|d|m|t)$", re.IGNORECASE)
_MAX_NOTE_WORDS = 50


def _alternation(phrases: Iterable[str]) -> str:
    """Literal phrases as one alternation, longest first so the longest one wins."""
    return "|".join(re.escape(p) for p in sorted(set(phrases), key=len, reverse=True))


def _markers(phrases: Iterable[str]) -> re.Pattern[str]:
    """Any of the phrases, as whole words."""
    return re.compile(r"(?<![\w'])(?:" + _alternation(phrases) + r")(?![\w'])")


_NOISE_WORD = re.compile(lex.LAUGHTER_PATTERN + "|" + lex.MURMUR_PATTERN)
_QUOTE = Guarded(
    re.compile(
        _markers(lex.QUOTE_MARKERS).pattern
        + r"|\byour (?:\w+ )?(?:"
        + _alternation(lex.QUOTED_THINGS)
        + r")\b"
        # "the assistant told me ...", "according to ChatGPT": reported speech of a machine
        + r"|(?<![\w'])(?:(?:the|my|your|this|that|our|an?) )?(?:"
        + _alternation(lex.ASSISTANT_NAMES)
        + r")(?:'s)? (?:(?:just|also|once|earlier|previously|already|then|apparently) )?(?:"
        + _alternation(lex.REPORTING_VERBS)
        + r")(?![\w'])"
        + r"|\baccording to (?:(?:the|my|your|an?) )?(?:"
        + _alternation(lex.ASSISTANT_NAMES)
        + r")(?![\w'])"
    )
)
_LAUGHTER = Guarded(_markers(lex.LAUGHTER_MARKERS))
_LAUGHTER_EMOJI = re.compile("|".join(lex.LAUGHTER_EMOJI))
_EXPLICIT_JOKE = Guarded(
    re.compile(r"(?<![\w'])(?:" + _alternation(lex.JOKE_MARKERS) + r")(?![\w'])")
)
_SARCASM = Guarded(re.compile("|".join(f"(?:{p})" for p in lex.SARCASM_PATTERNS)))
_HYPOTHETICAL = Guarded(_markers(lex.HYPOTHETICAL_MARKERS))
# "would it be crazy if I moved": "if" with a past tense imagines
_IF_PAST = Guarded(
    re.compile(
        r"\bif (?:i|we) (?:\w+ed|were|had|was|took|went|quit|got|left|ran|sold|bought|lost|won|"
        r"became|gave|did|made|stopped|came)\b"
    )
)
_CONDITIONAL = re.compile(
    r"^(?:"
    + _alternation(lex.CONDITIONAL_OPENERS)
    + r")\b[^.!?]*?\b(?:would|could|might|will|i'd|we'd|i'll|should)\b"
)
# A laughing turn that reports something that just happened, or happened at a
# stated time, is a real event told with a laugh ("lol my toddler just put my
# phone in the fridge", "we eloped last Friday lol"), not a joke.
_SUBJECT = r"\b(?:i|we|my [\w']+|our [\w']+|he|she|they)\s+"
_JUST_HAPPENED = Guarded(re.compile(_SUBJECT + r"just\s+[\w']+"))
_PAST_VERB = Guarded(
    re.compile(
        _SUBJECT
        + r"(?:[\w']+ed\b|(?:got|put|took|made|went|said|told|called|ate|broke|fell|left|lost|won|ran|saw|found|bought|sent|threw|forgot|came|gave|hit|spilt)\b)"
    )
)
_WHEN = Guarded(
    re.compile(
        r"\b(?:yesterday|today|tonight|this (?:morning|afternoon|evening|week|weekend)|last (?:night|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|earlier today|\d+ (?:minutes|hours|days) ago)\b"
    )
)
_OPENERS = re.compile(r"^(?:(?:" + _alternation(lex.DISCOURSE_OPENERS) + r")(?:\s*,\s*|\s+))+")
_GREETING = re.compile(r"^(?:" + _alternation(lex.GREETINGS) + r")\b")
# a feeling word right after a negation is denied, not felt ("not worried", "don't love")
_NEGATED = re.compile(r"(?:^|[\s,])(?:" + _alternation(NEGATIONS) + r")\s+(?:[\w']+\s+)?$")
# one named alternative per emotion; only those whose words a turn holds are run
_EMOTION = Alternation(
    [
        (emotion, "(?<![\\w'])(?:" + _alternation(words) + ")(?![\\w'])")
        for emotion, words in lex.EMOTIONS.items()
    ]
)
_EVENTS = tuple(event for _, event in lex.LIFE_EVENT_PATTERNS)
_LIFE_EVENT = Alternation(
    [(f"e{i}", pattern) for i, (pattern, _) in enumerate(lex.LIFE_EVENT_PATTERNS)]
)
_KIN = Guarded(
    re.compile(
        r"\b(?:my|our) (?:(?:new|old|late|dear|little|big|older|younger|ex|step)[ -])?("
        + _alternation(lex.KIN_WORDS + lex.PARTNER_WORDS)
        + r")(?:'s)?\b"
    )
)
_PARTNERS = frozenset(lex.PARTNER_WORDS)
_KIN_SET = frozenset(lex.KIN_WORDS) | _PARTNERS
_CURRENCY = re.compile(r"^(?:" + _alternation(lex.CURRENCY_WORDS) + r")\s+")

# every fact rule in the order they are tried, each with its needles
_FACT_RULES = tuple(
    (Guarded(pattern), subject, predicate, event)
    for pattern, subject, predicate, event in (*FACT_PATTERNS, (THE_X_IS, "user", "", None))
)
_FACT_GUARDS = GuardedRules([rule[0] for rule in _FACT_RULES])
_UPDATE = re.compile(r"\s*(?:now|from now on|these days|anymore)\b")
_NOW = re.compile(r"\bnow\b", re.IGNORECASE)
_TRAILING_FILLER = re.compile(r"(?:\s+(?:by the way|btw|now|again|too|lol|haha))+\s*$", re.I)
_UNIT_VALUE = re.compile(
    r"(port|version|number|room|floor|level|size|line|address|plan|tier)\s+(\S*\d\S*)",
    re.IGNORECASE,
)
_VALUE_UNIT = re.compile(r"(?:the\s+)?(\S*\d\S*)\s+(floor|level|version|tier|plan)", re.IGNORECASE)
_CLOCK = re.compile(r"\d{1,2}(?:[:.]\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.)?", re.IGNORECASE)
_CALLED = re.compile(r"^(?:a|an)\s.*?\b(?:called|named)\s+(.+)$", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:a|an)\s+", re.IGNORECASE)
_OCCUPATION = Guarded(
    re.compile(
        r"\bi(?:'m| am|m) (?:now )?(?:an? )(?P<v>[a-z]+(?: [a-z]+){0,3}?)"
        + _END
        + r"|\bi(?:'m| am|m) (?:now )?(?:an? )(?P<w>[a-z]+(?: [a-z]+){0,3}?)\s+(?:at|in|from|working)\b",
        re.IGNORECASE,
    )
)
_SELF_NAME = Guarded(
    re.compile(
        r"\b(?:i'm|i am|im|this is) (?P<v>(?-i:[A-Z])[\w'’-]+)(?=\s*(?:[,.!;]|$|\s+(?:and|from|here|by)\b))",
        re.IGNORECASE,
    )
)

_ORDINARY = (
    STOPWORDS
    | lex.SENTENCE_STARTERS
    | lex.NOISE
    | frozenset(lex.DISCOURSE_OPENERS)
    | frozenset(lex.REQUEST_VERBS)
    | frozenset(lex.HYPOTHETICAL_MARKERS)
    | frozenset(lex.CONDITIONAL_OPENERS)
    | frozenset(w for words in lex.EMOTIONS.values() for w in words)
)
_EMPHASIS = STOPWORDS | frozenset(w for words in lex.EMOTIONS.values() for w in words)


class RuleNoteWriter:
    """Writes at most one tagged note per user turn, by rule."""

    def write(self, turn: Turn) -> NoteDraft | Skip:
        raw = unicodedata.normalize("NFKC", head(turn.text)).strip()
        speaker = turn.speaker or split_speaker(raw)[0]
        text = photo_sentence(without_speaker(raw, speaker).strip() or raw)
        reason = _noise_reason(text)
        if reason is not None:
            return Skip(reason)
        sentences = [
            s for s in map(without_greeting, split_questions(split_sentences(text))) if s
        ] or [text]
        among_people = speaker is not None
        kept: list[str] = []
        reasons: list[str] = []
        remarks: set[int] = set()
        chosen: set[int] = set()
        for n, s in enumerate(sentences):
            why = skip_reason(s, among_people=among_people)
            if why is None and len(sentences) > 1:
                why = _noise_reason(s)
            if why is None:
                chosen.add(n)
                kept.append(without_vocative(s))
            else:
                reasons.append(why)
                if why.startswith("a general remark"):
                    remarks.add(n)
        context: set[int] = set()
        for n in sorted(remarks):  # a remark that goes on from what was kept is context
            if (n - 1 in chosen or n - 1 in context) and _GOES_ON.match(sentences[n]):
                context.add(n)
        if context and not all(is_photo(s) for s in kept):
            # right after what the speaker says of themself, a remark that goes on about it
            # is its context ("It's a part-time position in the fashion department")
            kept = [without_vocative(s) for n, s in enumerate(sentences) if n in chosen | context]
        if reasons and kept and all(is_photo(s) for s in kept):
            kept = []  # a photo shown with nothing but a reaction: the other's, as likely
        if not kept:
            # the most telling reason: small talk only when it is all there is
            told = [r for r in reasons if not r.startswith(("small talk", "noise"))] or reasons
            return Skip(f"{told[0] if told else 'small talk'}; nothing to remember")
        sentence = _best_sentence(kept, text)
        whole = _fold(" ".join(kept))
        modality, sarcastic = _modality(sentence, whole)
        body = _body(kept, sentence) if modality is Modality.STATEMENT else [sentence]
        event: str | None = None
        key: FactKey | None = None
        value: str | None = None
        implied: str | None = None
        if modality is Modality.STATEMENT:
            for candidate in sorted(body, key=lambda s: s is not sentence):
                key, value, implied = _fact(candidate, whole)
                if key is not None:
                    break
            event = _life_event(whole) or implied
            if key is not None and speaker is not None:
                key = FactKey(speaker.lower(), key.predicate)
        entities = _entities(kept, key, value)
        if speaker is not None and speaker.lower() not in {e.lower() for e in entities}:
            entities = (speaker, *entities)[:8]
        emotion = _emotion(whole, event, sarcastic=sarcastic)
        importance = _importance(" ".join(body), modality, event, key, entities)
        tags = Tags(
            modality=modality,
            entities=entities,
            emotion=emotion,
            importance=importance,
            key=key,
            value=value,
            event=event,
        )
        subject = speaker or "the user"
        note = " ".join(_note_text(s, modality, subject) for s in body)
        return NoteDraft(text=note, tags=tags)


def _body(kept: list[str], best: str) -> list[str]:
    """The sentences a statement's note keeps: the informative ones (not questions to the
    listener), in the turn's order, within the word bound; the best one always."""
    statements = [s for s in kept if not is_question(s)] or [best]
    if sum(len(s.split()) for s in statements) <= _MAX_NOTE_WORDS:
        return statements
    chosen = {id(best)}
    budget = _MAX_NOTE_WORDS - len(best.split())
    for sentence in sorted(statements, key=_weight, reverse=True):
        size = len(sentence.split())
        if id(sentence) not in chosen and size <= budget:
            chosen.add(id(sentence))
            budget -= size
    return [s for s in statements if id(s) in chosen] or [best]


def _fold(text: str) -> str:
    return text.lower().replace("’", "'")


def _noise_reason(text: str) -> str | None:
    found = WORD.findall(text)
    if not found:
        return "no words: emoji or punctuation only"
    # one substitution for all the words at once: a run of a repeated character never
    # spans the single space between two words
    joined = _REPEATS.sub(r"\1", _fold(" ".join(found)))
    words = joined.split(" ")
    if joined in lex.NOISE_PHRASES or (len(words) <= 3 and all(_is_noise_word(w) for w in words)):
        return f"noise: {joined!r} carries nothing to remember"
    if len(words) == 1 and len(words[0]) <= 2:
        return f"noise: {joined!r} is too short to mean anything"
    if (
        len(words) <= 8
        and all(_is_noise_word(w) or w in lex.FILLER for w in words)
        and any(_is_noise_word(w) for w in words)
    ):
        return f"noise: {joined!r} is an acknowledgement"
    return None


def _is_noise_word(word: str) -> bool:
    return word in lex.NOISE or _NOISE_WORD.fullmatch(word) is not None


def _weight(sentence: str) -> float:
    """How much a sentence tells: its length, a life event, a fact, the names in it."""
    lowered = _fold(sentence)
    score = min(len(WORD.findall(sentence)), 25) / 25
    score += 2.0 if _life_event(lowered) else 0.0
    score += 1.5 if _fact(sentence, lowered)[0] is not None else 0.0
    score += 0.5 * len(_entities([sentence], None, None))
    score -= 1.0 if _noise_reason(sentence) else 0.0
    score -= 0.5 if is_question(sentence) else 0.0
    return score


def _best_sentence(sentences: list[str], text: str) -> str:
    best = sentences[0] if len(sentences) == 1 else max(sentences, key=_weight)
    words = best.split()
    if len(words) > _MAX_NOTE_WORDS:
        best = " ".join(words[:_MAX_NOTE_WORDS]) + " …"
    return best


def _modality(sentence: str, whole: str) -> tuple[Modality, bool]:
    """How the turn was meant, and whether it was sarcastic."""
    lowered = _strip_openers(_fold(sentence).strip())
    whole_folded, lowered_folded = folded(whole), folded(lowered)
    if _QUOTE.search(whole, whole_folded):
        return Modality.QUOTE, False
    # a clause is part of the whole turn: when the turn lacks the needles, so does each clause
    if _SARCASM.possible(whole_folded) and (
        _SARCASM.pattern.search(whole) or any(_SARCASM.pattern.search(s) for s in _clauses(whole))
    ):
        return Modality.JOKE, True
    if _EXPLICIT_JOKE.search(whole, whole_folded):
        return Modality.JOKE, False
    question = lowered.endswith("?") or QUESTION_START.match(lowered) is not None
    hypothetical = (
        _HYPOTHETICAL.search(lowered, lowered_folded) is not None
        or _CONDITIONAL.match(lowered) is not None
        or _IF_PAST.search(lowered, lowered_folded) is not None
    )
    if (
        (_LAUGHTER.search(whole, whole_folded) or _LAUGHTER_EMOJI.search(whole))
        and not question
        and not hypothetical
        and not _JUST_HAPPENED.search(whole, whole_folded)
        and not (_PAST_VERB.search(whole, whole_folded) and _WHEN.search(whole, whole_folded))
        # "ditched VS Code for Neovim lol", "turns out I'm O positive lol": a change told
        # with a laugh is still the change
        and not says_change(whole)
    ):
        return Modality.JOKE, False
    if hypothetical:
        return Modality.HYPOTHETICAL, False
    if question:
        return Modality.QUESTION, False
    return Modality.STATEMENT, False


def _clauses(whole: str) -> list[str]:
    """The turn's sentences, folded, for patterns anchored at a sentence start."""
    return [_strip_openers(s) for s in split_sentences(whole)[1:]]


def _strip_openers(lowered: str) -> str:
    return _OPENERS.sub("", lowered, count=1) if lowered else lowered


def _life_event(lowered: str) -> str | None:
    pattern = _LIFE_EVENT.narrowed(folded(lowered))
    match = pattern.search(lowered) if pattern is not None else None
    if match is None or match.lastgroup is None:
        return None
    return _EVENTS[int(match.lastgroup[1:])]


def _fact(sentence: str, whole: str) -> tuple[FactKey | None, str | None, str | None]:
    """The changeable fact a statement states, as (key, value, implied event)."""
    body = _strip_openers_keep_case(sentence)
    body_folded = folded(body)
    for rule in _FACT_GUARDS.possible(body_folded):
        guarded, subject, predicate, event = _FACT_RULES[rule]
        match = guarded.pattern.search(body)
        if not match:
            continue
        groups = match.groupdict()
        raw = groups.get("v") or groups.get("w")
        if not raw:
            continue
        value = _clean_value(raw)
        if not predicate:
            predicate, value = _predicate(groups.get("p") or "", value, match, body)
        if value and subject and predicate and fits(predicate, value):
            return FactKey(subject, predicate), value, event
    match = _OCCUPATION.search(body, body_folded)
    if match:
        value = match.group("v") or match.group("w")
        if fits("job", value):  # "a nurse", not "a huge Celtic supporter"
            return FactKey("user", "job"), value.lower(), None
    if _GREETING.match(whole):
        match = _SELF_NAME.search(body, body_folded)
        if match and match.group("v").lower() not in _ORDINARY:
            return FactKey("user", "name"), match.group("v"), None
    return None, None, None


def _strip_openers_keep_case(sentence: str) -> str:
    stripped = _strip_openers(_fold(sentence))
    return sentence[len(sentence) - len(stripped) :] if stripped else sentence


def _clean_value(raw: str) -> str:
    value = _TRAILING_FILLER.sub("", raw).strip(" '’\"")
    called = _CALLED.match(value)
    if called:
        return called.group(1).strip(" '’\"")
    return _ARTICLE.sub("", value)


# words no slot's name holds: a "predicate" with one spans two clauses, or an adverb
# ("my cousin just moved")
_NOT_IN_A_PREDICATE = frozenset(
    "so and but because then when while since if or just also still really finally".split()
)


def _predicate(raw: str, value: str, match: re.Match[str], body: str) -> tuple[str, str]:
    """The predicate named by a generic "my X is Y" pattern, or "" when it is not a fact."""
    predicate = _CURRENCY.sub("", raw.strip().lower())
    if set(predicate.split()) & _NOT_IN_A_PREDICATE:
        # "our group so Tomasz is my manager": a clause ran into the next, no slot's name
        return "", value
    if predicate in _KIN_SET:
        # "my manager is Deepa": a person's name; "my sister is 30": not the user's fact
        if not value[:1].isupper():
            return "", value
        return ("partner" if predicate in _PARTNERS else predicate), value
    if predicate.split()[-1:] and predicate.split()[-1] in _KIN_SET:
        return "", value
    if match.re is THE_X_IS:
        if not (
            _NUMBER.search(value)
            or predicate.split()[-1] in lex.SETTING_NOUNS
            or _UPDATE.match(body, match.end("v"))
            or _NOW.search(body, match.start(), match.start("v"))
        ):
            return "", value
        if match.group("prep") == "at" and _CLOCK.fullmatch(value):
            return f"{predicate} time", value
    # "the server moved to port 8001" and "our server port is 8000" share a key
    unit = _UNIT_VALUE.fullmatch(value)
    if unit and not predicate.endswith(unit.group(1).lower()):
        return f"{predicate} {unit.group(1).lower()}", unit.group(2)
    unit = _VALUE_UNIT.fullmatch(value)
    if unit and not predicate.endswith(unit.group(2).lower()):
        return f"{predicate} {unit.group(2).lower()}", unit.group(1)
    return predicate, value


def _entities(sentences: list[str], key: FactKey | None, value: str | None) -> tuple[str, ...]:
    found: list[str] = []
    seen: set[str] = set()

    def add(name: str) -> None:
        if name and name.lower() not in seen:
            seen.add(name.lower())
            found.append(name)

    for sentence in sentences:
        for part in _AFTER_COLON.split(sentence):
            _names(part, add)
    if key is not None and value and key.predicate in ("city", "employer", "name", "partner"):
        add(value)
    for sentence in sentences:
        lowered = _fold(sentence)
        if _KIN.possible(folded(lowered)):
            for match in _KIN.pattern.finditer(lowered):
                add(match.group(1))
    return tuple(found[:8])


_AFTER_COLON = re.compile(r"(?<=:)\s+")


def _names(sentence: str, add: Callable[[str], None]) -> None:
    stripped = sentence.lstrip(" \"'“(")
    offset = len(sentence) - len(stripped)
    for match in _CAPITALISED.finditer(sentence):
        words = match.group(1).split()
        if match.start() == offset and _ordinary_word(words[0]):
            words = words[1:]  # an ordinary first word is capitalised only by position
        words = [w for w in words if w not in ("I", "I'm", "I've", "I'll", "I'd", "I’m")]
        while words and _common_caps(words[0]):
            words = words[1:]
        while words and _common_caps(words[-1]):
            words = words[:-1]
        if not words or (len(words) == 1 and words[0].lower() in lex.MONTHS_AND_DAYS):
            continue
        add(" ".join(words).strip(" ,.'’"))


def _ordinary_word(word: str) -> bool:
    lowered = word.lower().replace("’", "'").rstrip(".,:;!?")
    return (
        lowered in _ORDINARY
        or _CONTRACTION.search(lowered) is not None
        or (len(lowered) > 4 and lowered.endswith(("ed", "ing", "ly")))
    )


def _common_caps(word: str) -> bool:
    """An abbreviation that is a common noun (PhD, API) or a shouted ordinary word."""
    lowered = word.lower().rstrip(".,:;!?")
    if lowered in lex.COMMON_ACRONYMS:
        return True
    return word.isupper() and len(word) > 1 and lowered in _EMPHASIS


def _emotion(lowered: str, event: str | None, *, sarcastic: bool) -> str | None:
    emotion: str | None = None
    pattern = _EMOTION.narrowed(folded(lowered))
    for match in pattern.finditer(lowered) if pattern is not None else ():
        if _NEGATED.search(lowered, max(0, match.start() - 24), match.start()):
            continue
        emotion = match.lastgroup
        break
    if sarcastic:
        # praise in sarcasm means the opposite: annoyance
        return "anger" if emotion in (None, "joy") else emotion
    if emotion is None and event == "death":
        return "sadness"
    if emotion is None and event in lex.HAPPY_EVENTS and "!" in lowered:
        return "joy"
    return emotion


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
    score += min(0.1, len(WORD.findall(sentence)) / 200)
    if modality is Modality.JOKE:
        score *= 0.4
    elif modality in (Modality.QUESTION, Modality.HYPOTHETICAL, Modality.QUOTE):
        score *= 0.6
    return round(min(1.0, score), 3)


def _note_text(sentence: str, modality: Modality, subject: str = "the user") -> str:
    body = sentence.strip().strip('"“”')
    body = _WHITESPACE.sub(" ", body)
    body = _strip_openers_keep_case(body)
    body = _LABEL_PREFIX.sub("", body)
    if modality is Modality.STATEMENT:
        body = _LAUGH_EDGES.sub("", body).strip() or body
        said = body
        body = formal(body)
        dropped = dropped_subject(body)
        if dropped is not None:  # "Got laid off today" -> "I got laid off today"
            body = f"{dropped} {body[:1].lower()}{body[1:]}"
        rewritten = third_person(body, subject)
        if rewritten is None:
            # no rewrite that is sure to be right: the speaker's own words
            return f"{capitalise(subject)} says: “{said.rstrip(' ')}”"
        return capitalise(rewritten.rstrip(" .!") + ".")
    verb = {
        Modality.QUESTION: "asks",
        Modality.JOKE: "jokes",
        Modality.HYPOTHETICAL: "wonders hypothetically",
        Modality.QUOTE: "refers to what the assistant said",
    }[modality]
    return f"{capitalise(subject)} {verb}: “{body.rstrip()}”"


_WHITESPACE = re.compile(r"\s+")
# a sentence that goes on about the one before: "It's ...", "They ...", "There ..."
_GOES_ON = re.compile(
    r"^(?:it|it's|its|that|that's|this|they|they're|he|she|there|there's|which|both"
    r"|gonna be|going to be)\b",
    re.IGNORECASE,
)
_LABEL_PREFIX = re.compile(r"^(?:update|fyi|btw|news|edit|note|ps)\s*:\s*", re.IGNORECASE)
_LAUGH_EDGES = re.compile(
    r"^(?:(?:"
    + _alternation(lex.LAUGHTER_MARKERS)
    + r")\w*[\s,!.]+)+|(?:[\s,]+(?:"
    + _alternation(lex.LAUGHTER_MARKERS)
    + r")\w*)+[\s!.]*$",
    re.IGNORECASE,
)
