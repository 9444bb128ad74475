"""The core's view of a backend: the protocol's small surface, plus everything derived
from it, written once for every backend.

A :class:`Backend` stores and finds, through one write batch (``apply``) and one read
batch (``read``); :class:`Store` holds what the core decided about storing: which
summaries a supersession invalidates, what a record's provenance makes derived from it,
that a forgotten turn stays forgotten, and the reads and writes the core makes, built on
the two batches. Its parts keep the rest: ``store.books`` the ledger's bookkeeping
(``_books``), ``store.erasure`` forgetting (``_erasure``), ``store.links`` and
``store.embedding`` the optional capabilities (``_capabilities``: used when a backend has
them, else a fallback or an error that says what is missing).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime

import numpy as np

from .._records import Episode, Kind, Record, Status, Tags, Tier
from .._scope import Scope
from ..embedders._protocol import Vectors
from ._books import Books
from ._capabilities import Embedding, Links
from ._entries import (
    CARD,
    FORGOTTEN,
    Dispute,
    card_key,
    card_of,
    disputes_in,
)
from ._erasure import Erasure
from ._protocol import (
    Backend,
    BatchAnswer,
    Card,
    Hit,
    LinkGraph,
    NearestNotes,
    ReadBatch,
    RecordQuery,
    RecordUpdate,
    SearchQuery,
    TurnWrite,
    WriteBatch,
)

ALL_KINDS = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE)
"""Every kind of derived record."""
ALL_STATUSES = tuple(Status)


@dataclass(frozen=True, slots=True)
class Reads(BatchAnswer):
    """What :meth:`Store.read_batch` read: a :class:`BatchAnswer` with, per card asked,
    the card (decoded from its ledger entry) or None, and the ``disputes`` read (if any)
    decoded, oldest first, as :meth:`Books.disputes_of` gives them."""

    cards: tuple[Card | None, ...] = ()
    dispute_list: tuple[Dispute, ...] = ()


class Store:
    """A backend, seen the way the write, read and lifecycle code uses it."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._ledger = backend.ledger
        # the parts of what the core keeps that are not the records themselves
        self.books = Books(backend)
        self.erasure = Erasure(backend)
        self.links = Links(backend)
        self.embedding = Embedding(backend)

    @property
    def url(self) -> str:
        return self.backend.url

    def close(self) -> None:
        self.backend.close()

    def existing_episode_ids(self, ids: Collection[str]) -> set[str]:
        """Ids stored, or stored once and forgotten (a replay must not bring those back)."""
        if not ids:
            return set()
        found = {e.id for e in self.get_episodes(ids)}
        return found | self._forgotten(set(ids) - found)

    def _forgotten(self, ids: Collection[str]) -> set[str]:
        return {e.key for e in self._ledger.list(FORGOTTEN, refs=ids)} if ids else set()

    def write_turns(self, turns: Sequence[TurnWrite], vectors: Vectors | None) -> list[bool]:
        """:meth:`apply` of a batch of only these turns."""
        return self.apply(WriteBatch(turns, vectors))

    def apply(self, batch: WriteBatch) -> list[bool]:
        """Commit a batch (see :meth:`Backend.apply`), leaving out forgotten turns,
        invalidating the active summaries built on what a new note supersedes, and
        dropping links for a backend that keeps none."""
        turns = list(batch.turns)
        vectors = batch.vectors
        forgotten = self._forgotten({t.episode.id for t in turns})
        keep = [t.episode.id not in forgotten for t in turns]
        if forgotten and vectors is not None:
            with_note = [k for t, k in zip(turns, keep) if t.note is not None]
            vectors = np.asarray(vectors)[np.asarray(with_note, bool)]
        linked = isinstance(self.backend, LinkGraph)
        sent = [
            self._with_invalidations(t if linked or not t.links else replace(t, links=()))
            for t, k in zip(turns, keep)
            if k
        ]
        if not sent and not (
            batch.entries or batch.new_entries or batch.records or batch.updates or batch.pin
        ):
            return [False] * len(turns)
        fresh = iter(self.backend.apply(replace(batch, turns=sent, vectors=vectors)))
        return [next(fresh) if k else False for k in keep]

    def _with_invalidations(self, turn: TurnWrite) -> TurnWrite:
        if not turn.supersedes:
            return turn
        summaries = self.backend.iter_records(
            RecordQuery(kinds=(Kind.SUMMARY,), sources=turn.supersedes)
        )
        # a summary built on a superseded fact no longer holds
        return replace(turn, invalidates=tuple(dict.fromkeys(r.id for r in summaries)))

    def get_episode(self, episode_id: str) -> Episode | None:
        found = self.get_episodes([episode_id])
        return found[0] if found else None

    def get_episodes(self, episode_ids: Collection[str]) -> list[Episode]:
        if not episode_ids:
            return []
        return self.backend.read(ReadBatch(episode_ids=episode_ids)).found_episodes

    def recent_episodes(
        self, scope: Scope | None, *, limit: int, before: str | None = None
    ) -> list[Episode]:
        return self.backend.recent_episodes(scope, limit=limit, before=before)

    def put_records(
        self, records: Sequence[Record], vectors: Vectors, *, replace: bool = False
    ) -> None:
        """Insert derived records (see :attr:`WriteBatch.records`)."""
        self.backend.apply(
            WriteBatch(records=records, record_vectors=vectors, replace_records=replace)
        )

    def get_record(self, record_id: str, *, any_status: bool = False) -> Record | None:
        for record in self.get_records([record_id]):
            if any_status or record.status is Status.ACTIVE:
                return record
        return None

    def get_records(self, record_ids: Collection[str]) -> list[Record]:
        if not record_ids:
            return []
        return self.backend.read(ReadBatch(record_ids=record_ids)).records

    def iter_records(self, query: RecordQuery, *, batch: int = 1000) -> Iterator[Record]:
        return self.backend.iter_records(query, batch=batch)

    def recent_records(self, scope: Scope, *, kinds: Collection[Kind], limit: int) -> list[Record]:
        """The newest active records of the given kinds visible in ``scope``."""
        query = RecordQuery(scope=scope, kinds=kinds, newest_first=True, limit=limit)
        return list(self.backend.iter_records(query, batch=limit))

    def count(self, scope: Scope | None, kind: Kind) -> int:
        return self.backend.count(scope, kind)

    def read_batch(
        self,
        *,
        listings: Sequence[RecordQuery] = (),
        search: SearchQuery | None = None,
        cards: Sequence[tuple[Scope, str]] = (),
        vectors: bool = False,
        link_seeds: int = 0,
        link_min_weight: float = 0.0,
        disputes: bool = False,
        turns: int = 0,
        turn_seeds: int = 0,
    ) -> Reads:
        """Reads that do not depend on one another, in one call (:meth:`Backend.read`):
        what ``iter_records`` gives per listing, ``search``, ``get_card`` per (scope,
        kind), with ``vectors`` the vectors of the listed records the backend read with
        them (a caller reads the rest with ``get_vectors``), and with ``link_seeds``
        ``links_of`` about that many
        of the best hits; with ``disputes`` and ``turns`` perhaps the disputes of what it
        read and the turns of the best hits (see :class:`ReadBatch`)."""
        batch = ReadBatch(
            listings=tuple(listings),
            search=search,
            entries=tuple((CARD, card_key(scope, kind)) for scope, kind in cards),
            vectors=vectors,
            link_seeds=link_seeds if isinstance(self.backend, LinkGraph) else 0,
            link_min_weight=link_min_weight,
            disputes=disputes,
            turns=turns,
            turn_seeds=turn_seeds,
        )
        answer = self.backend.read(batch)
        return Reads(
            **{f.name: getattr(answer, f.name) for f in fields(BatchAnswer)},
            cards=tuple(card_of(e, scope, kind) for e, (scope, kind) in zip(answer.entries, cards)),
            dispute_list=disputes_in(answer.disputes),
        )

    def get_vectors(self, record_ids: Sequence[str]) -> Vectors:
        found = self.backend.read(ReadBatch(vector_ids=list(record_ids))).record_vectors
        return np.zeros((0, 0), np.float32) if found is None else found

    def derived_from(self, source_ids: Collection[str]) -> list[str]:
        """Ids of every record whose provenance names one of ``source_ids``."""
        if not source_ids:
            return []
        query = RecordQuery(kinds=ALL_KINDS, statuses=ALL_STATUSES, sources=source_ids)
        return list(dict.fromkeys(r.id for r in self.backend.iter_records(query)))

    def search(
        self,
        scope: Scope,
        vector: Vectors,
        *,
        text: str | None,
        limit: int,
        kinds: Collection[Kind] = ALL_KINDS,
    ) -> list[Hit]:
        query = SearchQuery(scope, vector, text, limit, kinds)
        return self.backend.read(ReadBatch(search=query)).hits

    def nearest(
        self, scope: Scope, vectors: Vectors, *, min_similarity: float | None = None
    ) -> list[tuple[str, float] | None]:
        """For each row, the nearest active note visible in ``scope``, or None (also when
        it is less similar than ``min_similarity``)."""
        if isinstance(self.backend, NearestNotes):
            found = self.backend.nearest(scope, vectors, min_similarity=min_similarity)
        else:
            found = []
            for row in np.asarray(vectors, np.float32).reshape(len(vectors), -1):
                hits = self.search(scope, row, text=None, limit=1, kinds=(Kind.NOTE,))
                found.append((hits[0].record.id, hits[0].similarity) if hits else None)
        if min_similarity is None:
            return found
        # the bound's one home: a backend may use it to do less, or ignore it
        return [hit if hit is not None and hit[1] >= min_similarity else None for hit in found]

    def update_records(
        self,
        record_ids: Collection[str],
        *,
        at: datetime,
        tier: Tier | None = None,
        status: Status | None = None,
        pinned: bool | None = None,
        valid_to: datetime | None = None,
        superseded_by: str | None = None,
        tags: Tags | None = None,
    ) -> None:
        update = RecordUpdate(
            record_ids,
            at=at,
            tier=tier,
            status=status,
            pinned=pinned,
            valid_to=valid_to,
            superseded_by=superseded_by,
            tags=tags,
        )
        self.backend.apply(WriteBatch(updates=[update]))
