"""Removing records and episodes for good, and what the ledger says of them:
:class:`Erasure`, a part of :class:`~commonplace.stores.Store` (``store.erasure``) written
once for every backend.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from .._records import Episode
from .._scope import Scope, owner_scope
from .._text import content_terms
from ._entries import (
    AUDIT,
    CARD,
    CONFLICT,
    DISPUTE,
    FORGOTTEN,
    RECALL,
    RECALL_FEEDBACK,
    USE,
    card_key,
)
from ._protocol import (
    Backend,
    LedgerEntry,
    ReadBatch,
)


def owner_of(scope: Scope) -> Scope:
    """Whose a scope's entries are, across its agents and threads: the user's when it has
    one (the user's own words, in any thread), else its agent's (or itself)."""
    return Scope(user=scope.user) if scope.user is not None else owner_scope(scope)


class Erasure:
    """Removing records and episodes for good, and what the ledger says of them
    (``store.erasure``): a forgotten turn's id stays, so a replay is not stored again."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._ledger = backend.ledger

    def delete_records(self, record_ids: Collection[str], *, erase: bool = False) -> list[str]:
        """Remove records for good, with their provenance, links, vectors, use log and
        disputes (a dispute with a forgotten note says nothing any more)."""
        if not record_ids:
            return []
        removed = self.backend.delete(records=record_ids, erase=erase)["records"]
        self._drop_entries(USE, refs=removed)
        self._drop_entries(DISPUTE, refs=removed)
        return removed

    def delete_episodes(self, episode_ids: Collection[str], *, erase: bool = False) -> list[str]:
        """Remove episodes for good (only the right to be forgotten does this).

        Their ids are kept in the ledger first (ids only, no content), so a replayed turn
        is not stored again: ``existing_episode_ids`` reports them and ``write_turns``
        skips them.
        """
        found = _episodes(self.backend, episode_ids)
        if not found:
            return []
        self._ledger.put(
            [LedgerEntry(FORGOTTEN, e.id, e.scope, e.at, refs=(e.id,)) for e in found],
            replace=False,
        )
        return self.backend.delete(episodes=[e.id for e in found], erase=erase)["episodes"]

    def erase(
        self, record_ids: Collection[str], episode_ids: Collection[str]
    ) -> dict[str, list[str]]:
        """Remove records and episodes for good, as a forget the user asked for does: the
        ids of the episodes are kept first (as :meth:`delete_episodes` keeps them), the
        use log and disputes of the records go, then the backend deletes both in one call
        with ``erase`` (nothing of them stays in its files: see :meth:`Backend.delete`)."""
        found = _episodes(self.backend, episode_ids)
        if found:
            self._ledger.put(
                [LedgerEntry(FORGOTTEN, e.id, e.scope, e.at, refs=(e.id,)) for e in found],
                replace=False,
            )
        # the ledger first: erasing the rows last also erases what its deletes freed
        self._drop_entries(USE, refs=record_ids)
        self._drop_entries(DISPUTE, refs=record_ids)
        if not record_ids and not found:
            return {"records": [], "episodes": []}
        return self.backend.delete(records=record_ids, episodes=[e.id for e in found], erase=True)

    def _drop_entries(
        self, kind: str, *, refs: Collection[str] | None = None, scope: Scope | None = None
    ) -> int:
        if refs is not None and not refs:
            return 0
        keys = [e.key for e in self._ledger.list(kind, refs=refs, scope=scope)]
        return self._ledger.delete(kind, keys) if keys else 0

    def forget_traces(self, doomed: Collection[str], note_scopes: Collection[Scope]) -> int:
        """Outside a forgotten scope: the audit entries, conflicts and use log naming a
        removed record, and the cards of broader scopes (written from its notes).
        Returns how many audit entries went."""
        audit = self._drop_entries(AUDIT, refs=doomed)
        self._drop_entries(CONFLICT, refs=doomed)
        self._drop_entries(DISPUTE, refs=doomed)
        self._drop_entries(USE, refs=doomed)
        # a card is written from the notes its scope owns (``Scope.owns``): only those are
        # stale; a card of the agent's anonymous runs never held a user's notes
        stale = [
            e.key
            for e in self._ledger.list(CARD)
            if e.scope is not None and any(e.scope.owns(s) for s in note_scopes)
        ]
        if stale:
            self._ledger.delete(CARD, stale)
        return audit

    def drop_cards(self, cards: Collection[tuple[Scope, str]]) -> None:
        """These cards, each a (scope, kind) (the caller rewrites them)."""
        if cards:
            self._ledger.delete(CARD, [card_key(scope, kind) for scope, kind in cards])

    def erase_mentions(
        self, removed: Collection[str], terms: Collection[str], owners: Collection[Scope]
    ) -> int:
        """After a forget, the logs keep ids, not words. A recall log loses its question
        when it retrieved a removed id (found by its refs, in any scope), or when it is of
        one of ``owners`` (see :func:`owner_of`) and retrieved or showed a removed id or
        asked with one of ``terms`` (content terms, see ``content_terms``). An audit entry
        loses its detail when it is about a removed id, or of one of ``owners`` and its
        detail names a removed id or holds one of ``terms``. Conflicts naming a removed
        record go. Returns how many entries lost text."""
        removed, terms = set(removed), frozenset(terms)
        self._drop_entries(CONFLICT, refs=removed)
        found: dict[tuple[str, str], LedgerEntry] = {}
        for kind in (RECALL, AUDIT):
            # a recall log names what its search retrieved in its refs (see log_recall);
            # logs written before it did are read with their owner's below
            if removed:
                found.update(((e.kind, e.key), e) for e in self._ledger.list(kind, refs=removed))
            for owner in owners:
                found.update(
                    ((e.kind, e.key), e)
                    for e in self._ledger.list(kind, scope=owner)
                    if e.scope is not None and owner_of(e.scope) == owner
                )
        changed = []
        for entry in found.values():
            field = "query" if entry.kind == RECALL else "detail"
            text = str(entry.data.get(field) or "")
            named = set(entry.refs)
            named |= set(entry.data.get("retrieved", ())) | set(entry.data.get("shown", ()))
            if text and (
                named & removed or any(i in text for i in removed) or content_terms(text) & terms
            ):
                changed.append(replace(entry, data={**entry.data, field: ""}))
        if changed:
            self._ledger.put(changed)
        return len(changed)

    def forget_scope_entries(self, scope: Scope) -> dict[str, int]:
        """Every ledger entry of ``scope`` but the ids of forgotten turns; counts per kind."""
        counts = {
            "audit": self._drop_entries(AUDIT, scope=scope),
            "recalls": self._drop_entries(RECALL, scope=scope),
            "conflicts": self._drop_entries(CONFLICT, scope=scope),
            "cards": self._drop_entries(CARD, scope=scope),
        }
        self._drop_entries(RECALL_FEEDBACK, scope=scope)
        self._drop_entries(DISPUTE, scope=scope)
        return counts


def _episodes(backend: Backend, episode_ids: Collection[str]) -> list[Episode]:
    if not episode_ids:
        return []
    return backend.read(ReadBatch(episode_ids=episode_ids)).found_episodes
