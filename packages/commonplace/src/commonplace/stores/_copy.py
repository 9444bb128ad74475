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

``progress`` is what every long job takes: None (a bar on stderr only when stderr is a
terminal), True or False; a copy draws one bar per part in turn. A function instead is
told each part's count as the copy goes, and no bar is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._progress import PartCounter, ProgressBar, checked_progress
from .._records import Record
from ..embedders._protocol import Embedder, Vectors, embed_checked, embedding_text
from ..errors import InvalidInputError, InvalidTypeError
from ._embedder import own_evidence, pin_of
from ._protocol import Backend, LinkGraph, RecordQuery, TurnWrite, WriteBatch
from ._store import ALL_KINDS, ALL_STATUSES, Store

_UNITS = {"episodes": "episode", "records": "record", "links": "link"}  # ledger: "entry"


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
    progress: bool | PartCounter | None = None,
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
    if not callable(progress):
        checked_progress(progress)
    report = CopyReport()
    with _Parts(report, progress) as tell:
        _copy_all(source, target, batch, embedder, tell)
    report.counts.setdefault("episodes", 0)
    report.counts.setdefault("records", 0)
    return report


class _Parts:
    """Counts each part of a copy into its report, and tells them: to the caller's
    function, or on a bar per part in turn (``start`` opens the next one)."""

    def __init__(self, report: CopyReport, progress: bool | PartCounter | None) -> None:
        self._report = report
        self._progress = progress
        self._bar: ProgressBar | None = None
        self._part: str | None = None

    def start(self, part: str, total: int | None = None) -> None:
        if self._part == part:
            return
        self.close()
        self._part = part
        if not callable(self._progress):
            self._bar = ProgressBar(
                desc=f"copying {part}",
                unit=_UNITS.get(part, "entry"),
                total=total,
                progress=self._progress,
            )

    def __call__(self, part: str, n: int) -> None:
        self.start(part)
        self._report.counts[part] = self._report.counts.get(part, 0) + n
        if callable(self._progress):
            self._progress(part, self._report.counts[part])
        elif self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> _Parts:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _put(target: Backend, records: list[Record], vectors: Vectors) -> None:
    target.apply(WriteBatch(records=records, record_vectors=vectors, replace_records=True))


def _copy_all(
    source: Backend, target: Backend, batch: int, embedder: Embedder | None, tell: _Parts
) -> None:
    pin = source.read_pin() if embedder is None else pin_of(embedder)
    if pin is not None:
        target.apply(WriteBatch(pin=pin))

    seen = Store(source)

    def vectors(records: list[Record]) -> Vectors:
        if embedder is None:
            return seen.get_vectors([r.id for r in records])
        texts = [embedding_text(r, evidence=own_evidence(seen, r)) for r in records]
        return embed_checked(embedder, texts)

    _copy_episodes(source, target, batch, tell)
    tell.start("records")
    query = RecordQuery(kinds=ALL_KINDS, statuses=ALL_STATUSES)
    chunk: list[Record] = []
    record_ids: list[str] = []
    for record in source.iter_records(query, batch=batch):
        chunk.append(record)
        record_ids.append(record.id)
        if len(chunk) == batch:
            _put(target, chunk, vectors(chunk))
            tell("records", len(chunk))
            chunk = []
    if chunk:
        _put(target, chunk, vectors(chunk))
        tell("records", len(chunk))
    for kind in source.ledger.kinds():
        entries = source.ledger.list(kind)
        tell.start(f"ledger:{kind}", len(entries))
        for start in range(len(entries) - 1, -1, -batch):  # oldest first keeps their order
            part = entries[max(0, start - batch + 1) : start + 1][::-1]
            target.ledger.put(part)
            tell(f"ledger:{kind}", len(part))
    if isinstance(source, LinkGraph) and isinstance(target, LinkGraph):
        tell.start("links")
        _copy_links(source, target, record_ids, batch, tell)


def _copy_episodes(source: Backend, target: Backend, batch: int, tell: _Parts) -> None:
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
    tell.start("episodes", sum(len(ids) for ids in pages))
    for ids in reversed(pages):
        episodes = {e.id: e for e in Store(source).get_episodes(ids)}
        turns = [TurnWrite(episodes[i]) for i in reversed(ids) if i in episodes]
        target.apply(WriteBatch(turns))
        tell("episodes", len(turns))


def _copy_links(
    source: LinkGraph,
    target: LinkGraph,
    record_ids: list[str],
    batch: int,
    tell: _Parts,
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
