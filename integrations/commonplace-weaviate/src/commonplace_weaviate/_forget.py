"""Forgetting: deleting records and episodes for good, with every trace of them.

Weaviate has no transactions, so a delete removes what depends on a record first
(provenance, counters, links) and its locator last: until then a retry still finds
what is left to delete. A record's staged re-embed vector lives on its object and
goes with it. What else a forgotten scope takes along (what was derived from its
records, the ledger's entries) is the core's to compose; the ids of forgotten turns
are ledger entries the core writes.

With ``erase``, a tenant the delete leaves empty is removed, so its files (objects,
vector and keyword indexes) go from the server's disk at once; that is how a whole
scope is erased. Objects deleted from a tenant that still holds others, and the
ids in the shared collections, are tombstoned by the server and leave its files when
it next compacts them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from functools import partial
from typing import Any

from commonplace import Kind
from commonplace.errors import StoreError

from . import _schema as S
from ._connection import chunks
from ._mapping import object_uuid
from ._reads import RecordReads
from ._tenants import TENANT_MISSING, Location, Target


class Forgetting(RecordReads):
    """``delete``: records and episodes, for good."""

    def delete(
        self,
        *,
        records: Collection[str] = (),
        episodes: Collection[str] = (),
        erase: bool = False,
    ) -> dict[str, list[str]]:
        from weaviate.classes.query import Filter

        located_records = {
            rid: loc
            for rid, loc in self._locate(records, fresh=True).items()
            if loc[0] in S.RECORD_SPECS
        }
        located_episodes = {
            eid: loc
            for eid, loc in self._locate(episodes, fresh=True).items()
            if loc[0] is Kind.EPISODE
        }
        self._delete_records_at(located_records)
        groups: dict[str, list[str]] = defaultdict(list)
        for eid, (_, tenant) in located_episodes.items():
            groups[tenant].append(eid)
        for tenant, ids in groups.items():
            for chunk in chunks(ids):
                self._delete_in_tenant(
                    S.EPISODE,
                    tenant,
                    Filter.by_id().contains_any([object_uuid("episode", eid) for eid in chunk]),
                    "episodes",
                )
                # the locator goes last: until then a retry still finds what is left
                self._delete_where(
                    S.LOCATOR,
                    None,
                    Filter.by_id().contains_any([object_uuid("locator", eid) for eid in chunk]),
                    "episode locators",
                )
        self._forget_locations(located_episodes)
        if erase:
            touched = {(S.RECORD_SPECS[kind], tenant) for kind, tenant in located_records.values()}
            touched |= {(S.EPISODE, tenant) for tenant in groups}
            self._remove_if_empty(touched)
        return {"records": list(located_records), "episodes": list(located_episodes)}

    def _delete_in_tenant(self, spec: S.Spec, tenant: str, where: Any, what: str) -> None:
        try:
            self._delete_where(spec, tenant, where, what)
        except StoreError as exc:
            if not TENANT_MISSING.search(str(exc)):
                raise

    def _delete_records_at(self, located: Mapping[str, Location]) -> None:
        """Delete records with their provenance, counters, links and locators."""
        from weaviate.classes.query import Filter

        if not located:
            return
        groups: dict[Target, list[str]] = defaultdict(list)
        for rid, (kind, tenant) in located.items():
            groups[(S.RECORD_SPECS[kind], tenant)].append(rid)
        for (spec, tenant), ids in groups.items():
            for chunk in chunks(ids):
                self._delete_in_tenant(
                    spec,
                    tenant,
                    Filter.by_id().contains_any([object_uuid("record", rid) for rid in chunk]),
                    "records",
                )
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

    def _remove_if_empty(self, targets: Iterable[Target]) -> None:
        """Remove the tenants that hold nothing any more (their files go with them)."""
        from weaviate.classes.query import Filter

        def total(spec: S.Spec, tenant: str) -> list[tuple[S.Spec, str, int]]:
            result: Any = self._call(
                partial(self._tcol(spec, tenant).aggregate.over_all, total_count=True),
                "count a tenant's objects",
            )
            return [(spec, tenant, int(result.total_count or 0))]

        wanted = sorted(set(targets), key=lambda t: (t[0].suffix, t[1]))
        empty: dict[S.Spec, list[str]] = defaultdict(list)
        for spec, tenant, count in self._fan_out(wanted, total):
            if count == 0:
                empty[spec].append(tenant)
        for spec, tenants in empty.items():
            for chunk in chunks(tenants, 100):
                self._call(partial(self._col(spec).tenants.remove, chunk), "remove tenants")
                self._known.difference_update((spec.suffix, t) for t in chunk)
                self._delete_where(
                    S.TENANT,
                    None,
                    Filter.by_id().contains_any(
                        [object_uuid("tenant", spec.suffix, t) for t in chunk]
                    ),
                    "tenant registry entries",
                )
