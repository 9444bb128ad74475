"""The conformance suite's capability gate, run for real against SQLite files.

Each test writes a test module that imports the suite with a ``backend_capabilities``
declaration, runs it in a pytest session of its own (``pytester``) and reads the report of
every test: a capability left out skips exactly its group, with the reason; a declaration
that is unknown or leaves out a required capability fails every test at setup.
"""

from __future__ import annotations

import pytest

import commonplace.testing.conformance as suite
from commonplace.testing.conformance import CAPABILITIES, REQUIRED_CAPABILITIES

pytest_plugins = ["pytester"]

_MODULE = """
import contextlib
import itertools

import pytest

from commonplace.stores import SQLiteBackend
from commonplace.testing.conformance import *  # noqa: F403


@pytest.fixture
def backend_factory(tmp_path):
    names = itertools.count()
    with contextlib.ExitStack() as stack:
        yield lambda: stack.enter_context(
            contextlib.closing(SQLiteBackend(tmp_path / f"store-{next(names)}.db"))
        )
"""
_DECLARATION = """

@pytest.fixture
def backend_capabilities():
    return {}
"""
# what each optional capability gates, written out here rather than read from the suite
_GROUPS = {"links": "TestLinks", "reembed": "TestReembed", "concurrency": "TestConcurrency"}
_REQUIRED = ("records", "scopes", "search", "bookkeeping")
_CLASSES = [getattr(suite, name) for name in suite.__all__ if name.startswith("Test")]


def _suite_tests() -> set[str]:
    """Every test of the suite, as ``Class::test``."""
    return {f"{c.__name__}::{t}" for c in _CLASSES for t in dir(c) if t.startswith("test_")}


def _run(pytester: pytest.Pytester, declared: str | None, *args: str) -> dict[str, tuple[str, str]]:
    """Run the suite with ``declared`` (Python source) as the capabilities, or the default.

    Returns ``Class::test -> (outcome, text)``: ``passed``, ``skipped`` with its reason,
    ``error`` (at setup) or ``failed`` with the report.
    """
    source = _MODULE + (_DECLARATION.format(declared) if declared is not None else "")
    # a config of its own: the run must not pick up the repository's (CI's temporary
    # folders live inside the checkout, and its options name plugins turned off here)
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_backend=source)
    recorder = pytester.inline_run("-p", "no:cacheprovider", "-p", "no:asyncio", *args)
    outcomes: dict[str, tuple[str, str]] = {}
    for report in recorder.getreports("pytest_runtest_logreport"):
        test = report.nodeid.split("::", 1)[1]
        if report.failed:
            outcomes[test] = ("error" if report.when == "setup" else "failed", report.longreprtext)
        elif report.skipped:
            assert isinstance(report.longrepr, tuple)
            outcomes[test] = ("skipped", report.longrepr[2])
        elif report.when == "call" and test not in outcomes:
            outcomes[test] = ("passed", "")
    return outcomes


def test_the_names_are_the_groups() -> None:
    """Every capability gates a group, every group names a known one, and the optional
    ones are those the tests below leave out."""
    assert len(_CLASSES) == 19
    assert {c.capability for c in _CLASSES} == set(CAPABILITIES)
    assert set(CAPABILITIES) - REQUIRED_CAPABILITIES == set(_GROUPS)
    assert set(_REQUIRED) == REQUIRED_CAPABILITIES


def test_by_default_every_group_runs(pytester: pytest.Pytester) -> None:
    outcomes = _run(pytester, None, "-k", " or ".join(_GROUPS.values()))
    wanted = {t for t in _suite_tests() if t.split("::")[0] in _GROUPS.values()}
    assert set(outcomes) == wanted
    assert {outcome for outcome, _ in outcomes.values()} == {"passed"}


@pytest.mark.parametrize("left_out", sorted(_GROUPS))
def test_an_optional_capability_left_out_skips_exactly_its_group(
    pytester: pytest.Pytester, left_out: str
) -> None:
    outcomes = _run(pytester, f"frozenset(CAPABILITIES) - {{{left_out!r}}}")
    assert set(outcomes) == _suite_tests()
    group = {t for t in outcomes if t.split("::")[0] == _GROUPS[left_out]}
    assert group  # the group has tests, and each of them was skipped for its capability
    for test, (outcome, text) in outcomes.items():
        if test in group:
            assert outcome == "skipped", (test, text)
            assert f"does not declare the {left_out!r} capability" in text
            assert "backend_capabilities" in text
        else:
            assert outcome == "passed", (test, text)


def test_an_unknown_capability_fails_every_test(pytester: pytest.Pytester) -> None:
    outcomes = _run(pytester, "frozenset(CAPABILITIES) | {'teleport'}")
    assert set(outcomes) == _suite_tests()
    for test, (outcome, text) in outcomes.items():
        assert outcome == "error", (test, text)
        assert "declares unknown capabilities 'teleport'" in text


@pytest.mark.parametrize("left_out", _REQUIRED)
def test_a_required_capability_cannot_be_left_out(pytester: pytest.Pytester, left_out: str) -> None:
    outcomes = _run(pytester, f"frozenset(CAPABILITIES) - {{{left_out!r}}}")
    assert set(outcomes) == _suite_tests()
    for test, (outcome, text) in outcomes.items():
        assert outcome == "error", (test, text)
        assert f"leaves out {left_out}, which every backend must have" in text


def test_a_single_name_is_not_a_declaration(pytester: pytest.Pytester) -> None:
    outcomes = _run(pytester, "'links'", "-k", "TestLinks or TestSearch")
    assert outcomes and {outcome for outcome, _ in outcomes.values()} == {"error"}
    assert all("collection of capability names" in text for _, text in outcomes.values())
