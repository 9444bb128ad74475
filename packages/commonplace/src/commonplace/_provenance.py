"""Provenance: the chain from a derived record down to the episodes behind it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ._records import Episode, Record
from .errors import NotFoundError


@dataclass(frozen=True, slots=True)
class Provenance:
    """A record and the provenance of each record it was derived from.

    For an episode, ``sources`` is empty: episodes are the evidence. For a statement an
    update changed (what :meth:`Memory.explain` gives), ``replaced_by`` is the note that
    replaced it and ``why`` the reason given; ``disputes`` pairs each record it is
    disputed with (either way) with the reason. A note's own decisions are in its
    ``data`` (``replaces`` and ``disputes``: record id -> reason).
    """

    record: Record | Episode
    sources: tuple[Provenance, ...] = ()
    replaced_by: str | None = None
    why: str | None = None
    disputes: tuple[tuple[str, str], ...] = ()

    def episodes(self) -> list[Episode]:
        """Every episode at the bottom of the chain, each once, in first-seen order."""
        seen: dict[str, Episode] = {}
        for node in self.walk():
            if isinstance(node.record, Episode):
                seen.setdefault(node.record.id, node.record)
        return list(seen.values())

    def walk(self) -> Iterator[Provenance]:
        yield self
        for source in self.sources:
            yield from source.walk()

    def to_json(self) -> dict[str, Any]:
        r = self.record
        return {
            "id": r.id,
            "kind": r.kind.value,
            "text": r.text,
            **({"role": r.role.value, "at": r.at.isoformat()} if isinstance(r, Episode) else {}),
            **({"replaced_by": self.replaced_by, "why": self.why} if self.replaced_by else {}),
            **({"disputes": [list(d) for d in self.disputes]} if self.disputes else {}),
            "sources": [s.to_json() for s in self.sources],
        }


def trace(
    record_id: str,
    *,
    get_record: Callable[[str], Record | None],
    get_episode: Callable[[str], Episode | None],
    max_depth: int = 8,
) -> Provenance:
    """Walk provenance from ``record_id`` down to episodes."""
    episode = get_episode(record_id)
    if episode is not None:
        return Provenance(episode)
    record = get_record(record_id)
    if record is None:
        raise NotFoundError(
            f"no record or episode with id {record_id!r} in this store; "
            "ids come from WriteResult, Recall items or explain() output"
        )
    if max_depth == 0:
        return Provenance(record)
    sources = []
    for source_id in record.provenance:
        try:
            sources.append(
                trace(
                    source_id,
                    get_record=get_record,
                    get_episode=get_episode,
                    max_depth=max_depth - 1,
                )
            )
        except NotFoundError:
            continue  # a source removed on purpose (right to be forgotten) ends the chain
    return Provenance(record, tuple(sources))
