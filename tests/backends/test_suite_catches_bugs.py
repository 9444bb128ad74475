"""The conformance suite is not vacuous: backends with typical bugs fail the right tests."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

_BROKEN = {
    "scope_leak": """
        def search(self, scope, vector, **kw):  # forgets the thread
            return super().search(Scope(user=scope.user or "x", agent=scope.agent), vector, **kw)
    """,
    "lost_counts": """
        def apply(self, batch):  # counts read before the write: read-modify-write
            counted = [u for u in batch.updates if u.counter == "access"]
            if not counted:
                return super().apply(batch)
            seen = {r.id: r.access_count for u in counted for r in self.get_records(u.record_ids)}
            time.sleep(0.001)
            with self._transaction() as db:
                for rid, count in seen.items():
                    db.execute("UPDATE records SET access_count = ? WHERE id = ?", (count + 1, rid))
            rest = [u for u in batch.updates if u.counter != "access"]
            return super().apply(dataclasses.replace(batch, updates=rest))
    """,
    "ledger_leak": """
        @property
        def ledger(self):  # lists every scope's entries, whatever the filter asks
            inner = super().ledger

            class Leaky:
                def __getattr__(self, name):
                    return getattr(inner, name)

                def list(self, kind, *, scope=None, **filters):
                    return inner.list(kind, **filters)

            return Leaky()
    """,
    "not_idempotent": """
        def apply(self, batch):
            fresh = super().apply(batch)
            return [True for _ in fresh]
    """,
}
_EXPECTED = {
    "scope_leak": "TestScopes::test_a_query_scope_sees_exactly_the_scopes_it_contains",
    "lost_counts": "TestConcurrency::test_concurrent_counters_lose_no_update",
    "not_idempotent": "TestEpisodes::test_a_turn_already_stored_writes_nothing_again",
    "ledger_leak": "TestLedger::test_filters_by_scope_refs_and_time",
}
_MODULE = """
import dataclasses
import time
import pytest
from commonplace import Scope
from commonplace.stores import SQLiteBackend
from commonplace.testing.conformance import *  # noqa: F403


class Broken(SQLiteBackend):
{body}


@pytest.fixture
def backend_factory(tmp_path):
    opened = []

    def make():
        opened.append(Broken(tmp_path / f"s{{len(opened)}}.db"))
        return opened[-1]

    yield make
    for backend in opened:
        backend.close()
"""


def test_each_injected_bug_is_caught(tmp_path: Path) -> None:
    for name, body in _BROKEN.items():
        (tmp_path / f"test_{name}.py").write_text(
            _MODULE.format(body=textwrap.indent(textwrap.dedent(body), "    "))
        )
    (tmp_path / "conftest.py").write_text("")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rf",
            "-p",
            "no:cacheprovider",
            "-k",
            " or ".join(t.split("::")[1] for t in _EXPECTED.values()),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        check=False,
    )
    failed = {line.split(" ")[1] for line in done.stdout.splitlines() if line.startswith("FAILED ")}
    for name, test in _EXPECTED.items():
        assert f"test_{name}.py::{test}" in failed, done.stdout[-3000:]
