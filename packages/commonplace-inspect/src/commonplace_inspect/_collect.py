"""What the inspector shows, read from a Memory through the core's public API only.

Reading changes nothing in the store: no recall is run unless a probe query is asked for
(``probe=``), and that one recall is logged like any other (the core logs every recall).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from commonplace import Episode, Kind, Memory, Recall, Record, Scope, Status
from commonplace.errors import InvalidInputError
from commonplace.lifecycle import every_scope
from commonplace.stores import (
    PROFILE_CARD,
    AuditEntry,
    Card,
    Conflict,
    Dispute,
    LedgerKind,
    RecallLog,
    RecordQuery,
    note_id,
)

DERIVED_KINDS = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE)
# the audit actions that remove a record from what the agent can recall
REMOVING_ACTIONS = frozenset({"delete", "soft_delete", "forget", "invalidate"})


@dataclass(frozen=True)
class Flag:
    """Two records flagged as disagreeing and why; ``source`` says who flagged them:
    ``"recall"`` (the probe recall found them contradicting, and marked both) or
    ``"dispute"`` (the writer kept a newer statement against an older one it may
    change: every recall showing either marks it)."""

    first: str
    second: str
    reason: str
    source: str


@dataclass(frozen=True)
class Inspection:
    """Everything the page shows for one user, read at ``read_at``."""

    user: str
    url: str
    read_at: datetime
    card: Card | None
    profile: Mapping[str, Any]
    records: tuple[Record, ...]
    episodes: Mapping[str, Episode]
    sources: Mapping[str, tuple[str, ...]]  # record id -> the episode ids at its chain's end
    chains: tuple[tuple[Record, ...], ...]
    recalls: tuple[RecallLog, ...]  # newest first
    audit: tuple[AuditEntry, ...]
    conflicts: tuple[Conflict, ...]
    forgotten_from: Mapping[str, Episode] = field(default_factory=dict)
    probe: Recall | None = None
    disputes: tuple[Dispute, ...] = ()

    def record(self, record_id: str) -> Record | None:
        return next((r for r in self.records if r.id == record_id), None)

    @property
    def flags(self) -> tuple[Flag, ...]:
        """Every pair flagged as disagreeing: the probe's, then the stored disputes,
        each pair once. The page's marks and its flags section are both read from
        here, so a record is never marked for a pair the section does not list."""
        flags = [
            Flag(d.first, d.second, d.reason, "recall")
            for d in (() if self.probe is None else self.probe.disagreements)
        ]
        flags += [Flag(p.newer, p.older, p.reason, "dispute") for p in self.disputes]
        found: dict[frozenset[str], Flag] = {}
        for f in flags:
            found.setdefault(frozenset((f.first, f.second)), f)
        return tuple(found.values())

    def flags_of(self, record_id: str) -> tuple[Flag, ...]:
        return tuple(f for f in self.flags if record_id in (f.first, f.second))


def collect(
    memory: Memory,
    *,
    user: str,
    recalls: int = 20,
    audit: int = 500,
    records: int = 5000,
    probe: str | None = None,
) -> Inspection:
    """Read what ``memory`` holds about ``user``: the profile card, every derived record
    of any status with its provenance down to the episodes, supersession chains, the last
    ``recalls`` recall logs, the last ``audit`` lifecycle entries and every conflict.

    With ``probe`` (a query), one recall is run for it so the page can show each
    signal's part in the score; it is logged, as every recall is, but counts no access.
    """
    if not isinstance(user, str) or not user.strip():
        raise InvalidInputError("give the user to inspect: --user NAME")
    scope = Scope(user=user)
    now = memory.clock.now()
    store = memory.store
    query = RecordQuery(scope=scope, kinds=DERIVED_KINDS, statuses=tuple(Status), limit=records)
    found = sorted(store.iter_records(query), key=lambda r: (r.created_at, r.id))
    episodes: dict[str, Episode] = {}
    sources: dict[str, tuple[str, ...]] = {}
    for record in found:
        chain = memory.explain(record.id).episodes()
        sources[record.id] = tuple(e.id for e in chain)
        episodes.update((e.id, e) for e in chain)
    for episode in store.recent_episodes(scope, limit=200):
        episodes.setdefault(episode.id, episode)
    entries = tuple(memory.audit(scope=scope, limit=audit))
    gone = {e.record_id for e in entries} - {r.id for r in found}
    # a note removed for good leaves its turn behind: note ids are derived from the turn's
    forgotten_from = {note_id(e.id): e for e in episodes.values() if note_id(e.id) in gone}
    probed = None
    if probe is not None:
        probed = memory.recall(probe, scope=scope, at=now, as_of=now)
    return Inspection(
        user=user,
        url=memory.url,
        read_at=now,
        card=store.books.get_card(scope, PROFILE_CARD),
        profile=memory.profile(scope=scope).to_json(),
        records=tuple(found),
        episodes=episodes,
        sources=sources,
        chains=supersession_chains(found),
        recalls=tuple(_recalls(memory, scope, limit=recalls)),
        audit=entries,
        conflicts=tuple(memory.conflicts(scope=scope, open_only=False)),
        forgotten_from=forgotten_from,
        probe=probed,
        disputes=tuple(store.books.disputes_of([r.id for r in found])),
    )


def users(memory: Memory) -> tuple[str, ...]:
    """The users the store holds notes about, sorted: those the page can switch to."""
    return tuple(sorted({s.user for s in every_scope(memory.store) if s.user}))


def supersession_chains(records: list[Record]) -> tuple[tuple[Record, ...], ...]:
    """Each run of records replacing one another, oldest first (``superseded_by`` points
    from the old record to the new)."""
    by_id = {r.id: r for r in records}
    replaced = {r.superseded_by for r in records if r.superseded_by}
    chains = []
    for start in records:
        if start.superseded_by is None or start.id in replaced:
            continue  # not superseded, or the middle of a chain begun elsewhere
        chain = [start]
        seen = {start.id}
        nxt: str | None = start.superseded_by
        while nxt is not None and nxt in by_id and nxt not in seen:
            chain.append(by_id[nxt])
            seen.add(nxt)
            nxt = by_id[nxt].superseded_by
        chains.append(tuple(chain))
    return tuple(chains)


def _recalls(memory: Memory, scope: Scope, *, limit: int) -> list[RecallLog]:
    # the store's recall logs keep which records a recall retrieved and showed, and when
    # it was answered; not its query or scores
    entries = memory.store.backend.ledger.list(LedgerKind.RECALL.value, scope=scope)
    logs = (memory.store.books.get_recall(e.key) for e in entries)
    found = [log for log in logs if log is not None]
    return sorted(found, key=lambda log: (log.at, log.id), reverse=True)[:limit]
