"""The right to be forgotten: a record, its evidence and everything derived from it.

Unlike decay, this removes episodes too: when a user asks to forget something,
the turn that said it goes with the note, and so does every summary or
procedure built on that note, and every other note derived from the same turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._records import Episode
from .._scope import Scope
from ..errors import NotFoundError
from ..stores import Backend


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """What was removed, by id."""

    records: tuple[str, ...] = ()
    episodes: tuple[str, ...] = ()

    @property
    def removed(self) -> tuple[str, ...]:
        return self.episodes + self.records


def forget(
    backend: Backend, record_id: str, *, scope: Scope, include_evidence: bool
) -> ForgetReport:
    episode = backend.get_episode(record_id)
    record = None if episode is not None else backend.get_record(record_id, any_status=True)
    owner = episode.scope if episode is not None else (record.scope if record else None)
    if owner is None or not scope.contains(owner):
        raise NotFoundError(f"no record or episode with id {record_id!r} in scope {scope}")
    episodes: set[str] = {record_id} if isinstance(episode, Episode) else set()
    if record is not None and include_evidence:
        episodes |= {s for s in record.provenance if backend.get_episode(s) is not None}
    doomed: set[str] = set() if record is None else {record.id}
    frontier = set(episodes) | doomed
    while frontier:  # everything derived, transitively
        derived = set(backend.derived_from(frontier)) - doomed
        doomed |= derived
        frontier = derived
    removed_records = backend.delete_records(sorted(doomed))
    removed_episodes = backend.delete_episodes(sorted(episodes))
    return ForgetReport(tuple(removed_records), tuple(removed_episodes))
