"""The compiled block's token count is the sum of its lines' costs, and that sum is exact.

``compile_context`` adds up the costs it packed by instead of encoding the whole block
again: these tests hold that sum to a count of the rendered block, for lines as the
compiler makes them from any text.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from commonplace import count_tokens
from commonplace.read._context import Line, Section, compile_context, neutralise

# letters, digits, punctuation, spaces of every kind, marks and controls, emoji, CJK
ANY_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=60
)
DAYS = st.sampled_from(["8 May 2023", "9 May 2023", "12 June 2024", None])


def _line(text: str, priority: float, day: str | None, n: int) -> Line:
    shown = neutralise(text) or "."
    return Line(f"- {shown}", priority, f"nt_{n}", day)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(ANY_TEXT, st.floats(0, 5), DAYS), min_size=1, max_size=25),
    st.lists(ANY_TEXT, max_size=4),
    st.integers(60, 600),
)
def test_the_count_is_the_rendered_blocks(
    notes: list[tuple[str, float, str | None]], profile: list[str], budget: int
) -> None:
    lines = [_line(text, p, day, n) for n, (text, p, day) in enumerate(notes)]
    sections = [
        Section(
            "Profile", [Line(neutralise(t) or ".", 6.0 - n / 1000) for n, t in enumerate(profile)]
        ),
        Section("Relevant notes", lines),
    ]
    text, ids, tokens = compile_context(sections, budget_tokens=budget)
    assert tokens == count_tokens(text)
    assert tokens <= budget
    assert set(ids) <= {line.record_id for line in lines}


def test_a_day_shown_apart_twice_is_counted_twice() -> None:
    # notes of one day on both sides of another day's: the heading is rendered twice but
    # packed once, so the packed sum is short of the block by a heading
    day = "8 May 2023"
    lines = [
        Line("- the user adopted a cat called Mochi", 3.0, "a", day),
        Line("- the user moved to Porto", 2.0, "b", "9 May 2023"),
        Line("- the user started pottery classes", 1.0, "c", day),
    ]
    sections = [Section("Relevant notes", lines)]
    whole, ids, tokens = compile_context(sections, budget_tokens=10_000)
    assert ids == ["a", "b", "c"]
    assert whole.count(f"{day}:") == 2
    assert tokens == count_tokens(whole)
    # a budget the packing's sum fits but the rendered block does not: the last line goes
    tight, ids, tokens = compile_context(sections, budget_tokens=count_tokens(whole) - 1)
    assert ids == ["a", "b"]
    assert tokens == count_tokens(tight) <= count_tokens(whole) - 1
