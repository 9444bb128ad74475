"""Where things live: a tenant per exact scope, and a locator for every id.

Records and episodes sit in multi-tenant collections with one tenant per exact
scope (named by ``_mapping.tenant_name``), created on first write and listed in the
``Tenant`` registry, so a broader scope finds its tenants with one filtered query
(``_targets``). Queries on a scope go through ``_on_targets``, which starts them on the
tenants the registry listed last time while it asks the registry again, so the lookup
costs no wait of its own and the answer is still the registry's current one.
``Locator`` objects say which kind and tenant each id has, so an id is read without a
search (``_locate``); locations never change, so they are remembered, from locators
and from the rows queries return. The batch insert is here as well because it must
outlive a tenant another client removed meanwhile (an erasing ``delete`` removes the
tenants it empties): it makes the tenant again and sends the objects once more.
"""

from __future__ import annotations

import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from functools import partial
from typing import Any, TypeVar

from commonplace import Kind, Scope
from commonplace.errors import StoreError

from . import _schema as S
from ._connection import MAX_RESULTS, Connection, chunks
from ._errors import _transient_text
from ._mapping import Parts, object_uuid, scope_of, scope_props, tenant_name
from ._url import Settings

T = TypeVar("T")

_INSERT_CHUNK = 1_000
#: How the server says a tenant does not exist (an erasing ``delete`` removed it).
TENANT_MISSING = re.compile(r"tenant not found|tenant .* not found|has no tenant", re.I)
_LOCATION_CACHE = 200_000
_SEEN_SCOPES = 10_000
Location = tuple[Kind, str]  # (kind, tenant)
Target = tuple[S.Spec, str]  # (collection, tenant)
Job = tuple[S.Spec, str, Callable[[S.Spec, str], list[T]]]  # fn on (collection, tenant)


class Tenants(Connection):
    """Tenants (made on demand, found by scope), locators, and writes into tenants."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self._tenant_lock = threading.Lock()
        self._known: set[tuple[str, str]] = set()  # (collection suffix, tenant) that exist
        self._locations: dict[str, Location] = {}
        # the targets the registry listed for a scope (and kinds) last time: queried while
        # it is asked again (see _on_targets)
        self._seen: dict[tuple[Parts, tuple[str, ...]], list[Target]] = {}

    def _ensure_tenants(self, wanted: Iterable[tuple[S.Spec, Parts]]) -> None:
        """Create the tenants (and their registry entries) that are not known yet."""
        from weaviate.classes.data import DataObject
        from weaviate.classes.tenants import Tenant

        todo: dict[tuple[str, str], tuple[S.Spec, Parts]] = {}
        for spec, parts in wanted:
            key = (spec.suffix, tenant_name(parts))
            if key not in self._known:
                todo[key] = (spec, parts)
        if not todo:
            return
        with self._tenant_lock:
            by_spec: dict[str, list[str]] = defaultdict(list)
            specs = {}
            for (suffix, tenant), (spec, _) in todo.items():
                by_spec[suffix].append(tenant)
                specs[suffix] = spec
            for suffix, tenants in by_spec.items():
                col = self._col(specs[suffix])
                self._call(
                    partial(col.tenants.create, [Tenant(name=t) for t in tenants]),
                    f"create tenants in {suffix}",
                )
            registry = [
                DataObject(
                    uuid=object_uuid("tenant", suffix, tenant),
                    properties={"tenant": tenant, "collection": suffix, **_parts_props(parts)},
                )
                for (suffix, tenant), (_, parts) in todo.items()
            ]
            self._insert(S.TENANT, None, registry, "tenant registry entries", [t for _, t in todo])
            self._known.update(todo)

    def _targets(self, scope: Scope | None, specs: Sequence[S.Spec]) -> list[Target]:
        """Every (collection, tenant) whose records ``scope`` can see."""
        self._check_open()
        if not specs:
            return []
        if scope is None:
            out: list[Target] = []
            for spec in specs:
                tenants = self._call(self._col(spec).tenants.get, "list tenants")
                out.extend((spec, name) for name in tenants)
            return out
        return self._known_targets(scope, specs) or self._registry_targets(scope, specs)

    def _known_targets(self, scope: Scope, specs: Sequence[S.Spec]) -> list[Target] | None:
        """The targets of an exact scope whose tenants are all known to exist, else None."""
        parts = scope.parts()
        if all(parts):
            tenant = tenant_name(parts)
            if all((s.suffix, tenant) in self._known for s in specs):
                return [(s, tenant) for s in specs]
        return None

    def _registry_targets(self, scope: Scope, specs: Sequence[S.Spec]) -> list[Target]:
        """The targets of ``scope`` as the tenant registry lists them now."""
        from weaviate.classes.query import Filter

        parts = scope.parts()
        where = Filter.by_property("collection").contains_any([s.suffix for s in specs])
        for name, value in zip(("scope_user", "scope_agent", "scope_thread"), parts):
            if value:
                where = where & Filter.by_property(name).equal(value)
        found = self._call(
            lambda: self._col(S.TENANT).query.fetch_objects(filters=where, limit=MAX_RESULTS),
            "look up the tenants of a scope",
        ).objects
        if len(found) >= MAX_RESULTS:
            raise StoreError(
                f"the scope {scope} spans more than {MAX_RESULTS} tenants; query a narrower "
                "scope (set agent or thread too)"
            )
        by_suffix = {s.suffix: s for s in specs}
        out = []
        for obj in found:
            props = obj.properties
            if scope.contains(scope_of(props)) and props["collection"] in by_suffix:
                out.append((by_suffix[str(props["collection"])], str(props["tenant"])))
        # what the registry lists exists (a tenant removed since reads as empty, and a write
        # into it makes it again): no need to create these, nor to ask again for an exact scope
        self._known.update((spec.suffix, tenant) for spec, tenant in out)
        if len(self._seen) > _SEEN_SCOPES:
            self._seen.clear()
        self._seen[(parts, tuple(s.suffix for s in specs))] = out
        return out

    def _on_targets(
        self,
        scope: Scope | None,
        specs: Sequence[S.Spec],
        *fns: Callable[[S.Spec, str], list[T]],
    ) -> list[T]:
        """Every ``fn`` on every target of ``scope``, joined in the order of the targets
        (then of ``fns``), all in parallel. A tenant removed meanwhile reads as empty.

        When the scope's tenants have to be looked up in the registry, the ones this
        process found for it last time are queried while the registry is read again:
        one round trip instead of two. Only what the registry lists now is answered: a
        tenant made since is queried once the registry names it, and the results of
        one it no longer names are dropped, so the answer is the one looking up first
        would give.
        """
        self._check_open()
        if not specs:
            return []
        if scope is None:  # every tenant, listed by the server
            targets = self._targets(None, specs)
        else:
            targets = self._known_targets(scope, specs) or []
            if not targets:
                seen = self._seen.get((scope.parts(), tuple(s.suffix for s in specs)))
                if seen is not None:
                    return self._on_seen(scope, specs, seen, fns)
                targets = self._registry_targets(scope, specs)
        return [item for part in self._run(_jobs(targets, fns)) for item in part]

    def _on_seen(
        self,
        scope: Scope,
        specs: Sequence[S.Spec],
        seen: Sequence[Target],
        fns: Sequence[Callable[[S.Spec, str], list[T]]],
    ) -> list[T]:
        """``_on_targets`` starting on the targets seen last time (see there)."""
        lookup = self._pool.submit(self._registry_targets, scope, specs)
        early = _jobs(seen, fns)
        results = dict(zip(early, self._run(early)))
        targets = lookup.result()
        late = _jobs([t for t in targets if t not in seen], fns)
        results.update(zip(late, self._run(late)))
        return [item for job in _jobs(targets, fns) for item in results[job]]

    def _fan_out(self, targets: Sequence[Target], fn: Callable[[S.Spec, str], list[T]]) -> list[T]:
        """``fn`` on every target (in parallel when there are several), results joined.

        A tenant removed meanwhile (by a concurrent erasing ``delete``) reads as empty.
        """
        self._check_open()
        return [item for part in self._run(_jobs(targets, [fn])) for item in part]

    def _run(self, jobs: Sequence[Job[T]]) -> list[list[T]]:
        """Run the jobs, the last one on this thread and the others in the pool."""
        futures = self._launch(jobs[:-1])
        last = [self._safely(jobs[-1])] if jobs else []
        return [f.result() for f in futures] + last

    def _launch(self, jobs: Sequence[Job[T]]) -> list[Future[list[T]]]:
        """Start the jobs in the pool (never call this from a job: the pool could be full
        of jobs waiting for it)."""
        return [self._pool.submit(self._safely, job) for job in jobs]

    def _safely(self, job: Job[T]) -> list[T]:
        spec, tenant, fn = job
        try:
            return fn(spec, tenant)
        except StoreError as exc:
            if TENANT_MISSING.search(str(exc)):
                return []
            raise

    # -- writing objects -------------------------------------------------------------------------

    def _insert(
        self,
        spec: S.Spec,
        tenant: str | None,
        objects: Sequence[Any],
        what: str,
        labels: Sequence[str],
    ) -> None:
        """Batch-insert (upsert by id), retrying objects that failed transiently.

        Objects the server refuses for good are reported one by one in the error.
        """
        for start in range(0, len(objects), _INSERT_CHUNK):
            self._insert_chunk(
                spec,
                tenant,
                list(objects[start : start + _INSERT_CHUNK]),
                what,
                list(labels[start : start + _INSERT_CHUNK]),
            )

    def _insert_chunk(
        self, spec: S.Spec, tenant: str | None, objects: list[Any], what: str, labels: list[str]
    ) -> None:
        col = self._tcol(spec, tenant)
        pending, names = objects, labels
        delays = self._policy.delays()
        recreated = False
        for attempt in range(len(delays) + 1):
            try:
                result = self._call(partial(col.data.insert_many, pending), f"write {what}")
            except StoreError as exc:
                if recreated or tenant is None or not TENANT_MISSING.search(str(exc)):
                    raise
                self._recreate_tenant(spec, tenant, pending)
                recreated = True
                continue
            if not result.has_errors:
                return
            errors = {int(i): str(e.message) for i, e in result.errors.items()}
            missing = all(TENANT_MISSING.search(m) for m in errors.values())
            if missing and tenant is not None and not recreated:
                # another client removed this scope's tenant (delete, erase) since we made it
                self._recreate_tenant(spec, tenant, pending)
                recreated = True
            elif attempt == len(delays) or not all(map(_transient_text, errors.values())):
                shown = "; ".join(
                    f"#{i} ({names[i]}): {msg}" for i, msg in sorted(errors.items())[:5]
                )
                more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
                raise StoreError(
                    f"Weaviate at {self._settings.where} refused {len(errors)} of "
                    f"{len(pending)} {what}: {shown}{more}; objects are written under fixed "
                    "ids, so once the cause is fixed the same call can be sent again"
                )
            else:
                time.sleep(delays[attempt])
            keep = sorted(errors)
            pending = [pending[i] for i in keep]
            names = [names[i] for i in keep]

    def _recreate_tenant(self, spec: S.Spec, tenant: str, objects: Sequence[Any]) -> None:
        props = objects[0].properties
        parts = (props["scope_user"], props["scope_agent"], props["scope_thread"])
        self._known.discard((spec.suffix, tenant))
        self._ensure_tenants([(spec, parts)])

    # -- locating ids ----------------------------------------------------------------------------

    def _locate(self, ids: Iterable[str], *, fresh: bool = False) -> dict[str, Location]:
        """Where each id lives (kind and tenant); ids that do not exist are left out.

        A location never changes (an id's scope is part of how it was made), so it is
        cached; ``fresh`` asks the server anyway, for existence checks.
        """
        self._check_open()
        wanted = list(dict.fromkeys(ids))
        out: dict[str, Location] = {}
        missing = []
        for oid in wanted:
            hit = None if fresh else self._locations.get(oid)
            if hit is None:
                missing.append(oid)
            else:
                out[oid] = hit
        if not missing:
            return out
        from weaviate.classes.query import Filter

        for chunk in chunks(missing):
            uuids = [object_uuid("locator", oid) for oid in chunk]
            found = self._call(
                partial(
                    self._col(S.LOCATOR).query.fetch_objects,
                    filters=Filter.by_id().contains_any(uuids),
                    limit=len(uuids),
                ),
                "look up ids",
            ).objects
            for obj in found:
                props = obj.properties
                location = (Kind(props["kind"]), str(props["tenant"]))
                out[str(props["object_id"])] = location
                if len(self._locations) > _LOCATION_CACHE:
                    self._locations.clear()
                self._locations[str(props["object_id"])] = location
        return out

    def _locator(self, oid: str, kind: Kind, scope: Scope) -> Any:
        from weaviate.classes.data import DataObject

        return DataObject(
            uuid=object_uuid("locator", oid),
            properties={
                "object_id": oid,
                "kind": kind.value,
                "tenant": tenant_name(scope.parts()),
                **scope_props(scope),
            },
        )

    def _forget_locations(self, ids: Iterable[str]) -> None:
        for oid in ids:
            self._locations.pop(oid, None)


def _jobs(
    targets: Sequence[Target], fns: Sequence[Callable[[S.Spec, str], list[T]]]
) -> list[Job[T]]:
    return [(spec, tenant, fn) for spec, tenant in targets for fn in fns]


def _parts_props(parts: Parts) -> dict[str, str]:
    return {"scope_user": parts[0], "scope_agent": parts[1], "scope_thread": parts[2]}
