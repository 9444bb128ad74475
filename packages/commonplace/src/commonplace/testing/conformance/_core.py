"""What the suite's groups share: the capabilities, the fixtures, the gate and the helpers.

The capability names are defined here, once (:data:`CAPABILITIES`). Every test class of the
suite derives from :class:`CapabilityGroup` and names the capability it checks; its autouse
fixture reads the ``backend_capabilities`` fixture (by default every capability), fails the
test at setup when the declaration names an unknown capability or leaves out a required
one, and skips the class when its optional capability is not declared.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import ClassVar

import numpy as np
import pytest

from ..._records import Kind, Record, Role, Status, Tags
from ..._scope import Scope
from ...stores import Backend, LinkGraph, RecordQuery, Reembedding, Store, TurnWrite, WriteBatch
from .._fixtures import PIN, T0, episode, note, rows, unit

CAPABILITIES = (
    "records",  # episodes, records, updates, supersession, deletes, the pin, atomicity, closing
    "scopes",  # scope isolation and delete_scope
    "search",  # vector and keyword candidates, nearest
    "bookkeeping",  # the audit log, recall logs, conflicts, profile cards
    "links",  # links reinforced, decayed and pruned
    "reembed",  # moving every vector to another embedding model
    "concurrency",  # threads and two instances writing to one store at once
)
"""Every capability the suite checks, one group of test classes each."""

REQUIRED_CAPABILITIES = frozenset({"records", "scopes", "search", "bookkeeping"})
"""What every backend must have (``Memory`` relies on it); the rest is optional."""

CAPABILITY_PROTOCOLS: dict[str, type] = {"links": LinkGraph, "reembed": Reembedding}
"""The optional capabilities that are protocols of their own, which a backend declaring
them must implement."""

ANA = Scope(user="ana")
ANA_T1 = Scope(user="ana", thread="t1")
ANA_T2 = Scope(user="ana", thread="t2")
BOB = Scope(user="bob")
ALL_KINDS = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE)
ALL_STATUSES = tuple(Status)


# -- fixtures -----------------------------------------------------------------------------------


@pytest.fixture
def backend(backend_factory: Callable[[], Backend]) -> Backend:
    """A new, empty store with no embedder pin."""
    made = backend_factory()
    assert isinstance(made, Backend), "backend_factory must return a commonplace Backend"
    return made


@pytest.fixture
def store(backend: Backend) -> Store:
    """A new, empty store pinned to the suite's 8-dimensional test embedder, seen the way
    the core uses it (:class:`~commonplace.stores.Store`: the backend's ten members and
    its ledger, plus what the core derives from them)."""
    backend.apply(WriteBatch(pin=PIN))
    return Store(backend)


@pytest.fixture
def backend_reopen() -> Iterator[Callable[[Backend | Store], Store]]:
    """Open a second backend on the same store, through the plugin hooks (closed after)."""
    from ..._plugins import make_plugin_manager, url_scheme

    opened: list[Backend] = []

    def reopen(backend: Backend | Store) -> Store:
        manager = make_plugin_manager()
        url = backend.url
        again = manager.hook.commonplace_backend(url=url, scheme=url_scheme(url))
        assert again is not None, f"no installed backend serves {url!r}"
        opened.append(again)
        return Store(again)

    yield reopen
    for again in opened:
        again.close()


@pytest.fixture
def backend_capabilities() -> Collection[str]:
    """The capabilities the backend under test has: every one of ``CAPABILITIES`` by default.

    Override it in the test module, beside ``backend_factory``, to leave out an optional
    capability, e.g. ``return frozenset(CAPABILITIES) - {"reembed"}``: that group's tests are
    then skipped. The required ones (``REQUIRED_CAPABILITIES``) cannot be left out.
    """
    return frozenset(CAPABILITIES)


# -- the capability gate ------------------------------------------------------------------------


def _declared(capabilities: Collection[str]) -> frozenset[str]:
    """The declared capabilities, checked: known names, every required one among them."""
    if isinstance(capabilities, str) or not isinstance(capabilities, Collection):
        pytest.fail(
            f"backend_capabilities must return a collection of capability names, "
            f"such as frozenset(CAPABILITIES), not {capabilities!r}",
            pytrace=False,
        )
    declared = frozenset(capabilities)
    unknown = sorted(map(repr, declared - set(CAPABILITIES)))
    if unknown:
        pytest.fail(
            f"backend_capabilities declares unknown capabilities {', '.join(unknown)}; "
            f"the suite knows {', '.join(CAPABILITIES)}",
            pytrace=False,
        )
    missing = sorted(REQUIRED_CAPABILITIES - declared)
    if missing:
        pytest.fail(
            f"backend_capabilities leaves out {', '.join(missing)}, which every backend must "
            f"have (required: {', '.join(sorted(REQUIRED_CAPABILITIES))})",
            pytrace=False,
        )
    return declared


class CapabilityGroup:
    """A group of the suite's tests, run when the backend declares its ``capability``."""

    capability: ClassVar[str]

    @pytest.fixture(autouse=True)
    def _requires_capability(
        self, backend_capabilities: Collection[str], request: pytest.FixtureRequest
    ) -> None:
        if self.capability not in _declared(backend_capabilities):
            pytest.skip(
                f"the backend does not declare the {self.capability!r} capability; "
                f"if it has it, include {self.capability!r} in its backend_capabilities fixture"
            )
        protocol = CAPABILITY_PROTOCOLS.get(self.capability)
        if protocol is not None and "backend" in request.fixturenames:
            made = request.getfixturevalue("backend")
            if not isinstance(made, protocol):
                pytest.fail(
                    f"the backend declares {self.capability!r} but {type(made).__name__} does "
                    f"not implement commonplace.stores.{protocol.__name__}; implement its "
                    "methods or leave the capability out of backend_capabilities",
                    pytrace=False,
                )


# -- helpers ------------------------------------------------------------------------------------


def _turn(
    scope: Scope,
    text: str,
    *,
    at: datetime = T0,
    with_note: bool = True,
    tags: Tags | None = None,
    role: Role = Role.USER,
    supersedes: tuple[str, ...] = (),
) -> TurnWrite:
    ep = episode(scope, text, role=role, at=at)
    made = note(ep, f"The user says {text}", tags=tags) if with_note else None
    return TurnWrite(ep, made, supersedes=supersedes)


def _nid(turn: TurnWrite) -> str:
    """The id of a turn's note (the turn must have one)."""
    assert turn.note is not None
    return turn.note.id


def _note(turn: TurnWrite) -> Record:
    assert turn.note is not None
    return turn.note


def _write(
    backend: Backend | Store, turns: Sequence[TurnWrite], *vectors: np.ndarray
) -> list[bool]:
    with_notes = [t for t in turns if t.note is not None]
    matrix = None
    if with_notes:
        chosen = list(vectors) or [unit(1.0, 0.1 * i) for i in range(len(with_notes))]
        matrix = rows(*chosen)
    return backend.apply(WriteBatch(list(turns), matrix))


def _same(got: Record | None, want: Record) -> bool:
    return got is not None and replace(got, provenance=tuple(sorted(got.provenance))) == replace(
        want, provenance=tuple(sorted(want.provenance))
    )


def _ids(records: Sequence[Record]) -> list[str]:
    return [r.id for r in records]


def _all(scope: Scope | None = None, *, created_before: datetime | None = None) -> RecordQuery:
    return RecordQuery(
        scope=scope, kinds=ALL_KINDS, statuses=ALL_STATUSES, created_before=created_before
    )
