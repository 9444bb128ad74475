"""The lifecycle over every scope of a store (``commonplace consolidate --all-scopes``).

``Memory.sleep`` runs for one scope. A store serving many users is looked after by
running it for each owner scope in turn: a user (with the agent, when the records have
one), across that user's threads, as supersession and consolidation already group them;
a record with neither a user nor an agent is visited in its own thread's scope. The
scopes are found by one walk over the store's active and invalid records through the
public ``Store.iter_records``, which pages, so what is held is the set of scopes alone,
never the records.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING

from .._progress import ProgressBar, checked_progress
from .._records import Kind, Status
from .._scope import Scope, owner_scope
from .._validate import checked_bool
from ..stores import RecordQuery, Store
from ._report import LifecycleReport

if TYPE_CHECKING:
    from .._memory import Memory

_DERIVED = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE)
_LIVE = (Status.ACTIVE, Status.INVALID)  # a scope of deleted records has nothing to do


def every_scope(store: Store) -> list[Scope]:
    """The owner scopes holding a record the lifecycle can act on, in a stable order."""
    seen: set[tuple[str, str, str]] = set()
    query = RecordQuery(scope=None, kinds=_DERIVED, statuses=_LIVE)
    for record in store.iter_records(query):
        seen.add(owner_scope(record.scope).parts())
    return [Scope(user=u or None, agent=a or None, thread=t or None) for u, a, t in sorted(seen)]


def sleep_every_scope(
    memory: Memory,
    *,
    at: datetime | None = None,
    dry_run: bool = False,
    progress: bool | None = None,
) -> Iterator[tuple[Scope, LifecycleReport]]:
    """``memory.sleep`` for each scope of :func:`every_scope`, yielding each scope with its
    report as it is done; ``progress`` counts the scopes on a bar (see
    :mod:`commonplace.progress`). Every scope runs at the same ``at`` when one is given."""
    checked_bool("dry_run", dry_run)
    checked_progress(progress)
    scopes = every_scope(memory.store)
    return _sleep_each(memory, scopes, at=at, dry_run=dry_run, progress=progress)


def _sleep_each(
    memory: Memory,
    scopes: list[Scope],
    *,
    at: datetime | None,
    dry_run: bool,
    progress: bool | None,
) -> Iterator[tuple[Scope, LifecycleReport]]:
    with ProgressBar(
        desc="dry run over scopes" if dry_run else "lifecycle over scopes",
        unit="scope",
        total=len(scopes),
        progress=progress,
    ) as bar:
        for scope in scopes:
            yield scope, memory.sleep(scope=scope, at=at, dry_run=dry_run)
            bar.update()
