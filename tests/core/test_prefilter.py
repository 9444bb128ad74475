"""The literal pre-checks never change what the note writer writes or what the
disagreement flags find.

A pattern is skipped only when the text lacks every needle read from it; these tests
generate text that each of the writer's and the flags' patterns matches (hypothesis
builds it from the pattern itself), in every case and with the characters that match
ASCII letters only case-insensitively, and check that the pattern is never skipped where
it matches, that a narrowed alternation matches exactly as the whole one does, and that
the writer's output with the pre-checks is the output without them.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commonplace import Role, Scope, _prefilter
from commonplace._prefilter import (
    ASCII_TWINS,
    Alternation,
    Guarded,
    GuardedRules,
    folded,
    needles,
)
from commonplace.read import _flags
from commonplace.write import NoteDraft, RuleNoteWriter, Turn, _rules

CHECKS = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=60,
    suppress_health_check=list(HealthCheck),
)
GUARDED = {
    **{name: v for name, v in vars(_rules).items() if isinstance(v, Guarded)},
    **{f"flags {name}": v for name, v in vars(_flags).items() if isinstance(v, Guarded)},
    **{f"fact rule {i}": rule[0] for i, rule in enumerate(_rules._FACT_RULES)},
}
ALTERNATIONS = {name: v for name, v in vars(_rules).items() if isinstance(v, Alternation)}
LABELLED = Path(__file__).resolve().parent.parent / "data" / "labelled_turns.jsonl"
AT = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


@st.composite
def variant(draw: st.DrawFn, text: str) -> str:
    """``text`` as typed otherwise: in another case, or with a look-alike of i, s or k."""
    how = draw(st.sampled_from(["as is", "upper", "title", "twins"]))
    if how == "upper":
        return text.upper()
    if how == "title":
        return text.title()
    if how == "twins":
        twins = {"i": "ı", "I": "İ", "s": "ſ", "k": "\u212a", "K": "\u212a"}
        return "".join(twins.get(c, c) if draw(st.booleans()) else c for c in text)
    return text


def matching(pattern: re.Pattern[str]) -> st.SearchStrategy[str]:
    return st.from_regex(pattern).flatmap(variant)


def test_the_ascii_twins_are_every_character_ignorecase_matches_to_an_ascii_letter() -> None:
    letter = re.compile("[a-z]", re.IGNORECASE)
    found = {cp for cp in range(0x80, sys.maxunicode + 1) if letter.fullmatch(chr(cp))}
    assert found == set(ASCII_TWINS)
    for cp, ascii_letter in ASCII_TWINS.items():
        assert re.fullmatch(ascii_letter, chr(cp), re.IGNORECASE)


def test_needles_are_read_from_literals_branches_and_required_groups() -> None:
    assert needles(re.compile(r"laid off|(?:got|was) (?:fired|let go)")) == (
        "fired",
        "let go",
        "laid off",
    )
    assert needles(re.compile(r"\bmy (?:first )?name is", re.IGNORECASE)) == ("name is",)
    assert needles(re.compile(r"(?:ab)+c?")) == ("ab",)
    assert needles(re.compile(r"MOVED", re.IGNORECASE)) == ("moved",)


def test_a_pattern_without_a_literal_every_match_holds_has_no_needles() -> None:
    assert needles(re.compile(r"(?:died)?\w+")) is None
    assert needles(re.compile(r"died|\d+")) is None  # one branch needs no literal
    assert needles(re.compile(r"[abc]+")) is None
    assert Guarded(re.compile(r"\w+")).possible("")  # never skipped


def test_non_ascii_literals_split_a_needle_rather_than_join_it() -> None:
    assert needles(re.compile("caf\u00e9 au lait")) == (" au lait",)


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_a_guarded_pattern_is_never_skipped_where_it_matches(name: str) -> None:
    guarded = GUARDED[name]
    assert guarded.needles is not None, f"{name} lost its needles: every turn would run it"

    @CHECKS
    @given(text=matching(guarded.pattern))
    def check(text: str) -> None:
        if guarded.pattern.search(text):
            assert guarded.possible(folded(text)), (name, text)
            assert guarded.search(text, folded(text)) is not None

    check()


@pytest.mark.parametrize("name", sorted(ALTERNATIONS))
def test_a_narrowed_alternation_matches_as_the_whole_one(name: str) -> None:
    alternation = ALTERNATIONS[name]
    alternatives = st.sampled_from(alternation._alternatives).flatmap(
        lambda alt: matching(re.compile(alt[1], alternation.pattern.flags))
    )

    @CHECKS
    @given(parts=st.lists(alternatives | st.text(max_size=12), min_size=1, max_size=3))
    def check(parts: list[str]) -> None:
        text = " ".join(parts)
        narrowed = alternation.narrowed(folded(text))
        whole = [(m.span(), m.lastgroup) for m in alternation.pattern.finditer(text)]
        if narrowed is None:
            assert whole == [], text
        else:
            assert [(m.span(), m.lastgroup) for m in narrowed.finditer(text)] == whole, text

    check()


def test_guarded_rules_name_every_rule_that_matches_in_order() -> None:
    rules = _rules._FACT_GUARDS
    assert [g.pattern for g in rules.guards] == [rule[0].pattern for rule in _rules._FACT_RULES]
    one_rule = st.sampled_from(rules.guards).flatmap(lambda g: matching(g.pattern))

    @CHECKS
    @given(parts=st.lists(one_rule | st.text(max_size=12), min_size=1, max_size=3))
    def check(parts: list[str]) -> None:
        text = " ".join(parts)
        found = rules.possible(folded(text))
        assert found == sorted(set(found)), text
        for i, guarded in enumerate(rules.guards):
            # the same verdict as the rule's own check, so a match is never skipped
            assert (i in found) == guarded.possible(folded(text)), (i, text)
            if guarded.pattern.search(text):
                assert i in found, (i, text)

    check()
    always = GuardedRules([Guarded(re.compile(r"\w+")), Guarded(re.compile("died"))])
    assert always.possible("") == [0]
    assert always.possible("he died") == [0, 1]


@contextmanager
def without_prefilters() -> Iterator[None]:
    """Every pattern runs on every text, as before the pre-checks."""
    possible, narrowed, rules = Guarded.possible, Alternation.narrowed, GuardedRules.possible
    Guarded.possible = lambda self, folded_text: True  # type: ignore[method-assign]
    Alternation.narrowed = lambda self, folded_text: self.pattern  # type: ignore[method-assign]
    GuardedRules.possible = lambda self, folded_text: list(range(len(self.guards)))  # type: ignore[method-assign]
    try:
        yield
    finally:
        Guarded.possible, Alternation.narrowed = possible, narrowed  # type: ignore[method-assign]
        GuardedRules.possible = rules  # type: ignore[method-assign]


def written(text: str) -> object:
    draft = RuleNoteWriter().write(
        Turn(text=text, role=Role.USER, scope=Scope(user="prefilter"), at=AT)
    )
    if isinstance(draft, NoteDraft):
        return (draft.text, draft.tags)
    return draft.reason


def labelled_sentences() -> list[str]:
    rows = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    return [row["text"] for row in rows if row]


every_pattern = st.sampled_from(
    [g.pattern for g in GUARDED.values()]
    + [
        re.compile(alt, a.pattern.flags)
        for a in ALTERNATIONS.values()
        for _, alt in a._alternatives
    ]
)


@CHECKS
@given(
    parts=st.lists(
        st.sampled_from(labelled_sentences()) | every_pattern.flatmap(matching),
        min_size=1,
        max_size=4,
    ),
    joiner=st.sampled_from([" ", ". ", "! ", " lol ", "\n", " - "]),
    speaker=st.sampled_from(["", "Caroline: ", "Mel: "]),
)
def test_the_writer_writes_the_same_with_and_without_the_prefilters(
    parts: list[str], joiner: str, speaker: str
) -> None:
    text = speaker + joiner.join(parts)
    if not text.strip():
        return
    with_checks = written(text)
    with without_prefilters():
        assert written(text) == with_checks, text


def test_narrowed_alternations_are_cached_within_a_bound() -> None:
    alternation = Alternation([(f"a{i}", f"word{i}") for i in range(12)])
    for n in range(1, 1 << 12, 7):
        text = " ".join(f"word{i}" for i in range(12) if n >> i & 1)
        narrowed = alternation.narrowed(folded(text))
        assert narrowed is not None
        assert [m.lastgroup for m in narrowed.finditer(text)] == [
            m.lastgroup for m in alternation.pattern.finditer(text)
        ]
    assert alternation._subset.cache_info().currsize <= _prefilter._SUBSETS_CACHED  # type: ignore[attr-defined]
