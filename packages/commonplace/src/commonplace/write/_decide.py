"""The built-in update decision: which older statements a new note replaces or disputes.

People rarely restate a fact to change it. They name what ended ("sold the Mazda3",
"broke up with Karim"), say the slot's new value with a cue of change and leave the slot
implicit ("using fish these days" after "my shell is bash"), change a quantity ("rent went
up to 1,290"), or correct themselves ("turns out it's 35"). Each of these is read here,
without a model, from the words and the embedder's similarity, with precision first:

* the holder must be the same: a statement about the user's wife, cousin or Chidi's
  brother never changes one about the user, the user's aunt or Chidi (Graphiti-style
  wholesale invalidation is what costs a memory its users' trust);
* a tentative or additive statement ("thinking about moving to Ally", "picked up the
  trombone too") changes nothing;
* a change only replaces when the old statement is named (its words, its key, its value)
  or the slot is shared and the quantity or correction says so; a cue of change with
  nothing more than closeness of meaning only disputes the closest statement, so both
  are shown and marked and nothing true is hidden.

The decision is a hook (``commonplace_decide_update``): a plugin, an LLM for one, may
make it instead; this is the built-in answer, and the pipeline checks whatever comes back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .._records import Modality, Record
from .._text import WORD, content_terms, sentences
from ..read._flags import negated
from . import _lexicon as lex
from ._clauses import split_speaker
from ._slots import slot_groups
from ._types import Turn, UpdateCandidate, UpdateDecision
from ._updates import about, retracted, takes_back
from ._verbs import BASE_VERBS, PAST_FORMS

# the closeness of meaning (MiniLM cosine between the two notes' indexed texts) from which
# a cue of change is read as being about the closest statement: a change said without
# naming the slot disputes it; with the slot's word shared as well, it replaces it
_DISPUTE_SIMILARITY = 0.25
_REPLACE_SIMILARITY = 0.45
# a correction that shares the slot's words needs less (people say them tersely: "sorry,
# it's on Bree Street" for the dentist on Long Street)
_CORRECTION_SIMILARITY = 0.15
# how much closer than the next one a changed quantity's statement must be to be the one
_CLEAR_LEAD = 0.05

_ENDING = re.compile(
    r"\b(?:sold|selling|traded in|trading in|cancell?ed|quit|left|broke up with|"
    r"split (?:up )?with|dumped|swapped(?: out)?|switched (?:away )?from|changed from|"
    r"moved (?:\w+ )?(?:away )?from|relocated from|retired from|dropped|ditched|"
    r"ported (?:[\w']+ ){0,3}away from|got rid of|gave up(?: on)?|stopped|replaced|"
    r"instead of|rather than|no more|not \w+ anymore)\s+(?P<what>[^.;,!?]{1,60})",
    re.IGNORECASE,
)
# what follows the ending verb ends at the new value ("swapped the flat white for a cortado")
_NEW_VALUE = re.compile(r"\s(?:for|to|with|and|so|because|after|since|now)\s.*$", re.IGNORECASE)
_CHANGE = re.compile(
    r"\b(?:now|these days|nowadays|at the moment|lately|currently|mostly|any ?more|"
    r"from now on|this year|these past|instead|"
    # "on Hill's food since last month": a state that began lately
    r"since (?:last|this) (?:week|month|year|spring|summer|autumn|fall|winter|term)|"
    r"since (?:january|february|march|april|may|june|july|august|september|october|"
    r"november|december)|"
    # a move to the new value, the old one unnamed ("moved my account to Santander")
    r"(?:moved|switched|changed|went over|transferred|upgraded|downgraded|relocated)"
    r"(?: [\w']+){0,3} (?:to|into|onto)|settled in)\b",
    re.IGNORECASE,
)
# cues too common to read a change from without the slot's own words: "my new manager",
# "picked Kindred this month", "started at Talkdesk"
_WEAK_CHANGE = re.compile(
    r"\b(?:new|this (?:week|month|term|season)|today|started at|starting at|joined|picked|"
    r"chose|got (?:a|the) job)\b",
    re.IGNORECASE,
)
_QUANTITY = re.compile(
    r"\b(?:raised|raise|bumped|upped|increased|decreased|reduced|lowered|cut|scaled|"
    r"doubled|halved|dropped|(?:went|gone|goes|going|is|are|was) (?:up|down)|up to|down to|"
    r"from next (?:week|month|year)|from (?:january|february|march|april|may|june|july|"
    r"august|september|october|november|december))\b",
    re.IGNORECASE,
)
_CORRECTION = re.compile(
    r"\b(?:correction|actually|turns out|turned out|my mistake|my bad|i meant|the user meant|"
    r"misread|mixed (?:it |them |those )?up|got (?:it|that|the [\w']+(?: [\w']+)?) wrong|"
    r"said (?:it )?wrong|i was wrong|not quite)\b",
    re.IGNORECASE,
)
# ", not Rosario", "not a pharmacist": the old value named by the correction itself
_NOT_THAT = re.compile(r"\bnot (?:a |an |the )?(?P<what>[^.;,!?]{1,40})", re.IGNORECASE)
_NOT_NAMED = re.compile(r",\s*not (?:a |an |the )?\w", re.IGNORECASE)
_TENTATIVE = re.compile(
    r"\b(?:thinking (?:about|of)|considering|might|maybe|perhaps|possibly|if|should i|"
    r"we'll see|the user will see|not sure|planning to|plans to|hoping to|hopes to|"
    r"want(?:s)? to|would like|could|wonder)\b",
    re.IGNORECASE,
)
_ADDITIVE = re.compile(r"\b(?:also|too|as well|still|another|besides|on top of)\b", re.IGNORECASE)
# a number in digits or in words ("four coffees a day"), and the unit said after it
_NUMBER = re.compile(
    r"(?<![\w.])(\d[\d,.]*|(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
    r"twelve|fifteen|twenty|thirty|forty|fifty|hundred)\b)\s*([a-z%€$£]*)",
    re.IGNORECASE,
)
# the same person, however the user names them
_SAME_PERSON = {
    "gran": "grandma",
    "granny": "grandma",
    "nan": "grandma",
    "nana": "grandma",
    "grandmother": "grandma",
    "grandad": "grandpa",
    "granddad": "grandpa",
    "grandfather": "grandpa",
    "mum": "mother",
    "mom": "mother",
    "mummy": "mother",
    "ma": "mother",
    "dad": "father",
    "daddy": "father",
    "pa": "father",
    "doc": "doctor",
    "gp": "doctor",
    "neighbor": "neighbour",
    "kid": "kids",
    "children": "kids",
    "hubby": "husband",
}
_PEOPLE = (
    frozenset(w for phrase in lex.KIN_WORDS + lex.PARTNER_WORDS for w in phrase.split())
    | frozenset(_SAME_PERSON)
    | frozenset(("teacher", "coach", "dentist", "sister-in-law"))
)
_PRONOUNS = frozenset(
    [*"he she they his her their him them he's she's they're".split(), "he’s", "she’s"]
)
_IT = frozenset(("it", "it's", "its", "that", "this", "that's"))
# a clause opens with these before its subject ("Correction: the backup cron is ...")
_LEAD = re.compile(
    r"^(?:(?:correction|update|fyi|btw|so|wait|well|ok|okay|oh|yeah|also|sorry|actually|"
    r"turns out|anyway|and|but|apparently|the user says|the user's mistake)(?:[\s,:;!-]+|$))+",
    re.IGNORECASE,
)
_POSSESSIVE = re.compile(r"^(?P<np>(?:[\w-]+\s){0,2}?[\w-]+?)(?:'s|s'|’s|s’)(?=\s)")
# after "X's": the contraction of "is", not a possessive ("Mateo's in Córdoba")
_IS_NEXT = frozenset(
    "in at on a an the not now still been got going gone down up off back moving away "
    "living working doing getting staying there here from with".split()
)


def says_change(text: str) -> bool:
    """Whether ``text`` says that something ended, changed or was wrong ("sold the car",
    "these days", "turns out"): a laugh does not make such a turn a joke."""
    return any(p.search(text) for p in (_ENDING, _CHANGE, _CORRECTION))


def may_change(text: str) -> bool:
    """Whether ``text`` has any cue an update is read from (the weak ones, a changed
    quantity's, a ", not Rosario"): only then are the statements it may change looked for."""
    return says_change(text) or any(p.search(text) for p in (_WEAK_CHANGE, _QUANTITY, _NOT_NAMED))


@dataclass(frozen=True, slots=True)
class _Holder:
    """Whom a statement is about: the chain of people from its speaker ("the user's
    sister's husband" is (sister, husband)); () is the speaker. ``anyone``: a pronoun or
    "it", which may refer to whoever was talked about."""

    chain: tuple[frozenset[str], ...]
    anyone: bool = False
    slot: frozenset[str] = frozenset()  # "the user's car is ...": the thing, not a holder
    # named as the subject ("the user", "I", "my sister"), not a thing's clause ("the
    # fridge is chaos") or one without a subject ("seems nice")
    named: bool = True

    def exactly(self, other: _Holder) -> bool:
        """The same holder, named the same way: no pronoun, no name for a relation."""
        if self.anyone or other.anyone or len(self.chain) != len(other.chain):
            return False
        return all(
            x == y or (x & y and not (_named(x) ^ _named(y)))
            for x, y in zip(self.chain, other.chain)
        )

    def same(self, other: _Holder) -> bool:
        if self.anyone or other.anyone:
            # "he", "her teacher", "it": someone talked about, never told apart from the
            # speaker by a pronoun ("it's 35" may be the son's shoe size or the user's)
            return True
        a, b = self.chain, other.chain
        if len(a) == len(b):
            return all(x & y for x, y in zip(a, b))
        # "Mateo's in Córdoba" for "the user's cousin Mateo": a name alone is that person
        short, long_ = (a, b) if len(a) < len(b) else (b, a)
        return len(short) == 1 and _named(short[0]) and bool(short[0] & long_[-1])


def _named(element: frozenset[str]) -> bool:
    return any(w.startswith("=") for w in element)


class RuleUpdateDecider:
    """The built-in update decision (see the module's docstring)."""

    def decide(
        self, note: Record, turn: Turn, candidates: Sequence[UpdateCandidate]
    ) -> list[UpdateDecision]:
        if note.tags.modality is not Modality.STATEMENT or not candidates:
            return []
        said = f"{note.text} {turn.text}"
        selves = _selves(turn)
        retraction = retracted(note.text)
        tentative = _TENTATIVE.search(said) is not None
        additive = _ADDITIVE.search(said) is not None
        endings = [_content(_NEW_VALUE.sub("", m.group("what"))) for m in _ENDING.finditer(said)]
        endings = [e for e in endings if e]
        # "not a pharmacist" names what a correction takes back; a "not" that corrects
        # nothing ("not just a hobby", "doesn't give up") names nothing
        nots = (
            [_content(m.group("what")) for m in _NOT_THAT.finditer(turn.text)]
            if _CORRECTION.search(said) or _NOT_NAMED.search(turn.text)
            else []
        )
        # the speaker's own name is no value an ending can name ("They've been there
        # through everything, Caroline"), nor is someone else's thing ("my running buddy
        # swapped his Garmin")
        own = content_terms(" ".join(selves)) | _someone_elses(turn.text)
        numbers = _numbers(said)
        quantity = _QUANTITY.search(said) if numbers else None
        cue = _CORRECTION.search(said) or _CHANGE.search(said)
        correction = cue is not None and _CORRECTION.search(cue.group(0)) is not None
        weak = cue is None and (cue := _WEAK_CHANGE.search(said)) is not None
        holders = _holders(note.text, selves) + _holders(turn.text, selves)
        unnamed: list[_Holder] = []
        if holders[0].chain:
            # "my wife's car is a Tesla, she picked it up": "she" is the wife, not anyone;
            # "my partner went keto, the fridge is chaos": the fridge says nothing of me,
            # but "the landlord raised it, rent is 1,290" does of my rent (below)
            unnamed = [h for h in holders if not h.named]
            holders = [h for h in holders if not h.anyone and h.named]
        mine = content_terms(note.text) | content_terms(turn.text)
        groups = slot_groups(mine)
        my_things = _things(holders, _slot_terms(note.text, selves))
        out: list[UpdateDecision] = []
        # the statements a cue may be about, each with its closeness and whether it shares
        # the slot's words; only the closest is changed by them
        quantities: list[tuple[UpdateCandidate, bool]] = []
        cued: list[tuple[UpdateCandidate, bool, bool]] = []
        for candidate in candidates:
            old = candidate.record
            if (
                old.id == note.id
                or old.tags.modality is not Modality.STATEMENT
                or old.superseded_by is not None
            ):
                continue
            # a negation is changed only by what names it ("cancelled Netflix" for "Netflix
            # and nothing else"); the rules without a cue would read its "not" as the change
            denial = negated(old.text)
            if not denial:
                keyed = _without_cue(note, old, retraction)
                if keyed is not None:
                    out.extend(keyed)
                    continue
            if tentative:
                continue  # "thinking about moving to Ally" changes nothing yet
            theirs = _holders(old.text, selves)[0]
            slot = _slot_terms(old.text, selves)
            their_things = _things([theirs], slot)
            if my_things and their_things and not my_things & their_things:
                continue  # "the newsletter" is never "the public API": another thing
            mentioned = holders + [h for h in unnamed if h.slot & slot]
            if not any(h.same(theirs) for h in mentioned) and not _sets_their(
                theirs, holders, mine
            ):
                continue  # about someone or something else
            # "my cousin" for "my cousin Mateo", "he" for "my brother": maybe the same
            # person; only a change that names the old value replaces then
            surely = any(h.exactly(theirs) for h in mentioned)
            if not _holds(old.text, selves):
                continue  # what happened stays true: an event is never replaced
            predicate = _predicate_terms(old.text, selves) - own
            named = next((e & predicate for e in endings + nots if e & predicate), None)
            if not predicate or (predicate <= mine and named is None):
                continue  # says it again ("still vegan"), or nothing to change
            if named is not None and _distinct(named, predicate, old, candidate.similarity):
                verb = "ended" if any(named & e for e in endings) else "corrected"
                out.append(_replaces(old, f"{verb}: {' '.join(sorted(named))}"))
                continue
            if additive or denial:
                continue  # "picked up the trombone too"
            shared = (
                bool(slot & mine)
                or bool(_units(old.text) & _units(said))
                or bool(slot_groups(content_terms(old.text)) & groups)
            )
            if not _one_fact(old.text):
                continue  # a cue of change says which fact of a long note? none, then
            olds = _numbers(old.text)
            if quantity is not None and shared and olds and olds != numbers:
                quantities.append((candidate, surely))
            elif cue is not None:
                cued.append((candidate, shared, surely))
        if out:
            return out
        if quantities:
            return _closest(quantities, f"a changed quantity ({quantity and quantity.group(0)})")
        if cue is None or not cued:
            return []
        # within reach: close in meaning, or naming the same slot and not far off
        near = [
            c
            for c in cued
            if c[0].similarity >= _DISPUTE_SIMILARITY
            or (c[1] and c[0].similarity >= _CORRECTION_SIMILARITY)
        ]
        if not near:
            return []
        # a statement naming the slot's words beats a closer one that does not ("moved to
        # the Search team": the Payments team, not "just moved to Coimbra"); the value
        # keeps its kind: a name for a name ("moved my account to Revolut": the bank, not
        # the wifi password), a number for a number
        kind_of = _value_kinds(note.text)
        best, shared, surely = max(
            near,
            key=lambda c: (c[1], bool(_value_kinds(c[0].record.text) & kind_of), c[0].similarity),
        )
        if weak and not shared:
            return []  # "today", "new": a change only of a slot the old statement names
        mine_kinds, their_kinds = kind_of, _value_kinds(best.record.text)
        if mine_kinds and their_kinds and not mine_kinds & their_kinds:
            return []  # a name never changes a number, nor a number a name: another slot
        if not correction and not _new_value(note.text, best.record.text, selves):
            # a cue with no new value is talk ("so excited for this new chapter", "been
            # painting lately"), not an update: there is nothing for the old fact to become
            return []
        kind = "a correction" if correction else "a change"
        if (
            surely
            and shared
            and (
                best.similarity >= _REPLACE_SIMILARITY
                or (correction and best.similarity >= _CORRECTION_SIMILARITY)
            )
        ):
            return [_replaces(best.record, f"{kind} of the same thing ({cue.group(0)})")]
        reason = f"{kind} ({cue.group(0)}) of what may be the same thing; not sure enough"
        return [UpdateDecision(best.record.id, "disputes", reason)]


def _closest(matches: list[tuple[UpdateCandidate, bool]], reason: str) -> list[UpdateDecision]:
    """The closest statement a changed quantity is about replaced, or, when two are about
    as close ("upped my dose" with two medicines on record) or its holder may be another
    ("his commute"), disputed: not a guess."""
    matches = sorted(matches, key=lambda c: -c[0].similarity)
    best, surely = matches[0]
    if surely and (len(matches) == 1 or best.similarity - matches[1][0].similarity >= _CLEAR_LEAD):
        return [_replaces(best.record, reason)]
    return [
        UpdateDecision(c.record.id, "disputes", f"{reason}; of which statement, not sure")
        for c, _ in matches[:2]
    ]


def _things(holders: Sequence[_Holder], slot: frozenset[str]) -> frozenset[str]:
    """The (stemmed) words of the things statements are about that are no one's named
    subject ("the newsletter goes out ...", "the public API is on ..."), less the cues of
    change beside them ("now"); ``slot``, the statement's slot words, stands for a thing
    whose words the subject's split missed ("the staging database was migrated ...")."""
    things = [h for h in holders if not h.chain and not h.anyone and not h.named]
    words = {w for h in things for w in h.slot}
    if things and not words:
        words = set(slot)
    return frozenset(words) - _THING_CUES


# words a thing's clause holds that say when, not what ("the newsletter now goes out")
_THING_CUES = frozenset({"now", "new", "today", "currently", "still", "also"})


def _someone_elses(text: str) -> frozenset[str]:
    """The words of what a turn says is someone else's ("his Garmin", "her old school")."""
    found = re.findall(r"\b(?:his|her|their)\s+((?:[\w'’-]+\s+){0,1}[\w'’-]+)", text, re.I)
    return content_terms(" ".join(found))


def _sets_their(theirs: _Holder, holders: Sequence[_Holder], mine: frozenset[str]) -> bool:
    """Whether the speaker changes a thing of someone's ("dropped the tablet limit to 60"
    for "the kids' tablet limit is 90"): the old statement's thing, named by the speaker."""
    return (
        bool(theirs.chain)
        and bool(theirs.slot)
        and theirs.slot <= mine
        and any(not h.chain and not h.anyone and h.named for h in holders)
    )


def _without_cue(
    note: Record, old: Record, retraction: frozenset[str] | None
) -> list[UpdateDecision] | None:
    """The rules that need no cue of change, or None when none applies: the same fact with
    another value (the same value: nothing to do), an older statement about the subject
    the new note keys, one a retraction takes back."""
    key, value = note.tags.key, note.tags.value
    if key is not None and old.tags.key == key and value and old.tags.value:
        if _plain(old.tags.value) == _plain(value):
            return []
        return [_replaces(old, f"the same fact ({key.predicate}) with a new value")]
    if shorter_slot(note, old):
        assert key is not None
        return [_replaces(old, f"the same fact ({key.predicate}) with a new value")]
    if key is not None and old.tags.key is None and about(key.predicate, old.text):
        return [_replaces(old, f"a new statement about the {key.predicate}")]
    if retraction is not None and takes_back(retraction, old.text):
        return [_replaces(old, "taken back")]
    return None


def shorter_slot(new: Record, old: Record) -> bool:
    """Whether two keyed statements give one slot two values, the slot named shorter in
    one of them ("the lock code is 4417" for "my bike lock code is 4471"): the same
    subject, one predicate's words within the other's, values of one kind (a number for a
    number, a name for a name: "the team" switching its deploys to CircleCI is not "the
    support team" of seven people)."""
    key, theirs = new.tags.key, old.tags.key
    value, old_value = new.tags.value, old.tags.value
    if key is None or theirs is None or not value or not old_value:
        return False
    mine, other = set(key.predicate.split()), set(theirs.predicate.split())
    return (
        key.subject == theirs.subject
        and (mine < other or other < mine)
        and _plain(old_value) != _plain(value)
        and _value_kind(value) == _value_kind(old_value)
    )


def _replaces(old: Record, reason: str) -> UpdateDecision:
    return UpdateDecision(old.id, "replaces", reason)


def _selves(turn: Turn) -> frozenset[str]:
    """The words that name the speaker in a note (and the turn): "the user", their name."""
    names = {"user", "i", "we", "i'm", "we're", "my", "our", "me", "us"}
    speaker = turn.speaker or split_speaker(turn.text)[0]
    if speaker:
        names.update(w.lower() for w in speaker.split())
    return frozenset(names)


def _content(text: str) -> frozenset[str]:
    return content_terms(text) - {"user"}


def _plain(text: str) -> str:
    return " ".join(WORD.findall(text.casefold()))


def _numbers(text: str) -> frozenset[str]:
    return frozenset(
        m.group(1).rstrip(",.").replace(",", "").lower() for m in _NUMBER.finditer(text)
    )


def _units(text: str) -> frozenset[str]:
    """The units numbers are said in ("62k", "16 km", "500 Mbps": k, km, mbps), each
    written one way ("60 min" and "90 minutes" share one)."""
    return frozenset(
        _UNIT_NAMES.get(stemmed, stemmed)
        for m in _NUMBER.finditer(text)
        if m.group(2)
        for stemmed in content_terms(m.group(2))
    )


_UNIT_NAMES = {
    "min": "minut",
    "mins": "minut",
    "hr": "hour",
    "hrs": "hour",
    "h": "hour",
    "sec": "second",
    "secs": "second",
    "kg": "kilo",
    "kilogram": "kilo",
    "km": "kilometr",
    "kms": "kilometr",
    "quid": "pound",
    "buck": "dollar",
}


# a past tense that starts a state ("moved to Porto", "switched to Monzo", "joined Canva"):
# what it ended or began is what a later change ends again
_CHANGE_VERBS = re.compile(
    r"^(?:just |finally |recently |also )?(?:moved|switched|changed|started|joined|settled|"
    r"picked|chose|upped|bumped|raised|got a job|got the job|swapped|transferred|upgraded|"
    r"sold|bought|adopted|married|signed up)\b",
    re.IGNORECASE,
)
_EVENT_TIME = re.compile(
    r"\b(?:yesterday|last (?:night|week|weekend|month|year|mon|tues|wed|thurs|fri|sat|sun)\w*|"
    r"\w+ ago|this (?:morning|afternoon|evening)|tonight)\b",
    re.IGNORECASE,
)
_ADVERB = frozenset("just finally really also still recently actually totally even".split())
_MAX_FACT_WORDS = 18
# past forms that are present ones too ("I put 300 a month into my ISA")
_PRESENT_TOO = frozenset("put cut set hit let read quit cost hurt shut spread bet".split())


def _holds(text: str, selves: frozenset[str]) -> bool:
    """Whether a statement says how things are, which a newer one can end ("drives a
    Mazda3", "moved to Porto"), not what happened, which stays true ("went to a support
    group yesterday", "took the kids to the park")."""
    first = sentences(text)[0]
    _, rest = _split_subject(first, selves)
    if _CHANGE_VERBS.match(rest):
        return True
    if _EVENT_TIME.search(first):
        return False
    words = [w.lower().strip(",") for w in rest.split() if w.lower() not in _ADVERB]
    if not words:
        return False
    verb = words[0]
    if verb in ("will", "won't", "would") or rest.lower().startswith(("is going to", "going to")):
        return False  # a plan, not a state
    if verb in _PRESENT_TOO:
        return True  # "puts 300 a month into an ISA", written "put": the same word
    return not (verb in _PAST or (verb.endswith("ed") and verb not in _COPULAS))


def _new_value(text: str, old: str, selves: frozenset[str]) -> bool:
    """Whether a note says what a fact became: a name or a number the old statement lacks
    ("Gold's", "9443", "English"; not the speaker's own name), or, said briefly, any value
    ("using fish these days"): a long note with a cue of change is mostly talk."""
    if len(text.split()) <= _SHORT_UPDATE:
        return True
    values = {
        _bare(w)
        for sentence in sentences(text)
        for w in WORD.findall(sentence)[1:]
        if w[:1].isupper() or w[:1].isdigit()
    }
    return bool(values - selves - {_bare(w) for w in WORD.findall(old)})


def _bare(word: str) -> str:
    return re.sub(r"['’]s$", "", word.lower())


_SHORT_UPDATE = 16


def _one_fact(text: str) -> bool:
    """Whether a note is one short statement: a cue of change that names nothing can be
    about it; of a long note's several facts it could be about any, or none."""
    return len(sentences(text)) == 1 and len(text.split()) <= _MAX_FACT_WORDS


def _value_kinds(text: str) -> frozenset[str]:
    """What kinds of value a statement names: "name" (a capitalised word past its first),
    "number"; a change of value keeps its kind."""
    words = WORD.findall(text)[1:]
    kinds = set()
    if any(w[:1].isupper() and w.lower() not in ("user", "i") for w in words):
        kinds.add("name")
    if _numbers(" ".join(words)):  # "9:00", "seven people"
        kinds.add("number")
    return frozenset(kinds)


def _value_kind(value: str) -> str:
    """What kind of value a fact's value is: a number ("4417", "seven people"), a name
    ("CircleCI") or plain words."""
    if _numbers(value):
        return "number"
    return "name" if any(w[:1].isupper() for w in WORD.findall(value)) else "words"


def _distinct(
    named: frozenset[str], predicate: frozenset[str], old: Record, similarity: float
) -> bool:
    """Whether the words an ending names pick out the old statement: a name, a number or
    the old value; a common word ("dropped vegetarian") only when the two are close and it
    is much of what the old statement says ("a loving home" is not much of a long note)."""
    if old.tags.value and named & content_terms(old.tags.value):
        return True
    capitals = {w.lower() for w in WORD.findall(old.text) if w[:1].isupper() or w[:1].isdigit()}
    proper = content_terms(" ".join(capitals)) - {"user"}
    if named & proper:
        return True
    return similarity >= _DISPUTE_SIMILARITY + 0.1 and len(named) * 4 >= len(predicate)


def _verbish(word: str) -> bool:
    """Whether a word reads as the verb that ends a subject ("lives", "retired", "is")."""
    w = word.lower().strip(",:;")
    return (
        w in _COPULAS
        or w in _PAST
        or w.endswith(("ing", "ed"))
        or w in BASE_VERBS
        or (w.endswith("s") and w[:-1] in BASE_VERBS)
        or (w.endswith("es") and w[:-2] in BASE_VERBS)
    )


_COPULAS = frozenset(("is", "was", "are", "were", "'s", "’s", "has", "had", "will", "gets"))
_PAST = frozenset(PAST_FORMS)
_MODIFIERS = frozenset("the new best old little big older younger step a an".split())


def _split_subject(text: str, selves: frozenset[str]) -> tuple[_Holder, str]:
    """A clause's holder and what the clause says of it (its predicate)."""
    clause = _LEAD.sub("", text.strip().strip("“”\"'")).strip()
    words = clause.split()
    if not words:
        return _Holder(()), clause
    first = words[0].lower().strip(",:;")
    if first in _IT or first in _PRONOUNS:
        return _Holder((), anyone=True), " ".join(words[1:])
    rest = clause
    possessed = False  # "the user's rent": a thing of the speaker's, named as such
    if clause.lower().startswith("the user"):
        rest = clause[len("the user") :]
        if not rest.startswith(("'s", "’s")):
            return _Holder(()), rest.strip()
        rest = rest[2:].strip()
        possessed = True
    elif first in selves:
        rest = " ".join(words[1:])
        if first not in ("my", "our"):
            return _Holder(()), rest
        possessed = True
    chain: list[frozenset[str]] = []
    while True:
        match = _POSSESSIVE.match(rest + " ")
        if match is None:
            break
        after = rest[match.end() :].split()
        if after and after[0].lower() in _IS_NEXT:
            break  # "Mateo's in Córdoba": a contracted "is"
        element = _element(match.group("np"))
        if element is None:  # "the user's car's ...": a thing, still its holder's
            break
        chain.append(element)
        rest = rest[match.end() :].strip()
    # the head of the subject: its words up to the verb. A person acts ("Dad retired",
    # "Sven's manager is leaving"); a person who *is* a name is the holder's slot ("the
    # user's boss is Elena", "her GP is Dr Okafor"), as is a thing ("the user's rent is")
    tokens = rest.split()
    n = 0
    while n < len(tokens) and n < 4 and not (n and _verbish(tokens[n])):
        if tokens[n].endswith(("'s", "’s")):
            # "running Gina's own biz has had its ups": the subject is Gina's
            owner = _element(tokens[n]) if n else None
            if owner is not None and not (owner & selves):
                return _Holder((*chain, owner)), " ".join(tokens[n + 1 :])
            break
        n += 1
    head = [t for t in tokens[: max(n, 1)] if t.lower() not in _MODIFIERS] or tokens[:1]
    tail = tokens[max(n, 1) :]
    element = _element(" ".join(head))
    names_value = (
        len(tail) > 1
        and tail[0].lower() in ("is", "was", "'s")
        and (tail[1][:1].isupper() or tail[1].lower() in ("called", "named"))
    )
    if element is not None and not names_value:
        chain.append(element)
        return _Holder(tuple(chain)), " ".join(tail)
    slot = _content(" ".join(head))
    return _Holder(tuple(chain), slot=slot, named=bool(chain) or possessed), " ".join(tokens)


_OPENING_WORDS = frozenset(
    "for in on at to with from by as since after before during and but so then also now "
    "when while if the a an this that these those".split()
)


def _element(phrase: str) -> frozenset[str] | None:
    """One person of a holder chain ("cousin Mateo" is {cousin, =mateo}), or None when
    the phrase names a thing ("Postgres max_connections", "the Revolut card")."""
    words = [re.sub(r"['’]s?$", "", w) for w in re.findall(r"[\w'’-]+", phrase)]
    words = [w for w in words if w and w.lower() not in _MODIFIERS]
    people = {_SAME_PERSON.get(w.lower(), w.lower()) for w in words if w.lower() in _PEOPLE}
    names = {w.lower() for w in words if w[:1].isupper() and w.lower() not in _PEOPLE}
    # a sentence's first word is capitalised, and is no one's name ("For the Orchard
    # book club ...": the Orchard club, not a "For" shared with the Lighthouse club's)
    names -= {"user", "my", "our", "i"} | _OPENING_WORDS
    if not people and (not names or any(w[:1].islower() for w in words)):
        return None
    return frozenset(people | names | {"=" + n for n in names})


def _holders(text: str, selves: frozenset[str]) -> list[_Holder]:
    """The holders of each clause of ``text``, the first clause's first; the owner of an
    object a verb changes ("upped the user's dose": the user's) and a pronoun's ("her
    birthday": whoever she is)."""
    out: list[_Holder] = []
    for clause in re.split(r"[.;!?]\s+|,\s+(?=[A-Za-z])|\s[—–-]\s", text):
        if WORD.search(clause):
            out.append(_split_subject(clause, selves)[0])
    for match in re.finditer(r"\b\w+ed\s+(?:the user's|my|our)\s+([\w-]+)", text, re.I):
        element = _element(match.group(1))
        out.append(_Holder(() if element is None else (element,)))
    if re.search(r"\b(?:her|his|their|him|them)\b", text, re.IGNORECASE):
        out.append(_Holder((), anyone=True))  # "moved her from Maplewood": the daughter
    return out or [_Holder(())]


def _predicate_terms(text: str, selves: frozenset[str]) -> frozenset[str]:
    """The words an older statement says of its holder: what a change must name."""
    holder, rest = _split_subject(text, selves)
    terms = _content(rest) - set().union(*holder.chain) if holder.chain else _content(rest)
    return frozenset(terms)


def _slot_terms(text: str, selves: frozenset[str]) -> frozenset[str]:
    """The words of the older statement's thing ("rent", "staging api", "commute"), or
    its predicate's nouns when it names none; never the holder's."""
    holder, rest = _split_subject(text, selves)
    # nouns, not verbs: "moved to Coimbra" and "moved to the Search team" share no slot
    words = [w for w in WORD.findall(rest) if (w.isupper() or w[:1].islower()) and not _verbish(w)]
    return holder.slot | (_content(" ".join(words)) - _GENERIC)


# words too common to say two statements share a slot
_GENERIC = content_terms(
    "live lives work works be is has have get gets got go goes went use uses using say says "
    "like likes way time year years month week day today lot bit kind sort since"
)
