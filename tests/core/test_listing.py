"""Seeing, exporting and erasing what a scope remembers: ``Memory.records`` and
``Memory.export``, and the ``list``, ``export`` and ``forget`` commands; read commands never
create a store, and a closed pipe is not an error."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from commonplace import Memory
from commonplace._cli import main
from commonplace.errors import InvalidInputError, InvalidTypeError, NotFoundError

FACTS = [
    "I just moved to Porto with my partner Joana.",
    "I work at Ikea as a designer.",
    "My sister Rita is a nurse in Braga.",
]


def _fill(url: str) -> None:
    with Memory(url) as memory:
        for fact in FACTS:
            memory.write(fact, scope="ana")
        memory.write("I keep bees on my roof.", scope="ben")
        memory.write("I moved to Lisbon.", scope="ana")  # replaces Porto


def test_records_pages_a_scopes_records_oldest_first_with_provenance(db_url: str) -> None:
    _fill(db_url)
    with Memory(db_url) as memory:
        first = memory.records(scope="ana", limit=2)
        second = memory.records(scope="ana", limit=2, offset=first.next_offset or 0)
        every = memory.records(scope="ana")
        episodes = {e["id"]: e for e in memory.export(scope="ana") if e["kind"] == "episode"}
    assert len(first.items) == 2 and first.next_offset == 2
    assert len(second.items) == 2 and second.next_offset is None
    assert [i["id"] for i in first.items + second.items] == [i["id"] for i in every.items]
    texts = [i["text"] for i in every.items]
    assert any("Porto" in t for t in texts) and any("Lisbon" in t for t in texts)
    assert not any("bees" in t for t in texts)  # ben's memory is not ana's
    porto = next(i for i in every.items if "Porto" in i["text"])
    lisbon = next(i for i in every.items if "Lisbon" in i["text"])
    assert porto["superseded_by"] == lisbon["id"]  # the past is listed, marked
    for item in every.items:
        assert item["scope"] == {"user": "ana"} and item["kind"] == "note"
        assert item["provenance"] and set(item["provenance"]) <= set(episodes)
        assert "turn_terms" not in item["tags"]  # the keyword index is not for people
    json.dumps(every.items)  # JSON-ready as they are


def test_export_gives_every_record_then_every_turn(db_url: str) -> None:
    _fill(db_url)
    with Memory(db_url) as memory:
        memory.write("Sounds good!", role="assistant", scope="ana")
        rows = list(memory.export(scope="ana"))
        notes_only = list(memory.export(scope="ana", episodes=False))
    kinds = [r["kind"] for r in rows]
    assert kinds == ["note"] * kinds.count("note") + ["episode"] * kinds.count("episode")
    episodes = [r for r in rows if r["kind"] == "episode"]
    assert [e["text"] for e in episodes] == [*FACTS, "I moved to Lisbon.", "Sounds good!"]
    assert episodes[-1]["role"] == "assistant"
    assert notes_only == rows[: len(notes_only)] and len(notes_only) == kinds.count("note")


def test_bad_listing_arguments_are_refused(db_url: str) -> None:
    with Memory(db_url) as memory:
        for bad, error in (
            ({"limit": 0}, InvalidInputError),
            ({"limit": "5"}, InvalidTypeError),
            ({"offset": -1}, InvalidInputError),
            ({"kinds": ["episode"]}, InvalidInputError),
            ({"kinds": ["notes"]}, InvalidInputError),
            ({"kinds": 3}, InvalidTypeError),
        ):
            with pytest.raises(error):
                memory.records(scope="ana", **bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidTypeError):
            memory.export(scope="ana", episodes="yes")  # type: ignore[arg-type]


def test_a_memory_that_may_not_create_refuses_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    with pytest.raises(NotFoundError, match=r"typo\.db"):
        Memory(f"sqlite:///{missing}", create=False)
    with pytest.raises(NotFoundError, match="in-memory"):
        Memory("sqlite:///:memory:", create=False)
    assert not missing.exists()
    Memory(f"sqlite:///{missing}").close()
    Memory(f"sqlite:///{missing}", create=False).close()  # now it exists


@pytest.mark.parametrize(
    "command",
    [
        ["recall", "where do I live?", "--user", "ana"],
        ["explain", "nt_0123"],
        ["list", "--user", "ana"],
        ["export", "--user", "ana"],
        ["forget", "--user", "ana", "--yes"],
        ["consolidate", "--user", "ana"],
        ["reembed", "--to", "commonplace-hashing-v1-256"],
    ],
)
def test_read_commands_never_create_a_store(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.db"
    assert main([*command, "--url", f"sqlite:///{missing}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("commonplace: error: no store at") and str(missing) in err
    assert err.count("\n") == 1 and not missing.exists()


def test_write_says_when_it_creates_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    assert main(["write", "I play the cello.", "--user", "ana", "--url", url]) == 0
    assert "created a new store" in capsys.readouterr().err
    assert main(["write", "I play the oboe too.", "--user", "ana", "--url", url]) == 0
    assert "created" not in capsys.readouterr().err


def test_list_export_and_forget_from_the_command_line(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fill(db_url)
    assert main(["list", "--user", "ana", "--url", db_url, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["records"]
    assert len(listed) == 4 and all(r["id"].startswith("nt_") for r in listed)
    out = tmp_path / "ana.jsonl"
    assert main(["export", "--user", "ana", "--url", db_url, "--out", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert "exported 8 lines" in capsys.readouterr().err
    assert len(lines) == 8 and all(line["id"] for line in lines)
    porto = next(r["id"] for r in listed if "Porto" in r["text"])
    # without a terminal to ask on, forgetting needs --yes and changes nothing
    assert main(["forget", porto, "--user", "ana", "--url", db_url]) == 2
    assert "add --yes" in capsys.readouterr().err
    assert main(["forget", porto, "--user", "ana", "--url", db_url, "--yes"]) == 0
    assert porto in capsys.readouterr().out
    with Memory(db_url) as memory:
        left = [r["text"] for r in memory.records(scope="ana").items]
        assert len(left) == 3 and not any("Porto" in t for t in left)
    assert main(["forget", "--user", "ana", "--url", db_url, "--yes"]) == 0
    capsys.readouterr()
    with Memory(db_url) as memory:
        assert not list(memory.export(scope="ana"))
        assert [r["text"] for r in memory.records(scope="ben").items]  # ben keeps his


def test_an_unknown_user_is_told_which_users_there_are(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _fill(db_url)
    assert main(["recall", "where do I live?", "--user", "bob", "--url", db_url]) == 0
    assert "nothing is remembered for --user bob; users in this store: ana, ben" in (
        capsys.readouterr().err
    )
    assert main(["recall", "where do I live?", "--user", "ana", "--url", db_url]) == 0
    assert "nothing is remembered" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ([], "say whose memory: --user NAME"),
        (["--user", ""], "--user is empty"),
        (["--thread", "a\x00b"], "--thread 'a\\x00b' cannot be a scope"),
    ],
)
def test_scope_errors_speak_the_command_lines_words(
    db_url: str, flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _fill(db_url)
    assert main(["list", "--url", db_url, *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and "Scope(" not in err and "None" not in err


def test_a_closed_pipe_ends_a_command_quietly(db_url: str) -> None:
    with Memory(db_url) as memory:
        memory.write_many(
            [memory.turn(f"I ran {n} km on day {n}.", scope="ana") for n in range(400)]
        )
    path = db_url.removeprefix("sqlite:///")
    assert sqlite3.connect(path).execute("SELECT count(*) FROM records").fetchone()[0] > 100
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for command in ("list --limit 400", "export"):
        run = subprocess.run(
            f"{sys.executable} -m commonplace {command} --user ana --url {db_url} | head -1",
            shell=True,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert run.returncode == 0 and run.stdout.count("\n") == 1
        assert "Traceback" not in run.stderr and "BrokenPipe" not in run.stderr, run.stderr
