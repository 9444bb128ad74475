"""Every Python example in the README runs, verbatim, in a fresh folder.

A new user copies these first: a crash there (as `recall.items[0]` once was, when a scope
held too few notes to search) is the first thing they see of the library.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_the_readme_has_python_examples() -> None:
    assert BLOCKS, "README.md lost its Python examples"


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{n}" for n in range(len(BLOCKS))])
def test_a_readme_example_runs_verbatim(
    code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("COMMONPLACE_URL", raising=False)
    monkeypatch.delenv("COMMONPLACE_EMBEDDER", raising=False)  # what a new user gets
    # the example fails this test by raising (the IndexError it once raised, say)
    exec(compile(code, f"README.md ({len(code.splitlines())} lines)", "exec"), {})


FRAMEWORK_BLOCKS = [
    b for b in BLOCKS if "commonplace_langgraph" in b or "commonplace_llamaindex" in b
]


@pytest.mark.parametrize("code", FRAMEWORK_BLOCKS, ids=["langgraph", "llamaindex"])
def test_a_framework_example_prints_the_memory_its_model_was_given(
    code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("COMMONPLACE_URL", raising=False)
    exec(compile(code, "README.md", "exec"), {})
    shown = capsys.readouterr().out
    # the model's input holds the memory block, with what the first turn said in it
    memory = shown.split("<memory>", 1)[1].split("</memory>", 1)[0]
    assert "moved to Porto" in memory
    assert "Where do I live?" in shown.split("</memory>", 1)[1]


COMMANDS = [
    line.split("#")[0].strip()
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    for line in block.splitlines()
    if line.startswith("commonplace ")
]


def test_the_readme_shows_the_mcp_server_and_the_inspector() -> None:
    assert {c.split()[1] for c in COMMANDS} >= {"mcp", "inspect"}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_readme_command_is_one_the_command_line_takes(command: str) -> None:
    import shlex

    from commonplace._cli import _parser

    args = _parser().parse_args(shlex.split(command)[1:])  # exits on an unknown option
    assert callable(args.run)
