"""Bulk import: ``Memory.import_turns`` and ``commonplace import``, on real SQLite files."""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import signal
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from commonplace import (
    Config,
    HashingEmbedder,
    ImportReport,
    Kind,
    ManualClock,
    Memory,
    MemoryEvent,
    NoteDraft,
    Status,
    Tags,
    Turn,
    hookimpl,
)
from commonplace._cli import main
from commonplace.errors import CommonplaceError, InvalidInputError, InvalidTypeError
from commonplace.stores import RecordQuery

START = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
SAID = [
    "I adopted a greyhound named Bolt last spring.",
    "My sister Maria lives in Porto now.",
    "thanks, that helps!",
    "I'm training for the Lisbon half marathon in October.",
    "I switched from coffee to green tea this year.",
    "My favourite band is Radiohead.",
    "ok",
    "We are planning a trip to Kyoto in April.",
    "I work as a nurse at the children's hospital.",
    "I started learning the cello in January.",
]


def _memory(path: Path, **config: object) -> Memory:
    return Memory(
        f"sqlite:///{path}",
        embedder=HashingEmbedder(),
        clock=ManualClock(START),
        config=Config(**config),  # type: ignore[arg-type]
    )


def _turns(memory: Memory) -> list[Turn]:
    turns = []
    for n, text in enumerate(SAID):
        at = START + timedelta(minutes=n)
        turns.append(memory.turn(text, scope="ana", at=at))
        turns.append(memory.turn(f"Noted: {text}", role="assistant", scope="ana", at=at))
    return turns


def _rows(memory: Memory) -> list[tuple[str, str, tuple[str, ...]]]:
    found = memory.recall("what do you know about me", scope="ana", top_k=100)
    return sorted((i.record.id, i.record.text, i.record.provenance) for i in found.items)


def test_an_import_in_batches_stores_what_one_write_many_stores(tmp_path: Path) -> None:
    with _memory(tmp_path / "batched.db") as batched, _memory(tmp_path / "once.db") as once:
        report = batched.import_turns(_turns(batched), batch=3, progress=False)
        results = once.write_many(_turns(once))
        assert isinstance(report, ImportReport)
        assert (report.turns, report.stored, report.batches) == (20, 20, 7)
        assert report.notes == sum(r.note is not None for r in results) > 0
        assert report.skipped == sum(r.skipped is not None for r in results) >= 10
        assert report.notes + report.skipped == report.stored
        assert _rows(batched) == _rows(once)
        assert batched.count(Kind.NOTE) == once.count(Kind.NOTE)
        assert report.to_json()["turns"] == 20 and report.rate > 0


def test_an_import_run_again_stores_only_what_is_missing(tmp_path: Path) -> None:
    with _memory(tmp_path / "m.db") as memory:
        turns = _turns(memory)
        first = memory.import_turns(turns[:8], batch=4, progress=False)
        notes = memory.count(Kind.NOTE)
        again = memory.import_turns(turns, batch=4, progress=False)
        assert (first.stored, again.turns, again.stored) == (8, 20, 12)
        assert memory.import_turns(turns, batch=4, progress=False).stored == 0
        assert memory.count(Kind.NOTE) == notes + again.notes


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ("not a Turn", InvalidTypeError),
        ({"text": "a dict is not a Turn"}, InvalidTypeError),
    ],
)
def test_a_bad_item_anywhere_stores_nothing(tmp_path: Path, bad: object, error: type) -> None:
    with _memory(tmp_path / "m.db") as memory:
        turns: list[object] = [*_turns(memory), bad]
        with pytest.raises(error, match="item 20"):
            memory.import_turns(turns, batch=2, progress=False)  # type: ignore[arg-type]
        assert memory.count(Kind.NOTE) == 0


def test_a_turn_too_long_for_this_memory_stores_nothing(tmp_path: Path) -> None:
    with _memory(tmp_path / "long.db", max_turn_chars=5000) as roomy:
        long = roomy.turn("I like tea. " * 100, scope="ana")
    with _memory(tmp_path / "m.db", max_turn_chars=200) as memory:
        with pytest.raises(InvalidInputError, match="200"):
            memory.import_turns([*_turns(memory), long], batch=2, progress=False)
        assert memory.count(Kind.NOTE) == 0


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"batch": 0}, InvalidInputError),
        ({"batch": True}, InvalidTypeError),
        ({"batch": "10"}, InvalidTypeError),
        ({"progress": "yes"}, InvalidTypeError),
        ({"workers": -1}, InvalidInputError),
        ({"workers": 65}, InvalidInputError),
        ({"workers": True}, InvalidTypeError),
        ({"workers": "2"}, InvalidTypeError),
    ],
)
def test_bad_options_are_refused_before_anything_is_stored(
    tmp_path: Path, options: dict[str, object], error: type
) -> None:
    with _memory(tmp_path / "m.db") as memory:
        with pytest.raises(error):
            memory.import_turns(_turns(memory), **options)  # type: ignore[arg-type]
        assert memory.count(Kind.NOTE) == 0
        with pytest.raises(InvalidTypeError, match="iterable of Turn"):
            memory.import_turns("I like tea.")  # type: ignore[arg-type]


def _stored(memory: Memory) -> list[tuple[object, ...]]:
    """Every record as stored, field by field (its counters and tags included)."""
    query = RecordQuery(kinds=list(Kind), statuses=list(Status))
    return sorted(
        (r.id, r.text, r.tags, r.provenance, r.access_count, r.superseded_by, r.status)
        for r in memory.backend.iter_records(query)
    )


@pytest.mark.parametrize("workers", [1, 2])
def test_workers_draft_the_notes_this_process_drafts(tmp_path: Path, workers: int) -> None:
    with _memory(tmp_path / "here.db") as here, _memory(tmp_path / "there.db") as there:
        # several batches (and a repeated turn, which a worker drafts and the store refuses)
        turns = _turns(here) + _turns(here)[:3]
        alone = here.import_turns(turns, batch=4, progress=False)
        helped = there.import_turns(
            _turns(there) + _turns(there)[:3], batch=4, progress=False, workers=workers
        )
        assert (helped.turns, helped.stored, helped.notes, helped.batches) == (
            alone.turns,
            alone.stored,
            alone.notes,
            alone.batches,
        )
        assert alone.notes > 0 and helped.batches == 6
        assert _stored(there) == _stored(here) != []


class _WorkerKiller:
    """Kills this process's worker processes once the first batch is stored."""

    def __init__(self) -> None:
        self.killed = 0

    @hookimpl
    def commonplace_event(self, event: MemoryEvent) -> None:
        if event.kind == "written" and not self.killed:
            for child in multiprocessing.active_children():
                os.kill(child.pid or 0, signal.SIGKILL)
                self.killed += 1


def test_a_worker_that_dies_stops_the_import_and_keeps_the_stored_batches(
    tmp_path: Path,
) -> None:
    killer = _WorkerKiller()
    with Memory(
        f"sqlite:///{tmp_path / 'killed.db'}",
        embedder=HashingEmbedder(),
        clock=ManualClock(START),
        plugins=[killer],
    ) as memory:
        turns = _turns(memory)  # 20 turns: 5 batches of 4
        with pytest.raises(CommonplaceError, match=r"drafting worker stopped.*workers=0"):
            memory.import_turns(turns, batch=4, progress=False, workers=1)
        assert killer.killed == 1
        kept = memory.count(Kind.EPISODE)
        assert 4 <= kept < 20 and kept % 4 == 0  # whole batches, the first among them
        again = memory.import_turns(turns, batch=4, progress=False)
        assert again.stored == 20 - kept
        with _memory(tmp_path / "whole.db") as whole:
            whole.import_turns(_turns(whole), batch=4, progress=False)
            assert _stored(memory) == _stored(whole)


class _OwnWriter:
    @hookimpl
    def commonplace_write_note(self, turn: Turn) -> NoteDraft:
        return NoteDraft(text=turn.text.upper(), tags=Tags())


def test_workers_refuse_a_note_writer_they_cannot_run(tmp_path: Path) -> None:
    with Memory(
        f"sqlite:///{tmp_path / 'own.db'}",
        embedder=HashingEmbedder(),
        clock=ManualClock(START),
        plugins=[_OwnWriter()],
    ) as memory:
        with pytest.raises(InvalidInputError, match="workers=0"):
            memory.import_turns(_turns(memory), batch=4, progress=False, workers=1)
        assert memory.count(Kind.NOTE) == 0
        # without workers the plugin drafts, as in write_many
        memory.import_turns(_turns(memory), batch=4, progress=False)
        notes = list(memory.backend.iter_records(RecordQuery()))
        assert notes and all(n.text.isupper() for n in notes)


def test_the_progress_bar_counts_turns_on_stderr_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _memory(tmp_path / "m.db") as memory:
        memory.import_turns(_turns(memory)[:6], batch=4, progress=True)
        shown = capsys.readouterr()
        assert "importing" in shown.err and "6/6" in shown.err and shown.out == ""
        memory.import_turns(_turns(memory)[6:], batch=4, progress=False)
        assert capsys.readouterr().err == ""


def _jsonl(path: Path, lines: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", "utf-8")
    return path


def test_the_import_command_stores_a_json_lines_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    lines: list[object] = [{"text": text} for text in SAID]
    lines.append({"text": "Bob here: I keep bees.", "user": "bob", "at": "2026-02-01T10:00:00"})
    lines.append({"text": "Noted.", "role": "assistant"})
    path = _jsonl(tmp_path / "turns.jsonl", lines)
    assert main(["import", str(path), "--user", "ana", "--url", url, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["turns"], report["stored"]) == (12, 12)
    with Memory(url) as memory:
        assert "Bolt" in memory.recall("my dog's name", scope="ana").text
        assert "bees" in memory.recall("what hobby do I have", scope="bob").text
        assert "bees" not in memory.recall("what hobby do I have", scope="ana").text
    # the same file again: everything was stored before
    assert main(["import", str(path), "--user", "ana", "--url", url]) == 0
    assert "0 stored" in capsys.readouterr().out


def test_the_import_command_drafts_in_workers_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _jsonl(tmp_path / "turns.jsonl", [{"text": text} for text in SAID])
    stored = {}
    for workers in ("0", "1"):
        url = f"sqlite:///{tmp_path / f'cli-{workers}.db'}"
        args = ["import", str(path), "--user", "ana", "--url", url, "--batch", "3"]
        assert main([*args, "--workers", workers, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["batches"] == 4
        with Memory(url) as memory:
            stored[workers] = sorted(r.text for r in memory.backend.iter_records(RecordQuery()))
    assert stored["1"] == stored["0"] != []
    url = f"sqlite:///{tmp_path / 'bad.db'}"
    assert main(["import", str(path), "--user", "ana", "--url", url, "--workers", "-1"]) == 2
    assert "workers" in capsys.readouterr().err


def test_the_import_command_reads_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"text": SAID[0]}) + "\n"))
    assert main(["import", "-", "--user", "ana", "--url", url]) == 0
    assert "1 turns: 1 stored" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 3 is not JSON"),
        (json.dumps(["text"]), 'line 3 must be an object with a "text" string'),
        (json.dumps({"txt": "typo"}), 'line 3 must be an object with a "text" string'),
        (json.dumps({"text": "hi", "colour": "red"}), "line 3 has unknown fields"),
        (
            json.dumps({"text": "hi", "at": "yesterday"}),
            'line 3: at "yesterday" is not an ISO 8601 time',
        ),
        (json.dumps({"text": "hi", "role": "narrator"}), "line 3: "),
        (json.dumps({"text": "hi", "user": 5}), "line 3: "),
    ],
)
def test_a_bad_line_stores_nothing_and_names_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    path = tmp_path / "turns.jsonl"
    path.write_text(f"{json.dumps({'text': SAID[0]})}\n\n{line}\n", "utf-8")
    assert main(["import", str(path), "--user", "ana", "--url", url]) == 2
    assert message in capsys.readouterr().err
    with Memory(url) as memory:
        assert memory.count(Kind.NOTE) == 0


def test_the_import_command_says_what_is_wrong_with_a_missing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["import", str(tmp_path / "nope.jsonl"), "--user", "ana", "--url", url]) == 2
    assert "cannot read" in capsys.readouterr().err
