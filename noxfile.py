"""Every job of the repository: `nox -s demo`, `nox -s tests`, `nox -s lint`.

Each session builds its own virtualenv from nothing, so the same commands work on a
fresh machine and in CI.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True

CORE = "packages/commonplace"
LANGGRAPH = "integrations/commonplace-langgraph"
LLAMAINDEX = "integrations/commonplace-llamaindex"
BENCH = "packages/commonplace-bench"
# Every distribution of the repository, installed together in one pip call so the local
# core satisfies the integrations' dependency on it.
PACKAGES = ["-e", CORE, "-e", LANGGRAPH, "-e", LLAMAINDEX, "-e", BENCH]
TEST_DEPS = [
    "pytest>=8",
    "pytest-asyncio>=0.24",
    "hypothesis>=6.100",
    "langgraph-checkpoint-conformance==0.0.2",
    "langgraph-checkpoint-sqlite>=3.1,<4",
]
TYPED_SOURCES = [f"{CORE}/src", f"{LANGGRAPH}/src", f"{LLAMAINDEX}/src", f"{BENCH}/src"]


@nox.session
def demo(session: nox.Session) -> None:
    """The main job on the embedded default: a scripted conversation over simulated weeks."""
    session.install("-e", CORE)
    session.run("commonplace", "demo", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """The whole test suite against real SQLite files."""
    session.install(*PACKAGES, *TEST_DEPS)
    session.run("pytest", *(session.posargs or ["tests"]))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff on everything, mypy --strict on every package's src."""
    session.install(*PACKAGES, "ruff>=0.6", "mypy>=1.10", *TEST_DEPS)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    for source in TYPED_SOURCES:
        session.run("mypy", source)
