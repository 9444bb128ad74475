"""Forgetting: deleting records, episodes and whole scopes, and every trace of them.

Weaviate has no transactions, so a delete removes what depends on a record first
(provenance, counters, links) and its locator last: until then a retry still finds
what is left to delete. A forgotten episode keeps a tombstone locator (its id
only, no scope or content), so a replayed turn is recognised and not stored again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import partial

from commonplace import Kind, Scope
from commonplace.errors import StoreError

from . import _schema as S
from ._connection import MAX_RESULTS, chunks
from ._errors import translate
from ._mapping import Parts, object_uuid, scope_of, scope_where
from ._reads import RecordReads
from ._tenants import FORGOTTEN, TENANT_MISSING, Location, Target


class Forgetting(RecordReads):
    """``delete_records``, ``delete_episodes`` and ``delete_scope``."""

    def delete_records(self, record_ids: Collection[str]) -> list[str]:
        located = {
            rid: loc
            for rid, loc in self._locate(record_ids, fresh=True).items()
            if loc[0] in S.RECORD_SPECS
        }
        self._delete_records_at(located)
        return list(located)

    def _delete_records_at(self, located: Mapping[str, Location]) -> None:
        from weaviate.classes.query import Filter

        if not located:
            return
        groups: dict[Target, list[str]] = defaultdict(list)
        for rid, (kind, tenant) in located.items():
            groups[(S.RECORD_SPECS[kind], tenant)].append(rid)
        for (spec, tenant), ids in groups.items():
            for chunk in chunks(ids):
                try:
                    self._delete_where(
                        spec,
                        tenant,
                        Filter.by_id().contains_any([object_uuid("record", rid) for rid in chunk]),
                        "records",
                    )
                except StoreError as exc:
                    if not TENANT_MISSING.search(str(exc)):
                        raise
        ids = list(located)
        for chunk in chunks(ids):
            self._delete_where(
                S.SOURCE, None, Filter.by_property("record_id").contains_any(chunk), "provenance"
            )
            self._delete_where(
                S.COUNTER, None, Filter.by_property("record_id").contains_any(chunk), "counters"
            )
            self._delete_where(
                S.LINK,
                None,
                Filter.by_property("a").contains_any(chunk)
                | Filter.by_property("b").contains_any(chunk),
                "links",
            )
            # the locator goes last: until then a retry still finds what is left to delete
            self._delete_where(
                S.LOCATOR,
                None,
                Filter.by_id().contains_any([object_uuid("locator", rid) for rid in chunk]),
                "locators",
            )
        self._forget_locations(ids)

    def delete_episodes(self, episode_ids: Collection[str]) -> list[str]:
        """Remove episodes for good, keeping only their ids (a tombstone locator) so that a
        replayed turn is recognised and not stored again."""
        from weaviate.classes.query import Filter

        located = {
            eid: loc
            for eid, loc in self._locate(episode_ids, fresh=True).items()
            if loc[0] is Kind.EPISODE and loc[1] != FORGOTTEN
        }
        groups: dict[str, list[str]] = defaultdict(list)
        for eid, (_, tenant) in located.items():
            groups[tenant].append(eid)
        for tenant, ids in groups.items():
            for chunk in chunks(ids):
                self._delete_where(
                    S.EPISODE,
                    tenant,
                    Filter.by_id().contains_any([object_uuid("episode", eid) for eid in chunk]),
                    "episodes",
                )
        self._tombstones(list(located))
        return list(located)

    def _tombstones(self, episode_ids: Sequence[str]) -> None:
        """Replace the locators of forgotten episodes by bare ids (no scope, no content)."""
        from weaviate.classes.data import DataObject

        objects = [
            DataObject(
                uuid=object_uuid("locator", eid),
                properties={
                    "object_id": eid,
                    "kind": Kind.EPISODE.value,
                    "tenant": FORGOTTEN,
                    "scope_user": "",
                    "scope_agent": "",
                    "scope_thread": "",
                },
            )
            for eid in episode_ids
        ]
        self._insert(S.LOCATOR, None, objects, "forgotten episode ids", list(episode_ids))
        self._forget_locations(episode_ids)

    def delete_scope(self, scope: Scope) -> dict[str, int]:
        """Remove every tenant ``scope`` contains and every trace of it elsewhere: records
        derived from its records (transitively, in any scope), audit entries and conflicts
        naming a removed record, and the cards of broader scopes."""
        from weaviate.classes.query import Filter

        record_targets = self._targets(scope, list(S.RECORD_SPECS.values()))
        located: dict[str, Location] = {}
        note_scopes: set[Parts] = set()
        for spec, tenant in record_targets:
            try:
                for obj in self._tcol(spec, tenant).iterator(
                    return_properties=["record_id", "scope_user", "scope_agent", "scope_thread"]
                ):
                    located[str(obj.properties["record_id"])] = (Kind(spec.suffix.lower()), tenant)
                    note_scopes.add(scope_of(obj.properties).parts())
            except Exception as exc:  # the iterator raises the client's errors directly
                if not TENANT_MISSING.search(str(exc)):
                    raise translate(
                        exc, what="list a scope's records", where=self._settings.where
                    ) from exc
        frontier = set(located)
        while frontier:  # what was derived from them elsewhere, transitively
            derived = {rid for rid in self.derived_from(frontier) if rid not in located}
            found = self._locate(derived, fresh=True)
            located.update({r: loc for r, loc in found.items() if loc[0] in S.RECORD_SPECS})
            frontier = set(found)
        episode_targets = self._targets(scope, [S.EPISODE])
        episodes = self.count(scope, Kind.EPISODE)
        self._delete_records_at(located)
        where = scope_where(scope)
        self._delete_where(S.LOCATOR, None, where, "locators")
        for spec, tenants in _by_spec(record_targets + episode_targets).items():
            self._call(partial(self._col(spec).tenants.remove, tenants), "remove tenants")
            self._known.difference_update((spec.suffix, t) for t in tenants)
        self._delete_where(S.TENANT, None, where, "tenant registry entries")
        counts = {"records": len(located), "episodes": episodes}
        for name, spec in (
            ("audit", S.AUDIT),
            ("recalls", S.RECALL),
            ("conflicts", S.CONFLICT),
            ("cards", S.CARD),
        ):
            counts[name] = self._delete_where(spec, None, where, name)
        for chunk in chunks(list(located)):
            counts["audit"] += self._delete_where(
                S.AUDIT, None, Filter.by_property("record_id").contains_any(chunk), "audit"
            )
        self._delete_traces(set(located), note_scopes)
        self._forget_locations(located)
        return counts

    def _delete_traces(self, doomed: set[str], note_scopes: set[Parts]) -> None:
        """Conflicts naming a removed record, and cards of scopes broader than its notes'."""
        from weaviate.classes.query import Filter

        stale = [
            obj.uuid
            for obj in self._col(S.CONFLICT).iterator(return_properties=["record_ids"])
            if doomed & set(obj.properties.get("record_ids") or ())
        ]
        for chunk in chunks(stale):
            self._delete_where(S.CONFLICT, None, Filter.by_id().contains_any(chunk), "conflicts")
        cards = []
        for parts in note_scopes:
            clauses = [
                Filter.by_property(name).equal(value)
                for name, value in zip(("scope_user", "scope_agent", "scope_thread"), parts)
                if value
            ]
            where = Filter.any_of(clauses) if len(clauses) > 1 else clauses[0]
            found = self._call(
                partial(self._col(S.CARD).query.fetch_objects, filters=where, limit=MAX_RESULTS),
                "read cards",
            ).objects
            user, agent, thread = (value or None for value in parts)
            note_scope = Scope(user=user, agent=agent, thread=thread)
            # a card is written from the notes its scope owns: only those cards are stale
            cards += [obj.uuid for obj in found if scope_of(obj.properties).owns(note_scope)]
        for chunk in chunks(cards):
            self._delete_where(S.CARD, None, Filter.by_id().contains_any(chunk), "cards")


def _by_spec(targets: Iterable[Target]) -> dict[S.Spec, list[str]]:
    out: dict[S.Spec, list[str]] = defaultdict(list)
    for spec, tenant in targets:
        out[spec].append(tenant)
    return out
