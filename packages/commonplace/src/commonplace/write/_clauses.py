"""What of a chat turn is worth a note: who spoke, and which sentences carry something.

A real chat turn wraps its substance in small talk: "Hey Mel! Good to see you! I went to
a support group yesterday. How have you been?" holds one thing to remember. A note says
something about the speaker (their life, plans, people, likes, things, events, feelings,
decisions); what a speaker says to or about the listener does not: courtesy, reactions
to what the other said, encouragement and advice, questions to the other person, and
general remarks about no one. The rule writer keeps the sentences that say something
about the speaker, in order and bounded in words, and a turn made only of the others is
skipped with the reason (the turn stays an episode: evidence, not a note).

A transcript names its speaker before a colon ("Caroline: I went to ..."); the note then
says "Caroline went to ..." instead of "the user went to ...". The name is read here,
once, for the writer and for :meth:`Memory.turn`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .._text import STOPWORDS, WORD
from . import _lexicon as lex
from ._verbs import PAST_FORMS


def _alternation(phrases: tuple[str, ...] | frozenset[str]) -> str:
    return "|".join(re.escape(p) for p in sorted(set(phrases), key=len, reverse=True))


_SPEAKER = re.compile(r"^\s*(?P<name>[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,2})\s*:\s+(?=\S)")
_PLEASANTRY = re.compile(r"(?:" + "|".join(f"(?:{p})" for p in lex.PLEASANTRY_PATTERNS) + r")")
# Capitalised words: names said to the listener ("Hey Mel!", "Thanks, Caroline.") are
# left out before small talk is recognised; "I" stays.
_NAME_WORD = re.compile(r"\b(?!I\b|I['’])[A-Z][\w'’-]*")
# "[shares a photo: a photo of a cake]", as transcripts note an image
_PHOTO = re.compile(
    r"\[shares? an? (photo|picture|image|video)\s*:\s*"
    r"(?:an? (?:photo|photograph|photography|picture|image|video) of\s+)?([^\]]+)\]"
)
# A sentence that opens as a question does, with or without its question mark.
QUESTION_START = re.compile(
    r"^(?:(?:" + _alternation(lex.QUESTION_WORDS) + r")(?:'s|s|'re|'d|'ll)?\b"
    r"|(?:"
    + _alternation(lex.QUESTION_AUXILIARIES)
    + r") (?:"
    + _alternation(lex.QUESTION_SUBJECTS)
    + r")\b"
    r"|(?:" + _alternation(lex.QUESTION_OPENERS) + r")\b"
    r"|(?:" + _alternation(lex.REQUEST_VERBS) + r")\b(?! (?:i|we)\b)"
    r"|" + "|".join(f"(?:{p})" for p in lex.REQUEST_PATTERNS) + r")"
)
# A question put to the listener about themselves: "how did you ...", "are you ...".
_TO_THE_LISTENER = re.compile(
    r"^(?:(?:" + _alternation(lex.QUESTION_WORDS) + r")(?:'s|s)?\s+(?:\w+\s+){0,3}?)?"
    r"(?:" + _alternation(lex.QUESTION_AUXILIARIES) + r"|got|ever)\s+(?:you|u|ya|your)\b"
    r"|^(?:you|u|ya)\b|^(?:what|how) about (?:you|your)\b|^and (?:you|your)\b"
)
# ... unless it asks the listener about the speaker's own matter
_ABOUT_ME = re.compile(
    r"\b(?:you|u) (?:think|reckon|suggest|recommend) (?:i|we|my|our)\b|\bshould (?:i|we)\b"
    r"|\b(?:help|remind|tell|show|teach) (?:me|us)\b.*\b(?:my|our)\b"
    r"|\bhelp (?:me|us) (?:" + "|".join(lex.TASK_VERBS) + r")\b"
)
_LISTENER_ATTITUDE = re.compile(
    r"^(?:(?:and|but|so|oh|honestly|seriously|well)\s+)*(?:i|i'm|im|i've|i'll|i'd|we|we're)"
    r"(?:\s+(?:\w+ly|so|really|just|always|also|too|still|even|definitely|all|very))*"
    r"\s*(?:" + lex.LISTENER_ATTITUDES + r")\b"
)
_SUBJECTLESS_ATTITUDE = re.compile(r"^(?:so |really |just )?" + lex.SUBJECTLESS_ATTITUDES)
_IMPERATIVE = re.compile(
    r"^(?:(?:oh|so|and|but|just|please|pls|now|then|hey)\s+)*(?:"
    + _alternation(lex.IMPERATIVE_VERBS)
    + r")\b(?!['’])"
)
_ADVICE = re.compile(
    r"^(?:(?:and|but|so|oh|honestly|seriously)\s+)*(?:you|u|ya)\s+"
    r"(?:should|could|must|might|may|need|gotta|have to|ought|can|will|'ll|would|'d|are gonna"
    r"|are going to|got this|deserve|rock|rule)\b|^(?:you|u)'(?:ll|d|re|ve)\b"
)
# a first person the note is about: "I", "my", "we" ..., not the "me" of "tell me", "let me"
_OBJECT_ME = re.compile(
    r"\b(?:let (?:me|us) know|(?:tell|give|show|send|remind|ask|text|call|teach) (?:me|us)"
    r"|help (?:me|us) (?!" + "|".join(lex.TASK_VERBS) + r"))\b"
)
# A statement whose first word is a past or negated verb, or a verb of wanting or
# feeling, dropped its "I" ("Need a new laptop", "have to check the floor").
_SUBJECTLESS = re.compile(
    r"^(?:just |finally |also |still |really |totally |never |recently )?(?:[a-z]{3,}ed|"
    + _alternation(PAST_FORMS)
    + r"|can't|cannot|couldn't|didn't|don't|won't|wasn't|haven't|have to|need|want|love|like"
    r"|hope|miss|wish|hate|prefer|plan|guess|reckon)\b(?! (?:is|was|are|were|'s|and|or|can)\b)",
    re.IGNORECASE,
)
# "Juggling both my passions can be tricky": the -ing phrase is the subject of a verb of
# its own, so no "I'm" was dropped before it
_GERUND_SUBJECT = re.compile(
    r"^(?:just |still |also |currently )?[a-z]+ing\b"
    # up to its verb, past commas that list ("accepted, loved and supported has"), not
    # into a clause of its own ("working from home, the wifi keeps dropping")
    r"(?:[^;:.!?—,]|,(?!\s*(?:the|a|an|my|your|our|his|her|their|this|that|it|i|we|he|she"
    r"|they|you)\b))*?"
    r"(?<!\bi )(?<!\bhe )(?<!\bshe )(?<!\bthey )(?<!\bwe )(?<!\byou )"
    # a gerund subject is singular: "makes", never the "make" of "that'll make 'em ..."
    r"\b(?:is|was|are|were|isn't|wasn't|'s|can|could|will|would|makes|made|helps|helped"
    r"|gives|gave|keeps|kept|brings|brought|has|had|means|meant|seems|feels|sounds|looks"
    r"|takes|took|gets|got|reminds|lets|allows)\b",
    re.IGNORECASE,
)


# A statement opening with a verb in -ing (or "gonna") has dropped its "I'm".
_GERUND_START = re.compile(
    r"^(?:just |still |also |currently |mostly |usually |lately |now |finally |really )?"
    r"(?:(?:gonna|going to)(?! be\b)|planning to|trying to"
    r"|hoping to|"
    r"(?!(?:morning|evening|nothing|something|anything|everything|thing|spring|king|ring|"
    r"wedding|building|meeting|painting|feeling|being|ceiling|during|string|swing|sibling|"
    r"clothing|darling|earring|offspring|setting|timing|training|reading|writing|singing|"
    r"dancing|swimming|cooking|hiking|running|camping|fishing|gardening|shopping)\b)"
    r"[a-z]{2,}ing) [a-z]",
    re.IGNORECASE,
)
# "Been having some tough times lately": a present perfect that dropped its "I've"
_BEEN_START = re.compile(r"^(?:just |never |also |recently |finally )?been\b", re.IGNORECASE)


_BEEN_IT = re.compile(
    r"^(?:just |also |finally )?been (?:a|an|the|such|quite|kind of|kinda|one)\b", re.IGNORECASE
)


def dropped_subject(sentence: str) -> str | None:
    """The "I", "I'm" or "I've" a statement dropped before its first word ("Got laid off
    today", "Researching agencies", "Been busy lately"), or None when it has a subject."""
    if _SUBJECTLESS.match(sentence):
        return "I"
    if _GERUND_START.match(sentence) and not _GERUND_SUBJECT.match(sentence):
        return "I'm"
    if _BEEN_START.match(sentence):
        # "Been a long road", "Been so busy lately": what dropped was "It's"
        return "It's" if _BEEN_IT.match(sentence) else "I've"
    return None


_MAX_REACTION_WORDS = 6
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


def skip_reason(sentence: str, *, among_people: bool = False) -> str | None:
    """Why ``sentence`` tells nothing to remember about its speaker, or None when it may.

    The reasons start with what the sentence is: ``small talk`` (greetings, thanks,
    farewells, stock reactions), ``a reaction to the listener``, ``advice or
    encouragement to the listener``, ``a question to the other person``, ``a general
    question`` (nothing about the speaker), ``a general remark``. ``among_people``: the
    turn is from a named speaker talking to another person; talking to an assistant, an
    instruction ("always answer in Spanish") is the user's preference, not advice, and
    "I told you I'm vegetarian" is about the user.
    """
    sentence = _LAST_VOCATIVE.sub("", without_vocative(sentence)).strip() or sentence
    lowered = _folded(sentence)
    unnamed = " ".join(WORD.findall(_folded(_NAME_WORD.sub(_unnamed, sentence))))
    if not unnamed:
        # only names: an answer such as "Porto!" to an assistant, or a greeting's name
        return f"small talk: {lowered.strip(' !.,')!r}" if among_people else None
    if _PLEASANTRY.fullmatch(unnamed) or _COURTESY.match(unnamed):
        return f"small talk: {unnamed!r}"
    said = " ".join(WORD.findall(lowered))  # what the reasons quote
    # among people an unmarked "Do your research ..." is advice; to an assistant, "is
    # there a train to Bratislava" is a question without its question mark
    opens = QUESTION_START.match(lowered)
    if is_question(sentence) or (opens is not None and not among_people):
        return _question_reason(lowered, said, among_people=among_people)
    words = unnamed.split()
    first = _speaks_of_self(lowered) or dropped_subject(sentence) is not None
    why = _to_the_listener(lowered, words, first=first, among_people=among_people)
    if why is not None:
        return f"{why}: {said!r}"
    if first:
        if among_people and _pep_talk(lowered):
            return f"a general remark, nothing about the speaker: {said!r}"
        return None
    if any(c.isdigit() for c in unnamed) or _names_someone(sentence):
        return None  # "Ana starts at Canva in May", "The Arch has great walls"
    if _told_what_happened(lowered) and not _EVERYONE.search(lowered):
        return None  # what happened: "The pride event was awesome", "The sky was clear"
    if len(words) <= _MAX_REACTION_WORDS and lex.EVALUATIVE_WORDS & set(words):
        return f"a reaction to the listener: {said!r}"
    if not among_people and _states_a_thing(said.split()):
        # told to an assistant, a statement about a thing of the user's world ("The finance
        # folder holds invoices", "Code review needs two approvals") is said so that the
        # assistant knows it; among people such a line is mostly a remark in passing
        return None
    return f"a general remark, nothing about the speaker: {said!r}"


def _states_a_thing(words: Sequence[str]) -> bool:
    """Whether a sentence (its lower-cased words) states something about a thing: a few
    words, not opened by a sound, a discourse word or a pointer at what was just said
    ("ooh the curry sounds good", "that worked", "ok cheers talk later"), nor on a subject
    that names nothing in particular ("Family is everything"), and judging nothing."""
    return (
        len(words) >= _MIN_THING_WORDS
        and words[0] not in lex.NOISE
        and words[0] not in lex.DISCOURSE_OPENERS
        and words[0] not in _POINTERS
        and words[0] not in lex.GENERIC_SUBJECTS
        and not lex.EVALUATIVE_WORDS & set(words)
        and not _SOUND.fullmatch(words[0])
    )


_MIN_THING_WORDS = 4
# what points back at the conversation rather than at a thing ("that worked", "this helps")
_POINTERS = frozenset("that that's thats this it it's its these those there's theres".split())
# "ooh", "ahh", "hmmm": sounds, not subjects
_SOUND = re.compile(r"(?:o+h+|a+h+|u+g+h+|h+m+|e+h+|m+)")


def _question_reason(lowered: str, said: str, *, among_people: bool) -> str | None:
    """Why a question is not worth a note: it is put to the other person, or it asks
    about nothing of the speaker's. None for the speaker's own matter (an open thread)."""
    # a question that dropped its subject dropped "you": "Got any tips?", "Been long?"
    if (
        _speaks_of_self(lowered)
        and not _HELP_OFFERED.search(lowered)
        and not (
            _TO_THE_LISTENER.match(lowered)
            and not _ABOUT_ME.search(lowered)
            and not _possessive(lowered)
        )
    ):
        return None  # "can you draft my report?", "what do you think I should do?"
    if among_people or any(w in lex.SECOND_PERSON_WORDS for w in WORD.findall(lowered)):
        return f"a question to the other person: {said!r}"
    return f"a general question, nothing about the speaker: {said!r}"


def _to_the_listener(
    lowered: str, words: list[str], *, first: bool, among_people: bool
) -> str | None:
    """What a statement says to the listener rather than about the speaker: a reaction,
    an offer, advice or encouragement (the class of the skip reason), or None."""
    addressed = any(w in lex.SECOND_PERSON_WORDS for w in words)
    mine = _possessive(lowered)
    if not mine and (
        (_EVALUATION.match(lowered) and not _speaks_of_self(lowered))
        or _OFFER.match(lowered)
        or _SUBJECTLESS_ATTITUDE.match(lowered)
        or (addressed and _LISTENER_ATTITUDE.match(lowered))
        or (among_people and _SHOWN.match(lowered))
    ):
        return "a reaction to the listener"
    if _ADVICE.match(lowered) and not first:
        return "advice or encouragement to the listener"
    if _IMPERATIVE.match(lowered) and not mine and not first:
        if not among_people and set(words) & lex.INSTRUCTION_WORDS:
            return None  # "always answer in Spanish": a standing instruction
        return "advice or encouragement to the listener"
    if addressed and among_people and not mine and not _told_what_happened(lowered):
        # "your success inspires me", "I know you can do it": about the listener, with
        # nothing of the speaker's own
        return "a reaction to the listener"
    if addressed and not first:
        return "a reaction to the listener"  # "Your empathy will help people"
    return None


def _possessive(lowered: str) -> bool:
    """Whether the sentence names a thing of the speaker's ("my", "our"), other than the
    idioms of a reaction ("show my support", "my best", "my thanks")."""
    rest = _IDIOMS.sub(" ", lowered)
    return any(w in _POSSESSIVES for w in WORD.findall(rest))


_POSSESSIVES = frozenset("my mine our ours".split())


def _told_what_happened(lowered: str) -> bool:
    """Whether the sentence tells what happened, in a simple past ("the sky was clear",
    "I saw you at the gym"), not a participle ("can be found") or a guess ("must have
    been")."""
    if _SURMISE.search(lowered):
        return False
    for match in _PAST.finditer(lowered):
        before = lowered[: match.start()].split()[-1:]
        if not before or before[0] not in _BEFORE_PARTICIPLES:
            return True
    return False


_PAST = re.compile(r"\b(?:was|were|had|did|\w{3,}ed|" + "|".join(PAST_FORMS) + r")\b")
_BEFORE_PARTICIPLES = frozenset(
    """be been being is are am get gets got getting have has having can could will would
    should might may must to feel feels so very too really""".split()
)
# "That must have been special": a guess at the listener's experience
_SURMISE = re.compile(r"\bmust(?:'ve| have)\b|\bmust be\b")
_IDIOMS = re.compile(
    r"\b(?:my|our) (?:support|best|love|thanks|gratitude|respect|condolences|congrats"
    r"|congratulations|pleasure|heart|corner|back|side|friend|buddy|dear|goodness|god|gosh"
    r"|man|guy|dude|bro|mate|girl|boy|darling|love|word|bad)\b"
)
# "is there anything I can do?", "need any help?": an offer put as a question
_HELP_OFFERED = re.compile(
    r"\b(?:anything|something) (?:i|we) can do\b|\bcan (?:i|we) help\b|\bneed (?:any |a )?hand\b"
    r"|\bneed (?:any )?help\b|\bwant (?:me|us) to\b"
)
# Sentences made only of these words are a pep talk, whoever speaks: "I'm gonna keep
# going and reach my dreams", "Won't let anything hold me back!"
_MOTIVATION = re.compile(
    r"(?:(?:keep|keeps|kept|going|pushing|push|chasing|chase|chasin|dream|dreams|goal|goals"
    r"|success|successful|quit|quitting|give|giving|believe|believing|myself|yourself"
    r"|hard|harder|work|working|motivated|motivate|motivates|positive|optimistic|stop"
    r"|forward|moving|move|strong|stronger|determined|best|try|trying|make|happen|reach"
    r"|achieve|focus|focused|plugging|away|let|hold|back|anything|nothing|matter|tough"
    r"|rough|bumpy|challenge|challenges|way|things|life|journey|win|fight|fighting|grind"
    r"|hustle|hustling|faith|hope|hopeful|up|stay|staying|never|always|ever|gonna|going"
    r"|won't|will|can|do|get|got|there|through|it|this|all|everything|something"
    r"|possible|sure|end|eventually|one|day|soon|effort|pay|pays|off|worth|sometimes|when"
    r"|if|go|goes|handle|tackle|obstacle|obstacles|setback|setbacks|proud|made|hearts|heart"
    r"|put|pursuing|pursue|down|worry|worries|let|improve|grow|growing"
    r"|learn|learning|keeps|going|ahead|big|huge|come|true|resilient|focused|key|confident"
    r"|pumped|stoked|excited|inspired|inspire|inspiring|determined|succeed|memories|cool"
    r"|awesome|great|amazing|fun|together|support|motivation|oomph|struggles|struggle)\s*)+"
)


def _pep_talk(lowered: str) -> bool:
    """Whether the sentence is mostly the words of a pep talk: "I'm gonna keep going and
    make my dreams come true", "Won't let anything hold me back!"."""
    words = _content_words(lowered)
    if not words:
        return False
    common = sum(_MOTIVATION.fullmatch(w) is not None for w in words)
    return common >= _PEP_TALK_SHARE * len(words)


_PEP_TALK_SHARE = 0.75


def _content_words(lowered: str) -> list[str]:
    """The words of ``lowered`` that say something: not stop words or first-person ones."""
    return [
        w
        for w in WORD.findall(lowered)
        if w not in STOPWORDS and w not in lex.FIRST_PERSON_WORDS and "'" not in w
    ]


def without_vocative(sentence: str) -> str:
    """``sentence`` without the listener's name said to them first ("Wow, Mel, that ...")
    and a leading "you know," or "I mean,". A name at the end stays: "..., Sweden" is as
    likely as "..., Mel"."""
    for _ in range(2):
        sentence = _VOCATIVE.sub(_unless_ordinary, sentence).strip() or sentence
    return _FILLER_LEAD.sub("", sentence) or sentence


def _unless_ordinary(match: re.Match[str]) -> str:
    """Nothing for a name said to the listener; the words themselves when the "name" is
    an ordinary word ("Thanks, ...", "Wow, ...") that only its place capitalised."""
    name = match.group("name")
    return match.group(0) if _unnamed_word(name) != " " else ""


_FILLER_LEAD = re.compile(
    r"^(?:you know|ya know|i mean|to be honest|tbh|honestly|anyway|anyways)\b\s*,?\s*",
    re.IGNORECASE,
)
# "Mel, ...", "..., Caroline": the listener's name said to them
_VOCATIVE = re.compile(
    r"^(?:(?:hey|hi|oh|wow|yes|yeah|yep|so|aw+|thanks|ok)\s+)?(?P<name>(?-i:[A-Z][\w'’-]+))\s*,\s+"
    r"(?=\S)",
    re.IGNORECASE,
)
# when telling what a sentence is, a name at its end is the listener's: "That's huge, Mel!"
_LAST_VOCATIVE = re.compile(r",\s*(?-i:[A-Z][\w'’-]+)\s*(?=[.!?]*$)")
# thanks, "it means a lot", "I'll keep you posted": courtesy, whatever follows
_COURTESY = re.compile(
    r"^(?:thanks|thank you|thx|ty|cheers|many thanks|much appreciated)\b"
    r"|^(?:i |we )?(?:really |so |truly |totally |just )*(?:appreciate|appreciated) "
    r"(?:it|that|this|you|your|ya|the|all|our friendship|everything)\b"
    r"|^(?:it|that|this|your \w+(?: \w+)?|you|those words) (?:really |truly |just )*"
    r"(?:means?|meant) (?:a lot|so much|the world|a ton)"
    r"|^(?:i'll |will )?(?:keep|let) (?:you|ya|u) (?:posted|know|updated)\b"
    r"|^(?:talk|speak|chat|see) (?:to |with )?(?:you|ya|u)? ?(?:soon|later|then)\b"
    r"|^(?:bye|byee+|cya|later|gtg|g2g|ttyl)\b"
)
# "It's great to see ...", "How cool that ...": an evaluation of what the other said
_EVALUATION = re.compile(
    r"^(?:(?:sounds|looks|seems) like\b"
    r"|(?:i )?hope (?:it|that|things|everything|all|they)\b"
    r"|(?:it's|it is|it was|that's|that is|how|what a|so|such a|must be|must have been"
    r"|must've been) "
    r"(?:(?:so|really|very|super|just|truly|always|such an?) )*(?:great|awesome|amazing|cool"
    r"|nice|wonderful|inspiring|lovely|good|sweet|special|important|crucial|key|vital|tough"
    r"|hard|sad|beautiful|incredible|fantastic|heartwarming|rewarding|freeing|exciting|fun"
    r"|touching|powerful|brave|impressive)\b)"
)
# an offer to the listener: "I'd love to see it", "I bet they love it"
_OFFER = re.compile(
    r"^(?:i'd|i would|i'll|i will) (?:\w+ly |really |so |definitely )*(?:love to|be happy to"
    r"|be glad to) (?:see|hear|check|help|meet|know|read|try|join|come|lend)\b|^(?:i )?bet\b"
)
# "Love the necklace!", "Loving the colours": among people, a word on what was shown
_SHOWN = re.compile(
    r"^(?:so |really |just )?(?:love|loving|adore|like|digging) (?:the|that|this|those|these"
    r"|all)\b"
)


def _names_someone(sentence: str) -> bool:
    """Whether a capitalised word is a name: not "I", not a word capitalised for emphasis
    or as a greeting's, and, first in the sentence (where any word is capitalised), not a
    word of the kind a remark opens with ("Family is everything", "Loving the view")."""
    found = WORD.findall(sentence)
    if not found:
        return False
    head, rest = found[0], found[1:]
    if any(_NAME_WORD.fullmatch(w) and _unnamed_word(w) == " " for w in rest):
        return True
    lowered = _folded(head)
    # first, a name is the subject of a verb: "Joana loves climbing", "Ana is a nurse"
    return (
        _NAME_WORD.fullmatch(head) is not None
        and _unnamed_word(head) == " "
        and lowered not in lex.GENERIC_SUBJECTS
        and not lowered.endswith(("ing", "ly", "ed"))
        and bool(rest)
        and _verb_after_name(_folded(rest[0]))
    )


def _verb_after_name(word: str) -> bool:
    """Whether ``word`` reads as the verb of a name before it ("loves", "is", "moved")."""
    return (
        word in _AFTER_A_NAME
        or word in PAST_FORMS
        or (len(word) > 3 and word.endswith(("s", "ed")) and not word.endswith("ss"))
    )


_AFTER_A_NAME = frozenset(
    """is was has had will would can could just also still never always and 's isn't
    wasn't hasn't won't can't doesn't didn't""".split()
)


def _folded(text: str) -> str:
    return text.lower().replace("’", "'")


def _speaks_of_self(lowered: str) -> bool:
    """Whether the sentence says something of its speaker: a first-person word other
    than the object of a request ("let me know", "tell me"), and not only the "we" of
    everyone ("we all have our paths", "we can do this", "taking care of ourselves")."""
    words = WORD.findall(_OBJECT_ME.sub(" ", _IDIOMS.sub(" ", lowered)))
    mine = [w for w in words if w in lex.FIRST_PERSON_WORDS]
    if not mine:
        return False
    if any(w not in _PLURAL for w in mine):
        return True
    # only "we": what the speaker does with others ("we played games", "we enjoy hiking"),
    # not what everyone can ("we can do it") or what is done to everyone ("it brings us")
    return _EVERYONE.search(lowered) is None and (any(w in _WE for w in mine) or _our_own(lowered))


def _our_own(lowered: str) -> bool:
    """Whether an "our" names the speaker's own thing ("our sprint", "our kids"), not one
    shared with everyone ("our army", "our dreams")."""
    return any(m.group(1) not in lex.SHARED_WORDS for m in _OUR_NOUN.finditer(lowered))


_OUR_NOUN = re.compile(r"\bour (?:own )?([a-z]+)")


_WE = frozenset("we we're we've we'll we'd".split())


_PLURAL = frozenset("we us our ours ourselves we're we've we'll we'd".split())
# the "we" of people in general, or of a slogan
_EVERYONE = re.compile(
    r"\b(?:we|we're|we'll|we've) (?:(?:all|both) (?!" + "|".join(PAST_FORMS) + r"|\w+ed\b)"
    r"|can|could|should|must|need|gotta|have to|got this"
    r"|will|'ll|are gonna|are going to|deserve|each)\b|\bourselves\b|\beach other\b|\bone another\b"
    r"|\bwe(?:'re| are) (?:in this|a team|unstoppable)|\b(?:remind|let) us\b"
    r"|\bsince (?:we|our)\b"
)


def _owned(lowered: str, *, beyond: int = 0) -> bool:
    """Whether the sentence speaks of the speaker's own thing ("check out my new bike")
    with more than ``beyond`` first-person words (the "I" of "I'm proud of you" is one)."""
    return sum(w in lex.FIRST_PERSON_WORDS for w in WORD.findall(lowered)) > beyond


def _unnamed(match: re.Match[str]) -> str:
    return _unnamed_word(match.group(0))


def _unnamed_word(word: str) -> str:
    """A capitalised word, unless it is a name (ordinary words capitalised by position stay,
    "It's" and "That's" as much as "It" and "That")."""
    folded = _folded(word)
    stem = _CONTRACTED.sub("", folded)
    return word if folded in _ORDINARY_CAPS or stem in _ORDINARY_CAPS else " "


_CONTRACTED = re.compile(r"(?:'s|'re|'m|'ve|'ll|'d|n't)$")


_ORDINARY_CAPS = (
    lex.NOISE
    | lex.EVALUATIVE_WORDS
    | lex.SECOND_PERSON_WORDS
    | lex.FIRST_PERSON_WORDS
    | lex.THIRD_PERSON_WORDS
    | lex.SENTENCE_STARTERS
    | lex.IMPERATIVE_VERBS
    | frozenset(lex.GREETINGS)
    | frozenset(lex.DISCOURSE_OPENERS)
    | frozenset(lex.QUESTION_WORDS)
    | frozenset(lex.QUESTION_AUXILIARIES)
    | STOPWORDS
    | frozenset("good take look check here see glad sounds keep have congrats well".split())
)


def is_photo(sentence: str) -> bool:
    """Whether ``sentence`` is a transcript's photo note, as :func:`photo_sentence` wrote it."""
    return _SHARED_PHOTO.match(sentence) is not None


_SHARED_PHOTO = re.compile(r"^I share an? (?:photo|picture|image|video) of ")


def photo_sentence(text: str) -> str:
    """A transcript's "[shares a photo: a photo of X]" as a sentence of its own."""

    def shared(match: re.Match[str]) -> str:
        # a sentence of its own, whatever ends the one before ("... any previews?")
        before = text[: match.start()].rstrip()
        stop = "" if not before or before[-1] in ".!?" else "."
        return f"{stop} I share a {match.group(1)} of {match.group(2).strip()}."

    return _PHOTO.sub(shared, text)


_GREETING_LEAD = re.compile(
    r"^(?:(?:hey|hi|hello|heya|hiya|yo|oh|wow|so|woah|whoa|aw+|omg|yeah|yes|yep)(?: there)?"
    r"(?:\s+[A-Z][\w'’-]*)?\s*[,!.]\s*"
    r"|(?:since (?:we|our) last (?:chatted|talked|spoke|chat|talk|met)|by the way|btw)\s*,?\s*)+",
    re.IGNORECASE,
)


def without_greeting(sentence: str) -> str:
    """``"I ran a race ..."`` for ``"Hey Caroline, since we last chatted, I ran a race ..."``;
    empty for a sentence that is only a greeting ("Yeah Jon!")."""
    stripped = _GREETING_LEAD.sub("", sentence).strip()
    if not WORD.search(stripped) or (
        stripped != sentence.strip() and _NAME_ONLY.fullmatch(stripped)
    ):
        return ""
    return stripped[:1].upper() + stripped[1:]


_NAME_ONLY = re.compile(r"(?-i:[A-Z][\w'’-]*)\s*[!.,?]*")


_QUESTION_TAIL = re.compile(
    r",\s+(?=(?:any|anything|anyone|what|how|where|which|who|should i|can you|could you"
    r"|do you|does anyone|is there|are there)\b[^,]*\?\s*$)",
    re.IGNORECASE,
)


def split_questions(sentences: list[str]) -> list[str]:
    """Each sentence, a question asked at its end parted from what it says first: "I just
    moved to Leeds, any good climbing gyms?" is a statement and a question."""
    out: list[str] = []
    for sentence in sentences:
        parts = _QUESTION_TAIL.split(sentence, maxsplit=1) if is_question(sentence) else [sentence]
        out.extend(p for p in parts if p.strip())
    return out


def is_question(sentence: str) -> bool:
    return sentence.rstrip(" \"'”)").endswith("?")
