"""How good are the notes the default rule-based writer takes? Scores on a labelled set.

Run ``python -m commonplace_bench.writer_quality`` from the repository root. It reads
``tests/data/labelled_turns.jsonl`` (hand-written user turns, each labelled with what a
careful note-taker would record), runs a note writer over every turn, and scores its
tags against the labels: noise detection (skip or note), modality per class, named
entities, emotion, life event, fact key and value. It prints a markdown table and the
writer's throughput, and rewrites ``docs/writer-quality.md``.

Labels are scored as they are, whoever writes the notes: :func:`evaluate` takes any
object with a ``write(turn) -> NoteDraft | Skip`` method, so an LLM-backed writer can be
measured on the same set.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from commonplace import Modality, Role, Scope
from commonplace.write import NoteDraft, RuleNoteWriter, Skip, Turn

from . import writer_choice

__all__ = [
    "Counts",
    "LabelledTurn",
    "Miss",
    "NoteWriter",
    "Report",
    "evaluate",
    "load_turns",
    "main",
    "render_doc",
    "render_table",
    "throughput",
]

DEFAULT_DATA = Path("tests/data/labelled_turns.jsonl")
DEFAULT_DOC = Path("docs/writer-quality.md")
COMMAND = "python -m commonplace_bench.writer_quality"

MODALITIES = tuple(m.value for m in Modality)
EMOTIONS = ("joy", "sadness", "anger", "fear", "stress", "surprise")
EVENTS = (
    "layoff",
    "breakup",
    "death",
    "engagement",
    "marriage",
    "birth",
    "move",
    "diagnosis",
    "new_job",
    "promotion",
    "graduation",
    "retirement",
)
MICRO = "micro"
# How each part of the labelled set was used while the rules were written.
SPLITS = {
    "dev": "written first; the rules were tuned looking at its misses",
    "test": "written with dev (every fourth turn); its misses were never looked at",
    "fresh": "written after the first round of tuning; scored once, then a second round "
    "looked at its misses, so it is no longer held out",
    "holdout": "written after all tuning and scored once; never tuned on",
}
TAGS = ("noise", "modality", "entities", "emotion", "event", "key", "value")

_SCOPE = Scope(user="writer-quality")
_AT = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


class NoteWriter(Protocol):
    """Anything that turns one user turn into a note draft or a skip."""

    def write(self, turn: Turn) -> NoteDraft | Skip: ...


@dataclass(frozen=True, slots=True)
class LabelledTurn:
    """One user turn and what a careful note-taker would record about it.

    ``modality`` is None for noise. ``key`` is ``(subject, predicate)`` of a fact that
    can later change; ``value`` its value. ``split`` says how the turn was used while
    the rules were tuned (see ``SPLITS``).
    """

    id: str
    text: str
    is_noise: bool
    modality: str | None = None
    entities: tuple[str, ...] = ()
    emotion: str | None = None
    event: str | None = None
    key: tuple[str, str] | None = None
    value: str | None = None
    split: str = "dev"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LabelledTurn:
        key = data.get("key")
        turn = cls(
            id=str(data["id"]),
            text=str(data["text"]),
            is_noise=bool(data["is_noise"]),
            modality=data.get("modality"),
            entities=tuple(str(e) for e in data.get("entities") or ()),
            emotion=data.get("emotion"),
            event=data.get("event"),
            key=None if not key else (str(key[0]), str(key[1])),
            value=data.get("value"),
            split=str(data.get("split", "dev")),
        )
        turn.check()
        return turn

    def check(self) -> None:
        """Raise ValueError when the labels are inconsistent or out of vocabulary."""
        problems = []
        if self.is_noise and (
            self.modality or self.entities or self.emotion or self.event or self.key or self.value
        ):
            problems.append("a noise turn carries no other label")
        if not self.is_noise and self.modality not in MODALITIES:
            problems.append(f"modality {self.modality!r} is not one of {MODALITIES}")
        if self.emotion is not None and self.emotion not in EMOTIONS:
            problems.append(f"emotion {self.emotion!r} is not one of {EMOTIONS}")
        if self.event is not None and self.event not in EVENTS:
            problems.append(f"event {self.event!r} is not one of {EVENTS}")
        if (self.key is None) != (self.value is None):
            problems.append("key and value are set together")
        if self.key is not None and self.modality != "statement":
            problems.append("only statements state facts")
        if problems:
            raise ValueError(f"turn {self.id}: " + "; ".join(problems))


@dataclass(frozen=True, slots=True)
class Prediction:
    """A writer's output reduced to the labelled fields."""

    is_noise: bool
    modality: str | None = None
    entities: tuple[str, ...] = ()
    emotion: str | None = None
    event: str | None = None
    key: tuple[str, str] | None = None
    value: str | None = None
    note: str | None = None

    @classmethod
    def of(cls, draft: NoteDraft | Skip) -> Prediction:
        if isinstance(draft, Skip):
            return cls(is_noise=True, note=f"(skip: {draft.reason})")
        tags = draft.tags
        return cls(
            is_noise=False,
            modality=tags.modality.value,
            entities=tags.entities,
            emotion=tags.emotion,
            event=tags.event,
            key=None if tags.key is None else (tags.key.subject, tags.key.predicate),
            value=tags.value,
            note=draft.text,
        )


@dataclass(slots=True)
class Counts:
    """True positives, false positives and false negatives of one class."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def support(self) -> int:
        return self.tp + self.fn

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def add(self, gold: bool, predicted: bool) -> None:
        self.tp += gold and predicted
        self.fp += predicted and not gold
        self.fn += gold and not predicted


@dataclass(frozen=True, slots=True)
class Miss:
    """One turn on which the writer disagreed with the labels for one tag."""

    id: str
    text: str
    expected: str
    got: str


@dataclass(slots=True)
class Report:
    """Counts per tag and class, accuracies, and the turns each tag got wrong."""

    turns: int
    counts: dict[str, dict[str, Counts]] = field(default_factory=dict)
    accuracy: dict[str, float] = field(default_factory=dict)
    misses: dict[str, list[Miss]] = field(default_factory=dict)

    def f1(self, tag: str, cls: str = MICRO) -> float:
        return self.counts[tag][cls].f1

    def headline(self) -> dict[str, float]:
        """The few numbers a regression test holds floors for."""
        return {
            "noise F1": self.f1("noise", "skip"),
            "modality accuracy": self.accuracy["modality"],
            "entity F1": self.f1("entities"),
            "emotion F1": self.f1("emotion"),
            "event F1": self.f1("event"),
            "key F1": self.f1("key"),
            "value F1": self.f1("value"),
        }


def load_turns(path: Path | str = DEFAULT_DATA) -> list[LabelledTurn]:
    """Read the labelled set (JSON lines); raise ValueError on a bad or duplicate row."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(
            f"{path} not found: run from the repository root or pass --data PATH"
        )
    turns = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                try:
                    turns.append(LabelledTurn.from_json(json.loads(line)))
                except (KeyError, TypeError, json.JSONDecodeError) as exc:
                    raise ValueError(f"{path}:{number}: {exc!r}") from None
    ids = [t.id for t in turns]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: duplicate ids")
    return turns


def _turn(text: str) -> Turn:
    return Turn(text=text, role=Role.USER, scope=_SCOPE, at=_AT)


def _fold(text: str) -> str:
    return " ".join(text.casefold().replace("’", "'").split())


def _show(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value) if value else "—"
    return str(value)


def evaluate(writer: NoteWriter, turns: Iterable[LabelledTurn]) -> Report:
    """Run ``writer`` on every turn and score each tag against the labels.

    - noise: classes ``skip`` (the writer returned a Skip) and ``note``;
    - modality: one class per modality, noise and skips counting as no modality;
      ``accuracy["modality"]`` is over the turns labelled as worth a note;
    - entities: micro counts over case-insensitive exact matches, per turn;
    - emotion and event: one class per label, ``micro`` over all of them (None is
      no label, not a class);
    - key: exact ``(subject, predicate)``; value: key *and* value right (value
      compared case-insensitively); ``accuracy["value | key"]`` is the share of
      turns whose key was right that also got the value right.
    """
    turns = list(turns)
    report = Report(turns=len(turns))
    counts: dict[str, dict[str, Counts]] = {
        "noise": {"skip": Counts(), "note": Counts()},
        "modality": {m: Counts() for m in MODALITIES},
        "entities": {MICRO: Counts()},
        "emotion": {**{e: Counts() for e in EMOTIONS}, MICRO: Counts()},
        "event": {**{e: Counts() for e in EVENTS}, MICRO: Counts()},
        "key": {MICRO: Counts()},
        "value": {MICRO: Counts()},
    }
    misses: dict[str, list[Miss]] = {tag: [] for tag in TAGS}
    modality_right = modality_total = key_right = value_right = 0

    for gold in turns:
        got = Prediction.of(writer.write(_turn(gold.text)))

        def miss(tag: str, expected: object, predicted: object, g: LabelledTurn = gold) -> None:
            misses[tag].append(Miss(g.id, g.text, _show(expected), _show(predicted)))

        counts["noise"]["skip"].add(gold.is_noise, got.is_noise)
        counts["noise"]["note"].add(not gold.is_noise, not got.is_noise)
        if gold.is_noise != got.is_noise:
            miss("noise", "skip" if gold.is_noise else "note", got.note)

        for modality in MODALITIES:
            counts["modality"][modality].add(gold.modality == modality, got.modality == modality)
        if not gold.is_noise:
            modality_total += 1
            modality_right += gold.modality == got.modality
        if gold.modality != got.modality and not gold.is_noise:
            miss("modality", gold.modality, got.modality)

        gold_entities = {_fold(e) for e in gold.entities}
        got_entities = {_fold(e) for e in got.entities}
        entity_counts = counts["entities"][MICRO]
        entity_counts.tp += len(gold_entities & got_entities)
        entity_counts.fp += len(got_entities - gold_entities)
        entity_counts.fn += len(gold_entities - got_entities)
        if gold_entities != got_entities:
            miss("entities", gold.entities, got.entities)

        for tag, classes in (("emotion", EMOTIONS), ("event", EVENTS)):
            expected, predicted = getattr(gold, tag), getattr(got, tag)
            for cls in classes:
                counts[tag][cls].add(expected == cls, predicted == cls)
            micro = counts[tag][MICRO]
            micro.tp += expected is not None and expected == predicted
            micro.fp += predicted is not None and expected != predicted
            micro.fn += expected is not None and expected != predicted
            if expected != predicted:
                miss(tag, expected, predicted)

        key_ok = gold.key is not None and gold.key == got.key
        both_ok = key_ok and _fold(gold.value or "") == _fold(got.value or "")
        counts["key"][MICRO].tp += key_ok
        counts["key"][MICRO].fp += got.key is not None and not key_ok
        counts["key"][MICRO].fn += gold.key is not None and not key_ok
        counts["value"][MICRO].tp += both_ok
        counts["value"][MICRO].fp += got.key is not None and not both_ok
        counts["value"][MICRO].fn += gold.key is not None and not both_ok
        key_right += key_ok
        value_right += both_ok
        if gold.key != got.key:
            miss("key", gold.key, got.key)
        elif key_ok and not both_ok:
            miss("value", gold.value, got.value)

    report.counts = counts
    report.accuracy = {
        "modality": modality_right / modality_total if modality_total else 1.0,
        "value | key": value_right / key_right if key_right else 1.0,
    }
    report.misses = misses
    return report


def throughput(
    writer: NoteWriter, turns: Sequence[LabelledTurn], *, runs: int = 5, passes: int = 20
) -> float:
    """Median turns per second of ``writer.write`` over ``runs`` timed runs.

    Each run writes every turn of the set ``passes`` times (noise included, in set
    order); building the turns is not timed.
    """
    built = [_turn(t.text) for t in turns] * passes
    speeds = []
    for _ in range(runs):
        start = time.perf_counter()
        for turn in built:
            writer.write(turn)
        speeds.append(len(built) / (time.perf_counter() - start))
    return statistics.median(speeds)


_CLASS_ORDER = {
    "noise": ("skip", "note"),
    "modality": MODALITIES,
    "entities": (MICRO,),
    "emotion": (*EMOTIONS, MICRO),
    "event": (*EVENTS, MICRO),
    "key": (MICRO,),
    "value": (MICRO,),
}


def render_table(report: Report) -> str:
    """One markdown row per tag and class that occurs in the labels or the output."""
    lines = [
        "| tag | class | support | predicted | precision | recall | F1 |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for tag in TAGS:
        for cls in _CLASS_ORDER[tag]:
            c = report.counts[tag][cls]
            if not (c.support or c.fp) and cls != MICRO:
                continue
            name = f"**{tag}**" if cls in (MICRO, "skip") else tag
            label = "exact" if tag in ("key", "value") else cls
            lines.append(
                f"| {name} | {label} | {c.support} | {c.tp + c.fp} | "
                f"{c.precision:.3f} | {c.recall:.3f} | {c.f1:.3f} |"
            )
    lines.append("")
    lines.append(
        f"Modality accuracy (turns worth a note): **{report.accuracy['modality']:.3f}**; "
        f"value right when the key is right: {report.accuracy['value | key']:.3f}."
    )
    return "\n".join(lines)


def render_headlines(reports: Mapping[str, Report]) -> str:
    """The headline numbers side by side, one column per report (e.g. per split)."""
    names = list(reports)
    first = reports[names[0]].headline()
    lines = [
        "| metric | " + " | ".join(f"{n} ({reports[n].turns} turns)" for n in names) + " |",
        "| --- |" + " ---: |" * len(names),
    ]
    for metric in first:
        row = " | ".join(f"{reports[n].headline()[metric]:.3f}" for n in names)
        lines.append(f"| {metric} | {row} |")
    return "\n".join(lines)


def _misses(report: Report, per_tag: int) -> list[str]:
    lines = []
    for tag in TAGS:
        found = report.misses[tag]
        if not found:
            continue
        lines += ["", f"**{tag}** ({len(found)} turns disagree; first {min(per_tag, len(found))}):"]
        lines += [""]
        for m in found[:per_tag]:
            text = m.text.replace("|", "\\|")
            lines.append(f"- `{m.id}` “{text}”: expected {m.expected}, got {m.got}")
    return lines


_CONVENTIONS = """\
The set is written for this project, not sampled from real users: statements about
self, family, work, places, hobbies and health; updates of changing facts (moves, job
changes, settings); life events; jokes with and without markers, and sarcasm;
wh-, yes/no and request questions; hypotheticals; quotes of the assistant; noise;
multi-sentence turns; typos and lower case; non-English names. Labelling rules:

- **noise**: nothing worth remembering about the user (acknowledgements, reactions,
  emoji only). Noise carries no other label.
- **modality**: how the turn was meant. Sarcasm whose literal content is false is a
  `joke`; a real event told with "lol" is a `statement`. Requests ("can you…",
  "recommend me…", "I need a recipe for…") are `question`s. Anything imagined or
  conditional ("what if", "if I were", "say I…", "what would happen if") is
  `hypothetical`, even when it ends in "?". Any reference to what the assistant said is
  a `quote`. A multi-sentence turn takes the modality of its most informative sentence.
- **entities**: every proper name (people, pets, places, organisations, products,
  languages, works), as written, even in lower case ("toronto", "zsh"); plus the
  relation word of each person or pet in the user's life mentioned as "my …"
  ("sister", "boss", "dog"), which is what lets notes about the same person link.
  Dates and days are not entities.
- **emotion**: one of joy, sadness, anger, fear, stress, surprise when the turn
  expresses it, in words ("thrilled", "ugh", "can't believe") or unmistakably (a death
  is sadness, exclaimed good news is joy); negated words ("not worried") are not.
- **event**: a major life event that happened, is happening or is fixed to happen to
  the user or their immediate family or pet; not an imagined, possible or someone
  else's (a cousin's wedding), and not figures of speech ("my phone died").
- **key / value**: a single-valued fact about the user that a later turn could update,
  as `[subject, predicate]`. The subject is always `user`: for the user's attributes
  (`name`, `age`, `city`, `employer`, `job`, `partner`), for their things and settings
  (`["user", "staging server port"]`), and for who fills a role in their life
  (`["user", "manager"]` = `Deepa`). Facts about other people ("my sister is 30") carry
  no key. The predicate is the attribute's plain name, without "new"/"current"; the
  value is the shortest phrase that answers it (`8001`, `Lisbon`, `nurse`). When a turn
  states two facts, the first one is labelled. Only statements carry a key."""

_NOTES = """\
Where rules fail, and why:

- **Meaning without markers.** Modality comes from surface markers ("lol", "?", "what
  if", "you said") and a few idioms (sarcastic "just what I needed", "oh great,
  another…"). Deadpan jokes ("I have a PhD in procrastination"), sarcasm in words the
  list lacks ("… could have been an email. Fantastic.") and requests with a verb the
  list lacks ("Find me a quiet café") get through. A laugh on a real event is told
  from a joke only when the event is anchored in time ("just", "yesterday", "last
  Friday"): "lol my cat knocked over a glass" stays a joke. Telling these apart needs
  the meaning of the sentence, and world knowledge that nobody has a PhD in
  procrastination.
- **Unmarked emotion.** A word list finds "furious" and "nervous", skips negated words
  ("not worried") and reads a few conventions (a death is sadness, exclaimed good news
  is joy, sarcastic praise is annoyance), but "can't sleep, my mind won't stop racing"
  or "four years, just gone" need reading, not matching; and a word list cannot tell
  "missing him" from "missing a deadline".
- **Open-ended keys.** Facts follow a few shapes ("my X is Y", "I live in", "the X moved
  to Y") that rules can parse, but the predicate is often implicit ("the standup is at
  10 now" is a time; "I'm on the payments team" is a team) or the value needs the
  sentence understood ("I'm not at Amazon anymore, I joined … Kinetix").
- **Lower-case and misspelled names.** Entities come from capitalisation, so
  "toronto", "kubernetes", "st marys hospital" and "movd to phoenix" are missed (a
  lower-case city or employer is kept only when a fact pattern reads it as the
  value); conversely a capitalised common word slips in ("DJ", "Sundays", "Set" opening
  an imperative). Misspelled keywords ("got enaged") defeat every pattern.
- **One sentence, one key.** The writer keeps one sentence and one fact per turn;
  when a turn carries two ("My name is Tomasz and I'm a nurse"), the labels pick the
  first, and so does the writer, but a profile would want both.

An LLM writer fixes most of these where they start: it reads the turn rather than
its markers. Register one through the `commonplace_write_note` hook, most simply with
`Memory(plugins=[LLMNoteWriter(complete)])`, where `complete(prompt) -> str` wraps any
chat model; its reply is validated and, when the model fails or replies with junk,
the turn falls back to this rule writer. Any such writer can be scored on this set
with `evaluate(writer, load_turns())`. The rule writer stays the default because it
is deterministic, offline, free and fast."""


def _load() -> str:
    """How busy the machine was, since the throughput depends on it."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not on every platform
        return ""
    return f"; 1-minute load average {load:.1f} on {os.cpu_count()} CPUs"


def render_doc(
    reports: Mapping[str, Report],
    *,
    speed: float,
    runs: int,
    data: Path,
    examples: int = 10,
    choice: str = "",
) -> str:
    """The whole ``docs/writer-quality.md``: conventions, tables, misses, notes."""
    overall = reports["all"]
    return "\n".join(
        [
            "# Note-writer quality",
            "",
            "<!-- generated by `" + COMMAND + "`; edit the generator, not this file -->",
            "",
            "How well the default `RuleNoteWriter` tags user turns, measured against "
            f"`{data.as_posix()}`: {overall.turns} hand-labelled turns.",
            "",
            "Rerun from the repository root (needs `commonplace` and `commonplace-bench`):",
            "",
            "```",
            "pip install -e packages/commonplace -e packages/commonplace-bench",
            COMMAND,
            "```",
            "",
            "`tests/core/test_writer_quality.py` holds floors a little below these numbers.",
            "",
            "## The labelled set",
            "",
            _CONVENTIONS,
            "",
            "Each turn says how it was used while the rules were written (`split`):",
            "",
            *(f"- `{name}`: {how}." for name, how in SPLITS.items()),
            "",
            "The gap between `dev` and `holdout` is the honest measure of how far the rules",
            "overfit the turns they were written against: read the `holdout` column as the",
            "writer's expected quality on new text.",
            "",
            "## Results",
            "",
            render_headlines(reports),
            "",
            "Every tag and class, on the whole set:",
            "",
            render_table(overall),
            "",
            f"Throughput of `RuleNoteWriter().write` on this set: **{speed:,.0f} turns/s** "
            f"(median of {runs} runs, one process, no store{_load()}).",
            "",
            *([choice, ""] if choice else []),
            "## Where the rules fail",
            "",
            _NOTES,
            "",
            "### Disagreements on the held-out turns",
            *_misses(reports.get("holdout", overall), examples),
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Score the rule writer, print the tables, and (unless --no-write) rewrite the doc."""
    parser = argparse.ArgumentParser(prog=COMMAND)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="labelled JSONL")
    parser.add_argument("--output", type=Path, default=DEFAULT_DOC, help="doc to rewrite")
    parser.add_argument("--runs", type=int, default=5, help="timed runs (median is kept)")
    parser.add_argument(
        "--misses",
        choices=("none", "dev", "test", "fresh", "holdout", "all"),
        default="none",
        help="also print the turns that disagree with their labels",
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--locomo", type=Path, help="LoCoMo's dev split, for the keep-or-skip section"
    )
    args = parser.parse_args(argv)

    turns = load_turns(args.data)
    writer = RuleNoteWriter()
    reports = {"all": evaluate(writer, turns)}
    for split in dict.fromkeys(t.split for t in turns):
        reports[split] = evaluate(writer, [t for t in turns if t.split == split])
    speed = throughput(writer, turns, runs=args.runs)
    print(render_headlines(reports))
    print()
    print(render_table(reports["all"]))
    print(f"\nRuleNoteWriter().write: {speed:,.0f} turns/s (median of {args.runs} runs)")
    if args.misses != "none":
        print("\n".join(_misses(reports[args.misses], 1000)))
    choice = writer_choice.reports(writer, locomo=args.locomo)
    print()
    print(writer_choice.render_table(choice))
    command = f"{COMMAND} --locomo PATH" if args.locomo else COMMAND
    section = writer_choice.render_section(choice, command=command)
    if not args.no_write:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(
            render_doc(reports, speed=speed, runs=args.runs, data=args.data, choice=section),
            encoding="utf-8",
        )
        print(f"\nwrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
