"""The LlamaIndex examples run, show the memory they promise, and work as scripts."""

from __future__ import annotations

import asyncio
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from li_support import assert_firewall, notes_of

from commonplace import Memory

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name: str) -> dict[str, Any]:
    return runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name=f"example_{name}")


def test_chat_engine_example_remembers_monday_on_tuesday(tmp_path: Path) -> None:
    shown = example("llamaindex_chat_engine")["main"](tmp_path / "memory.db")
    assert shown.startswith("system: <memory>")
    assert "partner Joana" in shown and "night nurse" in shown
    assert "I just moved to Porto" not in shown  # notes, not Monday's transcript
    with Memory(f"sqlite:///{tmp_path / 'memory.db'}") as store:
        assert len(notes_of(store, "ana")) == 4  # "ok" left no note; Tuesday's question did
        assert_firewall(store, "ana", forbidden=["<memory>", "assistant:"])


def test_agent_example_recalls_the_first_session(tmp_path: Path) -> None:
    answer = asyncio.run(example("llamaindex_agent")["main"](tmp_path / "memory.db"))
    assert answer.startswith("It's sunny.") and "partner Joana" in answer
    with Memory(f"sqlite:///{tmp_path / 'memory.db'}") as store:
        # Monday's statement; the question about a walk says nothing about her (an episode)
        assert len(notes_of(store, "ana")) == 1
        assert_firewall(store, "ana", forbidden=["sunny", "24°C", "remember"])


def test_a_prebuilt_agent_gains_memory_from_one_object(tmp_path: Path) -> None:
    system = asyncio.run(example("llamaindex_prebuilt_agent")["main"](tmp_path / "memory.db"))
    assert "<memory>" in system and "partner Joana" in system  # Monday, on Friday
    assert "weather" not in system  # never the question being answered
    with Memory(f"sqlite:///{tmp_path / 'memory.db'}") as store:
        # Monday's statement; Friday's question about the weather is an episode, no note
        assert len(notes_of(store, "ana")) == 1
        assert_firewall(store, "ana", forbidden=["Ines", "cousin", "Sunny"])


def test_memory_block_example_puts_notes_in_the_template(tmp_path: Path) -> None:
    system = asyncio.run(example("llamaindex_memory_block")["main"](tmp_path / "memory.db"))
    assert "<persona>" in system and "<commonplace>" in system
    assert "partner Joana" in system
    with Memory(f"sqlite:///{tmp_path / 'memory.db'}") as store:
        assert notes_of(store, "ana")
        assert_firewall(store, "ana", forbidden=["welcome", "demanding", "scratch"])


@pytest.mark.parametrize(
    "name",
    [
        "llamaindex_chat_engine",
        "llamaindex_agent",
        "llamaindex_prebuilt_agent",
        "llamaindex_memory_block",
    ],
)
def test_each_example_runs_as_a_script(tmp_path: Path, name: str) -> None:
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), str(tmp_path / "memory.db")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "Joana" in out.stdout
