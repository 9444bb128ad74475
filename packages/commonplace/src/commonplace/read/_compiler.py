"""The recall compiler: from a query to ranked records and a budgeted context.

No model is called here, the embedding of the query aside. The steps:
profile card, rolling summary, hot records and the last few notes are always
considered; past ``search_min_notes`` a hybrid (vector + keyword) search finds
candidates, supersession heads and one hop of strong links join them, the
four-signal rerank orders them, superseded facts are kept below what
replaced them, contradictions are flagged, and everything is compiled into
one token-budgeted block in authority order.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

import numpy as np

from .._config import Config
from .._records import (
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
from .._text import WORD, keyword_coverage, sentences
from ..embedders._protocol import Embedder, Vectors, embed_checked
from ..stores import (
    PROFILE_CARD,
    ROLLING_SUMMARY,
    Candidate,
    Reads,
    RecallLog,
    RecordQuery,
    SearchQuery,
    Store,
)
from ._context import Line, Section, compile_context, neutralise, record_line, record_line_cost
from ._excerpts import EXCERPT_NOTES, MAX_TURNS_PER_NOTE, excerpts_for
from ._flags import find_disagreements
from ._recall import Disagreement, Recall, RecallItem
from ._signals import PoolScores, Score, ScoreSignal, score_candidates, score_pool

_MAX_CHAIN = 8
_LINK_SEEDS = 10
_DEFAULT_K = 10
# what a note's line costs in the context, about (LoCoMo's notes and the synthetic ones
# of the scale benchmark: 25 to 35 tokens), to size the candidate pool from the budget
_TOKENS_PER_NOTE = 30
# relevant items kept past the budget: lines shorter than the one that did not fit
_LOOKAHEAD = 8


class RecallCompiler:
    """Builds a :class:`Recall`; one per Memory, stateless between calls."""

    def __init__(
        self,
        *,
        backend: Store,
        embedder: Embedder,
        config: Config,
        signals: Sequence[ScoreSignal],
        card_as_of: Callable[[Scope, datetime, str], str] | None = None,
    ) -> None:
        """``card_as_of(scope, when, kind)``: the text of a card (the profile card, a
        thread's rolling summary) as it was at ``when``, shown by a recall ``as_of`` then
        (without it, such a recall shows none: today's would tell the past what it did
        not know yet)."""
        self._card_as_of = card_as_of
        self._backend = backend
        self._embedder = embedder
        self._config = config
        self._signals = tuple(signals)

    def recall(
        self,
        query: str,
        *,
        scope: Scope,
        top_k: int | None,
        budget: int,
        now: datetime,
        as_of: datetime | None,
    ) -> Recall:
        config = self._config
        valid = (lambda r: r.valid_at(as_of)) if as_of is not None else (lambda r: True)
        vector = embed_checked(self._embedder, [query])[0]
        # what a recall reads first does not depend on itself: asked together (one call to
        # a backend with BatchReads), the search too, in case the scope is worth searching
        first = self._backend.read_batch(
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
            search=SearchQuery(scope, vector, query, _pool_limit(config, top_k, budget)),
            cards=((card_scope(scope), PROFILE_CARD),)
            + (((scope, ROLLING_SUMMARY),) if scope.thread else ()),
            vectors=True,
            link_seeds=_LINK_SEEDS if config.link_expand else 0,
            link_min_weight=config.link_min_weight,
        )
        listed, newest = first.listings
        hot = [r for r in listed if valid(r) and not _asks_itself(r, query)]
        recent = [r for r in newest if valid(r) and not _asks_itself(r, query)]
        recent = recent[: config.recent_notes]
        # "enough notes to be worth searching", asked cheaply: a LIMIT, not a COUNT
        searched = len(newest) >= config.search_min_notes
        hot_ids = {r.id for r in hot}
        relevant: list[RecallItem] = []
        best: float | None = None
        if searched:
            ranked = self._search(query, vector, first, scope=scope, now=now, as_of=as_of)
            best = ranked.best
            # a hot record is shown as hot: only the others compete for the budget
            chosen = [
                n
                for n in ranked.relevant(top_k=top_k, floor=config.relevance_floor)
                if ranked.record(n).id not in hot_ids
            ]
            fitting = _within_budget([ranked.record(n) for n in chosen], budget)
            relevant = [ranked.item(n) for n in chosen[:fitting]]
        # what is shown without being searched for is scored against the query all the same
        have = {i.record.id for i in relevant}
        unsearched = {
            i.record.id: i
            for i in self._score(
                [r for r in (*hot, *recent) if r.id not in have],
                vector,
                query,
                now,
                best,
                first.vectors,
            )
        }
        # everything the context may show is checked, whatever section it lands in
        considered = {r.id: r for r in [i.record for i in relevant] + hot + recent}
        disputed, partners = self._disputes(considered, scope, as_of)
        relevant += self._score(partners, vector, query, now, best, first.vectors)
        considered.update((r.id, r) for r in partners)
        logical = find_disagreements(list(considered.values()))
        known = {(f.first, f.second) for f in logical} | {(f.second, f.first) for f in logical}
        # a dispute marks its two lines; only a logical contradiction also takes a line of
        # its own (on long conversations those lines cost more evidence than they give)
        flags = logical + [d for d in disputed if (d.first, d.second) not in known]
        flagged = {rid for d in flags for rid in (d.first, d.second)}
        relevant = [_flag_note(i, flags) if i.record.id in flagged else i for i in relevant]
        profile_text = first.cards[0].text if first.cards[0] else ""
        rolling_text = first.cards[1].text if scope.thread and first.cards[1] else ""
        if as_of is not None:
            profile_text = self._card_then(scope, as_of, PROFILE_CARD)
            rolling_text = self._card_then(scope, as_of, ROLLING_SUMMARY) if scope.thread else ""
        relevant = self._with_excerpts(query, relevant, scope)
        shown = {i.record.id for i in relevant} | hot_ids
        fresh = [r for r in recent if r.id not in shown]
        # a replaced statement is shown as past, with what replaced it, in every section
        past = {} if as_of is not None else self._past_notes([*considered.values()], scope)
        relevant = [_with_note(i, past.get(i.record.id)) for i in relevant]
        sections = [
            Section("Profile", _text_lines(profile_text, 6.0), share=0.2),
            Section(
                "Conversation so far",
                _text_lines(rolling_text, 5.0),
                share=0.2,
            ),
            Section("Disagreements", [Line(f"! {neutralise(d.reason)}", 4.5) for d in logical]),
            Section(
                "Always remembered",
                [
                    record_line(r, 4.0 - n / 1000, _joined(_hot_note(r), past.get(r.id)))
                    for n, r in enumerate(hot)
                ],
                share=0.25,
            ),
            # below every relevant note: what answers the question fills the budget first
            Section(
                "Recent notes",
                # oldest first, as the relevant ones: a timeline under day headings
                [
                    record_line(r, 0.9 - n / 1000, past.get(r.id))
                    for n, r in reversed(list(enumerate(fresh)))
                ],
            ),
            Section(
                "Relevant notes",
                [
                    record_line(i.record, 1.0 + i.score.total, i.note, i.excerpt)
                    for i in _authority_order(relevant)
                ],
            ),
        ]
        text, included, tokens = compile_context(sections, budget_tokens=budget)
        kept = set(included)
        items = [i for i in relevant if i.record.id in kept] + [
            replace(unsearched.get(r.id) or _unscored(r), section=section)
            for section, records in (("hot", hot), ("recent", fresh))
            for r in records
            if r.id in kept
        ]
        items.sort(key=lambda i: -i.score.total)
        items = _newer_first(items, flags)
        recall_id = "rc_" + uuid.uuid4().hex[:24]
        # what the search put forward is the few best relevant notes, not everything the
        # budget had room for: those count as ignored when unused. Only the ones about as
        # relevant as the best (whole gate) count as accessed: touching every near miss
        # each time it is shown would refresh its recency until an old rival looks as
        # fresh as the update that replaced it.
        put_forward = [i for i in items if i.section == "relevant" and i.score.gate > 0][
            : top_k or _DEFAULT_K
        ]
        retrieved = tuple(i.record.id for i in put_forward)
        accessed = [i.record.id for i in put_forward if i.score.gate >= 1.0]
        if not config.touch_on_recall or as_of is not None:
            accessed = []
        shown_ids = tuple(dict.fromkeys(included))
        self._backend.log_recall(
            RecallLog(
                recall_id,
                scope,
                now,
                retrieved,
                shown_ids=shown_ids,
                query=query,
                scores={i.record.id: i.score.breakdown() for i in put_forward},
            ),
            accessed=accessed,
        )
        return Recall(
            id=recall_id,
            query=query,
            scope=scope,
            at=now,
            items=tuple(items),
            recent=tuple(recent),
            text=text,
            tokens=tokens,
            included=tuple(included),
            hot=tuple(hot),
            profile=profile_text,
            summary=rolling_text,
            disagreements=tuple(flags),
            searched=searched,
            as_of=as_of,
            retrieved=retrieved,
        )

    def _card_then(self, scope: Scope, when: datetime, kind: str) -> str:
        return self._card_as_of(scope, when, kind) if self._card_as_of else ""

    def _disputes(
        self, considered: Mapping[str, Record], scope: Scope, as_of: datetime | None
    ) -> tuple[list[Disagreement], list[Record]]:
        """The disputes naming a record the context may show (as of ``as_of``), and the
        other side of each when it is not among them: both are shown, both marked. A side
        replaced since stands for what replaced it (the chain's head): "moved my account
        to Revolut" disputed "I bank with Millennium", and Santander replaced Revolut."""
        found = [
            d for d in self._backend.disputes_of(list(considered)) if as_of is None or d.at <= as_of
        ]
        if not found:
            return [], []
        have: dict[str, Record] = dict(considered)
        wanted = {rid for d in found for rid in (d.newer, d.older)} - have.keys()
        for _ in range(_MAX_CHAIN):
            if not wanted:
                break
            read = [
                r
                for r in self._backend.get_records(sorted(wanted))
                if r.status is Status.ACTIVE and scope.contains(r.scope)
            ]
            have.update((r.id, r) for r in read)
            wanted = {r.superseded_by for r in read if r.superseded_by} - have.keys()
            wanted = wanted if as_of is None else set()
        flags: list[Disagreement] = []
        partners: dict[str, Record] = {}
        for d in found:
            newer, older = (
                _holding(have.get(d.newer), have, as_of),
                _holding(have.get(d.older), have, as_of),
            )
            if newer is None or older is None or newer.id == older.id:
                continue
            flags.append(Disagreement(newer.id, older.id, f"may no longer hold: {d.reason}"))
            partners.update((r.id, r) for r in (newer, older) if r.id not in considered)
        return flags, list(partners.values())

    def _past_notes(self, records: Sequence[Record], scope: Scope) -> dict[str, str]:
        """For each superseded record, what its line says of it: "until 18 March 2025;
        then: <what replaced it>" (what replaced it, read once, named only when this
        scope may see it: a newer value said in another thread is not shown here)."""
        superseded = [r for r in records if r.superseded_by is not None]
        if not superseded:
            return {}
        known = {r.id: r for r in records}
        wanted = sorted({r.superseded_by or "" for r in superseded} - known.keys() - {""})
        known.update((r.id, r) for r in self._backend.get_records(wanted))
        out: dict[str, str] = {}
        for record in superseded:
            successor = known.get(record.superseded_by or "")
            if successor is not None and not scope.contains(successor.scope):
                successor = None
            until = f"until {_day(record.valid_to)}" if record.valid_to else "replaced"
            out[record.id] = until + (f"; then: {_gist(successor, record)}" if successor else "")
        return out

    def _with_excerpts(
        self, query: str, relevant: list[RecallItem], scope: Scope
    ) -> list[RecallItem]:
        """The best notes, each with the excerpt of its turn it needs (if any)."""
        best = sorted(
            (i for i in relevant if i.record.kind is Kind.NOTE), key=lambda i: -i.score.total
        )[:EXCERPT_NOTES]

        # one read for every turn an excerpt may come from, not one per turn
        wanted = {e for i in best for e in i.record.provenance[-MAX_TURNS_PER_NOTE:]}
        visible = {e.id: e for e in self._backend.get_episodes(wanted) if scope.contains(e.scope)}
        found = excerpts_for(query, [i.record for i in best], visible.get)
        return [
            replace(i, excerpt=found[i.record.id]) if i.record.id in found else i for i in relevant
        ]

    # -- search and rerank --------------------------------------------------------------

    def _search(
        self,
        query: str,
        vector: Vectors,
        first: Reads,
        *,
        scope: Scope,
        now: datetime,
        as_of: datetime | None,
    ) -> _Ranked:
        """Every candidate worth packing, scored: the search's hits (``first``, a pool sized
        by :func:`_pool_limit`), supersession heads and linked records."""
        config = self._config
        pool = [
            Candidate(h.record, h.similarity, _keyword_match(query, h.record) if h.keyword else 0.0)
            for h in first.hits
        ]
        if as_of is not None:
            pool = [c for c in pool if c.record.valid_at(as_of)]
        else:
            pool = _inherit_relevance(self._with_heads(pool, vector, scope))
        notes: dict[str, str] = {}
        pool = self._with_links(pool, vector, scope, notes, as_of=as_of, read=first)
        # one candidate per record (the last word on it), in the order first met
        pool = list({c.record.id: c for c in pool if not _asks_itself(c.record, query)}.values())
        scores = score_pool(pool, query=query, now=now, config=config, signals=self._signals)
        totals = scores.totals.copy()
        if as_of is None:
            _keep_order(pool, totals, notes)
        return _Ranked(pool, scores, totals, notes)

    def _score(
        self,
        records: Sequence[Record],
        vector: Vectors,
        query: str,
        now: datetime,
        best: float | None,
        known: Mapping[str, Vectors],
    ) -> list[RecallItem]:
        """Score records shown without a search (hot and recent ones), gated against the
        best relevance the search found (``known``: vectors already read, by id)."""
        candidates = [
            Candidate(c.record, c.similarity, _keyword_match(query, c.record))
            for c in self._as_candidates(list(records), vector, known)
        ]
        scores = score_candidates(
            candidates, query=query, now=now, config=self._config, signals=self._signals, best=best
        )
        return [RecallItem(c.record, s) for c, s in zip(candidates, scores)]

    def _with_heads(self, pool: list[Candidate], vector: Vectors, scope: Scope) -> list[Candidate]:
        """Add what superseded each superseded candidate, so the current fact competes:
        one read per step along the chains, for every chain at once."""
        have = {c.record.id for c in pool}
        missing: list[Record] = []
        wanted = {c.record.superseded_by for c in pool if c.record.superseded_by} - have
        for _ in range(_MAX_CHAIN):
            if not wanted:
                break
            found = [
                r
                for r in self._backend.get_records(sorted(wanted))
                if r.status is Status.ACTIVE and scope.contains(r.scope) and r.id not in have
            ]
            missing.extend(found)
            have.update(r.id for r in found)
            wanted = {r.superseded_by for r in found if r.superseded_by} - have
        return pool + self._as_candidates(missing, vector)

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
            links = self._backend.links_of(list(seeds), min_weight=config.link_min_weight)
        reach: dict[str, tuple[str, float]] = {}
        for link in sorted(links, key=lambda k: -k.weight):
            for seed, other in ((link.a, link.b), (link.b, link.a)):
                if seed in seeds and other not in seeds and other not in reach:
                    reach[other] = (seed, seeds[seed].similarity * link.weight)
        chosen = dict(list(reach.items())[: config.link_expand])
        in_pool = {c.record.id: c for c in pool}
        outside = [
            r
            for r in self._backend.get_records([r for r in chosen if r not in in_pool])
            if r.status is Status.ACTIVE
            and scope.contains(r.scope)
            and (as_of is None or r.valid_at(as_of))
        ]
        reached = {c.record.id: c for c in self._as_candidates(outside, vector)}
        reached.update({rid: in_pool[rid] for rid in chosen if rid in in_pool})
        out = [c for c in pool if c.record.id not in reached]
        for rid, candidate in reached.items():
            seed, carried = chosen[rid]
            if carried > candidate.similarity:
                notes[rid] = f"linked from {seed}"
                candidate = Candidate(candidate.record, carried, candidate.keyword)
            out.append(candidate)
        return out

    def _as_candidates(
        self, records: list[Record], vector: Vectors, known: Mapping[str, Vectors] | None = None
    ) -> list[Candidate]:
        if not records:
            return []
        known = known or {}
        unread = [r.id for r in records if r.id not in known]
        if len(unread) == len(records):
            matrix = self._backend.get_vectors(unread)
        else:  # some came with the records: the rest are read, in order
            rest = iter(self._backend.get_vectors(unread) if unread else ())
            matrix = np.stack([known[r.id] if r.id in known else next(rest) for r in records])
        sims = matrix @ vector
        return [Candidate(r, float(s)) for r, s in zip(records, np.atleast_1d(sims))]


def _pool_limit(config: Config, top_k: int | None, budget: int) -> int:
    """How many candidates the search brings, per method. Without ``top_k`` the pool is
    sized by the budget (at least ``pool_min``): about as many notes as it can show, from
    the vector search and as many again from the keyword search. A deeper pool only adds
    weaker candidates the budget has no room for (on LoCoMo's development split a pool of
    50 lost no evidence against one of 125, on either conversation or embedder)."""
    if top_k is None:
        return max(config.pool_min, budget // _TOKENS_PER_NOTE)
    return config.pool_size(top_k)


def _keyword_match(query: str, record: Record) -> float:
    """The share of the question's words a record's keyword text holds, in [0, 1]: bounded
    and comparable across questions and backends, unlike the BM25 that found it."""
    return keyword_coverage(query, search_text(record.text, record.tags))


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


def _keep_order(pool: Sequence[Candidate], totals: np.ndarray, notes: dict[str, str]) -> None:
    """Two rules the score alone cannot break: a superseded record never outranks
    the record that superseded it, and a summary never outranks a note it was
    derived from. A record that would is scored just below the one it must follow
    (``totals`` is lowered in place)."""
    at = {c.record.id: n for n, c in enumerate(pool)}
    for n in sorted(range(len(pool)), key=lambda n: pool[n].record.kind.authority):
        record = pool[n].record
        above = [at[s] for s in record.provenance if s in at and s != record.id]
        if record.superseded_by is not None and record.superseded_by in at:
            above.append(at[record.superseded_by])
        if above:
            ceiling = min(float(totals[a]) for a in above)
            if totals[n] >= ceiling:
                totals[n] = ceiling * 0.999


class _Ranked:
    """A scored pool, best first; its items are made only for what a recall keeps."""

    def __init__(
        self,
        pool: Sequence[Candidate],
        scores: PoolScores,
        totals: np.ndarray,
        notes: dict[str, str],
    ) -> None:
        self._pool = pool
        self._scores = scores
        self._totals = totals
        self._notes = notes
        self._order = np.argsort(-totals, kind="stable").tolist()
        self._at = {c.record.id: n for n, c in enumerate(pool)}
        self.best = scores.best

    def item(self, n: int) -> RecallItem:
        record = self._pool[n].record
        score = self._scores.score(n, total=float(self._totals[n]))
        return RecallItem(record, score, self._notes.get(record.id))

    def record(self, n: int) -> Record:
        return self._pool[n].record

    def relevant(self, *, top_k: int | None, floor: float) -> list[int]:
        """The candidates relevant enough to show, best first (the first ``top_k``), with
        what superseded any of them: a superseded record is never shown without what
        replaced it (the current value joins, scored as it is)."""
        semantic = self._scores.semantic
        chosen = [n for n in self._order if semantic[n] >= floor]
        if top_k is not None:
            chosen = chosen[:top_k]
        shown = set(chosen)
        for n in list(chosen):
            successor = self._at.get(self._pool[n].record.superseded_by or "")
            if successor is not None and successor not in shown:
                chosen.append(successor)
                shown.add(successor)
        chosen.sort(key=lambda n: -self._totals[n])
        return chosen


def _within_budget(relevant: list[Record], budget: int) -> int:
    """How many of the best relevant records to consider: as many as the budget could
    show and a few more. The rest of the pool is never packed, so nothing more is spent
    on it (flags, excerpts, lines). A line costs at least its text's tokens; past the
    budget, ``_LOOKAHEAD`` more stay, so a short line may still fill what a long one
    left free."""
    spent = 0
    for n, record in enumerate(relevant):
        if spent >= budget:
            return min(len(relevant), n + _LOOKAHEAD)
        spent += record_line_cost(record.text)
    return len(relevant)


def _authority_order(items: list[RecallItem]) -> list[RecallItem]:
    """Evidence first: within the relevant section notes precede summaries and procedures
    (so a summary never precedes a note it was derived from), each kind in the order it
    was written, so the notes of one day share one heading."""
    return sorted(items, key=lambda i: (i.record.kind.authority, i.record.created_at))


def _flag_note(item: RecallItem, flags: Sequence[Disagreement]) -> RecallItem:
    others = [
        f.second if f.first == item.record.id else f.first
        for f in flags
        if item.record.id in (f.first, f.second)
    ]
    note = "disagrees with " + ", ".join(others) + (f"; {item.note}" if item.note else "")
    return replace(item, note=note)


def _holding(
    record: Record | None, have: Mapping[str, Record], as_of: datetime | None
) -> Record | None:
    """``record``, or what replaced it in the end (as of ``as_of``: itself, if it held)."""
    for _ in range(_MAX_CHAIN):
        if record is None or record.superseded_by is None:
            return record
        if as_of is not None:
            return record if record.valid_at(as_of) else None
        record = have.get(record.superseded_by)
    return None


def _newer_first(items: list[RecallItem], flags: Sequence[Disagreement]) -> list[RecallItem]:
    """The items in score order, but a replaced statement after what replaced it, and the
    older of two disputed ones after the newer: a change the rules were not sure of is
    still more likely to hold than what it changed (the last moves win)."""
    by_id = {i.record.id: i for i in items}
    pairs = [
        (i.record.superseded_by, i.record.id) for i in items if i.record.superseded_by in by_id
    ]
    for flag in flags:
        if flag.first in by_id and flag.second in by_id:
            a, b = by_id[flag.first].record, by_id[flag.second].record
            pairs.append((a.id, b.id) if a.created_at >= b.created_at else (b.id, a.id))
    order = [i.record.id for i in items]
    for _ in range(len(pairs) + 1):  # each pass settles at least one pair, or none is left
        moved = False
        for first, then in pairs:
            if order.index(then) < order.index(first):
                order.remove(then)
                order.insert(order.index(first) + 1, then)
                moved = True
        if not moved:
            break
    return [by_id[rid] for rid in order]


def _with_note(item: RecallItem, note: str | None) -> RecallItem:
    return item if note is None else replace(item, note=_joined(note, item.note))


def _joined(*notes: str | None) -> str | None:
    said = [n for n in notes if n]
    return "; ".join(said) if said else None


def _day(when: datetime) -> str:
    return f"{when.day} {when:%B %Y}"


_GIST_WORDS = 10
_GIST_NAMES = 4


def _gist(record: Record, old: Record) -> str:
    """What replaced a statement, briefly: its value, else the names and numbers it says
    that the old one did not ("Skoda Octavia", "the Mater"), else its first words."""
    if record.tags.value:
        return record.tags.value
    known = {w.lower() for w in WORD.findall(old.text)}
    names = [
        w
        for sentence in sentences(record.text)
        for w in WORD.findall(sentence)[1:]
        if (w[:1].isupper() or w[:1].isdigit()) and w.lower() not in known | {"user"}
    ]
    if names:
        return " ".join(dict.fromkeys(names[:_GIST_NAMES]))
    text = record.text.removeprefix("The user ").rstrip(".")
    words = text.split()
    return " ".join(words[:_GIST_WORDS]) + ("…" if len(words) > _GIST_WORDS else "")


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


def _unscored(record: Record) -> RecallItem:
    """An item for a record with no vector to score (never the case for a healthy store)."""
    return RecallItem(record, Score(0.0, 0.0, 0.0, 0.0, record.importance, 0.0))


def _hot_note(record: Record) -> str | None:
    return "pinned" if record.pinned else None


def _text_lines(text: str, priority: float) -> list[Line]:
    return [
        Line(neutralise(line), priority - n / 1000)
        for n, line in enumerate(text.splitlines())
        if line.strip()
    ]
