"""Events: what a Memory did, told to every ``commonplace_event`` listener.

A listener hears of a change after it is committed, so nothing it does (or fails to
do) can undo or half-apply it. Every listener is told, in the order pluggy calls
collecting hooks; if any raised, the first error reaches the caller afterwards as a
:class:`~commonplace.errors.PluginError` that says the change itself was kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import pluggy

from ._records import note_id
from ._scope import Scope
from .errors import PluginError

if TYPE_CHECKING:
    from .lifecycle import ForgetReport, LifecycleReport
    from .read import Recall
    from .write import Turn, WriteResult

EventKind = Literal["written", "recalled", "superseded", "forgotten"]


@dataclass(frozen=True, slots=True)
class MemoryEvent:
    """One thing a Memory did.

    - ``written``: a turn was stored: ``episode_ids`` holds its episode, ``record_ids``
      its new note (empty when it was skipped, with ``detail["skipped"]`` saying why, or
      merged into an existing note, named by ``detail["merged_into"]``);
    - ``superseded``: ``record_ids`` were replaced by the note ``detail["by"]``;
    - ``recalled``: a context was compiled: ``record_ids`` are the records it shows,
      ``detail["recall_id"]`` and ``detail["query"]`` say which recall;
    - ``forgotten``: ``record_ids`` and ``episode_ids`` were removed for good (by
      ``forget``, decay or ``forget_smart``); after ``forget_scope``, which removes a
      whole scope, ``detail["counts"]`` holds how many of each were removed instead.
    """

    kind: EventKind
    scope: Scope
    at: datetime
    record_ids: tuple[str, ...] = ()
    episode_ids: tuple[str, ...] = ()
    detail: Mapping[str, Any] = field(default_factory=dict)


class EventBus:
    """Tells the listeners of one Memory's plugin manager."""

    def __init__(self, hook: pluggy.HookCaller) -> None:
        self._hook = hook

    def emit(self, events: Sequence[MemoryEvent]) -> None:
        listeners = list(reversed(self._hook.get_hookimpls()))  # pluggy's call order
        if not events or not listeners:
            return
        failure: tuple[str, BaseException] | None = None
        for event in events:
            for listener in listeners:
                try:
                    listener.function(event=event)
                except Exception as exc:  # a listener bug must not hide the others' events
                    failure = failure or (listener.plugin_name, exc)
        if failure is not None:
            name, error = failure
            raise PluginError(
                f"the commonplace_event listener of plugin {name!r} raised "
                f"{type(error).__name__}: {error}; the change it was told about is committed "
                "and was not undone"
            ) from error


def written_events(turns: Sequence[Turn], results: Sequence[WriteResult]) -> list[MemoryEvent]:
    """One ``written`` event per turn stored anew, and a ``superseded`` one per update."""
    out: list[MemoryEvent] = []
    for turn, result in zip(turns, results):
        if not result.created:
            continue  # the same turn again: nothing changed
        note = result.note
        detail: dict[str, Any] = {}
        new_note = note is not None and note.id == note_id(result.episode_id)
        if note is None:
            detail["skipped"] = result.skipped
        elif not new_note:
            detail["merged_into"] = note.id
        records = (note.id,) if note is not None and new_note else ()
        out.append(
            MemoryEvent("written", turn.scope, turn.at, records, (result.episode_id,), detail)
        )
        if result.superseded and note is not None:
            out.append(
                MemoryEvent(
                    "superseded", note.scope, turn.at, result.superseded, detail={"by": note.id}
                )
            )
    return out


def recalled_event(recall: Recall) -> MemoryEvent:
    detail = {"recall_id": recall.id, "query": recall.query}
    return MemoryEvent("recalled", recall.scope, recall.at, recall.included, detail=detail)


def forgotten_event(report: ForgetReport, *, scope: Scope, at: datetime) -> MemoryEvent:
    return MemoryEvent("forgotten", scope, at, report.records, report.episodes)


_FORGETTING = frozenset({"delete", "soft_delete"})


def decayed_events(report: LifecycleReport) -> list[MemoryEvent]:
    """A ``forgotten`` event per record decay removed (none in a dry run)."""
    if report.dry_run:
        return []
    return [
        MemoryEvent(
            "forgotten", a.scope, a.at, (a.record_id,), detail={"rule": a.rule, "action": a.action}
        )
        for a in report.actions
        if a.action in _FORGETTING
    ]
