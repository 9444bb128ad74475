"""A custom ranking signal, contributed by a plugin.

Use this when your product knows something recall should weigh that the four built-in
signals (semantic, recency, frequency, importance) do not: here, that what worries the
user matters more to a coaching bot. A signal scores each candidate in [0, 1]; like
recency, it only reorders notes about as relevant as the best one, and it shows up by
name in every item's ``score.breakdown()``.

    python examples/cookbook/custom_signal.py
"""

from __future__ import annotations

from datetime import datetime

from commonplace import Memory, hookimpl
from commonplace.stores import Candidate

NOTES = [
    "I commute to my job by train.",
    "My job at the bakery starts at six.",
    "I'm really anxious about my job interview at Siemens on Friday.",
    "I have a job interview at Siemens on Friday.",
    "I am scared of spiders.",
]
QUESTION = "any news about the job interview?"


WORRIES = frozenset({"fear", "sadness", "anger"})  # emotions the note writer tags


class WorrySignal:
    """1 for a note about something the user fears, regrets or resents, 0 otherwise."""

    name = "worry"  # its key in score.breakdown(); must not be a built-in name
    weight = 0.2  # as much as recency or frequency (semantic is 0.5)

    def score(self, candidate: Candidate, *, query: str, now: datetime) -> float:
        return float(candidate.record.tags.emotion in WORRIES)


class WorryPlugin:
    @hookimpl
    def commonplace_score_signals(self) -> list[WorrySignal]:
        return [WorrySignal()]


# To give every Memory this signal, ship the plugin in a package and register it in that
# package's pyproject.toml (then do not pass it to plugins=[...] as well):
#
#     [project.entry-points.commonplace]
#     worry = "my_package.signals:plugin"    # plugin = WorryPlugin()
plugin = WorryPlugin()


def ranking(plugins: list[object]) -> list[tuple[str, dict[str, float]]]:
    """The same notes in a fresh store, recalled once: (text, breakdown) best first."""
    with Memory("sqlite:///:memory:", plugins=plugins) as memory:
        for line in NOTES:
            memory.write(line, scope="ana")
        recall = memory.recall(QUESTION, scope="ana")
        return [(item.record.text, item.score.breakdown()) for item in recall.items]


def main() -> None:
    results = {"without": ranking([]), "with": ranking([plugin])}
    for label, ranked in results.items():
        print(f"{QUESTION!r} {label} the worry signal:")
        for text, signals in ranked:
            worry, gate = signals.get("worry", "-"), signals["gate"]
            print(f"  total {signals['total']:.3f}  worry {worry}  gate {gate:.2f}  {text}")

    before = [text for text, _ in results["without"]]
    after = [text for text, _ in results["with"]]
    anxious = next(text for text in after if "anxious" in text)
    spiders = next(text for text in after if "spiders" in text)
    assert all("worry" in signals for _, signals in results["with"])
    assert after.index(anxious) < before.index(anxious)  # the worried note was lifted
    # ... but the gate kept a worry that does not answer the question down
    assert dict(results["with"])[spiders]["total"] == dict(results["without"])[spiders]["total"]
    print(
        f"custom_signal: 'worry' lifted the anxious note from #{before.index(anxious) + 1} "
        f"to #{after.index(anxious) + 1}; the unrelated one stayed put"
    )


if __name__ == "__main__":
    main()
