"""Keep or skip: which turns a note writer makes notes of, and how good those notes are.

A note says something lasting about its speaker; courtesy, reactions, encouragement,
advice to the listener and questions to the other party stay episodes. This module
scores a writer's choice against hand labels, on two sets:

- ``tests/data/writer_choice.jsonl``: chats written for the project, between two people
  (``peers``, turns written as ``"Speaker: text"``) and with an assistant (``assistant``,
  the user's turns only). Each turn is labelled keep or skip, with its class (``event``,
  ``reaction``, ``question_other`` ...), the note a careful person would write and the
  card slots it states. Chats are ``dev`` (looked at while the rules were written) or
  ``holdout`` (scored, never looked at).
- LoCoMo's development split: ``tests/data/locomo_dev_choice.jsonl`` labels every turn by
  conversation and ``dia_id``, without its text (the data is CC BY-NC and is read from its
  path). The labels were made from the turns alone, without the questions; the questions'
  evidence is read here only to count how many of the turns they point at got a note.

What is measured, per set: precision and recall of keep and of skip, notes per 1,000
turns, the junk share (notes written for turns labelled skip), notes that break a
grammar rule, notes that name the wrong person, and identity facts the writer filed
under a slot the labels do not give them. The grammar and person rules are this
module's own (they do not read the writer's word lists), so a writer cannot pass them
by construction:

- a first- or second-person word outside quotation marks in a note about its speaker;
- after the speaker's name, a word that cannot be a third-person verb: an adverb,
  modal or past tense given an -s ("totallies", "wannas", "spokes", "cans");
- two finite verbs in one clause after "is ...ing" ("Maya is loving cooking is
  relaxing": a gerund subject read as a verb);
- a note cut off mid-sentence ("…");
- wrong person: "your X" or a shared "our X" ("our army") written as the speaker's, or a
  note whose subject is the listener.

``python -m commonplace_bench.writer_choice [--locomo PATH] [--misses dev]`` prints the
tables; ``python -m commonplace_bench.writer_quality --locomo PATH`` writes them into
``docs/writer-quality.md``.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Protocol

from commonplace import HashingEmbedder, Memory, Role, Scope
from commonplace.write import NoteDraft, RuleNoteWriter, Skip, Turn

DEFAULT_CHOICE = Path("tests/data/writer_choice.jsonl")
DEFAULT_LOCOMO_LABELS = Path("tests/data/locomo_dev_choice.jsonl")
COMMAND = "python -m commonplace_bench.writer_choice"
KEEP_CLASSES = frozenset(
    "life plans people preferences possessions event feeling decision question_own "
    "self_joke".split()
)
SKIP_CLASSES = frozenset("courtesy reaction encouragement question_other filler quote".split())
SLOTS = ("name", "city", "job", "employer", "partner", "age")
_START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


class NoteWriter(Protocol):
    """Anything that turns one user turn into a note draft or a skip."""

    def write(self, turn: Turn) -> NoteDraft | Skip: ...


@dataclass(frozen=True, slots=True)
class ChoiceTurn:
    """One turn, labelled: is it worth a note, and which."""

    id: str
    chat: str
    split: str
    setting: str  # peers, assistant or locomo
    text: str
    keep: bool
    label: str  # the class
    speaker: str | None = None
    listener: str | None = None
    note: str | None = None
    slots: Mapping[str, str] = field(default_factory=dict)
    evidence: bool = False  # a LoCoMo question points at it
    at: datetime | None = None  # when it was said (LoCoMo's sessions), else a minute apart


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a writer made of one turn, and what is wrong with it."""

    turn: ChoiceTurn
    note: str | None
    reason: str | None  # the writer's skip reason
    grammar: str | None = None  # the grammar rule the note breaks
    person: str | None = None  # how the note names the wrong person
    misfiled: str | None = None  # an identity fact the labels do not give the turn


@dataclass(frozen=True, slots=True)
class ChoiceReport:
    """A writer's choice on one set of turns, scored."""

    turns: int
    notes: int
    keep_precision: float
    keep_recall: float
    skip_precision: float
    skip_recall: float
    ungrammatical: int
    wrong_person: int
    misfiled: int
    evidence_turns: int
    evidence_notes: int
    evidence_kept: int = 0  # evidence turns kept as the evidence of another note
    outcomes: tuple[Outcome, ...] = ()

    @property
    def notes_per_1000(self) -> float:
        return 1000 * self.notes / self.turns if self.turns else 0.0

    @property
    def junk_share(self) -> float:
        """Notes written for turns labelled skip, over all notes."""
        return 1.0 - self.keep_precision if self.notes else 0.0

    @property
    def keep_f1(self) -> float:
        p, r = self.keep_precision, self.keep_recall
        return 2 * p * r / (p + r) if p + r else 0.0


def load_choice(path: Path | str = DEFAULT_CHOICE) -> list[ChoiceTurn]:
    """The project's labelled chats; raise ValueError on a bad or duplicate row."""
    out: list[ChoiceTurn] = []
    seen: set[str] = set()
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        label = row["class"]
        if row["id"] in seen or label not in (KEEP_CLASSES if row["keep"] else SKIP_CLASSES):
            raise ValueError(f"{path}:{n}: duplicate id or class {label!r} against keep")
        seen.add(row["id"])
        out.append(
            ChoiceTurn(
                id=row["id"],
                chat=row["chat"],
                split=row["split"],
                setting=row["setting"],
                text=row["text"],
                keep=bool(row["keep"]),
                label=label,
                speaker=row.get("speaker"),
                listener=row.get("listener"),
                note=row.get("note"),
                slots={k: str(v) for k, v in (row.get("slots") or {}).items()},
            )
        )
    return out


def load_locomo_choice(
    data: Path | str, labels: Path | str = DEFAULT_LOCOMO_LABELS
) -> list[ChoiceTurn]:
    """LoCoMo's turns (from ``data``, a ``locomo10.json``-shaped file) with the project's
    keep/skip labels; conversations without labels are left out."""
    from .locomo import load  # the one reader of LoCoMo's format

    marks: dict[tuple[str, str], dict[str, object]] = {}
    for line in Path(labels).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            marks[(row["conv"], row["id"])] = row
    out: list[ChoiceTurn] = []
    for conv in load(data):
        evidence = {d for q in conv.questions for d in q.evidence}
        speakers = {t.speaker for t in conv.turns}
        for turn in conv.turns:
            mark = marks.get((conv.sample_id, turn.dia_id))
            if mark is None:
                continue
            others = sorted(speakers - {turn.speaker})
            out.append(
                ChoiceTurn(
                    id=turn.dia_id,
                    chat=conv.sample_id,
                    split="dev",
                    setting="locomo",
                    text=turn.text,
                    keep=bool(mark["keep"]),
                    label=str(mark["class"]),
                    speaker=turn.speaker,
                    listener=others[0] if others else None,
                    evidence=turn.dia_id in evidence,
                    at=turn.at,
                )
            )
    return out


def decide(writer: NoteWriter, turns: Sequence[ChoiceTurn]) -> list[Outcome]:
    """Run ``writer`` on every turn (each as a user turn of its chat's scope)."""
    out: list[Outcome] = []
    for n, labelled in enumerate(turns):
        turn = Turn(
            text=labelled.text,
            role=Role.USER,
            scope=Scope(user=labelled.chat),
            at=_START + timedelta(minutes=n),
        )
        draft = writer.write(turn)
        if isinstance(draft, Skip):
            out.append(Outcome(labelled, None, draft.reason))
            continue
        subject = labelled.speaker or "The user"
        note = draft.text
        key = draft.tags.key
        misfiled = None
        value = draft.tags.value
        if (
            key is not None
            and key.predicate in SLOTS
            and value
            and not _matches(labelled.slots.get(key.predicate), value)
        ):
            misfiled = f"{key.predicate} = {value!r}"
        out.append(
            Outcome(
                labelled,
                note,
                None,
                grammar=grammar_problem(note, subject),
                person=wrong_person(labelled, note),
                misfiled=misfiled,
            )
        )
    return out


def kept_as_evidence(turns: Sequence[ChoiceTurn], *, plugins: Sequence[object] = ()) -> set[str]:
    """Write every chat through a Memory, turn by turn, and say which turns that got no
    note of their own were kept as the evidence of another note (``chat/id``)."""
    out: set[str] = set()
    for chat, labelled in _by_chat(turns).items():
        with Memory(":memory:", embedder=HashingEmbedder(), plugins=list(plugins)) as memory:
            for n, t in enumerate(labelled):
                at = t.at or _START + timedelta(minutes=n)
                result = memory.write(t.text, scope=chat, at=at)
                if result.note is None and "kept as evidence" in (result.skipped or ""):
                    out.add(f"{chat}/{t.id}")
    return out


def score(outcomes: Sequence[Outcome], *, evidence_of: Collection[str] = ()) -> ChoiceReport:
    """Precision and recall of keep and skip, and the problems of the notes written."""
    kept = [o for o in outcomes if o.note is not None]
    skipped = [o for o in outcomes if o.note is None]
    keep_right = sum(o.turn.keep for o in kept)
    skip_right = sum(not o.turn.keep for o in skipped)
    labelled_keep = sum(o.turn.keep for o in outcomes)
    labelled_skip = len(outcomes) - labelled_keep
    evidence = [o for o in outcomes if o.turn.evidence]
    return ChoiceReport(
        turns=len(outcomes),
        notes=len(kept),
        keep_precision=keep_right / len(kept) if kept else 0.0,
        keep_recall=keep_right / labelled_keep if labelled_keep else 0.0,
        skip_precision=skip_right / len(skipped) if skipped else 0.0,
        skip_recall=skip_right / labelled_skip if labelled_skip else 0.0,
        ungrammatical=sum(o.grammar is not None for o in kept),
        wrong_person=sum(o.person is not None for o in kept),
        misfiled=sum(o.misfiled is not None for o in kept),
        evidence_turns=len(evidence),
        evidence_notes=sum(o.note is not None for o in evidence),
        evidence_kept=sum(
            o.note is None and f"{o.turn.chat}/{o.turn.id}" in evidence_of for o in evidence
        ),
        outcomes=tuple(outcomes),
    )


# -- the rules a note is judged by (this module's own word lists) ----------------------

_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"")
# lower case anywhere, capitalised only where a sentence starts ("My Brilliant Friend" is
# a title)
_FIRST = re.compile(
    r"(?<![\w'’])(?:I|I['’](?:m|ve|ll|d))(?![\w'’])"
    r"|(?<![\w'’])(?:me|my|mine|myself|we|us|our|ours|ourselves|we['’](?:re|ve|ll|d))(?![\w'’])"
    r"|(?:^|[.!?]\s+)(?:Me|My|Mine|We|Us|Our|We['’](?:re|ve|ll|d))(?![\w'’])"
)
_SECOND = re.compile(
    r"(?<![\w'’])(?i:you|your|yours|yourself|you['’](?:re|ve|ll|d)|u|ur|ya)(?![\w'’])"
)
_NOT_VERBS = frozenset(
    """all both even just really totally also still ever never always often kinda sorta
    literally definitely probably actually honestly basically finally already gonna wanna
    gotta can will would could should must might may shall did had was were got have do
    went said told made took came saw found bought left lost met sent won gave felt kept
    thought heard wrote ate ran began sang spoke chose rode drew grew wore broke drove flew
    forgot threw swam drank stole hid held led fed slept spent paid brought taught caught
    built sold woke sat stood knew""".split()
)
_THIRD_PERSON_FORMS = frozenset("does goes has is was".split())
_SHARED = frozenset(
    """army navy country nation city town community society world planet generation
    culture government people minds hearts lives stories dreams goals journey paths own
    future team club""".split()
)


def grammar_problem(note: str, subject: str) -> str | None:
    """The first grammar rule ``note`` (about ``subject``) breaks, or None."""
    plain = _QUOTED.sub(" ", note)
    if _FIRST.search(plain):
        return "a first-person word outside quotes"
    if _SECOND.search(plain):
        return "a second-person word outside quotes"
    for match in re.finditer(re.escape(subject) + r" ([A-Za-z']+)", plain):
        word = match.group(1).lower()
        if not word.endswith("s") or word in _THIRD_PERSON_FORMS:
            continue
        if word.endswith("ies"):  # "totallies", "reallies"
            stems = {word[:-3] + "y", word[:-3] + "ly"}
        elif word.endswith("es"):  # "doses", "wores"
            stems = {word[:-2], word[:-1]}
        else:  # "haves", "spokes", "cans"
            stems = {word[:-1]}
        if stems & _NOT_VERBS:
            return f"not a verb given an -s: {subject} {match.group(1)}"
    gerund = re.compile(
        r"(?:^|[.!?]\s+)" + re.escape(subject) + r" is [a-z]+ing"
        r"(?: (?!(?:which|who|that|when|where|because|so|and|but|or|if|as|while|how|what"
        r"|since|until|to|it|he|she|they|we|i)\b)[\w'’&-]+){0,3}"
        r" (?:is|are|was|were|wasn't|isn't|has|have|can|makes|helps|gives|means)\b"
    )
    if gerund.search(plain):
        # "Maya is loving cooking is relaxing": a gerund subject read as a verb
        return "two finite verbs in one clause"
    if plain.rstrip().endswith("…"):
        return "cut off mid-sentence"
    return None


def wrong_person(turn: ChoiceTurn, note: str) -> str | None:
    """How ``note`` names the wrong person for ``turn``, or None."""
    subject = turn.speaker or "the user"
    plain = _QUOTED.sub(" ", note)
    said = turn.text.lower().replace("’", "'")
    for noun in set(re.findall(r"\b(?:your|ur) ([a-z]+)", said)):
        written = len(re.findall(re.escape(subject) + r"['’]s " + noun + r"\b", plain, re.I))
        if written > len(re.findall(r"\bmy " + noun + r"\b", said)):
            return f"'your {noun}' written as {subject}'s"
    for noun in re.findall(r"\bour ([a-z]+)", said):
        if noun in _SHARED and re.search(
            re.escape(subject) + r"['’]s " + noun + r"\b", plain, re.IGNORECASE
        ):
            return f"'our {noun}' written as {subject}'s"
    if turn.listener and re.match(re.escape(turn.listener) + r"\b", plain.strip()):
        return f"the note is about the listener, {turn.listener}"
    return None


def _matches(label: str | None, value: str) -> bool:
    if not label:
        return False
    a, b = label.strip().lower(), value.strip().lower()
    return a == b or a in b or b in a


# -- the card ------------------------------------------------------------------------


def card_misfiles(turns: Sequence[ChoiceTurn]) -> tuple[int, int, list[str]]:
    """Write each assistant chat through a Memory and read its profile card: how many
    identity fields it holds, how many of them no labelled turn of the chat gives, and
    those fields (``chat: slot = value``)."""
    fields = 0
    wrong: list[str] = []
    for chat, labelled in _by_chat(t for t in turns if t.setting == "assistant").items():
        given: dict[str, list[str]] = {}
        for t in labelled:
            for slot, value in t.slots.items():
                given.setdefault(slot, []).append(value)
        with Memory(":memory:", embedder=HashingEmbedder()) as memory:
            for n, t in enumerate(labelled):
                memory.write(t.text, scope=chat, at=_START + timedelta(hours=n))
            memory.rewrite_profile(scope=chat, at=_START + timedelta(days=1))
            card = memory.profile(scope=chat)
        for slot, value in card.identity.items():
            fields += 1
            if not any(_matches(v, value) for v in given.get(slot, [])):
                wrong.append(f"{chat}: {slot} = {value!r}")
    return fields, len(wrong), wrong


def _by_chat(turns: Iterable[ChoiceTurn]) -> dict[str, list[ChoiceTurn]]:
    out: dict[str, list[ChoiceTurn]] = {}
    for t in turns:
        out.setdefault(t.chat, []).append(t)
    return out


# -- tables --------------------------------------------------------------------------


def render_table(reports: Mapping[str, ChoiceReport]) -> str:
    """One column per set, one row per measure, as Markdown."""
    names = list(reports)
    rows: list[tuple[str, Callable[[ChoiceReport], str]]] = [
        ("turns", lambda r: f"{r.turns:,}"),
        ("notes per 1,000 turns", lambda r: f"{r.notes_per_1000:.0f}"),
        ("keep precision", lambda r: f"{r.keep_precision:.3f}"),
        ("keep recall", lambda r: f"{r.keep_recall:.3f}"),
        ("skip precision", lambda r: f"{r.skip_precision:.3f}"),
        ("skip recall", lambda r: f"{r.skip_recall:.3f}"),
        ("junk share of notes", lambda r: f"{r.junk_share:.3f}"),
        ("ungrammatical notes (rules)", lambda r: _share(r.ungrammatical, r.notes)),
        ("notes naming the wrong person", lambda r: f"{r.wrong_person}"),
        ("identity facts the labels do not give", lambda r: f"{r.misfiled}"),
        (
            "evidence turns with a note",
            lambda r: _share(r.evidence_notes, r.evidence_turns) if r.evidence_turns else "–",
        ),
        (
            "... or kept as another note's evidence",
            lambda r: (
                _share(r.evidence_notes + r.evidence_kept, r.evidence_turns)
                if r.evidence_turns
                else "–"
            ),
        ),
    ]
    lines = ["| measure | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
    for label, cell in rows:
        lines.append(f"| {label} | " + " | ".join(cell(reports[n]) for n in names) + " |")
    return "\n".join(lines)


def _share(count: int, total: int) -> str:
    return f"{count} ({count / total:.1%})" if total else "0"


def misses(report: ChoiceReport, *, limit: int = 40) -> list[str]:
    """The turns the writer got wrong, and the notes with a problem, as lines."""
    out = []
    for o in report.outcomes:
        problem = None
        if (o.note is not None) != o.turn.keep:
            problem = "kept, labelled skip" if o.note is not None else "skipped, labelled keep"
        problem = problem or o.grammar or o.person or o.misfiled
        if problem is None:
            continue
        said = o.note if o.note is not None else f"[{o.reason}]"
        out.append(f"- `{o.turn.id}` ({o.turn.label}) {problem}: “{o.turn.text[:160]}” -> {said}")
        if len(out) == limit:
            break
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND)
    parser.add_argument("--data", type=Path, default=DEFAULT_CHOICE, help="labelled chats")
    parser.add_argument("--locomo", type=Path, help="LoCoMo data file (the dev split)")
    parser.add_argument("--labels", type=Path, default=DEFAULT_LOCOMO_LABELS)
    parser.add_argument(
        "--splits", default="dev,holdout", help="which splits of the chats to score (dev,holdout)"
    )
    parser.add_argument(
        "--misses",
        choices=("none", "peers", "assistant", "locomo"),
        default="none",
        help="print the misses of one set (never of a holdout split)",
    )
    args = parser.parse_args(argv)
    writer = RuleNoteWriter()
    splits = set(args.splits.split(","))
    turns = [t for t in load_choice(args.data) if t.split in splits]
    found = reports(writer, turns=turns, locomo=args.locomo, labels=args.labels)
    print(render_table(found))
    fields, wrong, which = card_misfiles(turns)
    print(f"\ncard identity fields: {fields}, not given by the labels: {wrong}")
    for line in which:
        print("  " + line)
    if args.misses != "none":
        chosen = [
            r
            for name, r in found.items()
            if name.lower().startswith(args.misses) and "holdout" not in name
        ]
        for report in chosen:
            print("\n".join(misses(report, limit=400)))
    return 0


def reports(
    writer: NoteWriter,
    *,
    turns: Sequence[ChoiceTurn] | None = None,
    locomo: Path | None = None,
    labels: Path = DEFAULT_LOCOMO_LABELS,
) -> dict[str, ChoiceReport]:
    """One report per setting and split of the labelled chats (``turns``, the whole set by
    default), and one for LoCoMo's dev split when its path is given."""
    chosen = load_choice() if turns is None else turns
    out = {
        f"{setting} {split}": score(decide(writer, group))
        for (setting, split), group in _grouped(chosen).items()
    }
    if locomo is not None:
        dev = load_locomo_choice(locomo, labels)
        out["LoCoMo dev"] = score(decide(writer, dev), evidence_of=kept_as_evidence(dev))
    return out


def _grouped(turns: Sequence[ChoiceTurn]) -> dict[tuple[str, str], list[ChoiceTurn]]:
    out: dict[tuple[str, str], list[ChoiceTurn]] = {}
    for t in turns:
        out.setdefault((t.setting, t.split), []).append(t)
    return dict(sorted(out.items()))


if __name__ == "__main__":
    raise SystemExit(main())


# -- the section of docs/writer-quality.md ---------------------------------------------

#: The same measures of the writer before it chose (commit 2d3dcfd, 2026-12-07), by
#: ``python -m commonplace_bench.writer_choice --locomo PATH`` on that checkout.
BEFORE = """\
| measure | assistant dev | assistant holdout | peers dev | peers holdout | LoCoMo dev |
| --- | ---: | ---: | ---: | ---: | ---: |
| notes per 1,000 turns | 873 | 903 | 888 | 921 | 919 |
| keep precision | 0.615 | 0.600 | 0.486 | 0.476 | 0.496 |
| keep recall | 1.000 | 1.000 | 1.000 | 1.000 | 0.994 |
| skip recall | 0.274 | 0.212 | 0.196 | 0.140 | 0.145 |
| junk share of notes | 0.385 | 0.400 | 0.514 | 0.524 | 0.504 |
| ungrammatical notes (rules) | 3 (2.6%) | 3 (4.6%) | 16 (9.1%) | 4 (4.9%) | 138 (19.1%) |
| notes naming the wrong person | 0 | 0 | 5 | 4 | 28 |
| identity facts the labels do not give | 0 | 0 | 1 | 0 | 0 |
| evidence turns with a note | – | – | – | – | 204 (99.0%) |"""

_ABOUT = """\
A note says something lasting about its speaker: their life, plans, people, likes, things,
events, feelings about their own life, decisions. Courtesy, reactions to what the other
said, encouragement and advice to the listener, questions to the other person, general
questions and general remarks stay episodes, and `WriteResult.skipped` says which
("a reaction to the listener: 'that sounds amazing good for you'; nothing to remember").
A question about the user's own unresolved matter ("should I take the Lisbon job?") is a
note, and the profile card's open threads hold only those.

In a conversation between named people, a skipped turn that still says something ("That
charity race sounds great, Mel! The purple medal is gorgeous.") is kept as the evidence of
the latest note of its conversation and session: it joins that note's provenance
(`explain` shows it) and its words the note's keyword text, so a question that needs them
finds the note and sees them quoted beside it. It is not a note itself.

A note is a sentence a careful person would write. The rewrite into the third person
conjugates only verbs it knows ("I paint" -> "Maya paints"), writes informal forms out
("wanna" -> "wants to"), does not take a gerund subject for a dropped "I'm" ("Juggling
both jobs can be tricky"), and never turns "your garden" or "our army" into the speaker's:
where it cannot be sure, the note keeps the speaker's own words ("Maya says: “...”"). A
card slot holds only a value of its kind: a job is an occupation, never "a huge Celtic
supporter".

The labelled chats, `tests/data/writer_choice.jsonl` (492 turns): 16 chats between two
friends and 14 chats of a user with an assistant, written for the project, every turn
labelled keep or skip with its class (`event`, `reaction`, `question_other` ...), the note
a careful person would write and the card slots it states. Chats are `dev` (their misses
were read while the rules were written) or `holdout` (scored, never read). LoCoMo's two
development conversations (788 turns) are labelled the same way, by conversation and
`dia_id` without their text, in `tests/data/locomo_dev_choice.jsonl`; the labels came from
the turns alone, without the questions. The rules a note is judged by are
`commonplace_bench.writer_choice`'s own (they read none of the writer's word lists): a
first- or second-person word outside quotes, a non-verb given an -s after the speaker's
name ("totallies", "spokes"), a gerund subject read as a verb ("Maya is loving cooking is
relaxing"), a note cut off mid-sentence; and for the person, "your X" or a shared "our X"
written as the speaker's, or a note whose subject is the listener."""

_BY_HAND = """\
By hand, on two samples of 40 LoCoMo notes (seeds 7 and 11 of `random.sample` over the
dev split's notes), judged against the rules above and "would a careful person write
this": 6 of 80 notes have a grammar fault (a dropped subject guessed as "I" where it was
"it" or "we", a question fragment rewritten as a statement) and 4 name the wrong person in
part (an "our" of both speakers, "since we talked" as the speaker alone); the faults found
were fixed and are held by `tests/core/test_writer_choice.py`. Fragments copied from
speech ("Time flies.") were not counted as faults."""


def render_section(reports: Mapping[str, ChoiceReport], *, command: str) -> str:
    """The "Keep or skip" section of docs/writer-quality.md."""
    return "\n".join(
        [
            "## Keep or skip",
            "",
            _ABOUT,
            "",
            f"`{command}`, now:",
            "",
            render_table(reports),
            "",
            "Before the writer chose (the same measures, on the same turns):",
            "",
            BEFORE,
            "",
            _BY_HAND,
        ]
    )
