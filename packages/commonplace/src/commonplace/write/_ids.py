"""Episode ids for a batch of turns, with the ids of stores written before time was part
of them kept valid.

An unkeyed turn's id was once its scope, role and words only, so the same words on two
days were one episode and the second day's turn was lost. Its id now holds its time too
(``episode_id``). A store written before keeps its episodes' ids
as they are (they are named in provenance, links, recall logs and adapters' tables, so
they are not rewritten): a turn whose old id is stored at the very same time is that
episode, and a retry of it stays one.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._records import episode_id
from ..stores import Store
from ._types import Turn

# a stored time comes back from a float of seconds; the same instant, read back, is
# within a microsecond or so of what was written
_SAME_INSTANT_SECONDS = 0.001


def episode_ids(backend: Store, turns: Sequence[Turn]) -> list[str]:
    """The id of each turn's episode: the old id of one stored before at that time,
    else the id by scope, role, time and words (or by its key, when it has one)."""
    ids = [episode_id(t.scope, t.role, t.text, t.key, at=t.at, said_by=t.said_by) for t in turns]
    # a turn said by another than the user had no id before time was part of ids
    legacy = {
        n: episode_id(t.scope, t.role, t.text, at=None)
        for n, t in enumerate(turns)
        if t.key is None and t.said_by is None
    }
    found = backend.existing_episode_ids(set(legacy.values())) if legacy else set()
    if not found:
        return ids
    stored = {e.id: e for e in backend.get_episodes(found)}
    for n, old in legacy.items():
        episode = stored.get(old)
        if (
            episode is not None
            and abs((episode.at - turns[n].at).total_seconds()) < _SAME_INSTANT_SECONDS
        ):
            ids[n] = old
    return ids
