"""The connection every part of the backend shares, and the schema it opens with.

``Connection`` is the base class of the backend's parts (see ``_backend``): it owns
the client, the settings, the retry policy and the worker pool, hands out
collection handles, runs every server call with retries, and on opening checks the
server and the store's collections (creating them on first use). The generic
one-object writes every part uses (a partial update, a filtered delete) live here
too. So do the functions that open a bare client without a backend: ``_connect``
itself, and ``drop_store``/``wipe_store`` for tests and benchmarks.
"""

from __future__ import annotations

import os
import re
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from commonplace.errors import SchemaVersionError, StoreClosedError, StoreError

from . import _schema as S
from ._errors import RetryPolicy, with_retries
from ._mapping import Sequencer
from ._url import Settings, parse_url

if TYPE_CHECKING:
    from weaviate import WeaviateClient
    from weaviate.collections import Collection as WCollection
    from weaviate.collections.classes.filters import _Filters

T = TypeVar("T")

MIN_SERVER_VERSION = (1, 27, 0)
"""The oldest server this backend is tested against (weaviate-client 4.x needs 1.27)."""
#: Weaviate's default QUERY_MAXIMUM_RESULTS: the most objects one query returns.
MAX_RESULTS = 10_000
_CHUNK = 500  # ids in one request's filter (``chunks`` splits longer lists)
_HANDLES = 10_000  # collection handles bound to a tenant, kept for reuse


class Connection:
    """The base of the backend's parts: a checked client, its collections, retried calls.

    Opening connects, checks that the server is recent enough, and checks (or
    creates) every collection of the store; ``close()`` releases the connection.
    """

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._policy = RetryPolicy(attempts=settings.retries)
        self._closed = False
        self._state_lock = threading.RLock()
        self._collections: dict[str, WCollection[Any, Any]] = {}
        self._tenant_handles: dict[tuple[str, str], WCollection[Any, Any]] = {}
        self._seq = Sequencer()  # orders records and episodes (no auto-increment)
        self._legacy = False  # a collection of schema version 1 is there (see _upgrade)
        self._client = _connect(settings)
        try:
            self._pool = ThreadPoolExecutor(
                max_workers=settings.workers, thread_name_prefix="commonplace-weaviate"
            )
            # reads that themselves wait for reads in ``_pool`` (so never in it: a full pool
            # would wait for itself)
            self._side = ThreadPoolExecutor(
                max_workers=2, thread_name_prefix="commonplace-weaviate-side"
            )
            self._ensure_schema()
        except BaseException:
            self._client.close()
            raise

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
        self._side.shutdown(wait=True)
        self._pool.shutdown(wait=True)
        self._client.close()

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
        if tenant is None:
            return self._col(spec)
        # a handle is a few objects the client builds each time: kept (bounded), it is made
        # once per tenant instead of once per request
        key = (spec.suffix, tenant)
        col = self._tenant_handles.get(key)
        if col is None:
            if len(self._tenant_handles) >= _HANDLES:
                self._tenant_handles.clear()
            col = self._tenant_handles[key] = self._col(spec).with_tenant(tenant)
        return col

    # -- schema ----------------------------------------------------------------------------------

    def _ensure_schema(self) -> None:
        existing = self._call(
            lambda: self._client.collections.list_all(simple=False), "read the schema"
        )
        for spec in S.LEGACY_SPECS:
            found = existing.get(self._settings.prefix + spec.suffix)
            if found is not None and S.read_description(found.description) is not None:
                self._legacy = True
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
        if marker[S.MARKER] < S.SCHEMA_VERSION:
            self._legacy = True  # upgraded once the backend is up (see _upgrade)
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

    # -- generic calls and writes ----------------------------------------------------------------

    def _parallel(self, jobs: Sequence[Callable[[], T]]) -> list[T]:
        self._check_open()
        if len(jobs) <= 1:
            return [job() for job in jobs]
        futures = [self._pool.submit(job) for job in jobs]
        return [f.result() for f in futures]

    def _delete_where(self, spec: S.Spec, tenant: str | None, where: _Filters, what: str) -> int:
        """Delete every object matching ``where`` (in rounds: the server caps one round)."""
        col = self._tcol(spec, tenant)
        total = 0
        for _ in range(10_000):
            result = self._call(lambda: col.data.delete_many(where=where), f"delete {what}")
            total += int(result.successful)
            if int(result.matches) < MAX_RESULTS or int(result.successful) == 0:
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


def chunks(items: Sequence[T], size: int = _CHUNK) -> Iterator[list[T]]:
    items = list(items)
    for start in range(0, len(items), size):
        yield items[start : start + size]


def drop_store(url: str, prefix: str) -> None:
    """Delete the collections of the store ``prefix`` on the server at ``url``."""
    settings = replace(parse_url(url, environ=os.environ), prefix=prefix)
    client = _connect(settings)
    try:
        client.collections.delete(S.names([*S.SPECS, *S.LEGACY_SPECS], prefix))
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
