"""The hand-written part of docs/embedders.md runs as written, and prints what it says.

Its code blocks run in order in one namespace, in a fresh folder: Python blocks with
``exec``, shell blocks through the real ``commonplace`` command. A ``print(...)  # text``
line must print ``text`` (where the comment has ``...``, the pieces around it, in order).
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "embedders.md"
MARKER = "<!-- commonplace:hand-written -->"
BLOCK = re.compile(r"^```(python|sh)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
PRINT = re.compile(r"^\s*print\(.*\)\s+#\s*(.+)$")


def blocks() -> list[tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    assert MARKER in text, "the hand-written part of docs/embedders.md lost its marker"
    found = [(m.group(1), m.group(2)) for m in BLOCK.finditer(text.split(MARKER, 1)[1])]
    assert {kind for kind, _ in found} == {"python", "sh"}
    return found


def expected_lines(code: str) -> list[str]:
    return [m.group(1) for line in code.splitlines() if (m := PRINT.match(line))]


def matches(printed: str, expected: str) -> bool:
    expected = expected.strip()
    if "..." not in expected:
        return printed == expected
    position = 0
    for piece in (p.strip() for p in expected.split("...")):
        found = printed.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    return True


def test_the_hand_written_examples_run_and_print_what_they_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs_embedders"}
    checked = 0
    for kind, code in blocks():
        if kind == "sh":
            for line in code.splitlines():
                words = shlex.split(line, comments=True)
                if not words:
                    continue
                assert words[0] == "commonplace", line
                done = subprocess.run(
                    [sys.executable, "-m", "commonplace", *words[1:]],
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
                assert done.returncode == 0, f"{line}\n{done.stderr}"
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(DOC), "exec"), namespace)
        printed = out.getvalue().splitlines()
        wanted = expected_lines(code)
        assert len(printed) == len(wanted), (printed, wanted)
        for got, want in zip(printed, wanted):
            assert matches(got, want), f"printed {got!r}, the doc says {want!r}"
            checked += 1
    assert checked >= 7  # every print in the examples has its expected output
