"""The recall compiler: from a query to ranked records and a budgeted context.

No model is called here, the embedding of the query aside. A recall runs in three
stages, each taking what the one before gave:

1. candidates (``_candidates.py``): the profile card, rolling summary, hot records and
   the last few notes are always considered; past ``search_min_notes`` a hybrid (vector
   + keyword) search finds candidates, and supersession heads and one hop of strong
   links join them. Gives :class:`Candidates`.
2. rank (``_rank.py``): the pool is scored as arrays (the four-signal rerank and its
   gate), superseded facts are kept below what replaced them, and the best are kept,
   no more than the budget could show. Gives a :class:`Ranking`.
3. compile (here): contradictions are flagged, excerpts and past values noted, and
   everything is compiled into one token-budgeted block in authority order. Gives the
   :class:`Recall`, which is then logged for feedback.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from .._config import Config
from .._records import Kind, Record, Status
from .._scope import Scope
from .._text import WORD, sentences
from ..embedders._protocol import Embedder
from ..stores import RecallLog, Store
from ._candidates import MAX_CHAIN, CandidateReader, Candidates, CardAsOf, Request
from ._context import Line, Section, compile_context, neutralise, record_line
from ._excerpts import EXCERPT_NOTES, MAX_TURNS_PER_NOTE, excerpts_for
from ._flags import find_disagreements
from ._rank import Ranker, Ranking
from ._recall import Disagreement, Recall, RecallItem
from ._signals import Score, ScoreSignal

_DEFAULT_K = 10


class RecallCompiler:
    """Builds a :class:`Recall`; one per Memory, stateless between calls."""

    def __init__(
        self,
        *,
        store: Store,
        embedder: Embedder,
        config: Config,
        signals: Sequence[ScoreSignal],
        card_as_of: CardAsOf | None = None,
    ) -> None:
        """``card_as_of(scope, when, kind)``: the text of a card (the profile card, a
        thread's rolling summary) as it was at ``when``, shown by a recall ``as_of`` then
        (without it, such a recall shows none: today's would tell the past what it did
        not know yet)."""
        self._store = store
        self._config = config
        self._reader = CandidateReader(
            store=store, embedder=embedder, config=config, card_as_of=card_as_of
        )
        self._ranker = Ranker(store=store, config=config, signals=signals)

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
        """The three stages, one after the other, and the recall logged."""
        request = Request(query, scope, top_k, budget, now, as_of)
        found = self._reader.read(request)
        ranking = self._ranker.rank(request, found)
        recall = self.compile(request, found, ranking)
        self._log(recall)
        return recall

    # -- the compile stage ------------------------------------------------------------

    def compile(self, request: Request, found: Candidates, ranking: Ranking) -> Recall:
        """The :class:`Recall` of ``request``: the ranked relevant records with the other
        side of each dispute naming a shown record (scored as the rank stage scores), each
        flagged, quoted and dated as its line needs, packed into ``budget`` tokens with
        the cards, the hot records and the recent notes. Reads the disputes, the turns
        the excerpts come from and what replaced a superseded record; writes nothing."""
        scope, as_of = request.scope, request.as_of
        hot, recent = found.hot, found.recent
        relevant = list(ranking.relevant)
        # everything the context may show is checked, whatever section it lands in
        considered = {r.id: r for r in [*(i.record for i in relevant), *hot, *recent]}
        disputed, partners = self._disputes(considered, scope, as_of, found)
        relevant += self._ranker.score(partners, request, found, best=ranking.best)
        considered.update((r.id, r) for r in partners)
        logical = find_disagreements(list(considered.values()))
        known = {(f.first, f.second) for f in logical} | {(f.second, f.first) for f in logical}
        # a dispute marks its two lines; only a logical contradiction also takes a line of
        # its own (on long conversations those lines cost more evidence than they give)
        flags = logical + [d for d in disputed if (d.first, d.second) not in known]
        flagged = {rid for d in flags for rid in (d.first, d.second)}
        relevant = [_flag_note(i, flags) if i.record.id in flagged else i for i in relevant]
        relevant = self._with_excerpts(request.query, relevant, scope, found)
        shown = {i.record.id for i in relevant} | {r.id for r in hot}
        fresh = [r for r in recent if r.id not in shown]
        # a replaced statement is shown as past, with what replaced it, in every section
        past = {} if as_of is not None else self._past_notes([*considered.values()], scope)
        relevant = [_with_note(i, past.get(i.record.id)) for i in relevant]
        text, included, tokens = compile_context(
            _sections(found, logical, relevant, fresh, past), budget_tokens=request.budget
        )
        kept = set(included)
        items = [i for i in relevant if i.record.id in kept] + [
            replace(ranking.unsearched.get(r.id) or _unscored(r), section=section)
            for section, records in (("hot", hot), ("recent", fresh))
            for r in records
            if r.id in kept
        ]
        items.sort(key=lambda i: -i.score.total)
        items = _newer_first(items, flags)
        # what the search put forward is the few best relevant notes, not everything the
        # budget had room for: those count as ignored when unused
        put_forward = [i for i in items if i.section == "relevant" and i.score.gate > 0][
            : request.top_k or _DEFAULT_K
        ]
        return Recall(
            id="rc_" + uuid.uuid4().hex[:24],
            query=request.query,
            scope=scope,
            at=request.now,
            items=tuple(items),
            recent=recent,
            text=text,
            tokens=tokens,
            included=tuple(included),
            hot=hot,
            profile=found.profile,
            summary=found.summary,
            disagreements=tuple(flags),
            searched=found.searched,
            as_of=as_of,
            retrieved=tuple(i.record.id for i in put_forward),
        )

    def _log(self, recall: Recall) -> None:
        """Log ``recall`` (what feedback on it counts) and touch what it accessed."""
        retrieved = set(recall.retrieved)
        put_forward = [
            i for i in recall.items if i.section == "relevant" and i.record.id in retrieved
        ]
        # Only the records put forward about as relevant as the best (whole gate) count as
        # accessed: touching every near miss each time it is shown would refresh its
        # recency until an old rival looks as fresh as the update that replaced it.
        accessed = [i.record.id for i in put_forward if i.score.gate >= 1.0]
        if not self._config.touch_on_recall or recall.as_of is not None:
            accessed = []
        self._store.books.log_recall(
            RecallLog(
                recall.id,
                recall.scope,
                recall.at,
                recall.retrieved,
                shown_ids=tuple(dict.fromkeys(recall.included)),
                query=recall.query,
                scores={i.record.id: i.score.breakdown() for i in put_forward},
            ),
            accessed=accessed,
        )

    def _disputes(
        self,
        considered: Mapping[str, Record],
        scope: Scope,
        as_of: datetime | None,
        candidates: Candidates,
    ) -> tuple[list[Disagreement], list[Record]]:
        """The disputes naming a record the context may show (as of ``as_of``), and the
        other side of each when it is not among them: both are shown, both marked. A side
        replaced since stands for what replaced it (the chain's head): "moved my account
        to Revolut" disputed "I bank with Millennium", and Santander replaced Revolut.
        The disputes read with the ``candidates`` serve when they cover ``considered``."""
        if considered.keys() <= candidates.disputed:
            named = [
                d for d in candidates.disputes if d.newer in considered or d.older in considered
            ]
        else:
            named = self._store.books.disputes_of(list(considered))
        found = [d for d in named if as_of is None or d.at <= as_of]
        if not found:
            return [], []
        have: dict[str, Record] = dict(considered)
        wanted = {rid for d in found for rid in (d.newer, d.older)} - have.keys()
        for _ in range(MAX_CHAIN):
            if not wanted:
                break
            read = [
                r
                for r in self._store.get_records(sorted(wanted))
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
        known.update((r.id, r) for r in self._store.get_records(wanted))
        out: dict[str, str] = {}
        for record in superseded:
            successor = known.get(record.superseded_by or "")
            if successor is not None and not scope.contains(successor.scope):
                successor = None
            until = f"until {_day(record.valid_to)}" if record.valid_to else "replaced"
            out[record.id] = until + (f"; then: {_gist(successor, record)}" if successor else "")
        return out

    def _with_excerpts(
        self, query: str, relevant: list[RecallItem], scope: Scope, read: Candidates
    ) -> list[RecallItem]:
        """The best notes, each with the excerpt of its turn it needs (if any; the turns
        ``read`` with the candidates serve when they are all those needed)."""
        best = sorted(
            (i for i in relevant if i.record.kind is Kind.NOTE), key=lambda i: -i.score.total
        )[:EXCERPT_NOTES]

        # one read for every turn an excerpt may come from, not one per turn
        wanted = {e for i in best for e in i.record.provenance[-MAX_TURNS_PER_NOTE:]}
        if wanted <= read.turns_read:
            turns = [read.turns[e] for e in wanted if e in read.turns]
        else:
            turns = self._store.get_episodes(wanted)
        visible = {e.id: e for e in turns if scope.contains(e.scope)}
        found = excerpts_for(query, [i.record for i in best], visible.get)
        return [
            replace(i, excerpt=found[i.record.id]) if i.record.id in found else i for i in relevant
        ]


def _sections(
    found: Candidates,
    logical: Sequence[Disagreement],
    relevant: Sequence[RecallItem],
    fresh: Sequence[Record],
    past: Mapping[str, str],
) -> list[Section]:
    """The context's sections, each line with the priority it is packed by: the cards,
    the contradictions, the hot records, then the relevant notes before the recent ones
    (``fresh``: those not shown already). ``past`` says of each superseded record when
    it stopped holding and what replaced it."""
    return [
        Section("Profile", _text_lines(found.profile, 6.0), share=0.2),
        Section("Conversation so far", _text_lines(found.summary, 5.0), share=0.2),
        Section("Disagreements", [Line(f"! {neutralise(d.reason)}", 4.5) for d in logical]),
        Section(
            "Always remembered",
            [
                record_line(r, 4.0 - n / 1000, _joined(_hot_note(r), past.get(r.id)))
                for n, r in enumerate(found.hot)
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


def _authority_order(items: Sequence[RecallItem]) -> list[RecallItem]:
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
    for _ in range(MAX_CHAIN):
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
