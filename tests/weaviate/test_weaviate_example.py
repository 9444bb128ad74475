"""The migration example runs as documented against the test server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from commonplace_weaviate.testing import WeaviateTarget

pytestmark = pytest.mark.weaviate
EXAMPLE = Path(__file__).parents[2] / "examples" / "migrate_sqlite_to_weaviate.py"


def test_the_migration_example(weaviate_server: WeaviateTarget) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), weaviate_server.url, "--drop"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "verified: every count matches" in done.stdout
    assert "MISMATCH" not in done.stdout
    assert done.stdout.count("(same context: True)") == 3
