"""The migration example runs as documented against the test server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from commonplace_weaviate.testing import WeaviateTarget

pytestmark = pytest.mark.weaviate
EXAMPLE = Path(__file__).parents[2] / "examples" / "migrate_sqlite_to_weaviate.py"


def test_the_migration_example(weaviate_server: WeaviateTarget) -> None:
    # as a user runs it: on the default (semantic) embedder, not the suite's hashing one
    env = {k: v for k, v in os.environ.items() if k != "COMMONPLACE_EMBEDDER"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), weaviate_server.url, "--drop"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "verified: every count matches" in done.stdout
    assert "MISMATCH" not in done.stdout
    assert done.stdout.count("(same context: True)") == 3
    assert "-> 'The user moved to Porto" in done.stdout  # the current city, by meaning
