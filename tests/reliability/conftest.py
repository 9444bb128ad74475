"""The reliability suite: kills, races, isolation properties, fuzzing, corruption, a soak.

``COMMONPLACE_RELIABILITY=long`` scales every test up (``nox -s reliability``); the default
is the short seeded variant (see reliability_support.py for both sizes). Hypothesis runs
derandomised under the ``ci`` profile (``long`` for the long variant). At the end of a run
the counts of what was done are printed: kills survived, operations raced, inputs fuzzed.
"""

from __future__ import annotations

import pytest
from reliability_support import SEED, SIZES, TALLY, VARIANT


def pytest_report_header(config: pytest.Config) -> str:
    return f"reliability: {VARIANT} variant, seed {SEED}, {SIZES}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if TALLY:
        terminalreporter.section(f"reliability ({VARIANT} variant, seed {SEED})")
        for name, count in sorted(TALLY.items()):
            terminalreporter.write_line(f"{count:>10,}  {name}")
