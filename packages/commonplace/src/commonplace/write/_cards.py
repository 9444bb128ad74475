"""Keeping the profile card and the rolling summaries up to date after writes.

Both are rewritten every ``ProfileRules.rewrite_every`` new notes (and on
demand), from notes only: what the assistant said can never reach them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import pluggy

from .._config import ProfileRules
from .._records import Kind, Record, Tier
from .._scope import Scope, owner_scope
from .._tokens import count_tokens
from ..errors import PluginError
from ..stores import (
    PROFILE_CARD,
    ROLLING_SUMMARY,
    Card,
    LedgerEntry,
    RecordQuery,
    Store,
    TurnWrite,
)
from ..stores._entries import card_entry
from ._profile import ProfileCard, enforce_sticky, render_card, update_card

_RECENT_FOR_VOICE = 20
# how many of the notes that held at a past date the card as of then is written from
_AS_OF_NOTES = 2_000
_AN_INSTANT = timedelta(microseconds=1)


class CardKeeper:
    """Rewrites profile cards and rolling summaries when enough new notes arrived."""

    def __init__(self, *, store: Store, rules: ProfileRules, hooks: pluggy.HookRelay) -> None:
        self._store = store
        self._rules = rules
        self._hooks = hooks

    def planned(
        self,
        scopes: Iterable[Scope],
        *,
        now: datetime,
        changed: Iterable[Scope] = (),
        writes: Sequence[TurnWrite],
    ) -> list[LedgerEntry]:
        """The cards to rewrite after ``writes`` (the new turns of a batch not applied yet),
        as the ledger entries the batch carries, so that notes and cards are committed
        together: those enough new notes reached, and, in ``changed`` (the scopes where a
        note replaced or disputed an older one), those written at all (a card holding the
        replaced value would show it as current). Read from the store as the batch will
        leave it (:class:`PendingWrite`)."""
        pending = PendingWrite(self._store, writes)
        scopes = list(scopes)
        forced = set(changed)
        cards = []
        for scope in {owner_scope(s) for s in scopes}:
            force = any(scope.owns(c) for c in forced)
            cards.append(self._maybe_rewrite(pending, scope, PROFILE_CARD, now, force=force))
        for scope in {s for s in scopes if s.thread is not None}:
            cards.append(
                self._maybe_rewrite(pending, scope, ROLLING_SUMMARY, now, force=scope in forced)
            )
        return [card_entry(c) for c in cards if c is not None]

    def profile(self, scope: Scope) -> ProfileCard:
        card = self._store.books.get_card(owner_scope(scope), PROFILE_CARD)
        return ProfileCard.from_json(dict(card.data.get("card", {}))) if card else ProfileCard()

    def rewrite(self, scope: Scope, kind: str, *, now: datetime) -> Card:
        """Rewrite one card from the notes it has not seen yet."""
        written = self._rewritten(self._store, scope, kind, now=now)
        self._store.books.put_card(written)
        return written

    def _rewritten(
        self,
        store: Store | PendingWrite,
        scope: Scope,
        kind: str,
        *,
        now: datetime,
        total: int | None = None,
    ) -> Card:
        """One card rewritten from the notes it has not seen yet (not stored); ``total``:
        the scope's note count, when the caller has just counted them (a count reads every
        note)."""
        existing = store.books.get_card(scope, kind)
        seen = int(existing.data.get("notes_seen", 0)) if existing else 0
        total = self._count(store, scope) if total is None else total
        new = list(reversed(self._notes(store, scope, limit=max(0, total - seen))))
        if kind == PROFILE_CARD:
            previous = (
                ProfileCard.from_json(dict(existing.data.get("card", {})))
                if existing
                else ProfileCard()
            )
            recent = self._notes(store, scope, limit=_RECENT_FOR_VOICE)
            replaced = self._replaced(store, new)
            proposed = self._hooks.commonplace_rewrite_profile(card=previous, notes=new)
            floor = None
            if proposed is None:
                proposed = update_card(previous, new, recent, replaced=replaced)
                # the rule rewrite is its own floor: recent notes only set its voice
                floor = dataclasses.replace(proposed, voice=())
            if not isinstance(proposed, ProfileCard):
                raise PluginError("commonplace_rewrite_profile must return a ProfileCard or None")
            card = enforce_sticky(previous, proposed, new, floor=floor, replaced=replaced)
            text = render_card(card, max_tokens=self._rules.card_tokens)
            data = {"card": card.to_json(), "notes_seen": total}
        else:
            text = rolling_summary(
                self._notes(store, scope, limit=30),
                max_tokens=self._rules.summary_tokens,
            )
            data = {"notes_seen": total}
        return Card(scope, kind, text, now, data)

    def as_of(self, scope: Scope, when: datetime, kind: str = PROFILE_CARD) -> str:
        """The profile card (or the thread's rolling summary) as it was at ``when``:
        written by the rules from the notes that held then (the newest ``_AS_OF_NOTES``
        of them), or "" when none did. Cards are not kept per day: this is what the rules
        make of the memory as it stood."""
        owner = owner_scope(scope) if kind == PROFILE_CARD else scope
        notes = [
            r
            for r in self._store.iter_records(
                RecordQuery(scope=owner, created_before=when + _AN_INSTANT)
            )
            if owner.owns(r.scope) and r.valid_at(when)
        ]
        notes = sorted(notes, key=lambda r: r.created_at)[-_AS_OF_NOTES:]
        if not notes:
            return ""
        if kind == ROLLING_SUMMARY:
            return rolling_summary(notes[::-1][:30], max_tokens=self._rules.summary_tokens)
        card = update_card(ProfileCard(), notes, notes[::-1][:_RECENT_FOR_VOICE])
        return render_card(card, max_tokens=self._rules.card_tokens)

    def _replaced(
        self, store: Store | PendingWrite, notes: Sequence[Record]
    ) -> dict[str, list[Record]]:
        """By note id, the records each of ``notes`` replaced or disputed (one read)."""
        # a disputed value leaves the card too: the card holds what is sure, and the notes
        # show both sides, marked
        wanted = {
            n.id: [*n.data.get("replaces", {}), *n.data.get("disputes", {})]
            for n in notes
            if n.data.get("replaces") or n.data.get("disputes")
        }
        if not wanted:
            return {}
        found = {r.id: r for r in store.get_records({i for ids in wanted.values() for i in ids})}
        return {nid: [found[i] for i in named if i in found] for nid, named in wanted.items()}

    def _maybe_rewrite(
        self, store: Store | PendingWrite, scope: Scope, kind: str, now: datetime, *, force: bool
    ) -> Card | None:
        existing = store.books.get_card(scope, kind)
        seen = int(existing.data.get("notes_seen", 0)) if existing else 0
        total = self._count(store, scope)
        if total - seen >= self._rules.rewrite_every or (force and existing is not None):
            return self._rewritten(store, scope, kind, now=now, total=total)
        return None

    # A card is written from its owner's notes only. With a user, containment is exactly
    # that. Without one (an anonymous run under an agent) containment would pull in every
    # user's notes under the agent, so those are read and filtered by the scope chain.

    @staticmethod
    def _notes(store: Store | PendingWrite, scope: Scope, *, limit: int) -> list[Record]:
        """The newest ``limit`` notes the card of ``scope`` is written from, newest first."""
        if scope.user is not None or limit <= 0:
            return store.recent_records(scope, kinds=(Kind.NOTE,), limit=limit)
        fetch = limit
        while True:
            found = store.recent_records(scope, kinds=(Kind.NOTE,), limit=fetch)
            mine = [r for r in found if scope.owns(r.scope)]
            if len(mine) >= limit or len(found) < fetch:
                return mine[:limit]
            fetch *= 4

    @staticmethod
    def _count(store: Store | PendingWrite, scope: Scope) -> int:
        if scope.user is not None:
            return store.count(scope, Kind.NOTE)
        notes = store.iter_records(RecordQuery(scope=scope))
        return sum(1 for r in notes if scope.owns(r.scope))


class PendingWrite:
    """The store as a write batch will leave it, for the cards the batch rewrites: its
    new notes (stored after every note there is: the newest), and what its turns change
    in stored notes (a supersession ends one, a merge gives one new tags). Only the reads
    a card is written from."""

    def __init__(self, store: Store, turns: Sequence[TurnWrite]) -> None:
        self._store = store
        self.books = store.books  # the batch writes no card until it is applied
        self._new: list[Record] = []
        self._patch: dict[str, dict[str, Any]] = {}
        for turn in turns:
            at = turn.episode.at
            note = turn.note
            if note is not None and turn.superseded_at is not None:
                newer, when = turn.superseded_at
                note = dataclasses.replace(
                    note, valid_to=when, superseded_by=newer, tier=Tier.COLD, tier_since=when
                )
            if note is None:
                if turn.merge_into is not None and turn.merged_tags is not None:
                    self._patch.setdefault(turn.merge_into, {})["tags"] = turn.merged_tags
                continue
            self._new.append(note)
            for old in turn.supersedes:
                fields = self._patch.setdefault(old, {})
                if "superseded_by" not in fields:  # the first replacement holds, as stored
                    fields.update(valid_to=at, superseded_by=note.id, tier=Tier.COLD, tier_since=at)

    def _patched(self, records: Iterable[Record]) -> list[Record]:
        out = []
        for r in records:
            fields = self._patch.get(r.id)
            out.append(dataclasses.replace(r, **fields) if fields else r)
        return out

    def _mine(self, scope: Scope) -> list[Record]:
        """The batch's new notes visible in ``scope``, newest first."""
        return [r for r in reversed(self._new) if scope.contains(r.scope)]

    def get_card(self, scope: Scope, kind: str) -> Card | None:
        return self._store.books.get_card(scope, kind)

    def get_records(self, record_ids: Collection[str]) -> list[Record]:
        wanted = set(record_ids)
        new = [r for r in self._new if r.id in wanted]
        return self._patched(self._store.get_records(wanted - {r.id for r in new})) + new

    def recent_records(self, scope: Scope, *, kinds: Collection[Kind], limit: int) -> list[Record]:
        mine = self._mine(scope) if Kind.NOTE in kinds else []
        stored = (
            self._store.recent_records(scope, kinds=kinds, limit=limit) if limit > len(mine) else []
        )
        return (mine + self._patched(stored))[:limit]

    def count(self, scope: Scope, kind: Kind) -> int:
        return self._store.count(scope, kind) + (len(self._mine(scope)) if kind is Kind.NOTE else 0)

    def iter_records(self, query: RecordQuery) -> Iterator[Record]:
        yield from self._patched(self._store.iter_records(query))
        if query.scope is not None and Kind.NOTE in query.kinds:
            yield from reversed(self._mine(query.scope))


def rolling_summary(newest_first: list[Record], *, max_tokens: int) -> str:
    """The thread so far in a few notes: the most important first, shown in order."""
    chosen: list[Record] = []
    spent = count_tokens("Earlier in this thread:")
    # only what still holds: nothing replaced, nothing a newer note disputes
    doubted = {rid for n in newest_first for rid in n.data.get("disputes", {})}
    current = [n for n in newest_first if n.superseded_by is None and n.id not in doubted]
    for note in sorted(current, key=lambda n: -n.importance):
        cost = count_tokens(" " + note.text)
        if spent + cost <= max_tokens:
            chosen.append(note)
            spent += cost
    chosen.sort(key=lambda n: n.created_at)
    if not chosen:
        return ""
    return "Earlier in this thread: " + " ".join(n.text for n in chosen)
