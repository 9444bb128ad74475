"""An LLM writes the notes and the summaries, plugged in through the hooks.

Use this when the rule-based writer is not enough for your domain and you can afford a
model call per user turn. ``LLMNoteWriter`` (hook ``commonplace_write_note``) and
``LLMSummariser`` (hook ``commonplace_summarise``) wrap any ``complete(prompt) -> str``
callable; they own the prompts and check every reply. A malformed reply falls back to
the built-in writer or summariser, and a summary sentence its notes do not support is
rejected. For your own logic, return ``NoteDraft``/``Skip`` or ``SummaryDraft`` from an
``@hookimpl`` method instead. Here the "LLM" is a deterministic offline stub.

    python examples/cookbook/llm_writer_plugin.py
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from commonplace import ManualClock, Memory, Record
from commonplace.lifecycle import LLMSummariser
from commonplace.write import LLMNoteWriter

NAMES = {"Joana", "Lisbon", "Azores", "Porto"}
TURNS = [
    "My partner Joana is a marine biologist.",
    "thanks!",
    "Joana and I are planning a trip to the Azores in May.",
    "Can Joana eat shellfish?",  # the stub answers this one in prose: not a valid reply
    "Joana is allergic to shellfish.",
]


def fake_llm(prompt: str) -> str:
    """Stands in for a model call, e.g. ``lambda p: client.responses.create(...).output_text``."""
    if "<<<USER TURN" in prompt:
        turn = prompt.split("<<<USER TURN\n")[1].split("\nUSER TURN>>>")[0]
        if len(turn.split()) < 3:
            return json.dumps({"skip": True, "reason": "small talk"})
        if turn.endswith("?"):
            return "Great question! I'd love to help."  # no JSON: the rule writer takes it
        note = re.sub(r"\bI\b", "the user", turn.replace("My ", "The user's "))
        return json.dumps(
            {
                "note": note,
                "entities": sorted(NAMES & set(re.findall(r"\w+", turn))),
                "importance": 0.7,
            }
        )
    notes = re.findall(r"^\[(\d+)\] (.+)$", prompt, re.MULTILINE)
    sentences = [{"text": text, "sources": [int(n)]} for n, text in notes]
    # A hallucination, citing a note that does not say it: the guard will drop it.
    sentences.append({"text": "Joana won a Nobel prize for her octopus research.", "sources": [1]})
    return json.dumps({"sentences": sentences})


def main() -> None:
    clock = ManualClock(datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc))
    writer, summariser = LLMNoteWriter(fake_llm), LLMSummariser(fake_llm)
    with Memory("sqlite:///:memory:", clock=clock, plugins=[writer, summariser]) as memory:
        for text in TURNS:
            result = memory.write(text, scope="ana")
            print(f"{text!r}\n  -> {result.note.text if result.note else result.skipped}")
        reply = memory.write(
            "Joana sounds lovely! Is she from Porto?", role="assistant", scope="ana"
        )
        print(f"assistant turn -> {reply.skipped}")  # never reaches any writer
        print(f"the writer fell back to the rules {writer.fallbacks} time(s)")

        clock.advance(days=2)  # consolidation waits until notes are a day old
        report = memory.consolidate(scope="ana")
        summary_id = next(a.record_id for a in report.actions if a.action == "summarise")
        summary = memory.explain(summary_id)
        print(f"\nsummary about Joana:\n  {summary.record.text}")
        for source in summary.sources:
            print(f"  cites {source.record.id}: {source.record.text}")
        assert isinstance(summary.record, Record)  # a summary, not an episode
        print(f"  rejected: {summary.record.data['rejected']}")  # kept, never shown

        assert writer.fallbacks == 1 and reply.note is None
        assert "Nobel" not in summary.record.text  # the unsupported sentence never stored
        assert summary.episodes() and all(e.role.value == "user" for e in summary.episodes())
    print("llm_writer_plugin: the LLM wrote the notes and summary; the guards kept it honest")


if __name__ == "__main__":
    main()
