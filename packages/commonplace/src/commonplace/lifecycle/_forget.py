"""The right to be forgotten: a record, its evidence and everything derived from it.

Unlike decay, this removes episodes too: when a user asks to forget something,
the turn that said it goes with the note, and so does every summary or
procedure built on that note, and every other note derived from the same turn.
And it erases: nothing of the words stays in the store's files (the backend's
``delete(erase=True)``), its recall and audit logs keep ids, not words, and the cards
written from a removed note are rewritten from what remains.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from .._records import Episode, Kind, Status, search_text
from .._scope import Scope
from .._text import content_terms
from ..errors import NotFoundError
from ..stores import PROFILE_CARD, ROLLING_SUMMARY, Card, RecordQuery, Store
from ..stores._erasure import owner_of
from ..stores._store import ALL_KINDS, ALL_STATUSES


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """What was removed, by id."""

    records: tuple[str, ...] = ()
    episodes: tuple[str, ...] = ()

    @property
    def removed(self) -> tuple[str, ...]:
        return self.episodes + self.records


def forget(
    backend: Store,
    record_id: str,
    *,
    scope: Scope,
    include_evidence: bool,
    rewrite_card: Callable[[Scope, str], object],
) -> ForgetReport:
    """Erase a record (or an episode), what derives from it and, with ``include_evidence``,
    the episodes it was written from: the rows, and every word of them anywhere else in
    the store (the full-text index, freed pages, the log, recall and audit logs, cards).

    Without ``include_evidence`` the episodes stay as they were said: the user asked to
    forget the note, not the turn, which keeps its own words (and only it)."""
    episode = backend.get_episode(record_id)
    record = None if episode is not None else backend.get_record(record_id, any_status=True)
    owner = episode.scope if episode is not None else (record.scope if record else None)
    if owner is None or not scope.contains(owner):
        raise NotFoundError(f"no record or episode with id {record_id!r} in scope {scope}")
    episodes: set[str] = {record_id} if isinstance(episode, Episode) else set()
    if record is not None and include_evidence:
        episodes |= {s for s in record.provenance if backend.get_episode(s) is not None}
    doomed = derived_closure(backend, set(episodes) | ({record.id} if record else set()))
    doomed -= episodes
    records = backend.get_records(doomed)
    turns = backend.get_episodes(episodes)
    # the words that go: what the removed records and turns say (a kept record keeps its
    # own words; only logs, which hold no memory, lose a question that shares one)
    terms: set[str] = set()
    for r in records:
        terms |= content_terms(search_text(r.text, r.tags))
    for e in turns:
        terms |= content_terms(e.text)
    notes = {r.scope for r in records if r.kind is Kind.NOTE}
    # a card written from a removed note is rewritten when it holds any of its words (one
    # that holds none stays as it is: rewriting reads every note of its scope)
    rebuild = [
        (card, kind)
        for card, kind in _cards_to_rebuild(backend, notes, outside=None)
        if _mentions(backend.books.get_card(card, kind), terms, doomed | episodes)
    ]
    owners = {owner_of(r.scope) for r in records} | {owner_of(e.scope) for e in turns}
    backend.erasure.erase_mentions(doomed | episodes, terms, owners)
    backend.erasure.drop_cards(rebuild)
    removed = backend.erasure.erase(sorted(doomed), sorted(episodes))
    for card, kind in rebuild:  # from what remains: the old card may have held the words
        rewrite_card(card, kind)
    return ForgetReport(tuple(removed["records"]), tuple(removed["episodes"]))


def forget_scope(
    backend: Store, scope: Scope, *, rewrite_card: Callable[[Scope, str], object]
) -> dict[str, int]:
    """Remove everything visible in ``scope`` and what derives from it elsewhere; then
    rebuild, from what remains, the cards of broader scopes that its notes fed."""
    noted = {
        r.scope
        for r in backend.iter_records(
            RecordQuery(scope=scope, kinds=(Kind.NOTE,), statuses=tuple(Status))
        )
    }
    # the cards outside the forgotten scope that were written from its notes: the
    # backend drops them, and they are rebuilt from what remains
    rebuild = _cards_to_rebuild(backend, noted, outside=scope)
    counts = delete_scope(backend, scope)
    for card, kind in rebuild:  # from scratch: the old card held what was just forgotten
        rewrite_card(card, kind)
    return counts


def _cards_to_rebuild(
    backend: Store, note_scopes: set[Scope], *, outside: Scope | None
) -> list[tuple[Scope, str]]:
    """The cards (profile cards, rolling summaries) written from notes of ``note_scopes``
    that exist, but those inside ``outside``, in a stable order."""
    return [
        (card, kind)
        for card in sorted({c for n in note_scopes for c in cards_fed_by(n)}, key=Scope.parts)
        if outside is None or not outside.contains(card)
        for kind in (PROFILE_CARD, ROLLING_SUMMARY)
        if backend.books.get_card(card, kind) is not None
    ]


def _mentions(card: Card | None, terms: set[str], ids: set[str]) -> bool:
    if card is None:
        return False
    said = f"{card.text} {json.dumps(dict(card.data), ensure_ascii=False, default=str)}"
    return bool(content_terms(said) & terms) or any(i in said for i in ids)


def derived_closure(store: Store, ids: set[str]) -> set[str]:
    """``ids`` and every record derived from them, transitively (summaries of notes,
    procedures of summaries): what must go when they go."""
    doomed = set(ids)
    frontier = set(ids)
    while frontier:
        derived = set(store.derived_from(frontier)) - doomed
        doomed |= derived
        frontier = derived
    return doomed


def delete_scope(store: Store, scope: Scope) -> dict[str, int]:
    """Remove everything visible in ``scope`` and every trace of it elsewhere: records
    derived from its records (transitively), its ledger entries, the audit entries,
    conflicts and use log naming a removed record, and the cards of broader scopes
    written from its notes (the caller rebuilds them). Nothing of it stays readable in
    the store, indexes included. Returns counts per part."""
    rows = list(
        store.iter_records(RecordQuery(scope=scope, kinds=ALL_KINDS, statuses=ALL_STATUSES))
    )
    doomed = derived_closure(store, {r.id for r in rows})
    episodes: list[str] = []
    before: str | None = None
    while page := store.recent_episodes(scope, limit=1000, before=before):
        episodes += [e.id for e in page]
        before = page[-1].id
    # the ledger first, so that erasing the records last also erases what it freed
    counts = store.erasure.forget_scope_entries(scope)
    counts["audit"] += store.erasure.forget_traces(doomed, {r.scope for r in rows})
    # recall logs of broader scopes that retrieved what goes keep their ids, not questions
    store.erasure.erase_mentions(doomed | set(episodes), (), ())
    removed = store.backend.delete(records=doomed, episodes=episodes, erase=True)
    return {"records": len(removed["records"]), "episodes": len(removed["episodes"]), **counts}


def cards_fed_by(note_scope: Scope) -> set[Scope]:
    """The scopes whose cards may have been written from a note of ``note_scope``: its
    own, and the broader ones of its chain (without the thread, without the agent)."""
    out = set()
    for agent in {note_scope.agent, None}:
        for thread in {note_scope.thread, None}:
            if note_scope.user is None and agent is None and thread is None:
                continue
            card = Scope(user=note_scope.user, agent=agent, thread=thread)
            if card.owns(note_scope):
                out.add(card)
    return out
