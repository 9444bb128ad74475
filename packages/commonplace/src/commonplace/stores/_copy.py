"""Copy a store into another, whatever the two backends are, through the protocol alone.

``copy(SQLiteBackend("a.db"), other)`` carries over the embedder pin, every episode
(oldest first, so the target lists them in the same order), every derived record of
every kind and status with its vector, provenance and counters, every ledger entry, and
the links when both backends keep links. Records are written with replacement and
ledger entries by key, so a copy that was interrupted is finished by running it again.
Stop the source's writers first: a turn written meanwhile may be left out.

With ``embedder``, the copy is also a re-embed: every record is embedded again with that
model (from the same text the write path embeds) and the target is pinned to it. That
is how a store whose backend cannot re-embed in place moves to another model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .._records import Record
from ..embedders import Embedder, Vectors, embed_checked, embedding_text
from ..embedders._reembed import own_evidence
from ..embedders._resolve import pin_of
from ..errors import InvalidInputError, InvalidTypeError
from ._protocol import Backend, LinkGraph, RecordQuery, TurnWrite
from ._store import ALL_KINDS, ALL_STATUSES, Store

Progress = Callable[[str, int], None]
"""Told (part, how many so far) as a copy goes."""


@dataclass
class CopyReport:
    """How many of each part a copy wrote (``episodes``, ``records``, ``links`` and one
    count per ledger kind, as ``ledger:<kind>``)."""

    counts: dict[str, int] = field(default_factory=dict)


def copy(
    source: Backend,
    target: Backend,
    *,
    batch: int = 500,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> CopyReport:
    """Copy everything ``source`` holds into ``target`` (empty, or an earlier partial copy
    of the same source), re-embedding with ``embedder`` when given; see the module
    docstring for what that is."""
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise InvalidInputError(f"batch must be an int of at least 1, not {batch!r}")
    if embedder is not None and not isinstance(embedder, Embedder):
        raise InvalidTypeError(
            "embedder must be a commonplace Embedder (name, dim, embed); wrap other models "
            "with commonplace.embedders.CallableEmbedder"
        )
    report = CopyReport()

    def tell(part: str, n: int) -> None:
        report.counts[part] = report.counts.get(part, 0) + n
        if progress is not None:
            progress(part, report.counts[part])

    pin = source.read_pin() if embedder is None else pin_of(embedder)
    if pin is not None:
        target.write_pin(pin)

    seen = Store(source)

    def vectors(records: list[Record]) -> Vectors:
        if embedder is None:
            return source.get_vectors([r.id for r in records])
        texts = [embedding_text(r, evidence=own_evidence(seen, r)) for r in records]
        return embed_checked(embedder, texts)

    _copy_episodes(source, target, batch, tell)
    query = RecordQuery(kinds=ALL_KINDS, statuses=ALL_STATUSES)
    chunk: list[Record] = []
    record_ids: list[str] = []
    for record in source.iter_records(query, batch=batch):
        chunk.append(record)
        record_ids.append(record.id)
        if len(chunk) == batch:
            target.put_records(chunk, vectors(chunk), replace=True)
            tell("records", len(chunk))
            chunk = []
    if chunk:
        target.put_records(chunk, vectors(chunk), replace=True)
        tell("records", len(chunk))
    for kind in source.ledger.kinds():
        entries = source.ledger.list(kind)
        for start in range(len(entries) - 1, -1, -batch):  # oldest first keeps their order
            part = entries[max(0, start - batch + 1) : start + 1][::-1]
            target.ledger.put(part)
            tell(f"ledger:{kind}", len(part))
    if isinstance(source, LinkGraph) and isinstance(target, LinkGraph):
        _copy_links(source, target, record_ids, batch, tell)
    report.counts.setdefault("episodes", 0)
    report.counts.setdefault("records", 0)
    return report


def _copy_episodes(
    source: Backend, target: Backend, batch: int, tell: Callable[[str, int], None]
) -> None:
    # newest first is the only order a backend lists episodes in: collect the ids of the
    # pages, then write the pages oldest first
    pages: list[list[str]] = []
    before: str | None = None
    while True:
        page = source.recent_episodes(None, limit=batch, before=before)
        if not page:
            break
        pages.append([e.id for e in page])
        before = page[-1].id
    for ids in reversed(pages):
        episodes = {e.id: e for e in source.get_episodes(ids)}
        turns = [TurnWrite(episodes[i]) for i in reversed(ids) if i in episodes]
        target.write_turns(turns, None)
        tell("episodes", len(turns))


def _copy_links(
    source: LinkGraph,
    target: LinkGraph,
    record_ids: list[str],
    batch: int,
    tell: Callable[[str, int], None],
) -> None:
    # each pair once; a link is written as the reinforcement that brings the target's
    # weight (none, or a partial copy's) to the source's
    done: set[tuple[str, str, str]] = set()
    for start in range(0, len(record_ids), batch):
        ids = record_ids[start : start + batch]
        have = {(k.a, k.b, k.kind): k.weight for k in target.links_of(ids, min_weight=0.0)}
        for link in source.links_of(ids, min_weight=0.0):
            key = (link.a, link.b, link.kind)
            if key in done:
                continue
            done.add(key)
            delta = link.weight - have.get(key, 0.0)
            if delta > 1e-9:
                target.reinforce_links([key], delta=delta, at=link.updated_at)
            tell("links", 1)
