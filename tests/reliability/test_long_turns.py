"""A very long turn costs what its first few thousand characters cost, and loses nothing.

The write path reads at most ``MAX_READ_CHARS`` of a turn (the note writer's rules and the
text the note is embedded from): a note keeps 50 words and embedders read a few hundred
tokens, so reading megabytes only cost time (27 s for 3 MB before the bound). Hypothesis
builds long turns of many shapes; each must be stored whole in its episode, give the note
its first part gives, and hand the embedder no more than the bound. How long such a write
takes is measured in ``docs/performance.md``, not asserted here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from reliability_support import SIZES, profile, tally

from commonplace import Config, HashingEmbedder, Memory
from commonplace._text import MAX_READ_CHARS, head
from commonplace.embedders import CallableEmbedder

SENTENCES = (
    "I went to the market and bought apples.",
    "My sister Mia lives in Porto!",
    "Really?",
    "haha",
    "Thanks so much.",
    "We moved to Braga last week and I started a new job at Globex",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "1234567890 " * 5,
    "Caroline: I went to a support group yesterday.",
    "ÁÉÍÓÚ ñ ç — “quoted” ‘text’ …",
)


def _seen_lengths() -> tuple[CallableEmbedder, list[int]]:
    hashing = HashingEmbedder()
    lengths: list[int] = []

    def embed(texts: Sequence[str]) -> np.ndarray:  # type: ignore[type-arg]
        lengths.extend(len(t) for t in texts)
        return hashing.embed(texts)

    return CallableEmbedder(embed, dim=hashing.dim, name="counting-hashing"), lengths


@given(
    parts=st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=8),
    repeat=st.integers(300, 40_000),
    joiner=st.sampled_from([" ", "\n", "", ". "]),
)
@profile(max(5, SIZES.fuzz_examples // 10))
def test_a_long_turn_is_stored_whole_and_read_only_to_the_bound(
    parts: list[str], repeat: int, joiner: str
) -> None:
    text = joiner.join(parts * repeat)[:3_000_000].strip() or "x"
    embedder, lengths = _seen_lengths()
    config = Config(max_turn_chars=3_000_000)
    with Memory(":memory:", config=config, embedder=embedder) as memory:
        result = memory.write(text, scope="ana")
        episode = memory.store.get_episode(result.episode_id)
        assert episode is not None and episode.text == text  # nothing committed is lost
        # the note is embedded from the turn's first part (plus the writer's short tags)
        assert all(n <= MAX_READ_CHARS + 200 for n in lengths), max(lengths)
    with Memory(":memory:", config=config, embedder=HashingEmbedder()) as memory:
        short = memory.write(head(text), scope="ana")
    assert (result.note is None) == (short.note is None)
    assert (result.note.text if result.note else result.skipped) == (
        short.note.text if short.note else short.skipped
    )
    tally("long turns written", 1)
    tally("long turn characters", len(text))
