"""`commonplace reembed`: a store moved to another model, through SIGKILLs, verified by count.

The big test builds a 10,000-note SQLite store (with summaries and a procedure), starts
the real command in a child process, SIGKILLs it three times at different points of the
job, checks after each kill that the store is intact, still opens with its old model and
says how to finish, then lets a last run finish: every record holds a vector of the new
model (counted in the file), the store is pinned to it and a recall with it finds the
right note.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from commonplace import HashingEmbedder, Kind, ManualClock, Memory, Record, Status, hookimpl
from commonplace.embedders import (
    CallableEmbedder,
    Embedder,
    ReembedReport,
    Vectors,
    embedding_text,
    reembed,
)
from commonplace.embedders._protocol import embed_checked
from commonplace.errors import (
    EmbedderMismatchError,
    InvalidInputError,
    InvalidTypeError,
    PluginError,
)
from commonplace.stores import EmbedderPin, RecordQuery, SQLiteBackend, Store
from commonplace.stores._embedder import own_evidence

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
OLD, NEW = HashingEmbedder(dim=64), HashingEmbedder(dim=128)
WORDS = (
    "tea coffee jazz rock chess surfing climbing painting cycling baking "
    "running sailing karate pottery knitting opera tennis golf rowing yoga"
).split()
JOANA = (
    "My sister Joana is a nurse in Porto.",
    "Joana loves climbing on weekends.",
    "Joana has a cat called Mia.",
    "Joana plays bass in a band.",
)
REQUESTS = (
    "Can you draft my weekly status report for the team?",
    "Please draft my weekly status report for the team again.",
    "Could you draft the weekly status report for my team?",
)


def hobby_turn(i: int) -> str:
    a, b, c = WORDS[i % 20], WORDS[(i // 20) % 20], WORDS[(i // 400) % 20]
    return f"I enjoy {a} and {b} on day {i}, and my plan {i} is {c}."


def build_store(path: Path, notes: int) -> None:
    """``notes`` hobby notes in four scopes, plus a summary and a procedure in "ana"."""
    clock = ManualClock(T0)
    with Memory(url_of(path), embedder=OLD, clock=clock) as memory:
        for start in range(0, notes, 1000):
            memory.write_many(
                [
                    memory.turn(hobby_turn(i), scope=f"user{i % 4}")
                    for i in range(start, min(notes, start + 1000))
                ]
            )
        for line in (*JOANA, *REQUESTS):
            clock.advance(days=1)
            memory.write(line, scope="ana")
        clock.advance(days=2)
        memory.consolidate(scope="ana")
        assert memory.count(Kind.SUMMARY, scope="ana") >= 1
        assert memory.count(Kind.PROCEDURE, scope="ana") == 1


def texts_of(memory: Memory, records: Sequence[Record]) -> list[str]:
    """What the write path and consolidation embedded for these records."""
    return [embedding_text(r, evidence=own_evidence(memory.store, r)) for r in records]


def assert_found_with(memory: Memory, model: Embedder, query: str, scope: str, rid: str) -> None:
    """``rid`` is among the recall's items, with the cosine ``model`` gives it: the vectors
    the store searches are that model's."""
    items = memory.recall(query, scope=scope, top_k=20).items
    hit = next((i for i in items if i.record.id == rid), None)
    assert hit is not None, f"{rid} not recalled for {query!r}"
    want = float(model.embed([query])[0] @ model.embed(texts_of(memory, [hit.record]))[0])
    assert hit.score.cosine == pytest.approx(want, abs=1e-4)


def url_of(path: Path) -> str:
    return "sqlite:///" + str(path)


def vector_rows(path: Path) -> tuple[int, int, int]:
    """(records holding a vector, of them with ``NEW.dim`` floats, staged new vectors)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        total, new = db.execute(
            "SELECT count(*), coalesce(sum(length(vector) = ?), 0) FROM records "
            "WHERE vector IS NOT NULL",
            (NEW.dim * 4,),
        ).fetchone()
        try:
            staged = db.execute("SELECT count(*) FROM reembed_vectors").fetchone()[0]
        except sqlite3.OperationalError:  # no re-embed in progress: no table
            staged = 0
        return int(total), int(new), int(staged)
    finally:
        db.close()


def integrity(path: Path) -> str:
    db = sqlite3.connect(path)
    try:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        db.close()


def command(path: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "commonplace",
        "reembed",
        "--to",
        NEW.name,
        url_of(path),
        *extra,
    ]


def kill_when_staged(path: Path, at_least: int) -> int:
    """Run the command until ``at_least`` vectors are staged, SIGKILL it; returns the count
    seen just before the kill."""
    child = subprocess.Popen(command(path, "--batch", "40"), stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300
        seen = 0
        while seen < at_least:
            assert child.poll() is None, (
                f"the re-embed ended before {at_least} records were staged ({seen} were): "
                f"{child.stderr.read().decode() if child.stderr else ''}"
            )
            assert time.monotonic() < deadline, "the re-embed made no progress"
            seen = vector_rows(path)[2]
            time.sleep(0.002)
        child.send_signal(signal.SIGKILL)
        child.wait(60)
        assert child.returncode == -signal.SIGKILL
        return seen
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(60)
        if child.stderr is not None:
            child.stderr.close()


def test_a_10k_store_reembedded_through_sigkills_is_finished_by_the_next_run(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.db"
    build_store(path, 10_000)
    total, _, _ = vector_rows(path)
    assert total >= 10_002  # 10,000 notes, the Joana and request notes, summary, procedure
    with Memory(url_of(path)) as memory:
        before = memory.recall("which hobbies on day 4321?", scope="user1").items[0].record
        assert "day 4321" in before.text
    progress = 0
    for at_least in (1_500, 5_000, 8_000):
        seen = kill_when_staged(path, at_least)
        assert integrity(path) == "ok"
        total_now, new_now, staged = vector_rows(path)
        # nothing committed is lost, the live vectors are untouched, progress is in the file
        assert (total_now, new_now) == (total, 0)
        assert staged >= seen >= at_least and staged > progress
        progress = staged
        with Memory(url_of(path)) as memory:  # still opens, with its old model, and recalls
            assert memory.embedder.name == OLD.name
            assert_found_with(memory, OLD, "which hobbies on day 4321?", "user1", before.id)
        with pytest.raises(EmbedderMismatchError) as refused:
            Memory(url_of(path), embedder=NEW)
        message = str(refused.value)
        assert "not finished" in message and f"{staged:,} of {total:,}" in message
        assert f"`commonplace reembed --to {NEW.name} {url_of(path)}`" in message
    done = subprocess.run(command(path, "--json"), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no progress bar when stderr is not a terminal
    report = json.loads(done.stdout)
    assert report["records"] == total and report["resumed"] == progress
    assert report["embedded"] == total - progress
    assert report["to"] == {"name": NEW.name, "dim": NEW.dim}
    # verified by count, in the file: every record holds a vector of the new model
    assert vector_rows(path) == (total, total, 0)
    assert integrity(path) == "ok"
    with Memory(url_of(path)) as memory:  # opens by its new pin, and recalls with it
        assert memory.embedder.name == NEW.name
        # found with the new model's similarity: the query and the note both embedded with it
        assert_found_with(memory, NEW, "which hobbies on day 4321?", "user1", before.id)
        records = list(
            memory.backend.iter_records(
                RecordQuery(kinds=(Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE), statuses=tuple(Status))
            )
        )
        assert len(records) == total
        sample = records[:50] + records[-20:]  # the last ones are ana's summary and procedure
        assert {r.kind for r in sample} == {Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE}
        np.testing.assert_allclose(
            memory.backend.get_vectors([r.id for r in sample]),
            embed_checked(NEW, texts_of(memory, sample)),
            atol=1e-6,
        )
    with pytest.raises(EmbedderMismatchError, match="pinned to the embedder 'commonplace-hashing"):
        Memory(url_of(path), embedder=OLD)
    again = subprocess.run(command(path), capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_the_vectors_are_made_from_the_text_the_write_path_and_consolidation_embed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.db"
    build_store(path, 40)
    with Memory(url_of(path)) as memory:
        records = list(
            memory.backend.iter_records(
                RecordQuery(kinds=(Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE), statuses=tuple(Status))
            )
        )
        assert {r.kind for r in records} == {Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE}
        stored = memory.backend.get_vectors([r.id for r in records])
        np.testing.assert_allclose(stored, embed_checked(OLD, texts_of(memory, records)), atol=1e-6)
    # re-embedding to the model a store already has would change nothing; to another, all
    report = reembed(url_of(path), to=NEW)
    assert isinstance(report, ReembedReport) and report.records == len(records)
    assert report.source == EmbedderPin(OLD.name, OLD.dim) and report.resumed == 0
    assert "re-embedded" in str(report) and NEW.name in str(report)


def test_a_store_in_use_keeps_working_while_a_reembed_is_half_done(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    build_store(path, 200)
    backend = SQLiteBackend(path)
    target = EmbedderPin(NEW.name, NEW.dim)
    try:  # the first two batches of a run that then died
        for _ in range(2):
            batch = backend.reembed_pending(target, limit=50)
            texts = [embedding_text(r, evidence=own_evidence(Store(backend), r)) for r in batch]
            backend.reembed_stage(target, [r.id for r in batch], NEW.embed(texts))
    finally:
        backend.close()
    with Memory(url_of(path), embedder=OLD) as memory:  # writes and consolidation go on
        memory.write("I enjoy tango on day 9999, and my plan 9999 is opera.", scope="user1")
        memory.write("Joana started learning the violin.", scope="ana")
        memory.consolidate(scope="ana")
    report = reembed(url_of(path), to=NEW, batch=64)
    assert report.resumed == 100
    total, new, staged = vector_rows(path)
    assert report.records == total == new and staged == 0
    with Memory(url_of(path)) as memory:
        top = memory.recall("tango on day 9999", scope="user1").items[0].record
        assert "tango" in top.text


def test_the_progress_bar_shows_only_on_request_or_on_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.db"
    build_store(path, 30)
    reembed(url_of(path), to=NEW)  # stderr is not a terminal here: quiet
    assert capsys.readouterr().err == ""
    reembed(url_of(path), to=HashingEmbedder(dim=32), progress=True, batch=10)
    err = capsys.readouterr().err
    assert "re-embedding" in err and "record" in err


def test_the_cli_refuses_unknown_models_and_bad_arguments(tmp_path: Path) -> None:
    from commonplace._cli import main

    path = tmp_path / "m.db"
    build_store(path, 10)
    before = path.read_bytes()
    assert main(["reembed", "--to", "no-such-model-v9", url_of(path)]) == 2
    assert path.read_bytes() == before
    with pytest.raises(InvalidInputError, match="no installed plugin provides"):
        reembed(url_of(path), to="no-such-model-v9")
    with pytest.raises(InvalidInputError, match="batch"):
        reembed(url_of(path), to=NEW.name, batch=0)
    with pytest.raises(InvalidTypeError, match="CallableEmbedder"):
        reembed(url_of(path), to=lambda texts: texts)
    assert vector_rows(path)[1] == 0


def test_reembed_takes_model_objects_and_plugins(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    build_store(path, 20)

    def fn(texts: list[str]) -> Vectors:
        return NEW.embed(texts)

    custom = CallableEmbedder(fn, name="my-model-v1")
    assert custom.dim == NEW.dim  # measured with a probe text
    assert reembed(url_of(path), to=custom).target == EmbedderPin("my-model-v1", NEW.dim)

    class Provides:
        @hookimpl
        def commonplace_embedder(self, name: str | None) -> Embedder | None:
            return custom if name == "my-model-v1" else None

    with Memory(url_of(path), plugins=[Provides()]) as memory:  # found by its pinned name
        assert memory.embedder is custom
    with pytest.raises(EmbedderMismatchError) as missing:
        Memory(url_of(path))
    assert "no installed plugin provides it" in str(missing.value)
    assert f"Memory({url_of(path)!r}, embedder=...)" in str(missing.value)


# -- CallableEmbedder -----------------------------------------------------------------


def test_callable_embedder_checks_what_the_function_returns() -> None:
    calls: list[list[str]] = []

    def lists(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        return [[3.0, 4.0] for _ in texts]

    embedder = CallableEmbedder(lists, name="lists-v1", dim=2)
    assert isinstance(embedder, Embedder) and calls == []  # a declared dim needs no probe
    np.testing.assert_allclose(embedder.embed(["a", "b"]), [[0.6, 0.8], [0.6, 0.8]])
    assert embedder.embed([]).shape == (0, 2) and calls == [["a", "b"]]
    with pytest.raises(PluginError, match="shape"):
        CallableEmbedder(lists, name="lists-v1", dim=3).embed(["a"])
    with pytest.raises(PluginError, match="NaN"):
        CallableEmbedder(lambda t: [[float("nan")] * 2 for _ in t], name="nan", dim=2).embed(["a"])
    with pytest.raises(PluginError, match="one vector"):
        CallableEmbedder(lambda t: "not vectors", name="text-v1", dim=2).embed(["a"])
    with pytest.raises(PluginError, match="cannot tell the dimension"):
        CallableEmbedder(lambda t: [], name="empty-v1")
    for bad_name in ("", "two\nlines", 42):
        with pytest.raises(InvalidInputError):
            CallableEmbedder(lists, name=bad_name, dim=2)  # type: ignore[arg-type]
    for bad_dim in (0, -1, 2.0, True):
        with pytest.raises(InvalidInputError):
            CallableEmbedder(lists, name="x", dim=bad_dim)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError):
        CallableEmbedder("not a function", name="x", dim=2)  # type: ignore[arg-type]


def test_callable_embedder_in_async_code_uses_the_async_function_when_given() -> None:
    import asyncio

    async def afn(texts: list[str]) -> list[list[float]]:
        return [[0.0, 2.0] for _ in texts]

    both = CallableEmbedder(lambda t: [[1.0, 0.0] for _ in t], name="both-v1", dim=2, afn=afn)
    sync_only = CallableEmbedder(lambda t: [[1.0, 0.0] for _ in t], name="sync-v1", dim=2)
    np.testing.assert_allclose(asyncio.run(both.aembed(["a"])), [[0.0, 1.0]])
    np.testing.assert_allclose(asyncio.run(sync_only.aembed(["a"])), [[1.0, 0.0]])


def test_a_callable_embedder_stores_end_to_end(tmp_path: Path) -> None:
    url = url_of(tmp_path / "m.db")

    def fn(texts: Sequence[str]) -> Vectors:
        return OLD.embed(list(texts))

    with Memory(url, embedder=CallableEmbedder(fn, name="mine-v1", dim=OLD.dim)) as memory:
        memory.write("I moved to Porto with my partner Joana.", scope="ana")
        assert "Porto" in memory.recall("where does the user live?", scope="ana").text
    with pytest.raises(EmbedderMismatchError, match="mine-v2"):
        Memory(url, embedder=CallableEmbedder(fn, name="mine-v2", dim=OLD.dim))
    with Memory(url, embedder=CallableEmbedder(fn, name="mine-v1", dim=OLD.dim)) as memory:
        assert memory.count(Kind.NOTE) == 1
