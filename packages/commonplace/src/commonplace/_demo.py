"""``commonplace demo``: a scripted conversation over simulated weeks, narrated.

It shows the write path (what became a note, what was skipped and why, with
tags), the firewall (assistant turns never become notes, even when they invent
things), recall with the per-signal breakdown, and the compiled context.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

from ._clock import ManualClock
from ._memory import Memory
from ._records import Role
from ._scope import Scope
from ._tokens import count_tokens
from .write import WriteResult

# (days since start, role, text). Sessions are separated by simulated weeks.
SCRIPT: tuple[tuple[int, str, str], ...] = (
    (0, "user", "Hi! My name is Ana Ribeiro."),
    (0, "assistant", "Nice to meet you, Ana. What brings you here?"),
    (0, "user", "I live in Lisbon with my partner Joana and our dog Pixel."),
    (0, "user", "ok"),
    (0, "user", "I work at Feedzai as a data engineer."),
    (0, "assistant", "You mentioned your brother Tom loves sailing, right?"),
    (0, "user", "lol no, I don't have a brother"),
    (7, "user", "Our staging server port is 8000 by the way."),
    (7, "user", "thanks"),
    (7, "user", "I've been training for the Lisbon half marathon in March."),
    (7, "user", "What's a good pace for a first half marathon?"),
    (21, "user", "I got laid off today. Trying to act fine about it but I'm pretty scared."),
    (21, "assistant", "I'm so sorry. That is a lot to carry."),
    (21, "user", "haha maybe I'll just become a goat farmer 😂"),
    (21, "user", "What if I moved to Porto to be closer to my mom?"),
    (35, "user", "Update: the staging server moved to port 8001."),
    (35, "user", "I got a job at Talkdesk as a platform engineer!"),
    (35, "user", "👍"),
    (49, "user", "We just moved to Porto, Joana found a place near the river."),
    (49, "user", "My mom Teresa lives ten minutes away now."),
)

QUESTIONS = (
    "Where do I live these days?",
    "which port does the staging server use?",
    "what happened with my job?",
    "who is Joana?",
)


def run_demo(*, url: str, echo: Callable[[str], None] = print) -> None:
    start = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
    clock = ManualClock(start)
    scope = Scope(user="ana", thread="demo")
    with Memory(url, clock=clock) as memory:
        echo(f"store: {memory.url}   embedder: {memory.embedder.name}")
        day = -1
        for offset, role, text in SCRIPT:
            if offset != day:
                day = offset
                clock.set(start)
                clock.advance(days=offset)
                echo(f"\n=== session on {clock.now():%Y-%m-%d} (day {offset}) ===")
            clock.advance(minutes=1)
            result = memory.write(text, role=role, scope=scope)
            echo(_narrate(role, text, result))
        echo(
            "\n=== the profile card, rewritten every "
            f"{memory.config.profile.rewrite_every} notes (cap "
            f"{memory.config.profile.card_tokens} tokens) ==="
        )
        card = memory.rewrite_profile(scope=scope)
        echo(card)
        echo(f"({count_tokens(card)} tokens)")
        clock.advance(days=7)
        report = memory.sleep(scope=Scope(user="ana"))
        echo(f"\n=== sleep on {clock.now():%Y-%m-%d}: {report.counts() or 'nothing to do'} ===")
        for action in report.actions:
            echo(f"  {action.action:<16} {action.rule:<18} {action.detail}")
        echo(f"\n=== recall on {clock.now():%Y-%m-%d}, across all of Ana's threads ===")
        for question in QUESTIONS:
            recall = memory.recall(question, scope=Scope(user="ana"), top_k=3)
            echo(f"\n? {question}")
            for flag in recall.disagreements:
                echo(f"  ! {flag.reason}")
            echo("  rank  total  sem   rec   freq  imp   gate  note")
            for rank, item in enumerate(recall.items, 1):
                b = item.score.breakdown()
                note = f"  ({item.note})" if item.note else ""
                echo(
                    f"  {rank:>4}  {b['total']:.3f}  {b['semantic']:.2f}  {b['recency']:.2f}  "
                    f"{b['frequency']:.2f}  {b['importance']:.2f}  {b['gate']:.2f}  "
                    f"{item.record.text}{note}"
                )
        recall = memory.recall("How is Ana doing after the layoff?", scope=scope)
        echo(
            f"\n=== compiled context for 'How is Ana doing after the layoff?' "
            f"({recall.tokens} tokens, budget {memory.config.budget_tokens}) ==="
        )
        echo(recall.render())
        first = recall.items[0].record.id
        chain = memory.explain(first)
        echo(f"\n=== explain {first} ===")
        for node in chain.walk():
            echo(f"  {node.record.kind.value:<8} {node.record.id}  {node.record.text}")


def _narrate(role: str, text: str, result: WriteResult) -> str:
    head = f"{role:>9}: {text}"
    if Role(role) is not Role.USER:
        return f"{head}\n           -> episode only: {result.skipped}"
    if result.note is None:
        return f"{head}\n           -> skipped: {result.skipped}"
    tags = result.note.tags
    parts = [tags.modality.value, f"importance {tags.importance:.2f}"]
    if tags.entities:
        parts.append("entities " + ", ".join(tags.entities))
    if tags.emotion:
        parts.append(f"emotion {tags.emotion}")
    if tags.event:
        parts.append(f"event {tags.event}")
    if tags.key:
        parts.append(f"fact {tags.key.subject}.{tags.key.predicate} = {tags.value}")
    return f"{head}\n           -> note [{'; '.join(parts)}]\n              {result.note.text}"
