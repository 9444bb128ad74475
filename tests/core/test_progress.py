"""Progress bars on the long jobs: one policy (commonplace.progress), on for a terminal only.

A bar goes to stderr when stderr is a terminal (here: a stream that says it is one, and a
real pseudo-terminal for the command line), never to stdout and never when stderr is
captured or piped; JSON output stays JSON. The job over every scope visits each owner
scope of a real SQLite store and, in a dry run, changes nothing.
"""

from __future__ import annotations

import io
import json
import os
import pty
import select
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from commonplace import HashingEmbedder, Kind, ManualClock, Memory, Scope
from commonplace._cli import main
from commonplace.embedders import reembed
from commonplace.errors import InvalidTypeError
from commonplace.lifecycle import every_scope, sleep_every_scope
from commonplace.progress import ProgressBar, shows_progress, track
from commonplace.stores import SQLiteBackend, copy

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
LATER = (T0 + timedelta(days=60)).isoformat()
# Each owner scope gets a cluster old enough to consolidate (three statement notes about
# one entity) and notes nobody retrieves (demoted by the tiers after a while).
SCOPES = {
    Scope(user="ana", thread="t1"): "Joana",
    Scope(user="ana", thread="t2"): "Joana",  # same owner as t1: visited once, as ana
    Scope(user="ben"): "Pepper",
    Scope(user="cy", agent="coach"): "Milo",
    Scope(thread="lobby"): "Rex",  # neither a user nor an agent: its own thread's scope
}
OWNERS = [
    Scope(thread="lobby"),
    Scope(user="ana"),
    Scope(user="ben"),
    Scope(user="cy", agent="coach"),
]
FACTS = ("{} is a nurse in Porto.", "{} loves climbing on weekends.", "{} has a cat called Mia.")


Terminal = Callable[..., Any]  # the ``terminal`` fixture (tests/conftest.py)


def build_store(path: Path) -> str:
    url = f"sqlite:///{path}"
    clock = ManualClock(T0)
    with Memory(url, clock=clock, embedder=HashingEmbedder()) as memory:
        for scope, name in SCOPES.items():
            for fact in FACTS:
                assert memory.write(fact.format(name), scope=scope).note is not None
                clock.advance(hours=5)
    return url


def snapshot(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of the file, to compare before and after a run."""
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: sorted(map(tuple, db.execute(f'SELECT * FROM "{t}"'))) for t in tables}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    path = tmp_path / "many.db"
    yield path, build_store(path)


# -- the policy ---------------------------------------------------------------------------


def test_a_bar_reaches_its_total_on_a_terminal_and_is_silent_elsewhere(
    terminal: Terminal,
) -> None:
    drawn, piped = terminal(as_stderr=False), io.StringIO()
    assert list(track(range(7), desc="jobs", unit="job", stream=drawn)) == list(range(7))
    assert drawn.bars() == [("jobs", 7, 7)]
    assert list(track(range(7), desc="jobs", unit="job", stream=piped)) == list(range(7))
    assert piped.getvalue() == ""
    asked = io.StringIO()  # True draws one even where no terminal is
    list(track(iter(range(3)), desc="jobs", unit="job", total=3, progress=True, stream=asked))
    assert "jobs: 100%" in asked.getvalue() and "3/3" in asked.getvalue()
    refused = terminal(as_stderr=False)  # False draws none even on a terminal
    list(track(range(3), desc="jobs", unit="job", progress=False, stream=refused))
    assert refused.getvalue() == ""
    assert shows_progress(None, terminal(as_stderr=False))
    assert not shows_progress(None, io.StringIO())


def test_the_bar_goes_to_stderr_and_never_to_stdout(
    terminal: Terminal, capsys: pytest.CaptureFixture[str]
) -> None:
    with ProgressBar(desc="quiet", unit="item", total=2) as bar:
        bar.update(2)
    assert capsys.readouterr() == ("", "")  # captured stderr is no terminal
    stderr = terminal()
    with ProgressBar(desc="drawn", unit="item", total=2) as bar:
        bar.update()
        with bar.paused():
            print("a line of the caller's own", file=sys.stderr)
        bar.update()
    assert capsys.readouterr().out == ""
    assert "a line of the caller's own\n" in stderr.getvalue()
    assert stderr.bars()[-1] == ("drawn", 2, 2)


def test_progress_that_is_not_a_bool_is_refused_before_any_work(
    store: tuple[Path, str],
) -> None:
    path, url = store
    before = snapshot(path)
    with pytest.raises(InvalidTypeError, match="progress must be True"):
        track([1, 2], desc="x", unit="y", progress="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="progress must be True"):
        reembed(url, to=HashingEmbedder(dim=32), progress=1)  # type: ignore[arg-type]
    with (
        Memory(url, embedder=HashingEmbedder()) as memory,
        pytest.raises(InvalidTypeError, match="progress must be True"),
    ):
        sleep_every_scope(memory, progress="auto")  # type: ignore[arg-type]
    source, target = SQLiteBackend(path), SQLiteBackend(path.with_name("copy.db"))
    try:
        with pytest.raises(InvalidTypeError, match="progress must be True"):
            copy(source, target, progress=2)  # type: ignore[arg-type]
        assert target.count(None, Kind.EPISODE) == 0
    finally:
        source.close()
        target.close()
    assert snapshot(path) == before


# -- the jobs -----------------------------------------------------------------------------


def test_reembed_draws_its_bar_to_the_record_count_on_a_terminal(
    store: tuple[Path, str], terminal: Terminal, capsys: pytest.CaptureFixture[str]
) -> None:
    _, url = store
    report = reembed(url, to=HashingEmbedder(dim=32), batch=4)
    assert capsys.readouterr().err == ""  # no terminal: nothing
    stderr = terminal()
    report = reembed(url, to=HashingEmbedder(dim=48), batch=4)
    assert report.records == len(SCOPES) * len(FACTS)
    assert stderr.bars() == [("re-embedding", report.records, report.records)]


def test_copy_draws_a_bar_per_part_or_tells_a_function(
    store: tuple[Path, str], terminal: Terminal, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = store

    def copied(name: str, **options: Any) -> dict[str, int]:
        source, target = SQLiteBackend(path), SQLiteBackend(path.with_name(name))
        try:
            return copy(source, target, batch=4, **options).counts
        finally:
            source.close()
            target.close()

    quiet = copied("quiet.db")
    assert capsys.readouterr().err == ""
    told: list[tuple[str, int]] = []
    assert copied("told.db", progress=lambda part, n: told.append((part, n))) == quiet
    assert ("episodes", quiet["episodes"]) in told and ("records", quiet["records"]) in told
    assert capsys.readouterr().err == ""  # a function instead of a bar
    stderr = terminal()
    assert copied("drawn.db") == quiet
    assert quiet["episodes"] == quiet["records"] == len(SCOPES) * len(FACTS)
    ledger = [k for k in quiet if k.startswith("ledger:")]
    # bars with a total (episodes, each ledger kind) reach it; records are counted
    assert stderr.bars() == [
        ("copying episodes", quiet["episodes"], quiet["episodes"]),
        *((f"copying {kind}", quiet[kind], quiet[kind]) for kind in ledger),
    ]
    assert f"copying records: {quiet['records']}record [" in stderr.getvalue()


# -- the lifecycle over every scope -------------------------------------------------------


def test_every_scope_lists_each_owner_once(store: tuple[Path, str]) -> None:
    _, url = store
    with Memory(url, embedder=HashingEmbedder()) as memory:
        assert every_scope(memory.store) == OWNERS


def test_a_dry_run_over_every_scope_visits_them_all_and_changes_nothing(
    store: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, url = store
    before = snapshot(path)
    assert main(["consolidate", "--all-scopes", "--dry-run", "--url", url, "--at", LATER]) == 0
    text = capsys.readouterr()
    assert text.err == ""  # no terminal, no bar
    assert "would do over 4 scopes" in text.out and "user='cy', agent='coach'" in text.out
    assert (
        main(["consolidate", "--all-scopes", "--dry-run", "--json", "--url", url, "--at", LATER])
        == 0
    )
    planned = json.loads(capsys.readouterr().out)
    assert snapshot(path) == before  # a dry run writes nothing, not even the audit log
    visited = [Scope(**done["scope"]) for done in planned["scopes"]]
    assert visited == OWNERS
    for done in planned["scopes"]:  # each scope has its cluster to summarise
        assert done["counts"]["summarise"] == 1 and done["dry_run"] is True
    # the real run does what the dry run said, scope by scope
    assert main(["consolidate", "--all-scopes", "--json", "--url", url, "--at", LATER]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["counts"] == planned["counts"] and done["dry_run"] is False
    assert [d["counts"] for d in done["scopes"]] == [d["counts"] for d in planned["scopes"]]
    assert snapshot(path) != before


def test_every_scope_refuses_a_scope_beside_it(
    store: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, url = store
    before = snapshot(path)
    assert main(["consolidate", "--all-scopes", "--user", "ana", "--url", url]) == 2
    assert "leave out --user" in capsys.readouterr().err
    assert snapshot(path) == before


def test_the_json_stays_json_with_a_bar_on_a_terminal(
    store: tuple[Path, str], terminal: Terminal, capsys: pytest.CaptureFixture[str]
) -> None:
    _, url = store
    stderr = terminal()
    argv = ["consolidate", "--all-scopes", "--dry-run", "--json", "--url", url, "--at", LATER]
    assert main(argv) == 0
    assert len(json.loads(capsys.readouterr().out)["scopes"]) == len(OWNERS)
    assert stderr.bars() == [("dry run over scopes", len(OWNERS), len(OWNERS))]
    quiet = terminal()
    assert main([*argv, "--no-progress"]) == 0
    assert quiet.getvalue() == ""
    json.loads(capsys.readouterr().out)


def _run_on_a_terminal(argv: list[str], out: Path) -> tuple[int, str]:
    """The command in a child whose stderr is a real pseudo-terminal (stdout: ``out``);
    its exit code and what it drew on the terminal."""
    leader, follower = pty.openpty()
    with out.open("w") as stdout:
        child = subprocess.Popen(
            [sys.executable, "-m", "commonplace", *argv], stdout=stdout, stderr=follower
        )
    os.close(follower)
    drawn = b""
    try:
        while select.select([leader], [], [], 60)[0]:  # read as the child draws
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(leader)
    return child.wait(60), drawn.decode()


def test_the_command_draws_on_a_real_terminal_and_not_on_a_pipe(
    store: tuple[Path, str], tmp_path: Path, terminal: Terminal
) -> None:
    _, url = store
    argv = ["consolidate", "--all-scopes", "--dry-run", "--json", "--url", url, "--at", LATER]
    code, drawn = _run_on_a_terminal(argv, tmp_path / "out.json")
    assert code == 0, drawn
    printed = json.loads((tmp_path / "out.json").read_text())  # stdout: the JSON alone
    assert len(printed["scopes"]) == len(OWNERS)
    shown = terminal(as_stderr=False)
    shown.write(drawn)
    assert shown.bars() == [("dry run over scopes", len(OWNERS), len(OWNERS))]
    piped = subprocess.run(
        [sys.executable, "-m", "commonplace", *argv], capture_output=True, text=True
    )
    assert piped.returncode == 0 and piped.stderr == ""
    assert json.loads(piped.stdout)["counts"] == printed["counts"]
