"""The migration's progress bars: one per part of the copy and one over the vectors
compared, on stderr for a terminal only; ``--json`` prints JSON alone on stdout."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from commonplace import HashingEmbedder, ManualClock, Memory
from commonplace_weaviate import WeaviateBackend, migrate
from commonplace_weaviate._cli import main

pytestmark = pytest.mark.weaviate
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
LINES = {
    "ana": ["I live in Lisbon.", "I work as a nurse.", "My cat Mia is twelve."],
    "bob": ["I am an engineer in Berlin.", "I love climbing and jazz."],
}


Terminal = Callable[..., Any]  # the ``terminal`` fixture (tests/conftest.py)


def _source(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    clock = ManualClock(T0)
    with Memory(url, clock=clock, embedder=HashingEmbedder()) as memory:
        for user, lines in LINES.items():
            for line in lines:
                memory.write(line, scope=user)
                clock.advance(hours=2)
    return url


def test_the_command_draws_bars_on_a_terminal_and_keeps_json_on_stdout(
    tmp_path: Path,
    weaviate_backend_factory: Callable[[], WeaviateBackend],
    terminal: Terminal,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = _source(tmp_path)
    stderr = terminal()
    target = weaviate_backend_factory().url
    assert main(["migrate", "--from", source, "--to", target, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    episodes = printed["counts"]["episodes"]["source"]
    assert printed["ok"] is True and episodes == sum(map(len, LINES.values()))
    bars = {name: (n, total) for name, n, total in stderr.bars()}
    assert bars["copying episodes"] == (episodes, episodes)
    assert bars["comparing vectors"] == (printed["vectors_checked"],) * 2
    records = printed["counts"]["records equal"]["source"]  # counted, without a total
    assert f"copying records: {records}record [" in stderr.getvalue()
    quiet = terminal()
    again = ["migrate", "--from", source, "--to", target, "--json", "--no-progress"]
    assert main(again) == 0  # a second run confirms the copy
    assert json.loads(capsys.readouterr().out)["ok"] is True and quiet.getvalue() == ""


def test_migrate_is_silent_without_a_terminal_and_tells_a_function(
    tmp_path: Path,
    weaviate_backend_factory: Callable[[], WeaviateBackend],
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = _source(tmp_path)
    told: list[tuple[str, int]] = []
    report = migrate(source, weaviate_backend_factory(), progress=lambda p, n: told.append((p, n)))
    assert report.ok and ("episodes", report.counts["episodes"][0]) in told
    assert migrate(source, weaviate_backend_factory()).ok
    assert capsys.readouterr() == ("", "")
