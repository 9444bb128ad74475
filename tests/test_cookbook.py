"""Every cookbook recipe runs as a script, as a user runs it, and checks what it shows.

Each recipe ends with asserts of its own; here it runs in a child process (which inherits
the environment, the suite's hashing embedder included) and must exit cleanly and print
its closing line. move_to_weaviate.py runs against the suite's Weaviate server.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from commonplace_weaviate.testing import WeaviateTarget

COOKBOOK = Path(__file__).resolve().parents[1] / "examples" / "cookbook"
RECIPES = sorted(p.stem for p in COOKBOOK.glob("*.py"))
OFFLINE = [name for name in RECIPES if name != "move_to_weaviate"]
# the line each recipe prints last, once its own asserts have passed
CLOSING = {
    "chat_loop": "chat_loop: the model saw its memory; its own words never became notes",
    "custom_signal": "custom_signal: 'worry' lifted the anxious note from #2 to #1",
    "export_and_forget": "export_and_forget: exported, then every record of the user is gone",
    "import_history": "import_history: 10 turns imported once; the second run added 0",
    "llm_writer_plugin": "llm_writer_plugin: the LLM wrote the notes and summary",
    "move_to_weaviate": "move_to_weaviate: every count and vector matched",
    "multi_user_support": "multi_user_support: no user's memory reached another user's recall",
    "nightly_job": "nightly_job: 13 actions, previewed, applied and audited",
}


def run(name: str, *args: str, folder: Path) -> str:
    """Run a recipe from an empty folder, with its own temporary directory; check that it
    succeeds and leaves nothing behind in either."""
    work, temp = folder / "work", folder / "tmp"
    work.mkdir()
    temp.mkdir()
    done = subprocess.run(
        [sys.executable, str(COOKBOOK / f"{name}.py"), *args],
        capture_output=True,
        text=True,
        cwd=work,
        env={**os.environ, "TMPDIR": str(temp)},  # PYTHONPATH and the embedder setting too
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert list(work.iterdir()) == [] and list(temp.iterdir()) == []
    return done.stdout


def test_every_recipe_has_a_closing_line_checked_here() -> None:
    assert len(RECIPES) == 8
    assert sorted(CLOSING) == RECIPES


@pytest.mark.parametrize("name", OFFLINE)
def test_a_recipe_runs_as_a_script(name: str, tmp_path: Path) -> None:
    out = run(name, folder=tmp_path)
    assert out.splitlines()[-1].startswith(CLOSING[name])


@pytest.mark.weaviate
def test_the_weaviate_recipe_moves_a_store(weaviate_server: WeaviateTarget, tmp_path: Path) -> None:
    out = run("move_to_weaviate", weaviate_server.url, folder=tmp_path)
    assert "MISMATCH" not in out
    assert out.splitlines()[-1].startswith(CLOSING["move_to_weaviate"])


def test_every_recipe_is_listed_in_the_readme_and_says_when_to_use_it() -> None:
    readme = (COOKBOOK / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"^- `(\w+)\.py`: ", readme, re.MULTILINE)
    assert sorted(listed) == RECIPES
    for name in RECIPES:
        source = (COOKBOOK / f"{name}.py").read_text(encoding="utf-8")
        docstring = ast.get_docstring(ast.parse(source))
        assert docstring and "Use this when" in docstring, name
        assert len(source.splitlines()) <= 130, f"{name}.py is no longer a short recipe"


def test_recipes_use_the_public_api_only() -> None:
    private = re.compile(r"^\s*(?:from|import)\s+commonplace\w*\._", re.MULTILINE)
    framework = re.compile(r"^\s*(?:from|import)\s+(?:langchain|langgraph|llama_index)", re.M)
    for name in RECIPES:
        source = (COOKBOOK / f"{name}.py").read_text(encoding="utf-8")
        assert not private.search(source), f"{name}.py imports a private module"
        assert not framework.search(source), f"{name}.py needs a framework"
