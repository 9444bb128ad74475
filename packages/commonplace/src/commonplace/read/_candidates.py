"""A recall's first stage: what it reads before anything is ranked.

:meth:`CandidateReader.read` takes a :class:`Request` and gives :class:`Candidates`:
the records every recall considers (hot ones, the last few notes), the scope's cards,
and, past ``search_min_notes``, the pool the rank stage scores: the hybrid search's
hits, what superseded them (the current value competes with the old one) and one hop
of strong links. The first reads go to the store together, in one ``read_batch``;
only the supersession chains and the links not read with the search take more.

Nothing is scored here beyond each candidate's similarity to the query and its keyword
match, the two numbers the store's search and the pool's rules (a successor inherits
its predecessor's relevance, a linked record part of its neighbour's) work with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from .._config import Config
from .._records import (
    Episode,
    Kind,
    Modality,
    Record,
    Role,
    Status,
    Tier,
    episode_id,
    search_text,
)
from .._scope import Scope
from .._scope import owner_scope as card_scope
from .._text import WORD, keyword_coverage
from ..embedders._protocol import Embedder, Vectors, embed_checked
from ..stores import (
    PROFILE_CARD,
    ROLLING_SUMMARY,
    Candidate,
    Dispute,
    Reads,
    RecordQuery,
    SearchQuery,
    Store,
)
from ._excerpts import MAX_TURNS_PER_NOTE

# how many steps along a supersession chain are followed (a longer one is cut there)
MAX_CHAIN = 8
_LINK_SEEDS = 10
# how many of the best hits by similarity have their turns read with the search (those the
# excerpts of the best few notes come from, mostly; the compile stage reads any others)
_TURN_SEEDS = 10
# what a note's line costs in the context, about (LoCoMo's notes and the synthetic ones
# of the scale benchmark: 25 to 35 tokens), to size the candidate pool from the budget
_TOKENS_PER_NOTE = 30

CardAsOf = Callable[[Scope, datetime, str], str]
"""``card_as_of(scope, when, kind)``: the text of a card as it was at ``when``."""


@dataclass(frozen=True, slots=True)
class Request:
    """One recall as every stage reads it: the query, whose memory (``scope``), how many
    relevant notes at most (``top_k``, None for as many as the ``budget`` of tokens can
    show), the time of the recall (``now``) and the date it looks back from (``as_of``,
    None for today)."""

    query: str
    scope: Scope
    top_k: int | None
    budget: int
    now: datetime
    as_of: datetime | None


@dataclass(frozen=True, slots=True)
class Candidates:
    """What the candidates stage read for a :class:`Request`.

    ``vector`` is the query's embedding. ``hot`` are the scope's hot records and
    ``recent`` its last ``recent_notes`` notes (valid as of ``as_of``; neither holds the
    turn being answered). ``searched`` says the scope held enough notes to search
    (``search_min_notes``): only then is ``pool`` filled, one candidate per record, in
    the order first met, with ``link_notes`` saying which were reached along a link
    ("linked from nt_..."). ``vectors`` are the vectors the store sent along with the
    listings, by id (scoring the hot and recent records reads no more).
    ``profile`` and ``summary`` are the texts of the profile card and of the thread's
    rolling summary as the recall shows them ("" for none). ``disputes`` are the
    disputes naming any of the ``disputed`` records and ``turns`` the episodes found of
    the ids ``turns_read``, when the store read them with the rest (else empty: the
    compile stage reads what it needs).
    """

    vector: Vectors
    hot: tuple[Record, ...]
    recent: tuple[Record, ...]
    searched: bool
    pool: tuple[Candidate, ...]
    link_notes: Mapping[str, str]
    vectors: Mapping[str, Vectors]
    profile: str
    summary: str
    disputes: tuple[Dispute, ...] = ()
    disputed: frozenset[str] = frozenset()
    turns: Mapping[str, Episode] = field(default_factory=dict)
    turns_read: frozenset[str] = frozenset()


class CandidateReader:
    """The candidates stage: every read a recall makes before it ranks."""

    def __init__(
        self, *, store: Store, embedder: Embedder, config: Config, card_as_of: CardAsOf | None
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._config = config
        self._card_as_of = card_as_of

    def read(self, request: Request) -> Candidates:
        """The :class:`Candidates` of ``request``: one embedding, one ``read_batch``,
        and the reads that grow the pool (supersession heads, linked records)."""
        config = self._config
        query, scope, as_of = request.query, request.scope, request.as_of
        vector = embed_checked(self._embedder, [query])[0]
        # what a recall reads first does not depend on itself: asked together (one call to
        # Backend.read), the search too, in case the scope is worth searching
        first = self._store.read_batch(
            listings=(
                RecordQuery(
                    scope=scope, kinds=(Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE), tiers=(Tier.HOT,)
                ),
                RecordQuery(
                    scope=scope,
                    kinds=(Kind.NOTE,),
                    newest_first=True,
                    limit=max(config.recent_notes + 10, config.search_min_notes),
                ),
            ),
            search=SearchQuery(scope, vector, query, _pool_limit(config, request)),
            cards=((card_scope(scope), PROFILE_CARD),)
            + (((scope, ROLLING_SUMMARY),) if scope.thread else ()),
            vectors=True,
            link_seeds=_LINK_SEEDS if config.link_expand else 0,
            link_min_weight=config.link_min_weight,
            # what the compile stage reads next, if the store can read it meanwhile
            disputes=True,
            turns=MAX_TURNS_PER_NOTE,
            turn_seeds=_TURN_SEEDS,
        )
        listed, newest = first.listings
        hot = tuple(r for r in listed if _shown(r, request))
        recent = tuple(r for r in newest if _shown(r, request))[: config.recent_notes]
        # "enough notes to be worth searching", asked cheaply: a LIMIT, not a COUNT
        searched = len(newest) >= config.search_min_notes
        link_notes: dict[str, str] = {}
        pool = self._pool(request, vector, first, link_notes) if searched else ()
        profile = first.cards[0].text if first.cards[0] else ""
        summary = first.cards[1].text if scope.thread and first.cards[1] else ""
        if as_of is not None:
            # today's cards would tell the past what it did not know yet
            profile = self._card_then(scope, as_of, PROFILE_CARD)
            summary = self._card_then(scope, as_of, ROLLING_SUMMARY) if scope.thread else ""
        return Candidates(
            vector=vector,
            hot=hot,
            recent=recent,
            searched=searched,
            pool=pool,
            link_notes=link_notes,
            vectors=first.vectors,
            profile=profile,
            summary=summary,
            disputes=first.dispute_list,
            disputed=first.disputed,
            turns={e.id: e for e in first.episodes},
            turns_read=first.turns_read,
        )

    def _card_then(self, scope: Scope, when: datetime, kind: str) -> str:
        return self._card_as_of(scope, when, kind) if self._card_as_of else ""

    def _pool(
        self, request: Request, vector: Vectors, first: Reads, link_notes: dict[str, str]
    ) -> tuple[Candidate, ...]:
        """Every candidate worth ranking: the search's hits (``first``, a pool sized by
        :func:`_pool_limit`), supersession heads and linked records (``link_notes`` is
        filled with how each linked one was reached)."""
        query, scope, as_of = request.query, request.scope, request.as_of
        pool = [
            Candidate(h.record, h.similarity, keyword_match(query, h.record) if h.keyword else 0.0)
            for h in first.hits
        ]
        if as_of is not None:
            pool = [c for c in pool if c.record.valid_at(as_of)]
        else:
            pool = _inherit_relevance(self._with_heads(pool, vector, scope))
        pool = self._with_links(pool, vector, scope, link_notes, as_of=as_of, read=first)
        # one candidate per record (the last word on it), in the order first met
        return tuple({c.record.id: c for c in pool if not _asks_itself(c.record, query)}.values())

    def _with_heads(self, pool: list[Candidate], vector: Vectors, scope: Scope) -> list[Candidate]:
        """Add what superseded each superseded candidate, so the current fact competes:
        one read per step along the chains, for every chain at once."""
        have = {c.record.id for c in pool}
        missing: list[Record] = []
        wanted = {c.record.superseded_by for c in pool if c.record.superseded_by} - have
        for _ in range(MAX_CHAIN):
            if not wanted:
                break
            found = [
                r
                for r in self._store.get_records(sorted(wanted))
                if r.status is Status.ACTIVE and scope.contains(r.scope) and r.id not in have
            ]
            missing.extend(found)
            have.update(r.id for r in found)
            wanted = {r.superseded_by for r in found if r.superseded_by} - have
        return pool + as_candidates(self._store, missing, vector)

    def _with_links(
        self,
        pool: list[Candidate],
        vector: Vectors,
        scope: Scope,
        notes: dict[str, str],
        *,
        as_of: datetime | None,
        read: Reads,
    ) -> list[Candidate]:
        """One hop along strong links from the best candidates: a linked record carries
        over part of its neighbour's relevance (similarity times link weight), and at most
        ``link_expand`` records are reached this way (the links ``read`` with the search,
        when they are those of these seeds)."""
        config = self._config
        if config.link_expand == 0 or not pool:
            return pool
        seeds = {c.record.id: c for c in sorted(pool, key=lambda c: -c.similarity)[:_LINK_SEEDS]}
        if seeds.keys() <= read.linked:
            links = [k for k in read.links if k.a in seeds or k.b in seeds]
        else:
            links = self._store.links.links_of(list(seeds), min_weight=config.link_min_weight)
        reach: dict[str, tuple[str, float]] = {}
        for link in sorted(links, key=lambda k: -k.weight):
            for seed, other in ((link.a, link.b), (link.b, link.a)):
                if seed in seeds and other not in seeds and other not in reach:
                    reach[other] = (seed, seeds[seed].similarity * link.weight)
        chosen = dict(list(reach.items())[: config.link_expand])
        in_pool = {c.record.id: c for c in pool}
        outside = [
            r
            for r in self._store.get_records([r for r in chosen if r not in in_pool])
            if r.status is Status.ACTIVE
            and scope.contains(r.scope)
            and (as_of is None or r.valid_at(as_of))
        ]
        reached = {c.record.id: c for c in as_candidates(self._store, outside, vector)}
        reached.update({rid: in_pool[rid] for rid in chosen if rid in in_pool})
        out = [c for c in pool if c.record.id not in reached]
        for rid, candidate in reached.items():
            seed, carried = chosen[rid]
            if carried > candidate.similarity:
                notes[rid] = f"linked from {seed}"
                candidate = Candidate(candidate.record, carried, candidate.keyword)
            out.append(candidate)
        return out


def as_candidates(
    backend: Store,
    records: list[Record],
    vector: Vectors,
    known: Mapping[str, Vectors] | None = None,
) -> list[Candidate]:
    """``records`` as candidates, each with its cosine similarity to the query's
    ``vector`` (the vectors in ``known`` are not read again) and no keyword match."""
    if not records:
        return []
    known = known or {}
    unread = [r.id for r in records if r.id not in known]
    if len(unread) == len(records):
        matrix = backend.get_vectors(unread)
    else:  # some came with the records: the rest are read, in order
        rest = iter(backend.get_vectors(unread) if unread else ())
        matrix = np.stack([known[r.id] if r.id in known else next(rest) for r in records])
    sims = matrix @ vector
    return [Candidate(r, float(s)) for r, s in zip(records, np.atleast_1d(sims))]


def keyword_match(query: str, record: Record) -> float:
    """The share of the question's words a record's keyword text holds, in [0, 1]: bounded
    and comparable across questions and backends, unlike the BM25 that found it."""
    return keyword_coverage(query, search_text(record.text, record.tags))


def _pool_limit(config: Config, request: Request) -> int:
    """How many candidates the search brings, per method. Without ``top_k`` the pool is
    sized by the budget (at least ``pool_min``): about as many notes as it can show, from
    the vector search and as many again from the keyword search. A deeper pool only adds
    weaker candidates the budget has no room for (on LoCoMo's development split a pool of
    50 lost no evidence against one of 125, on either conversation or embedder)."""
    if request.top_k is None:
        return max(config.pool_min, request.budget // _TOKENS_PER_NOTE)
    return config.pool_size(request.top_k)


def _inherit_relevance(pool: list[Candidate]) -> list[Candidate]:
    """What replaced a fact is as relevant as the fact: a question the old value answers
    ("where do I live?" for "I live in Lisbon") is answered now by what superseded it
    ("we just moved to Porto"), whatever words either uses."""
    by_id = {c.record.id: c for c in pool}
    for rid in sorted(by_id, key=lambda r: by_id[r].record.created_at):  # along each chain
        candidate = by_id[rid]
        successor = by_id.get(candidate.record.superseded_by or "")
        if successor is not None:
            by_id[successor.record.id] = Candidate(
                successor.record,
                max(successor.similarity, candidate.similarity),
                max(successor.keyword, candidate.keyword),
            )
    return list(by_id.values())


def _shown(record: Record, request: Request) -> bool:
    """Whether a hot or recent record may be shown: valid as of the recall's date, and
    not the turn being answered."""
    valid = request.as_of is None or record.valid_at(request.as_of)
    return valid and not _asks_itself(record, request.query)


def _asks_itself(record: Record, query: str) -> bool:
    """Whether ``record`` is the turn being answered: a note written from a user turn of
    the query's very words (its source episode is that turn, at the note's own time, or
    that turn's id from before times were part of ids), or a question with the query's
    very words. A question never answers itself."""
    source = record.provenance[0] if record.provenance else None
    if source is not None and source in (
        episode_id(record.scope, Role.USER, query, at=record.created_at),
        episode_id(record.scope, Role.USER, query, at=None),
    ):
        return True
    if record.tags.modality is not Modality.QUESTION:
        return False
    return _plain(_quoted(record.text)) == _plain(query)


def _quoted(text: str) -> str:
    start, end = text.find("“"), text.rfind("”")
    return text[start + 1 : end] if 0 <= start < end else text


def _plain(text: str) -> str:
    return " ".join(WORD.findall(text.lower()))
