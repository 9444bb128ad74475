"""``commonplace --version`` prints the installed version (it used to be an error)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import commonplace
from commonplace._cli import main


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"commonplace {commonplace.__version__}"


def test_version_flag_from_the_command_line() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "commonplace", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"commonplace {commonplace.__version__}"
