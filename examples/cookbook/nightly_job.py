"""The nightly lifecycle job: preview it, run it, audit it.

Use this when you schedule ``memory.sleep`` (cron, a worker queue): it promotes notes
that answers keep using to hot, distils clusters of notes about one person or thing into
summaries, demotes what is not retrieved any more and forgets stale low-value notes. A
dry run first says what it would do and changes nothing; the audit log keeps what it did.
A ``ManualClock`` stands in for months passing.

    python examples/cookbook/nightly_job.py
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone

from commonplace import ManualClock, Memory
from commonplace.lifecycle import LifecycleReport

USER = "ana"
FIRST_WEEK = [
    "My partner Joana is a marine biologist.",
    "Joana and I are planning a trip to the Azores.",
    "Joana is allergic to shellfish.",
    "I take my coffee black, no sugar.",
    "My favourite band is Radiohead.",
    "I like rainy days.",
    "I am reading a book about octopuses.",
]


def print_report(title: str, report: LifecycleReport, *, actions: bool = True) -> None:
    print(f"{title}: {report.counts() or 'nothing to do'}")
    for action in report.actions if actions else ():
        print(f"    {action.action:<10} {action.rule:<15} {action.record_id}  {action.detail}")


def nightly(memory: Memory) -> LifecycleReport:
    """What the scheduled job runs for one user: a preview, then the real thing."""
    audited = len(memory.audit(scope=USER, limit=10_000))
    preview = memory.sleep(scope=USER, dry_run=True)
    print_report(f"  dry run on {memory.clock.now():%Y-%m-%d}", preview)
    assert len(memory.audit(scope=USER, limit=10_000)) == audited  # it changed nothing
    done = memory.sleep(scope=USER)
    print_report("  for real", done, actions=False)
    assert done.counts() == preview.counts()  # the preview said exactly what happened
    return done


def main() -> None:
    clock = ManualClock(datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc))
    with Memory("sqlite:///:memory:", clock=clock) as memory:
        for line in FIRST_WEEK:
            clock.advance(hours=3)
            memory.write(line, scope=USER)
        for _ in range(6):  # the coffee note answers a question every day
            clock.advance(days=1)
            recall = memory.recall("how do I take my coffee?", scope=USER)
            memory.feedback(recall.id, reply="Black, no sugar, as you like it.")

        totals: Counter[str] = Counter()
        for weeks in (1, 6, 26):
            clock.advance(days=7 * weeks)
            print(f"\n{weeks} week(s) later:")
            totals.update(nightly(memory).counts())

        print("\naudit log, newest first:")
        log = memory.audit(scope=USER, limit=10_000)
        for entry in log[:5]:
            print(f"  {entry.at:%Y-%m-%d} {entry.action:<10} {entry.rule:<15} {entry.record_id}")
        print(f"  ... {len(log)} entries")

        assert totals["to_hot"] == 1  # the note in daily use was promoted
        assert totals["summarise"] == 1  # the three notes about Joana were distilled
        assert totals["delete"] >= 1  # stale low-value notes were forgotten
        assert len(log) == totals.total()  # every action is in the audit log
        assert memory.count("episode", scope=USER) == len(FIRST_WEEK)  # evidence stays
    print(f"nightly_job: {totals.total()} actions, previewed, applied and audited")


if __name__ == "__main__":
    main()
