"""The Weaviate backend: commonplace's Backend protocol on a real Weaviate server.

Layout (see ``_schema``): a multi-tenant collection per record kind with one
tenant per exact scope, so every query reads only the shards of the scopes it
names; small single-tenant collections for the bookkeeping. Vectors come from
commonplace's embedder (no server-side vectorizer); candidates come from
near-vector and BM25 queries with every filter evaluated by the server, and the
core reranks them.

Weaviate has no transactions and no atomic increments, so:

* every write uses deterministic object ids (UUIDv5 of the commonplace id), so a
  call that failed half-way can simply be sent again and lands on the same objects;
* ``write_turns`` writes notes, then merges and supersessions, then episodes, and
  last the episodes' locators, which are what makes an episode count as stored:
  a turn whose call failed is stored again by a retry, never twice, and on a
  failure before that last step the notes it wrote are removed again (best effort);
* counters (accesses, uses, ignores) are insert-only event objects folded at read
  time by a server-side aggregate, so concurrent writers in any number of
  processes never lose a count; provenance is insert-only edge objects for the
  same reason;
* tiers, statuses and other fields are set with partial updates (PATCH), which the
  server applies atomically per object, so concurrent updates of different fields
  of one record do not overwrite each other.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import os
import re
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from commonplace import Episode, Kind, Record, Scope, Status, Tags, Tier
from commonplace.embedders import Vectors
from commonplace.errors import (
    EmbedderMismatchError,
    InvalidInputError,
    SchemaVersionError,
    StoreClosedError,
    StoreError,
)
from commonplace.stores import (
    AuditEntry,
    Candidate,
    Card,
    Conflict,
    EmbedderPin,
    Link,
    RecallLog,
    RecordQuery,
    ReembedState,
    TurnWrite,
    keyword_coverage,
)

from . import _schema as S
from ._errors import RetryPolicy, _transient_text, translate, with_retries
from ._mapping import (
    Counts,
    Parts,
    Sequencer,
    as_utc,
    episode_from,
    episode_properties,
    flatten,
    object_uuid,
    parse_date,
    record_from,
    record_properties,
    scope_of,
    scope_props,
    tag_properties,
    tenant_name,
)
from ._url import Settings, parse_url

if TYPE_CHECKING:
    from weaviate import WeaviateClient
    from weaviate.collections import Collection as WCollection
    from weaviate.collections.classes.filters import _Filters

T = TypeVar("T")

#: The oldest server this backend is tested against (weaviate-client 4.x needs 1.27).
MIN_SERVER_VERSION = (1, 27, 0)
_MAX_RESULTS = 10_000  # Weaviate's default QUERY_MAXIMUM_RESULTS
_CHUNK = 500
_INSERT_CHUNK = 1_000
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_TENANT_MISSING = re.compile(r"tenant not found|tenant .* not found|has no tenant", re.I)
_LOCATION_CACHE = 200_000
Location = tuple[Kind, str]  # (kind, tenant)
FORGOTTEN = "-"  # the tenant of a forgotten episode's locator (no tenant is ever "-")
Target = tuple[S.Spec, str]  # (collection, tenant)


class WeaviateBackend:
    """A commonplace store in a Weaviate server (``weaviate://host:port?options``).

    Options go in the URL's query (see :mod:`commonplace_weaviate._url`); the API
    key in the URL's password (``weaviate://:KEY@host``), ``api_key=`` or
    ``$WEAVIATE_API_KEY``. Opening checks that the server answers, is recent
    enough, and holds this store's collections with the expected schema
    (creating them on first use). ``close()`` releases the connection.
    """

    def __init__(self, url: str, *, api_key: str | None = None, prefix: str | None = None) -> None:
        settings = parse_url(url, environ=os.environ)
        if api_key is not None:
            settings = replace(settings, api_key=api_key)
        if prefix is not None:
            settings = replace(settings, prefix=prefix)
            settings.__post_init__()  # validate the new prefix
        self._settings = settings
        self._policy = RetryPolicy(attempts=settings.retries)
        self._closed = False
        self._state_lock = threading.RLock()
        self._links_lock = threading.Lock()
        self._recall_lock = threading.Lock()
        self._pin_lock = threading.Lock()
        self._tenant_lock = threading.Lock()
        self._known: set[tuple[str, str]] = set()
        self._locations: dict[str, Location] = {}
        self._collections: dict[str, WCollection[Any, Any]] = {}
        self._pin: EmbedderPin | None = None
        self._vector: str | None = None  # the named vector searches use (see reembed_*)
        self._reembed_done: set[Target] = set()
        self._seq = Sequencer()
        self._client = _connect(settings)
        try:
            self._pool = ThreadPoolExecutor(
                max_workers=settings.workers, thread_name_prefix="commonplace-weaviate"
            )
            self._ensure_schema()
        except BaseException:
            self._client.close()
            raise

    # -- connection ------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The store URL, without the API key."""
        return self._settings.url

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def client(self) -> WeaviateClient:
        """The underlying weaviate-client connection (for inspection; do not close it)."""
        return self._client

    def close(self) -> None:
        with self._state_lock:
            if self._closed:
                return
            self._closed = True
        self._pool.shutdown(wait=True)
        self._client.close()

    def __enter__(self) -> WeaviateBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"WeaviateBackend({self.url!r})"

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError("this store is closed; open a new Memory to use it")

    def _call(self, fn: Callable[[], T], what: str) -> T:
        self._check_open()
        return with_retries(fn, policy=self._policy, what=what, where=self._settings.where)

    def _col(self, spec: S.Spec) -> WCollection[Any, Any]:
        name = self._settings.prefix + spec.suffix
        col = self._collections.get(name)
        if col is None:
            col = self._client.collections.get(name)
            if self._settings.consistency is not None:
                from weaviate.classes.config import ConsistencyLevel

                level = {
                    "one": ConsistencyLevel.ONE,
                    "quorum": ConsistencyLevel.QUORUM,
                    "all": ConsistencyLevel.ALL,
                }[self._settings.consistency]
                col = col.with_consistency_level(level)
            self._collections[name] = col
        return col

    def _tcol(self, spec: S.Spec, tenant: str | None) -> WCollection[Any, Any]:
        col = self._col(spec)
        return col if tenant is None else col.with_tenant(tenant)

    # -- schema ----------------------------------------------------------------------------------

    def _ensure_schema(self) -> None:
        existing = self._call(
            lambda: self._client.collections.list_all(simple=False), "read the schema"
        )
        for spec in S.SPECS:
            name = self._settings.prefix + spec.suffix
            config = existing.get(name)
            if config is None:
                kwargs = S.create_kwargs(spec, name, replication=self._settings.replication)
                try:
                    self._call(
                        partial(self._client.collections.create, **kwargs),
                        f"create the collection {name}",
                    )
                    continue
                except StoreError as exc:
                    if "already exists" not in str(exc):
                        raise
                    config = self._call(
                        self._client.collections.get(name).config.get, f"read the collection {name}"
                    )
            self._check_collection(spec, name, config)

    def _check_collection(self, spec: S.Spec, name: str, config: Any) -> None:
        marker = S.read_description(config.description)
        if marker is None:
            raise StoreError(
                f"the Weaviate collection {name!r} exists but was not created by commonplace; "
                "commonplace will not touch it: pick another store with ?prefix=Other in the "
                "URL, or remove that collection"
            )
        if marker[S.MARKER] > S.SCHEMA_VERSION:
            raise SchemaVersionError(
                f"the Weaviate collection {name!r} has schema version {marker[S.MARKER]}, newer "
                f"than this commonplace-weaviate understands ({S.SCHEMA_VERSION}); upgrade "
                "commonplace-weaviate to open it"
            )
        for prop in S.missing_props(spec, config):
            self._call(
                partial(
                    self._client.collections.get(name).config.add_property,
                    S.weaviate_property(prop),
                ),
                f"add the property {prop.name!r} to {name}",
            )
        problems = S.schema_problems(spec, config)
        if problems:
            raise StoreError(
                f"the Weaviate collection {name!r} does not have the schema commonplace expects "
                f"({'; '.join(problems)}); it was changed by hand or by another version: "
                "restore it, or use another ?prefix= for a fresh store"
            )

    # -- the embedder pin ------------------------------------------------------------------------

    def read_pin(self) -> EmbedderPin | None:
        config = self._call(lambda: self._col(S.NOTE).config.get(), "read the embedder pin")
        body = S.read_description(config.description) or {}
        embedder = body.get("embedder")
        if not isinstance(embedder, Mapping) or "name" not in embedder:
            return None
        return EmbedderPin(name=str(embedder["name"]), dim=int(embedder["dim"]))

    def write_pin(self, pin: EmbedderPin, *, replace: bool = False) -> None:
        with self._pin_lock:
            current = self.read_pin()
            if current is not None and not replace:
                if current == pin:
                    return
                raise EmbedderMismatchError(
                    f"this store is pinned to the embedder {current.name!r} (dim {current.dim}),"
                    f" not {pin.name!r} (dim {pin.dim}); open it with the pinned embedder or "
                    "re-embed the store"
                )
            body = self._note_body()  # keeps the live vector's name and a re-embed's state
            body["embedder"] = {**(body.get("embedder") or {}), "name": pin.name, "dim": pin.dim}
            text = json.dumps(body, sort_keys=True)
            self._call(
                lambda: self._col(S.NOTE).config.update(description=text), "pin the embedder"
            )
            # Re-read: another process may have pinned a different model at the same time.
            after = self.read_pin()
            if after != pin:
                raise EmbedderMismatchError(
                    f"another client pinned this store to {after!r} while this one pinned "
                    f"{pin!r}; open it with the pinned embedder"
                )
            self._pin = pin

    # -- re-embedding ----------------------------------------------------------------------------
    # A re-embed writes the new model's vectors into a named vector of their own (added to the
    # record collections when it starts, named after the target model) and tags each record
    # it staged with that name (property ``reembed``), so what is left is what lacks the tag,
    # and a record written or replaced meanwhile is left again. Searches and writes use the
    # live vector named in the pin until the last step swaps the pin, in one schema update.

    def _note_body(self) -> dict[str, Any]:
        config = self._call(lambda: self._col(S.NOTE).config.get(), "read the embedder pin")
        body = S.read_description(config.description)
        return dict(body) if body is not None else json.loads(S.description(S.NOTE))

    def _live_vector(self) -> str:
        """The named vector that holds the pinned model's vectors (``default`` at first)."""
        if self._vector is None:
            embedder = self._note_body().get("embedder")
            name = embedder.get("vector") if isinstance(embedder, Mapping) else None
            self._vector = str(name or "default")
        return self._vector

    def _reembed_body(self) -> tuple[dict[str, Any], EmbedderPin | None, str]:
        body = self._note_body()
        state = body.get("reembed")
        if not isinstance(state, Mapping) or "name" not in state:
            return body, None, ""
        return body, EmbedderPin(str(state["name"]), int(state["dim"])), str(state["vector"])

    def _reembed_targets(self) -> list[Target]:
        return self._targets(None, list(S.RECORD_SPECS.values()))

    def _reembed_counts(self, vector: str) -> tuple[int, int]:
        """(staged, pending) over every tenant of the record collections."""
        from weaviate.classes.query import Filter

        def counts(spec: S.Spec, tenant: str) -> list[tuple[int, int]]:
            col = self._tcol(spec, tenant)
            total = self._call(
                lambda: col.aggregate.over_all(total_count=True), "count records"
            ).total_count
            # (an aggregate over not_equal miscounts on Weaviate 1.35; equal does not)
            staged = self._call(
                lambda: col.aggregate.over_all(
                    filters=Filter.by_property("reembed").equal(vector), total_count=True
                ),
                "count re-embedded records",
            ).total_count
            return [(int(staged or 0), int(total or 0) - int(staged or 0))]

        found = self._fan_out(self._reembed_targets(), counts)
        return sum(s for s, _ in found), sum(p for _, p in found)

    def reembed_state(self) -> ReembedState | None:
        _, target, vector = self._reembed_body()
        if target is None:
            return None
        staged, pending = self._reembed_counts(vector)
        return ReembedState(target, staged, pending)

    def reembed_pending(self, target: EmbedderPin, *, limit: int) -> list[Record]:
        from weaviate.classes.config import Configure, VectorDistances
        from weaviate.classes.query import Filter, Sort

        vector = _reembed_vector(target)
        with self._pin_lock:
            body, current, _ = self._reembed_body()
            if current != target:
                for spec in S.RECORD_SPECS.values():
                    col = self._col(spec)
                    config = self._call(col.config.get, f"read {spec.suffix}")
                    if vector not in (config.vector_config or {}):
                        self._call(
                            partial(
                                col.config.add_vector,
                                vector_config=Configure.Vectors.self_provided(
                                    name=vector,
                                    vector_index_config=Configure.VectorIndex.hnsw(
                                        distance_metric=VectorDistances.COSINE
                                    ),
                                ),
                            ),
                            f"add the vector {vector} to {spec.suffix}",
                        )
                body["reembed"] = {"name": target.name, "dim": target.dim, "vector": vector}
                text = json.dumps(body, sort_keys=True)
                self._call(
                    lambda: self._col(S.NOTE).config.update(description=text),
                    "start the re-embed",
                )
                self._reembed_done = set()
        wanted = max(0, int(limit))
        rows: list[Mapping[str, Any]] = []
        left = Filter.by_property("reembed").not_equal(vector)
        for spec, tenant in self._reembed_targets():
            if len(rows) >= wanted:
                break
            if (spec, tenant) in self._reembed_done:
                continue
            try:
                found = self._call(
                    partial(
                        self._tcol(spec, tenant).query.fetch_objects,
                        filters=left,
                        limit=wanted - len(rows),
                        sort=Sort.by_property("seq"),
                        return_properties=S.RECORD_RETURN,
                    ),
                    "list records to re-embed",
                ).objects
            except StoreError as exc:
                if _TENANT_MISSING.search(str(exc)):
                    continue
                raise
            if not found:  # nothing left here (finish looks again at every tenant)
                self._reembed_done.add((spec, tenant))
            rows.extend(flatten(o.properties) for o in found)
        return self._hydrate(rows)

    def reembed_stage(
        self, target: EmbedderPin, record_ids: Sequence[str], vectors: Vectors
    ) -> None:
        ids = list(record_ids)
        matrix = np.asarray(vectors, np.float32)
        if matrix.shape != (len(ids), target.dim):
            raise InvalidInputError(
                f"reembed_stage got vectors of shape {matrix.shape} for {len(ids)} ids; it "
                f"needs one row of {target.dim} (the target's dimension) per id"
            )
        if not np.all(np.isfinite(matrix)):
            raise InvalidInputError("reembed_stage got NaN or infinite vector values")
        _, current, vector = self._reembed_body()
        if current != target:
            doing = "none is" if current is None else f"the one in progress is to {current.name!r}"
            raise StoreError(
                f"no re-embed to {target.name!r} is in progress ({doing}); start it with "
                "reembed_pending (commonplace reembed --to NAME does)"
            )
        located = self._locate(ids)

        def stage(row: int, rid: str) -> None:
            kind, tenant = located[rid]
            # a partial update: the live vector and the other fields stay as they are
            self._patch_vector(
                S.RECORD_SPECS[kind], tenant, object_uuid("record", rid), vector, matrix[row]
            )

        self._parallel(
            [
                partial(stage, row, rid)
                for row, rid in enumerate(ids)
                if rid in located and located[rid][0] in S.RECORD_SPECS
            ]
        )

    def _patch_vector(
        self, spec: S.Spec, tenant: str, object_id: uuid.UUID, vector: str, values: Any
    ) -> None:
        from weaviate.exceptions import UnexpectedStatusCodeError

        col = self._tcol(spec, tenant)
        try:
            self._call(
                lambda: col.data.update(
                    uuid=object_id,
                    properties={"reembed": vector},
                    vector={vector: np.asarray(values, np.float32).tolist()},
                ),
                "stage a re-embedded vector",
            )
        except StoreError as exc:
            cause = exc.__cause__
            if not (isinstance(cause, UnexpectedStatusCodeError) and cause.status_code == 404):
                raise  # a record deleted meanwhile is skipped

    def reembed_finish(self, target: EmbedderPin) -> int | None:
        with self._pin_lock:
            body, current, vector = self._reembed_body()
            if current != target:
                doing = (
                    "none is" if current is None else f"the one in progress is to {current.name!r}"
                )
                raise StoreError(
                    f"no re-embed to {target.name!r} is in progress ({doing}); start it with "
                    "reembed_pending (commonplace reembed --to NAME does)"
                )
            staged, pending = self._reembed_counts(vector)
            if pending:
                self._reembed_done = set()  # look at every tenant again
                return None
            body["embedder"] = {"name": target.name, "dim": target.dim, "vector": vector}
            body.pop("reembed", None)
            text = json.dumps(body, sort_keys=True)
            self._call(
                lambda: self._col(S.NOTE).config.update(description=text), "finish the re-embed"
            )
            self._pin, self._vector = target, vector
        return staged

    def _dim(self) -> int | None:
        if self._pin is None:
            self._pin = self.read_pin()
        return None if self._pin is None else self._pin.dim

    def _checked_vectors(
        self, vectors: Vectors | None, rows: int, what: str
    ) -> np.ndarray[Any, np.dtype[np.float32]] | None:
        if rows == 0:
            return None
        if vectors is None or len(vectors) != rows:
            raise InvalidInputError(f"{what} needs exactly one vector per record")
        matrix = np.asarray(vectors, np.float32).reshape(rows, -1)
        dim = self._dim()
        if dim is not None and matrix.shape[1] != dim:
            raise InvalidInputError(
                f"{what} got vectors of dimension {matrix.shape[1]}, but this store is pinned "
                f"to dimension {dim}; embed with the pinned embedder"
            )
        if not np.all(np.isfinite(matrix)):
            raise InvalidInputError(f"{what} got NaN or infinite vector values")
        return matrix

    # -- tenants ---------------------------------------------------------------------------------

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
        parts = scope.parts()
        if all(parts):
            tenant = tenant_name(parts)
            if all((s.suffix, tenant) in self._known for s in specs):
                return [(s, tenant) for s in specs]
        from weaviate.classes.query import Filter

        where = Filter.by_property("collection").contains_any([s.suffix for s in specs])
        for name, value in zip(("scope_user", "scope_agent", "scope_thread"), parts):
            if value:
                where = where & Filter.by_property(name).equal(value)
        found = self._call(
            lambda: self._col(S.TENANT).query.fetch_objects(filters=where, limit=_MAX_RESULTS),
            "look up the tenants of a scope",
        ).objects
        if len(found) >= _MAX_RESULTS:
            raise StoreError(
                f"the scope {scope} spans more than {_MAX_RESULTS} tenants; query a narrower "
                "scope (set agent or thread too)"
            )
        by_suffix = {s.suffix: s for s in specs}
        out = []
        for obj in found:
            props = obj.properties
            if scope.contains(scope_of(props)) and props["collection"] in by_suffix:
                out.append((by_suffix[str(props["collection"])], str(props["tenant"])))
        return out

    def _fan_out(self, targets: Sequence[Target], fn: Callable[[S.Spec, str], list[T]]) -> list[T]:
        """``fn`` on every target (in parallel when there are several), results joined.

        A tenant removed meanwhile (a concurrent ``delete_scope``) reads as empty.
        """
        self._check_open()

        def safe(spec: S.Spec, tenant: str) -> list[T]:
            try:
                return fn(spec, tenant)
            except StoreError as exc:
                if _TENANT_MISSING.search(str(exc)):
                    return []
                raise

        if len(targets) <= 1:
            return [item for spec, tenant in targets for item in safe(spec, tenant)]
        futures = [self._pool.submit(safe, spec, tenant) for spec, tenant in targets]
        return [item for future in futures for item in future.result()]

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
                if recreated or tenant is None or not _TENANT_MISSING.search(str(exc)):
                    raise
                self._recreate_tenant(spec, tenant, pending)
                recreated = True
                continue
            if not result.has_errors:
                return
            errors = {int(i): str(e.message) for i, e in result.errors.items()}
            missing = all(_TENANT_MISSING.search(m) for m in errors.values())
            if missing and tenant is not None and not recreated:
                # another client removed this scope's tenant (delete_scope) since we made it
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

    def _delete_where(self, spec: S.Spec, tenant: str | None, where: _Filters, what: str) -> int:
        """Delete every object matching ``where`` (in rounds: the server caps one round)."""
        col = self._tcol(spec, tenant)
        total = 0
        for _ in range(10_000):
            result = self._call(lambda: col.data.delete_many(where=where), f"delete {what}")
            total += int(result.successful)
            if int(result.matches) < _MAX_RESULTS or int(result.successful) == 0:
                return total
        raise StoreError(f"deleting {what} did not finish; run the call again")  # pragma: no cover

    def _patch(
        self,
        spec: S.Spec,
        tenant: str | None,
        object_id: uuid.UUID,
        props: Mapping[str, Any],
        what: str,
    ) -> bool:
        """A partial update of one object; False when the object does not exist."""
        from weaviate.exceptions import UnexpectedStatusCodeError

        col = self._tcol(spec, tenant)
        try:
            self._call(lambda: col.data.update(uuid=object_id, properties=dict(props)), what)
        except StoreError as exc:
            cause = exc.__cause__
            if isinstance(cause, UnexpectedStatusCodeError) and cause.status_code == 404:
                return False
            raise
        return True

    def _parallel(self, jobs: Sequence[Callable[[], T]]) -> list[T]:
        self._check_open()
        if len(jobs) <= 1:
            return [job() for job in jobs]
        futures = [self._pool.submit(job) for job in jobs]
        return [f.result() for f in futures]

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

        for chunk in _chunks(missing):
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

    # -- episodes and records --------------------------------------------------------------------

    def existing_episode_ids(self, ids: Collection[str]) -> set[str]:
        found = self._locate(ids, fresh=True)
        return {oid for oid, (kind, _) in found.items() if kind is Kind.EPISODE}

    def write_turns(self, turns: Sequence[TurnWrite], vectors: Vectors | None) -> list[bool]:
        turns = list(turns)
        with_notes = sum(1 for t in turns if t.note is not None)
        matrix = self._checked_vectors(vectors, with_notes, "write_turns")
        existing = self.existing_episode_ids({t.episode.id for t in turns})
        fresh: list[bool] = []
        seen: set[str] = set()
        for turn in turns:
            eid = turn.episode.id
            fresh.append(eid not in existing and eid not in seen)
            seen.add(eid)
        notes: list[tuple[Record, Any]] = []
        row = 0
        for turn, new in zip(turns, fresh):
            if turn.note is not None:
                assert matrix is not None
                if new:
                    notes.append((turn.note, matrix[row]))
                row += 1
        new_turns = [t for t, new in zip(turns, fresh) if new]
        if not new_turns:
            return fresh
        self._ensure_tenants(
            [(S.EPISODE, t.episode.scope.parts()) for t in new_turns]
            + [(S.RECORD_SPECS[r.kind], r.scope.parts()) for r, _ in notes]
        )
        self._put_records(notes, "notes")
        try:
            for turn in new_turns:
                if turn.merge_into is not None:
                    self._merge(turn.merge_into, turn.episode, turn.merged_tags)
                if turn.supersedes and turn.note is not None:
                    self._supersede(turn.supersedes, turn.note.id, turn.episode.at)
                if turn.superseded_at is not None and turn.note is not None:
                    newer, when = turn.superseded_at
                    self._supersede([turn.note.id], newer, when)
            self._put_episodes([t.episode for t in new_turns])
        except BaseException:
            # Undo only the notes whose episode did not get committed: a failure after the
            # commit point (a lost acknowledgement) must not remove what is now stored. When
            # that cannot be checked, nothing is undone; sending the call again finishes it.
            with contextlib.suppress(Exception):
                committed = self.existing_episode_ids({t.episode.id for t in new_turns})
                source = {t.note.id: t.episode.id for t in new_turns if t.note is not None}
                self._undo_records([r for r, _ in notes if source.get(r.id) not in committed])
            raise
        return fresh

    def add_records(self, records: Sequence[Record], vectors: Vectors) -> None:
        records = list(records)
        matrix = self._checked_vectors(vectors, len(records), "add_records")
        if not records:
            return
        assert matrix is not None
        ids = [r.id for r in records]
        duplicates = {i for i in ids if ids.count(i) > 1}
        taken = set(self._locate(ids, fresh=True)) | duplicates
        if taken:
            raise InvalidInputError(
                f"record id(s) {sorted(taken)[:5]} already exist (or repeat in this call); "
                "derived records need new ids"
            )
        for record in records:
            if record.kind not in S.RECORD_SPECS:
                raise InvalidInputError(
                    f"add_records takes notes, summaries and procedures, not {record.kind.value}"
                )
        self._ensure_tenants((S.RECORD_SPECS[r.kind], r.scope.parts()) for r in records)
        self._put_records(list(zip(records, matrix)), "records")

    def replace_records(self, records: Sequence[Record], vectors: Vectors) -> None:
        """Insert records, replacing any with the same id and its provenance.

        Counters are event objects here, so a replacement's counts are stored as the
        difference to the events already logged: reading it back gives its own counts.
        """
        records = list(records)
        matrix = self._checked_vectors(vectors, len(records), "replace_records")
        if not records:
            return
        assert matrix is not None
        for record in records:
            if record.kind not in S.RECORD_SPECS:
                raise InvalidInputError(
                    "replace_records takes notes, summaries and procedures, "
                    f"not {record.kind.value}"
                )
        ids = [r.id for r in records]
        old = self._locate(ids, fresh=True)
        wanted = {r.id: (r.kind, tenant_name(r.scope.parts())) for r in records}
        moved = {rid: loc for rid, loc in old.items() if loc != wanted[rid]}
        if moved:
            self._delete_records_at(moved)
        if old:
            from weaviate.classes.query import Filter

            for chunk in _chunks([rid for rid in old if rid not in moved]):
                self._delete_where(
                    S.SOURCE,
                    None,
                    Filter.by_property("record_id").contains_any(chunk),
                    "provenance",
                )
        logged = self._counts([rid for rid in old if rid not in moved])
        adjusted = [
            replace(
                r,
                access_count=max(0, r.access_count - logged[r.id].access),
                used_count=max(0, r.used_count - logged[r.id].used),
                ignored_count=max(0, r.ignored_count - logged[r.id].ignored),
            )
            if r.id in logged
            else r
            for r in records
        ]
        self._ensure_tenants((S.RECORD_SPECS[r.kind], r.scope.parts()) for r in adjusted)
        self._put_records(list(zip(adjusted, matrix)), "records", undo=False)

    def _put_records(
        self, items: Sequence[tuple[Record, Any]], what: str, *, undo: bool = True
    ) -> None:
        """Records, then their provenance edges, then their locators (which make them found).

        If a step fails, what this call wrote is removed again before the error is raised.
        """
        if not items:
            return
        from weaviate.classes.data import DataObject

        groups: dict[Target, list[tuple[Record, Any]]] = defaultdict(list)
        for record, vector in items:
            groups[(S.RECORD_SPECS[record.kind], tenant_name(record.scope.parts()))].append(
                (record, vector)
            )
        try:
            for (spec, tenant), group in groups.items():
                objects = [
                    DataObject(
                        uuid=object_uuid("record", r.id),
                        properties=record_properties(r, seq=self._seq.next()),
                        vector={self._live_vector(): np.asarray(v, np.float32).tolist()},
                    )
                    for r, v in group
                ]
                self._insert(spec, tenant, objects, what, [r.id for r, _ in group])
            records = [r for r, _ in items]
            self._put_sources([(r.id, s) for r in records for s in r.provenance])
            self._insert(
                S.LOCATOR,
                None,
                [self._locator(r.id, r.kind, r.scope) for r in records],
                f"{what} locators",
                [r.id for r in records],
            )
        except BaseException:
            if undo:  # a replacement is not undone: sending it again finishes it
                self._undo_records([r for r, _ in items])
            raise

    def _put_sources(self, edges: Sequence[tuple[str, str]]) -> None:
        from weaviate.classes.data import DataObject

        unique = list(dict.fromkeys(edges))
        objects = [
            DataObject(
                uuid=object_uuid("source", rid, sid),
                properties={"record_id": rid, "source_id": sid},
            )
            for rid, sid in unique
        ]
        self._insert(S.SOURCE, None, objects, "provenance edges", [f"{r}<-{s}" for r, s in unique])

    def _put_episodes(self, episodes: Sequence[Episode]) -> None:
        from weaviate.classes.data import DataObject

        groups: dict[str, list[Episode]] = defaultdict(list)
        for episode in episodes:
            groups[tenant_name(episode.scope.parts())].append(episode)
        for tenant, group in groups.items():
            objects = [
                DataObject(
                    uuid=object_uuid("episode", e.id),
                    properties=episode_properties(e, seq=self._seq.next()),
                )
                for e in group
            ]
            self._insert(S.EPISODE, tenant, objects, "episodes", [e.id for e in group])
        # the commit point: an episode counts as stored once its locator exists
        self._insert(
            S.LOCATOR,
            None,
            [self._locator(e.id, Kind.EPISODE, e.scope) for e in episodes],
            "episode locators",
            [e.id for e in episodes],
        )

    def _undo_records(self, records: Sequence[Record]) -> None:
        """Best effort: remove records this call wrote before it failed."""
        if not records or self._closed:
            return
        # the original error matters more; a retry rewrites these anyway
        with contextlib.suppress(Exception):
            self._delete_records_at({r.id: (r.kind, tenant_name(r.scope.parts())) for r in records})

    def _merge(self, target: str, episode: Episode, tags: Tags | None) -> None:
        location = self._locate([target]).get(target)
        if location is None:
            return
        kind, tenant = location
        self._put_sources([(target, episode.id)])
        # a repeated statement is fresh again, but frequency is earned by use, never by a
        # merge: a "seen" event moves the last access without counting one
        self._put_events(
            [(target, "seen", episode.at)], ids=[object_uuid("merge", target, episode.id)]
        )
        # "merged" (set, never cleared) tells readers to look for Source edges as well
        changes: dict[str, Any] = {"merged": True}
        if tags is not None:
            changes.update(tag_properties(tags))
        self._patch(
            S.RECORD_SPECS[kind],
            tenant,
            object_uuid("record", target),
            changes,
            "merge into a note",
        )

    def _supersede(self, old_ids: Sequence[str], new_id: str, at: datetime) -> None:
        when = as_utc(at)
        rows = self._fetch_rows(old_ids)
        jobs: list[Callable[[], bool]] = []
        for spec, tenant, props in rows:
            if props.get("superseded_by"):
                continue
            jobs.append(
                partial(
                    self._patch,
                    spec,
                    tenant,
                    object_uuid("record", str(props["record_id"])),
                    {
                        "valid_to": when,
                        "superseded_by": new_id,
                        "tier": Tier.COLD.value,
                        "tier_since": when,
                    },
                    "supersede a record",
                )
            )
        self._parallel(jobs)
        # a summary built on a superseded fact no longer holds
        derived = self._fetch_rows(self.derived_from(old_ids))
        self._parallel(
            [
                partial(
                    self._patch,
                    spec,
                    tenant,
                    object_uuid("record", str(props["record_id"])),
                    {"status": Status.INVALID.value, "status_since": when},
                    "invalidate a summary",
                )
                for spec, tenant, props in derived
                if props["kind"] == Kind.SUMMARY.value and props["status"] == Status.ACTIVE.value
            ]
        )

    def get_episode(self, episode_id: str) -> Episode | None:
        location = self._locate([episode_id]).get(episode_id)
        if location is None or location[0] is not Kind.EPISODE or location[1] == FORGOTTEN:
            return None
        try:
            obj = self._call(
                lambda: self._tcol(S.EPISODE, location[1]).query.fetch_object_by_id(
                    object_uuid("episode", episode_id)
                ),
                "read an episode",
            )
        except StoreError as exc:
            if _TENANT_MISSING.search(str(exc)):
                return None
            raise
        return None if obj is None else episode_from(obj.properties)

    def get_episodes(
        self, scope: Scope, *, limit: int, before_seq: int | None = None
    ) -> list[Episode]:
        from weaviate.classes.query import Filter, Sort

        where = None if before_seq is None else Filter.by_property("seq").less_than(before_seq)

        def newest(spec: S.Spec, tenant: str) -> list[Mapping[str, Any]]:
            found = self._call(
                lambda: self._tcol(spec, tenant).query.fetch_objects(
                    filters=where, sort=Sort.by_property("seq", ascending=False), limit=limit
                ),
                "read episodes",
            )
            return [o.properties for o in found.objects]

        rows = self._fan_out(self._targets(scope, [S.EPISODE]), newest)
        rows.sort(key=lambda p: -int(p["seq"]))
        return [episode_from(p) for p in rows[:limit] if scope.contains(scope_of(p))]

    def get_record(self, record_id: str, *, any_status: bool = False) -> Record | None:
        found = self.get_records([record_id])
        if not found or (not any_status and found[0].status is not Status.ACTIVE):
            return None
        return found[0]

    def get_records(self, record_ids: Collection[str]) -> list[Record]:
        rows = self._fetch_rows(record_ids)
        return self._hydrate([props for _, _, props in rows])

    def _fetch_rows(
        self, record_ids: Iterable[str], *, vectors: bool = False
    ) -> list[tuple[S.Spec, str, Mapping[str, Any]]]:
        """The stored properties (and vectors) of these records, wherever they live."""
        from weaviate.classes.query import Filter

        groups: dict[Target, list[str]] = defaultdict(list)
        for rid, (kind, tenant) in self._locate(record_ids).items():
            if kind in S.RECORD_SPECS:
                groups[(S.RECORD_SPECS[kind], tenant)].append(rid)

        def fetch(spec: S.Spec, tenant: str) -> list[tuple[S.Spec, str, Mapping[str, Any]]]:
            rows: list[tuple[S.Spec, str, Mapping[str, Any]]] = []
            for chunk in _chunks(groups[(spec, tenant)]):
                where = Filter.by_id().contains_any([object_uuid("record", rid) for rid in chunk])
                found = self._call(
                    partial(
                        self._tcol(spec, tenant).query.fetch_objects,
                        filters=where,
                        limit=len(chunk),
                        include_vector=[self._live_vector()] if vectors else False,
                        return_properties=S.RECORD_RETURN,
                    ),
                    "read records",
                )
                for obj in found.objects:
                    props = flatten(obj.properties)
                    if vectors:
                        props["__vector__"] = _default_vector(obj.vector, self._live_vector())
                    rows.append((spec, tenant, props))
            return rows

        return self._fan_out(list(groups), fetch)

    def iter_records(self, query: RecordQuery, *, batch: int = 1000) -> Iterator[Record]:
        specs = [S.RECORD_SPECS[k] for k in query.kinds if k in S.RECORD_SPECS]
        targets = self._targets(query.scope, specs)
        where = _record_filter(query)
        size = max(1, min(batch, _MAX_RESULTS))
        streams = [self._stream(spec, tenant, where, size) for spec, tenant in targets]
        for _, record in heapq.merge(*streams, key=lambda pair: pair[0]):
            yield record

    def _stream(
        self, spec: S.Spec, tenant: str, where: _Filters | None, size: int
    ) -> Iterator[tuple[int, Record]]:
        """One tenant's matching records, oldest first, fetched ``size`` at a time."""
        from weaviate.classes.query import Filter, Sort

        last = -1
        while True:
            page_filter = Filter.by_property("seq").greater_than(last)
            if where is not None:
                page_filter = page_filter & where
            try:
                found = self._call(
                    partial(
                        self._tcol(spec, tenant).query.fetch_objects,
                        filters=page_filter,
                        limit=size,
                        sort=Sort.by_property("seq"),
                        return_properties=S.RECORD_RETURN,
                    ),
                    "list records",
                ).objects
            except StoreError as exc:
                if _TENANT_MISSING.search(str(exc)):
                    return
                raise
            if not found:
                return
            rows = [flatten(o.properties) for o in found]
            last = int(rows[-1]["seq"])
            records = self._hydrate(rows)
            yield from ((int(p["seq"]), r) for p, r in zip(rows, records))
            if len(found) < size:
                return

    def count(self, scope: Scope | None, kind: Kind) -> int:
        from weaviate.classes.query import Filter

        spec = S.KIND_SPECS[kind]
        where = (
            None
            if kind is Kind.EPISODE
            else (Filter.by_property("status").equal(Status.ACTIVE.value))
        )

        def total(spec: S.Spec, tenant: str) -> list[int]:
            result = self._call(
                lambda: self._tcol(spec, tenant).aggregate.over_all(
                    filters=where, total_count=True
                ),
                "count records",
            )
            return [int(result.total_count or 0)]

        return sum(self._fan_out(self._targets(scope, [spec]), total))

    def get_vectors(self, record_ids: Sequence[str]) -> Vectors:
        rows = {
            str(p["record_id"]): p["__vector__"]
            for _, _, p in self._fetch_rows(record_ids, vectors=True)
        }
        dim = self._dim() or (len(next(iter(rows.values()))) if rows else 0)
        out = np.zeros((len(record_ids), dim), np.float32)
        for i, rid in enumerate(record_ids):
            vector = rows.get(rid)
            if vector is not None and len(vector) == dim:
                out[i] = vector
        return out

    # -- search ----------------------------------------------------------------------------------

    def search(
        self,
        scope: Scope,
        vector: Vectors,
        *,
        text: str | None,
        limit: int,
        kinds: Collection[Kind] = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE),
    ) -> list[Candidate]:
        from weaviate.classes.query import Filter, MetadataQuery

        specs = [S.RECORD_SPECS[k] for k in kinds if k in S.RECORD_SPECS]
        query = np.asarray(vector, np.float32).ravel()
        if limit <= 0 or not specs:
            return []
        targets = self._targets(scope, specs)
        if not targets:
            return []
        active = Filter.by_property("status").equal(Status.ACTIVE.value)
        words = _WORD.findall(text.lower())[:32] if text else []
        keywords = " ".join(dict.fromkeys(words))
        qlist = query.tolist()

        def near(spec: S.Spec, tenant: str) -> list[tuple[str, float, Mapping[str, Any], Any]]:
            found = self._call(
                lambda: self._tcol(spec, tenant).query.near_vector(
                    near_vector=qlist,
                    target_vector=self._live_vector(),
                    limit=limit,
                    filters=active,
                    return_properties=S.RECORD_RETURN,
                    return_metadata=MetadataQuery(distance=True),
                ),
                "search by vector",
            ).objects
            return [
                ("v", 1.0 - float(o.metadata.distance or 0.0), flatten(o.properties), None)
                for o in found
            ]

        def bm25(spec: S.Spec, tenant: str) -> list[tuple[str, float, Mapping[str, Any], Any]]:
            found = self._call(
                lambda: self._tcol(spec, tenant).query.bm25(
                    query=keywords,
                    query_properties=["search"],
                    limit=limit,
                    filters=active,
                    return_properties=[*S.RECORD_RETURN, "search"],
                    return_metadata=MetadataQuery(score=True),
                ),
                "search by keyword",
            ).objects
            return [
                ("k", float(o.metadata.score or 0.0), flatten(o.properties), (spec, tenant))
                for o in found
            ]

        def both(spec: S.Spec, tenant: str) -> list[tuple[str, float, Mapping[str, Any], Any]]:
            return near(spec, tenant) + (bm25(spec, tenant) if keywords else [])

        if keywords and len(targets) == 1:  # one tenant: run the two queries side by side
            hits = [
                h
                for part in self._parallel(
                    [lambda: self._fan_out(targets, near), lambda: self._fan_out(targets, bm25)]
                )
                for h in part
            ]
        else:
            hits = self._fan_out(targets, both)
        by_vector = sorted((h for h in hits if h[0] == "v"), key=lambda h: -h[1])[:limit]
        by_keyword = sorted((h for h in hits if h[0] == "k"), key=lambda h: -h[1])[:limit]
        similarity: dict[str, float] = {}
        rows: dict[str, Mapping[str, Any]] = {}
        for _, sim, props, _ in by_vector:
            rid = str(props["record_id"])
            similarity.setdefault(rid, sim)
            rows.setdefault(rid, props)
        keyword: dict[str, float] = {}
        lexical_only: dict[Target, list[str]] = defaultdict(list)
        for _, _, props, where in by_keyword:
            rid = str(props["record_id"])
            # BM25 picks the candidates; their score is the share of query terms they hold
            # (bounded and comparable across queries, as the SQLite store scores them)
            keyword[rid] = keyword_coverage(text or "", str(props.get("search") or ""))
            if rid not in similarity:
                lexical_only[where].append(rid)
                rows[rid] = props
        if lexical_only:  # keyword-only hits need their cosine: the server computes it
            for rid, sim in self._fan_out(
                list(lexical_only),
                lambda spec, tenant: self._cosines(
                    spec, tenant, lexical_only[(spec, tenant)], qlist
                ),
            ):
                similarity[rid] = sim
        for rid in [r for r in rows if r not in similarity]:
            similarity[rid] = 0.0  # pragma: no cover - deleted between the two queries
        visible = [p for p in rows.values() if scope.contains(scope_of(p))]
        records = self._hydrate(visible)
        ranked = sorted(records, key=lambda r: -similarity[r.id])
        return [Candidate(r, similarity[r.id], keyword.get(r.id, 0.0)) for r in ranked]

    def _cosines(
        self, spec: S.Spec, tenant: str, ids: Sequence[str], query: list[float]
    ) -> list[tuple[str, float]]:
        """The cosine similarity of these records to ``query``, without moving their vectors."""
        from weaviate.classes.query import Filter, MetadataQuery

        found = self._call(
            partial(
                self._tcol(spec, tenant).query.near_vector,
                near_vector=query,
                target_vector=self._live_vector(),
                limit=len(ids),
                filters=Filter.by_id().contains_any([object_uuid("record", r) for r in ids]),
                return_properties=["record_id"],
                return_metadata=MetadataQuery(distance=True),
            ),
            "measure keyword hits",
        ).objects
        return [
            (str(o.properties["record_id"]), 1.0 - float(o.metadata.distance or 0.0)) for o in found
        ]

    def nearest(self, scope: Scope, vectors: Vectors) -> list[tuple[str, float] | None]:
        """For each row, the nearest active note visible in ``scope`` and its cosine."""
        from weaviate.classes.query import Filter, MetadataQuery

        matrix = np.asarray(vectors, np.float32)
        if matrix.ndim == 1:
            matrix = matrix.reshape(1, -1)
        if len(matrix) == 0:
            return []
        targets = self._targets(scope, [S.NOTE])
        active = Filter.by_property("status").equal(Status.ACTIVE.value)
        best: list[tuple[str, float] | None] = [None] * len(matrix)
        if not targets:
            return best

        def one(row: int, spec: S.Spec, tenant: str) -> tuple[int, str, float, Mapping[str, Any]]:
            found = self._call(
                partial(
                    self._tcol(spec, tenant).query.near_vector,
                    near_vector=matrix[row].tolist(),
                    target_vector=self._live_vector(),
                    limit=1,
                    filters=active,
                    return_properties=["record_id", "scope_user", "scope_agent", "scope_thread"],
                    return_metadata=MetadataQuery(distance=True),
                ),
                "find the nearest note",
            ).objects
            if not found:
                return row, "", -2.0, {}
            hit = found[0]
            return (
                row,
                str(hit.properties["record_id"]),
                1.0 - float(hit.metadata.distance or 0.0),
                hit.properties,
            )

        jobs = [
            partial(one, row, spec, tenant)
            for row in range(len(matrix))
            for spec, tenant in targets
        ]
        for row, rid, sim, props in self._parallel(jobs):
            if rid and scope.contains(scope_of(props)):
                current = best[row]
                if current is None or sim > current[1]:
                    best[row] = (rid, sim)
        return best

    def recent_records(self, scope: Scope, *, kinds: Collection[Kind], limit: int) -> list[Record]:
        from weaviate.classes.query import Filter, Sort

        specs = [S.RECORD_SPECS[k] for k in kinds if k in S.RECORD_SPECS]
        active = Filter.by_property("status").equal(Status.ACTIVE.value)
        if limit <= 0:
            return []

        def newest(spec: S.Spec, tenant: str) -> list[Mapping[str, Any]]:
            found = self._call(
                lambda: self._tcol(spec, tenant).query.fetch_objects(
                    filters=active,
                    sort=Sort.by_property("seq", ascending=False),
                    limit=limit,
                    return_properties=S.RECORD_RETURN,
                ),
                "read recent records",
            )
            return [flatten(o.properties) for o in found.objects]

        rows = self._fan_out(self._targets(scope, specs), newest)
        rows.sort(key=lambda p: -int(p["seq"]))
        return self._hydrate([p for p in rows[:limit] if scope.contains(scope_of(p))])

    # -- reading counters and provenance ---------------------------------------------------------

    def _hydrate(self, rows: Sequence[Mapping[str, Any]]) -> list[Record]:
        """Records from stored properties, with counter events and provenance folded in."""
        self._check_open()
        if not rows:
            return []
        ids = list(dict.fromkeys(str(p["record_id"]) for p in rows))
        # provenance written with the record is in its state; only merges add Source edges
        merged = list(dict.fromkeys(str(p["record_id"]) for p in rows if p.get("merged")))
        pending = self._pool.submit(self._sources, merged) if merged else None
        counts = self._counts(ids)
        sources = pending.result() if pending is not None else {}
        return [
            record_from(
                p,
                provenance=tuple(
                    sorted({*p.get("provenance", ()), *sources.get(str(p["record_id"]), ())})
                ),
                counts=counts.get(str(p["record_id"]), Counts()),
            )
            for p in rows
        ]

    def _counts(self, ids: Sequence[str]) -> dict[str, Counts]:
        from weaviate.classes.aggregate import GroupByAggregate
        from weaviate.classes.query import Filter, Metrics

        tallies: dict[str, dict[str, Any]] = defaultdict(dict)
        for chunk in _chunks(list(ids), 300):
            keys = [f"{f}:{rid}" for rid in chunk for f in ("access", "used", "ignored", "seen")]
            result: Any = self._call(
                partial(
                    self._col(S.COUNTER).aggregate.over_all,
                    filters=Filter.by_property("key").contains_any(keys),
                    group_by=GroupByAggregate(prop="key", limit=len(keys)),
                    total_count=True,
                    return_metrics=Metrics("at").date_(maximum=True),
                ),
                "read counters",
            )
            for group in result.groups:
                field, rid = str(group.grouped_by.value).split(":", 1)
                metric = group.properties.get("at")
                tallies[rid][field] = (
                    int(group.total_count or 0),
                    parse_date(getattr(metric, "maximum", None)),
                )
        out = {}
        for rid, fields in tallies.items():
            lasts = [
                fields[f][1] for f in ("access", "used", "seen") if f in fields and fields[f][1]
            ]
            out[rid] = Counts(
                access=fields.get("access", (0, None))[0],
                used=fields.get("used", (0, None))[0],
                ignored=fields.get("ignored", (0, None))[0],
                last=max(lasts) if lasts else None,
            )
        return out

    def _sources(self, ids: Sequence[str]) -> dict[str, list[str]]:
        from weaviate.classes.query import Filter

        out: dict[str, list[str]] = defaultdict(list)
        for chunk in _chunks(list(ids), 200):
            found = self._call(
                partial(
                    self._col(S.SOURCE).query.fetch_objects,
                    filters=Filter.by_property("record_id").contains_any(chunk),
                    limit=_MAX_RESULTS,
                ),
                "read provenance",
            ).objects
            if len(found) >= _MAX_RESULTS:
                raise StoreError(
                    "a batch of records has over 10,000 provenance edges; read "
                    "fewer records at a time"
                )
            for obj in found:
                out[str(obj.properties["record_id"])].append(str(obj.properties["source_id"]))
        return out

    # -- updates ---------------------------------------------------------------------------------

    def _put_events(
        self, events: Sequence[tuple[str, str, datetime]], ids: Sequence[uuid.UUID] | None = None
    ) -> None:
        from weaviate.classes.data import DataObject

        objects = [
            DataObject(
                uuid=ids[i] if ids is not None else uuid.uuid4(),
                properties={
                    "key": f"{field}:{rid}",
                    "record_id": rid,
                    "field": field,
                    "at": as_utc(at),
                },
            )
            for i, (rid, field, at) in enumerate(events)
        ]
        self._insert(S.COUNTER, None, objects, "counter events", [f"{f}:{r}" for r, f, _ in events])

    def touch(self, record_ids: Collection[str], *, at: datetime) -> None:
        known = self._locate(record_ids)
        self._put_events([(rid, "access", at) for rid in record_ids if rid in known])

    def record_feedback(
        self, *, used: Collection[str], ignored: Collection[str], at: datetime
    ) -> None:
        known = self._locate([*used, *ignored])
        self._put_events(
            [(rid, "used", at) for rid in used if rid in known]
            + [(rid, "ignored", at) for rid in ignored if rid in known]
        )

    def uses_since(self, record_ids: Collection[str], since: datetime) -> dict[str, int]:
        from weaviate.classes.aggregate import GroupByAggregate
        from weaviate.classes.query import Filter

        out: dict[str, int] = {}
        for chunk in _chunks(list(record_ids)):
            keys = [f"used:{rid}" for rid in chunk]
            where = Filter.by_property("key").contains_any(keys) & Filter.by_property(
                "at"
            ).greater_or_equal(as_utc(since))
            result: Any = self._call(
                partial(
                    self._col(S.COUNTER).aggregate.over_all,
                    filters=where,
                    group_by=GroupByAggregate(prop="key", limit=len(keys)),
                    total_count=True,
                ),
                "count uses",
            )
            for group in result.groups:
                if group.total_count:
                    out[str(group.grouped_by.value).split(":", 1)[1]] = int(group.total_count)
        return out

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
        tags: Any = None,
    ) -> None:
        when = as_utc(at)
        props: dict[str, Any] = {}
        if tier is not None:
            props.update(tier=Tier(tier).value, tier_since=when)
        if status is not None:
            props.update(status=Status(status).value, status_since=when)
        if pinned is not None:
            props["pinned"] = bool(pinned)
        if valid_to is not None:
            props["valid_to"] = as_utc(valid_to)
        if superseded_by is not None:
            props["superseded_by"] = superseded_by
        if isinstance(tags, Tags):
            props.update(tag_properties(tags))
        if not props or not record_ids:
            return
        located = self._locate(record_ids)
        self._parallel(
            [
                partial(
                    self._patch,
                    S.RECORD_SPECS[kind],
                    tenant,
                    object_uuid("record", rid),
                    props,
                    "update a record",
                )
                for rid, (kind, tenant) in located.items()
                if kind in S.RECORD_SPECS
            ]
        )

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
            for chunk in _chunks(ids):
                try:
                    self._delete_where(
                        spec,
                        tenant,
                        Filter.by_id().contains_any([object_uuid("record", rid) for rid in chunk]),
                        "records",
                    )
                except StoreError as exc:
                    if not _TENANT_MISSING.search(str(exc)):
                        raise
        ids = list(located)
        for chunk in _chunks(ids):
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
            for chunk in _chunks(ids):
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

    def derived_from(self, source_ids: Collection[str]) -> list[str]:
        from weaviate.classes.query import Filter

        out: dict[str, None] = {}
        for chunk in _chunks(list(source_ids)):
            found = self._call(
                partial(
                    self._col(S.SOURCE).query.fetch_objects,
                    filters=Filter.by_property("source_id").contains_any(chunk),
                    limit=_MAX_RESULTS,
                ),
                "read provenance",
            ).objects
            for obj in found:
                out[str(obj.properties["record_id"])] = None
        return list(out)

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
                if not _TENANT_MISSING.search(str(exc)):
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
        where = _scope_where(scope)
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
        for chunk in _chunks(list(located)):
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
        for chunk in _chunks(stale):
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
                partial(self._col(S.CARD).query.fetch_objects, filters=where, limit=_MAX_RESULTS),
                "read cards",
            ).objects
            user, agent, thread = (value or None for value in parts)
            note_scope = Scope(user=user, agent=agent, thread=thread)
            # a card is written from the notes its scope owns: only those cards are stale
            cards += [obj.uuid for obj in found if scope_of(obj.properties).owns(note_scope)]
        for chunk in _chunks(cards):
            self._delete_where(S.CARD, None, Filter.by_id().contains_any(chunk), "cards")

    # -- links -----------------------------------------------------------------------------------

    def reinforce_links(
        self, pairs: Sequence[tuple[str, str, str]], *, delta: float, at: datetime
    ) -> None:
        from weaviate.classes.data import DataObject

        keys = [(min(a, b), max(a, b), kind) for a, b, kind in pairs if a != b]
        if not keys:
            return
        with self._links_lock:
            current = self._link_weights(list(dict.fromkeys(keys)))
            weights: dict[tuple[str, str, str], float] = {}
            for key in keys:  # in order, so a pair given twice is reinforced twice
                base = weights.get(key, current.get(key))
                weights[key] = min(1.0, delta) if base is None else min(1.0, base + delta)
            objects = [
                DataObject(
                    uuid=object_uuid("link", a, b, kind),
                    properties={
                        "a": a,
                        "b": b,
                        "kind": kind,
                        "weight": w,
                        "updated_at": as_utc(at),
                    },
                )
                for (a, b, kind), w in weights.items()
            ]
            self._insert(S.LINK, None, objects, "links", [f"{a}~{b}" for a, b, _ in weights])

    def _link_weights(
        self, keys: Sequence[tuple[str, str, str]]
    ) -> dict[tuple[str, str, str], float]:
        from weaviate.classes.query import Filter

        out = {}
        for chunk in _chunks(list(keys)):
            uuids = [object_uuid("link", *key) for key in chunk]
            found = self._call(
                partial(
                    self._col(S.LINK).query.fetch_objects,
                    filters=Filter.by_id().contains_any(uuids),
                    limit=len(uuids),
                ),
                "read links",
            ).objects
            for obj in found:
                p = obj.properties
                out[(str(p["a"]), str(p["b"]), str(p["kind"]))] = float(p["weight"])
        return out

    def links_of(self, record_ids: Collection[str], *, min_weight: float) -> list[Link]:
        from weaviate.classes.query import Filter

        out: dict[tuple[str, str, str], Link] = {}
        for chunk in _chunks(list(record_ids)):
            where = (
                Filter.by_property("a").contains_any(chunk)
                | Filter.by_property("b").contains_any(chunk)
            ) & Filter.by_property("weight").greater_or_equal(min_weight)
            found = self._call(
                partial(self._col(S.LINK).query.fetch_objects, filters=where, limit=_MAX_RESULTS),
                "read links",
            ).objects
            for obj in found:
                p = obj.properties
                link = Link(
                    str(p["a"]),
                    str(p["b"]),
                    str(p["kind"]),
                    float(p["weight"]),
                    parse_date(p["updated_at"]) or datetime.min,
                )
                out[(link.a, link.b, link.kind)] = link
        return list(out.values())

    def decay_links(self, *, factor: float, at: datetime) -> None:
        from weaviate.classes.data import DataObject

        with self._links_lock:
            batch: list[Any] = []
            labels: list[str] = []
            for obj in self._col(S.LINK).iterator():
                p = dict(obj.properties)
                p["weight"] = float(p["weight"]) * factor
                batch.append(DataObject(uuid=obj.uuid, properties=p))
                labels.append(f"{p['a']}~{p['b']}")
            self._insert(S.LINK, None, batch, "decayed links", labels)

    def prune_links(self, *, min_weight: float) -> int:
        from weaviate.classes.query import Filter

        with self._links_lock:
            return self._delete_where(
                S.LINK, None, Filter.by_property("weight").less_than(min_weight), "links"
            )

    # -- bookkeeping -----------------------------------------------------------------------------

    def append_audit(self, entries: Sequence[AuditEntry]) -> None:
        from weaviate.classes.data import DataObject

        objects = [
            DataObject(
                uuid=uuid.uuid4(),
                properties={
                    "at": as_utc(e.at),
                    **scope_props(e.scope),
                    "action": e.action,
                    "rule": e.rule,
                    "record_id": e.record_id,
                    "detail": e.detail,
                    "seq": self._seq.next(),
                },
            )
            for e in entries
        ]
        self._insert(S.AUDIT, None, objects, "audit entries", [e.record_id for e in entries])

    def audit_log(self, scope: Scope | None, *, limit: int) -> list[AuditEntry]:
        from weaviate.classes.query import Sort

        found = self._call(
            lambda: self._col(S.AUDIT).query.fetch_objects(
                filters=_scope_filter(scope),
                sort=Sort.by_property("seq", ascending=False),
                limit=max(1, min(limit, _MAX_RESULTS)),
            ),
            "read the audit log",
        ).objects
        return [
            AuditEntry(
                parse_date(p["at"]) or datetime.min,
                scope_of(p),
                str(p["action"]),
                str(p["rule"]),
                str(p["record_id"]),
                str(p.get("detail") or ""),
            )
            for p in (o.properties for o in found)
        ][: max(0, limit)]

    def log_recall(self, log: RecallLog) -> None:
        from weaviate.classes.data import DataObject

        props: dict[str, Any] = {
            "recall_id": log.id,
            **scope_props(log.scope),
            "at": as_utc(log.at),
            "item_ids": list(log.item_ids),
            "shown_ids": list(log.shown_ids),
        }
        if log.feedback_at is not None:
            props["feedback_at"] = as_utc(log.feedback_at)
        self._insert(
            S.RECALL,
            None,
            [DataObject(uuid=object_uuid("recall", log.id), properties=props)],
            "recall logs",
            [log.id],
        )

    def get_recall(self, recall_id: str) -> RecallLog | None:
        obj: Any = self._call(
            lambda: self._col(S.RECALL).query.fetch_object_by_id(object_uuid("recall", recall_id)),
            "read a recall log",
        )
        if obj is None:
            return None
        p = obj.properties
        return RecallLog(
            str(p["recall_id"]),
            scope_of(p),
            parse_date(p["at"]) or datetime.min,
            tuple(str(i) for i in (p.get("item_ids") or ())),
            parse_date(p.get("feedback_at")),
            tuple(str(i) for i in (p.get("shown_ids") or ())),
        )

    def mark_recall_feedback(self, recall_id: str, *, at: datetime) -> bool:
        # Serialised in this process; across processes two simultaneous marks may both win.
        with self._recall_lock:
            log = self.get_recall(recall_id)
            if log is None or log.feedback_at is not None:
                return False
            return self._patch(
                S.RECALL,
                None,
                object_uuid("recall", recall_id),
                {"feedback_at": as_utc(at)},
                "mark recall feedback",
            )

    def add_conflict(self, conflict: Conflict) -> None:
        from weaviate.classes.data import DataObject

        key = object_uuid("conflict", conflict.id)
        if (
            self._call(
                lambda: self._col(S.CONFLICT).query.fetch_object_by_id(key), "read a conflict"
            )
            is not None
        ):
            return
        props: dict[str, Any] = {
            "conflict_id": conflict.id,
            **scope_props(conflict.scope),
            "entity": conflict.entity,
            "reason": conflict.reason,
            "record_ids": list(conflict.record_ids),
            "created_at": as_utc(conflict.created_at),
        }
        if conflict.resolved_at is not None:
            props["resolved_at"] = as_utc(conflict.resolved_at)
        if conflict.resolution is not None:
            props["resolution"] = conflict.resolution
        self._insert(
            S.CONFLICT, None, [DataObject(uuid=key, properties=props)], "conflicts", [conflict.id]
        )

    def conflicts(self, scope: Scope | None, *, open_only: bool) -> list[Conflict]:
        from weaviate.classes.query import Filter, Sort

        where = _scope_filter(scope)
        if open_only:
            unresolved = Filter.by_property("resolved_at").is_none(True)
            where = unresolved if where is None else where & unresolved
        found = self._call(
            lambda: self._col(S.CONFLICT).query.fetch_objects(
                filters=where, sort=Sort.by_property("created_at"), limit=_MAX_RESULTS
            ),
            "read conflicts",
        ).objects
        return [
            Conflict(
                str(p["conflict_id"]),
                scope_of(p),
                str(p["entity"]),
                str(p["reason"]),
                tuple(str(i) for i in (p.get("record_ids") or ())),
                parse_date(p["created_at"]) or datetime.min,
                parse_date(p.get("resolved_at")),
                p.get("resolution"),
            )
            for p in (o.properties for o in found)
        ]

    def resolve_conflict(self, conflict_id: str, *, resolution: str, at: datetime) -> None:
        self._patch(
            S.CONFLICT,
            None,
            object_uuid("conflict", conflict_id),
            {"resolved_at": as_utc(at), "resolution": resolution},
            "resolve a conflict",
        )

    def get_card(self, scope: Scope, kind: str) -> Card | None:
        obj = self._call(
            lambda: self._col(S.CARD).query.fetch_object_by_id(
                object_uuid("card", *scope.parts(), kind)
            ),
            "read a card",
        )
        if obj is None or scope_of(obj.properties) != scope:
            return None
        p = obj.properties
        return Card(
            scope,
            kind,
            str(p["text"]),
            parse_date(p["updated_at"]) or datetime.min,
            _json(p.get("data")),
        )

    def put_card(self, card: Card) -> None:
        import json

        from weaviate.classes.data import DataObject

        props = {
            **scope_props(card.scope),
            "kind": card.kind,
            "text": card.text,
            "data": json.dumps(dict(card.data), ensure_ascii=False),
            "updated_at": as_utc(card.updated_at),
        }
        self._insert(
            S.CARD,
            None,
            [
                DataObject(
                    uuid=object_uuid("card", *card.scope.parts(), card.kind), properties=props
                )
            ],
            "cards",
            [f"{card.scope} {card.kind}"],
        )

    def _total(self, spec: S.Spec) -> int:
        """How many objects a single-tenant collection holds."""
        result: Any = self._call(
            partial(self._col(spec).aggregate.over_all, total_count=True), "count objects"
        )
        return int(result.total_count or 0)

    # -- maintenance -----------------------------------------------------------------------------

    def drop(self) -> None:
        """Delete this store's collections and everything in them (tests, re-imports)."""
        names = [self._settings.prefix + spec.suffix for spec in S.SPECS]
        self._call(lambda: self._client.collections.delete(names), "delete the collections")
        self._known.clear()
        self._locations.clear()
        self._pin = None
        self._vector = None


# -- helpers ------------------------------------------------------------------------------------


def _connect(settings: Settings) -> WeaviateClient:
    """A connected, checked client, or a StoreError saying why not and what to do."""
    import weaviate
    from weaviate.classes.init import AdditionalConfig, Auth, Timeout
    from weaviate.exceptions import WeaviateBaseError

    auth = Auth.api_key(settings.api_key) if settings.api_key else None
    config = AdditionalConfig(
        timeout=Timeout(
            init=settings.connect_timeout, query=settings.timeout, insert=settings.timeout
        )
    )
    try:
        client = weaviate.connect_to_custom(
            http_host=settings.host,
            http_port=settings.http_port,
            http_secure=settings.secure,
            grpc_host=settings.grpc_host or settings.host,
            grpc_port=settings.grpc_port,
            grpc_secure=settings.secure,
            auth_credentials=auth,
            additional_config=config,
            skip_init_checks=False,
        )
    except WeaviateBaseError as exc:
        raise _startup_error(exc, settings) from exc
    try:
        version = str(client.get_meta().get("version", "0"))
    except WeaviateBaseError as exc:
        client.close()
        raise _startup_error(exc, settings) from exc
    if _version(version) < MIN_SERVER_VERSION:
        client.close()
        raise StoreError(_too_old(version, settings))
    return client


def _startup_error(exc: BaseException, settings: Settings) -> StoreError:
    text = " ".join(str(exc).split())
    lowered = text.lower()
    found = re.search(r"weaviate version (\d+\.\d+\.\d+)", lowered)
    if found and "not supported" in lowered:
        return StoreError(_too_old(found.group(1), settings))
    if "401" in lowered or "unauthorized" in lowered or "authentication" in lowered:
        return StoreError(
            f"Weaviate at {settings.where} refused the connection's credentials; pass the "
            "server's API key (weaviate://:KEY@host:port, api_key=..., or $WEAVIATE_API_KEY)"
        )
    if "grpc" in lowered and ("health" in lowered or "unavailable" in lowered):
        return StoreError(
            f"cannot reach Weaviate's gRPC port at {settings.where}: {text[:300]}; the HTTP "
            "port may be right but gRPC is not there: set ?grpc_port= to the server's GRPC_PORT"
        )
    return StoreError(
        f"cannot reach Weaviate at {settings.where}: {text[:300]}; check that the server is "
        "running and the host and ports are right (weaviate://host:HTTP_PORT?grpc_port=PORT), "
        "or start one with `commonplace-weaviate server start`"
    )


def _too_old(version: str, settings: Settings) -> str:
    need = ".".join(map(str, MIN_SERVER_VERSION))
    return (
        f"Weaviate at {settings.where} is version {version}; commonplace-weaviate needs "
        f"{need} or newer: upgrade the server"
    )


def _version(text: str) -> tuple[int, int, int]:
    numbers = [int(n) for n in re.findall(r"\d+", text)[:3]]
    numbers += [0] * (3 - len(numbers))
    return numbers[0], numbers[1], numbers[2]


def _parts_props(parts: Parts) -> dict[str, str]:
    return {"scope_user": parts[0], "scope_agent": parts[1], "scope_thread": parts[2]}


def _scope_filter(scope: Scope | None) -> _Filters | None:
    """Equality on every field the scope sets (values are bound, never interpolated)."""
    from weaviate.classes.query import Filter

    if scope is None:
        return None
    clauses = [
        Filter.by_property(name).equal(value)
        for name, value in zip(("scope_user", "scope_agent", "scope_thread"), scope.parts())
        if value
    ]
    return Filter.all_of(clauses) if len(clauses) > 1 else clauses[0]


def _scope_where(scope: Scope) -> _Filters:
    where = _scope_filter(scope)
    assert where is not None  # a Scope always sets at least one field
    return where


def _record_filter(query: RecordQuery) -> _Filters | None:
    from weaviate.classes.query import Filter

    clauses = [
        Filter.by_property("status").contains_any([Status(s).value for s in query.statuses]),
    ]
    if query.tiers is not None:
        clauses.append(
            Filter.by_property("tier").contains_any([Tier(t).value for t in query.tiers])
        )
    if query.subject is not None:
        clauses.append(Filter.by_property("subject").equal(query.subject))
    if query.predicate is not None:
        clauses.append(Filter.by_property("predicate").equal(query.predicate))
    if query.entity is not None:
        clauses.append(Filter.by_property("entities").contains_any([query.entity.lower()]))
    if query.superseded is not None:
        clauses.append(Filter.by_property("superseded_by").is_none(not query.superseded))
    if query.created_before is not None:
        clauses.append(Filter.by_property("created_at").less_than(as_utc(query.created_before)))
    if not query.statuses or (query.tiers is not None and not query.tiers):
        clauses.append(Filter.by_property("seq").less_than(0))  # an empty IN matches nothing
    if query.scope is not None:
        scoped = _scope_filter(query.scope)
        if scoped is not None:
            clauses.append(scoped)
    return Filter.all_of(clauses)


def _by_spec(targets: Iterable[Target]) -> dict[S.Spec, list[str]]:
    out: dict[S.Spec, list[str]] = defaultdict(list)
    for spec, tenant in targets:
        out[spec].append(tenant)
    return out


def _default_vector(vector: Any, name: str = "default") -> list[float] | None:
    if isinstance(vector, Mapping):
        vector = vector.get(name)
    return None if vector is None else list(vector)


def _reembed_vector(target: EmbedderPin) -> str:
    """The named vector a re-embed to ``target`` writes (one per model and dimension)."""
    import hashlib

    digest = hashlib.sha256(f"{target.name}\x00{target.dim}".encode()).hexdigest()[:16]
    return f"m_{digest}"


def _json(text: Any) -> dict[str, Any]:
    import json

    value = json.loads(text or "{}")
    return value if isinstance(value, dict) else {}


def _chunks(items: Sequence[T], size: int = _CHUNK) -> Iterator[list[T]]:
    items = list(items)
    for start in range(0, len(items), size):
        yield items[start : start + size]


def drop_store(url: str, prefix: str) -> None:
    """Delete the collections of the store ``prefix`` on the server at ``url``."""
    settings = replace(parse_url(url, environ=os.environ), prefix=prefix)
    client = _connect(settings)
    try:
        client.collections.delete([prefix + spec.suffix for spec in S.SPECS])
    finally:
        client.close()


def wipe_store(url: str, prefix: str) -> None:
    """Empty the store ``prefix`` but keep its collections (and drop its pin)."""
    from weaviate.classes.query import Filter

    settings = replace(parse_url(url, environ=os.environ), prefix=prefix)
    client = _connect(settings)
    try:
        for spec in S.SPECS:
            col = client.collections.get(prefix + spec.suffix)
            if spec.multi_tenant:
                tenants = list(col.tenants.get())
                if tenants:
                    col.tenants.remove(tenants)
            else:
                everything = Filter.by_id().not_equal(uuid.UUID(int=0))
                while int(col.data.delete_many(where=everything).successful) > 0:
                    pass
        client.collections.get(prefix + S.NOTE.suffix).config.update(
            description=S.description(S.NOTE)
        )
    finally:
        client.close()
