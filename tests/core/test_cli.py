"""The command line: demo, write, recall, explain, with --json where it makes sense."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from commonplace._cli import main


def test_demo_narrates_writes_skips_recalls_and_context(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COMMONPLACE_EMBEDDER", raising=False)  # the demo on the real default
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "embedder: all-MiniLM-L6-v2-onnx-int8-" in out
    # a paraphrase finds the fact: the move to Porto answers "where do I live these days?"
    answers = out.split("? Where do I live these days?")[1].split("\n?")[0]
    first = next(line for line in answers.splitlines() if line.strip().startswith("1 "))
    assert "Porto" in first, answers
    assert out.count("=== session on") >= 4
    assert "-> note [statement" in out and "-> skipped: noise" in out
    assert "-> episode only: assistant turns never become notes" in out
    assert "event layoff" in out and "[joke" in out
    assert "rank  total  sem   rec   freq  imp   gate" in out
    assert "<memory>" in out and "tokens, budget 1500" in out
    assert "episode  ep_" in out
    # the assistant's invention never surfaces in what was recalled
    recalled = out.split("=== recall on")[1]
    assert "Tom" not in recalled and "sailing" not in recalled


def test_write_recall_explain_round_trip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    for n in range(4):  # recall searches once a scope holds Config.search_min_notes notes
        assert main(["write", f"I walked {n} km today.", "--user", "ana", "--url", url]) == 0
    capsys.readouterr()
    assert (
        main(
            [
                "write",
                "I adopted a greyhound named Bolt.",
                "--user",
                "ana",
                "--url",
                url,
                "--at",
                "2026-02-01T10:00:00+00:00",
                "--json",
            ]
        )
        == 0
    )
    written = json.loads(capsys.readouterr().out)
    assert written["created"] and written["note"]["tags"]["modality"] == "statement"
    assert main(["recall", "greyhound named Bolt", "--user", "ana", "--url", url, "--json"]) == 0
    recalled = json.loads(capsys.readouterr().out)
    assert recalled["items"][0]["id"] == written["note"]["id"]
    assert set(recalled["items"][0]["score"]) >= {
        "semantic",
        "recency",
        "frequency",
        "importance",
        "total",
    }
    assert main(["explain", written["note"]["id"], "--url", url, "--json"]) == 0
    chain = json.loads(capsys.readouterr().out)
    assert chain["sources"][0]["id"] == written["episode_id"]
    assert chain["sources"][0]["text"] == "I adopted a greyhound named Bolt."


def test_errors_exit_2_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["write", "hello there friend", "--url", url]) == 2  # no scope given
    assert "say whose memory: --user NAME" in capsys.readouterr().err
    assert main(["explain", "nt_missing", "--url", url]) == 2
    assert "no store at" in capsys.readouterr().err  # the refused write made none
    assert main(["write", "hello there friend", "--user", "a", "--url", url]) == 0
    assert main(["explain", "nt_missing", "--url", url]) == 2
    assert "no record" in capsys.readouterr().err
    assert main(["write", "x y z", "--user", "a", "--role", "bard", "--url", url]) == 2
    assert main(["recall", "q", "--user", "a", "--at", "someday", "--url", url]) == 2


def test_the_installed_command_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "commonplace", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "demo" in out.stdout and "explain" in out.stdout


def test_consolidate_runs_the_lifecycle_with_a_dry_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    for text in ("Joana loves climbing.", "Joana is a nurse.", "Joana adopted a cat."):
        assert (
            main(
                ["write", text, "--user", "ana", "--url", url, "--at", "2026-01-01T10:00:00+00:00"]
            )
            == 0
        )
    capsys.readouterr()
    args = [
        "consolidate",
        "--user",
        "ana",
        "--url",
        url,
        "--at",
        "2026-01-05T10:00:00+00:00",
        "--json",
    ]
    assert main([*args, "--dry-run"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert dry["dry_run"] and dry["counts"] == {"summarise": 1}
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["counts"] == {"summarise": 1}
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["counts"] == {}


def test_a_command_from_a_missing_package_says_what_to_install(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import commonplace._cli as cli

    monkeypatch.setitem(cli.OPTIONAL_COMMANDS, "orbit", "commonplace-orbit")
    assert main(["orbit", "--user", "u1"]) == 2
    err = capsys.readouterr().err
    assert "commonplace-orbit" in err and "pip install commonplace-orbit" in err


def test_an_installed_package_adds_its_command_through_the_entry_point_group(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse
    from importlib.metadata import EntryPoint

    import commonplace._cli as cli

    def fake_entry_points(*, group: str) -> list[EntryPoint]:
        assert group == "commonplace.commands"
        return [EntryPoint("orbit", f"{__name__}:_add_orbit", group)]

    monkeypatch.setattr(cli, "entry_points", fake_entry_points)
    monkeypatch.setitem(cli.OPTIONAL_COMMANDS, "orbit", "commonplace-orbit")
    assert main(["orbit", "--times", "3"]) == 0
    assert capsys.readouterr().out == "orbit orbit orbit\n"
    assert isinstance(cli._parser(), argparse.ArgumentParser)


def _add_orbit(sub: object) -> None:
    import argparse

    assert isinstance(sub, argparse._SubParsersAction)
    parser = sub.add_parser("orbit", help="a command a package adds")
    parser.add_argument("--times", type=int, default=1)
    parser.set_defaults(run=lambda args: print(" ".join(["orbit"] * args.times)) or 0)


def test_an_import_whose_lines_name_their_users_needs_no_user_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'import.db'}"
    turns = tmp_path / "turns.jsonl"
    turns.write_text(
        '{"text": "I play the cello.", "user": "ana"}\n{"text": "I keep bees.", "user": "ben"}\n',
        encoding="utf-8",
    )
    assert main(["import", str(turns), "--url", url, "--no-progress"]) == 0
    assert main(["list", "--user", "ben", "--url", url]) == 0
    assert "bees" in capsys.readouterr().out
    turns.write_text('{"text": "I sail on weekends."}\n', encoding="utf-8")
    assert main(["import", str(turns), "--url", url, "--no-progress"]) == 2
    assert "line 1 names no user, agent or thread" in capsys.readouterr().err
