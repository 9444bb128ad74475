"""CommonplaceStore: a LangGraph ``BaseStore`` that is a view over a commonplace Memory.

There is no storage of its own: every item is a record of the memory, on whatever
backend the memory uses (its SQLite file, Weaviate ...).

- ``put`` writes through the memory: the item becomes a note (``Memory.put_note``) with
  an episode as its evidence, in the scope of its namespace (``("memories", "ana")`` is
  ``Scope(user="ana")``, see :meth:`CommonplaceStore.namespace_for`). A new value
  supersedes the previous version, which keeps its history. From then on the item lives
  like any memory: recalled, strengthened by use, promoted, consolidated, decayed,
  forgotten. ``delete`` is ``Memory.forget`` (every version, with its evidence).
- ``search(query=...)`` is the memory's recall: ``Memory.recall`` for the scope of the
  namespace (one recall per scope when a prefix spans several users), its ranking and
  its scores (``SearchItem.score`` is the four-signal total), on the backend's own
  vector and keyword search. It returns what the recall shows (what it finds unrelated
  to the query is left out, where ``InMemoryStore`` would rank everything), and the
  items it returns count as used (frequency, recency).
  What the memory wrote itself is in the view too: ``store.search(("memories", "ana"),
  query=...)`` finds the notes ``memory.recall(..., scope="ana")`` finds (their key is
  the record id, their value its text, kind, tier, importance and provenance).
- ``get``, ``search`` without a query, filters, paging, ``list_namespaces`` and TTL have
  LangGraph's ``InMemoryStore`` semantics. A TTL counts from the item's put, or from its
  last use when ``refresh_on_read`` (a read with ``refresh_ttl``, a retrieval by search
  or recall). Expired items are never returned; they are forgotten when a read meets
  them, by :meth:`CommonplaceStore.sweep_ttl`, and every ``sweep_interval_minutes`` if
  the TTL config sets one (there is no background thread).

Every argument is checked before anything runs, and a refusal is one of commonplace's
errors and changes nothing: a bad namespace is :class:`InvalidStoreNamespaceError`
(also LangGraph's ``InvalidNamespaceError``); a key, query, filter or value that is not
valid JSON data (lone surrogates at any depth, NaN, non-str keys, objects JSON has no
form for, nesting beyond ``MAX_VALUE_DEPTH``) is ``InvalidInputError`` or
``InvalidTypeError``, naming the part to fix. A scope value is written in its namespace
label with ``%`` and ``.`` percent-encoded, so an email as user id just works
(``namespace_for(Scope(user="ana@example.com"))`` is ``("memories",
"ana@example%2Ecom")``).

The index config picks what is indexed (``{"fields": ["text"]}``; the whole value's
text by default); the embedding is always the memory's own embedder, so the store and
recall rank alike (open the Memory with another embedder to change it).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import uuid
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any, Literal, cast

from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NamespacePath,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    get_text_at_path,
    tokenize_path,
)

from commonplace import Memory, Scope
from commonplace.errors import (
    EmbedderMismatchError,
    InvalidInputError,
    InvalidTypeError,
    NotFoundError,
)
from commonplace.stores import RecordQuery

from ._filters import matches
from ._items import (
    ITEM_KINDS,
    STORE_SUBJECT,
    ItemView,
    fact_for,
    item_data,
    item_scope,
    plain_text,
    search_scope,
    under,
    view,
)
from ._namespaces import (
    InvalidStoreNamespaceError,
    check_labels,
    check_put_namespace,
    namespace_for,
    scope_for,
)
from ._store_ops import Plan, check_ttl_config

_MAX_TOP_K = 1000
_PAGE_POOL = 100
_MAX_BUDGET = 1_000_000
_TOKENS_PER_ITEM = 200  # room in the compiled memory for each record a search asks for


class CommonplaceStore(BaseStore):
    """A LangGraph store that is a view over ``memory`` (see the module doc).

    ``namespace_prefix`` is where the memory's own scopes live (``(*prefix, user,
    ...)``); any other namespace holds items of its own, which no user's recall shows.
    ``index`` is LangGraph's ``IndexConfig`` (only ``fields`` and a ``dims`` equal to the
    memory embedder's are accepted); ``ttl`` its ``TTLConfig`` (minutes).
    """

    supports_ttl = True

    def __init__(
        self,
        memory: Memory,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        namespace_prefix: tuple[str, ...] = ("memories",),
    ) -> None:
        if not isinstance(memory, Memory):
            raise InvalidTypeError(
                f"memory must be a commonplace.Memory, not {type(memory).__name__}"
            )
        self.memory = memory
        self.namespace_prefix = check_labels(namespace_prefix, what="namespace_prefix")
        if self.namespace_prefix[:1] == ("langgraph",):
            raise InvalidStoreNamespaceError(
                'namespace_prefix cannot start with "langgraph" (LangGraph keeps it for '
                "itself, so no item could be put there); use ('memories',), the default"
            )
        self.ttl_config = check_ttl_config(ttl)
        self._fields = _index_fields(memory, index)
        self._last_sweep: datetime | None = None

    def close(self) -> None:
        """Nothing to close: the store holds nothing of its own (the memory stays open)."""

    def __enter__(self) -> CommonplaceStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- scopes ----------------------------------------------------------------------

    def namespace_for(self, scope: Scope) -> tuple[str, ...]:
        """The namespace holding a memory scope's items: ``(*prefix, user, ...)``."""
        return namespace_for(scope, prefix=self.namespace_prefix)

    def scope_for(self, namespace: tuple[str, ...]) -> Scope | None:
        """The memory scope a namespace belongs to (None outside ``namespace_prefix``)."""
        return scope_for(tuple(namespace), prefix=self.namespace_prefix)

    # -- BaseStore's own methods -------------------------------------------------------
    # BaseStore checks namespaces before it builds the batch, with LangGraph's own
    # InvalidNamespaceError (and a bare TypeError for a namespace that is no sequence).
    # Checking first here, by the same rules, makes every refusal a commonplace error
    # that is also an InvalidNamespaceError; everything else is BaseStore's.

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        check_put_namespace(namespace)
        super().put(namespace, key, value, index, ttl=ttl)

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        check_put_namespace(namespace)
        await super().aput(namespace, key, value, index, ttl=ttl)

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        check_labels(namespace, what="namespace")
        return super().get(namespace, key, refresh_ttl=refresh_ttl)

    async def aget(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        check_labels(namespace, what="namespace")
        return await super().aget(namespace, key, refresh_ttl=refresh_ttl)

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        check_labels(namespace, what="namespace")
        super().delete(namespace, key)

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        check_labels(namespace, what="namespace")
        await super().adelete(namespace, key)

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        check_labels(namespace_prefix, what="namespace_prefix")
        return super().search(
            namespace_prefix,
            query=query,
            filter=filter,
            limit=limit,
            offset=offset,
            refresh_ttl=refresh_ttl,
        )

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        check_labels(namespace_prefix, what="namespace_prefix")
        return await super().asearch(
            namespace_prefix,
            query=query,
            filter=filter,
            limit=limit,
            offset=offset,
            refresh_ttl=refresh_ttl,
        )

    def list_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        _check_paths(prefix, suffix)
        return super().list_namespaces(
            prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset
        )

    async def alist_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        _check_paths(prefix, suffix)
        return await super().alist_namespaces(
            prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset
        )

    # -- BaseStore ---------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        plan = Plan.of(ops)
        now = self.memory.clock.now()
        self._sweep_if_due(now)
        run = _Run(now)
        results: list[Result] = [None] * plan.size
        for i, get in plan.gets:
            results[i] = self._get(get, run)
        for i, search in plan.searches:
            results[i] = self._search(search, run)
        for i, listing in plan.listings:
            results[i] = self._list_namespaces(listing, run)
        self._forget_items(run.expired.values())
        if run.used:
            self.memory.store.books.touch(list(dict.fromkeys(run.used)), at=now)
        for op in plan.puts.values():
            self._put(op, now)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # One worker thread for the whole batch: its reads and writes are many small
        # memory calls, each synchronous behind the backend's own lock.
        return await asyncio.to_thread(self.batch, list(ops))

    def sweep_ttl(self) -> int:
        """Forget every expired item now; returns how many were forgotten."""
        now = self.memory.clock.now()
        expired = [
            v
            for v in self._views(RecordQuery(scope=None, subject=STORE_SUBJECT, superseded=False))
            if v.expired(now)
        ]
        self._forget_items(expired)
        self._last_sweep = now
        return len(expired)

    # -- reads -------------------------------------------------------------------------

    def _get(self, op: GetOp, run: _Run) -> Item | None:
        found = self._current(op.namespace, op.key)
        if found is None or run.gone(found):
            return None
        if op.refresh_ttl and found.ttl_minutes is not None and found.refresh:
            run.used.append(found.record.id)
        return Item(
            value=found.value,
            key=found.key,
            namespace=found.namespace,
            created_at=found.created_at,
            updated_at=found.updated_at,
        )

    def _search(self, op: SearchOp, run: _Run) -> list[SearchItem]:
        prefix = op.namespace_prefix
        if op.query is None:
            listed = [
                v for v in self._listing(prefix) if not run.gone(v) and matches(v.value, op.filter)
            ]
            listed.sort(key=lambda v: (-v.updated_at.timestamp(), v.namespace, v.key))
            page = listed[op.offset : op.offset + op.limit]
            if op.refresh_ttl:
                run.used += [v.record.id for v in page if v.ttl_minutes is not None and v.refresh]
            return [_search_item(v, None) for v in page]
        ranked, unscored = self._recalled(op, run)
        found: list[tuple[float | None, ItemView]] = [*ranked, *((None, v) for v in unscored)]
        hits = found[op.offset : op.offset + op.limit]
        # retrieved by a query: one more use of each (frequency, recency, TTL refresh)
        run.used += [item.record.id for score, item in hits if score is not None]
        return [_search_item(item, score) for score, item in hits]

    def _recalled(
        self, op: SearchOp, run: _Run
    ) -> tuple[list[tuple[float | None, ItemView]], list[ItemView]]:
        """The items under the prefix that the memory's recall shows, ranked by its score,
        and those it showed that were put with ``index=False`` (returned unscored)."""
        prefix = op.namespace_prefix
        scope = search_scope(prefix, prefix=self.namespace_prefix)
        scopes = [scope] if scope is not None else self._scopes_under(prefix)
        # One candidate count for every page of the first hundred results, so that pages
        # agree with each other; more (up to recall's limit) for deeper pages.
        wanted = op.offset + op.limit
        top_k = _PAGE_POOL if wanted <= _PAGE_POOL else min(_MAX_TOP_K, 2 * wanted)
        query = str(op.query)[: self.memory.config.max_query_chars]
        ranked: list[tuple[float | None, ItemView]] = []
        unscored: list[ItemView] = []
        seen: set[str] = set()
        for each in scopes:
            # as_of=now: current versions only, and nothing counted as used (the page
            # returned is, below); a budget roomy enough for every record asked for
            recall = self.memory.recall(
                query,
                scope=each,
                top_k=top_k,
                budget_tokens=min(_MAX_BUDGET, top_k * _TOKENS_PER_ITEM),
                at=run.now,
                as_of=run.now,
            )
            for found in recall.items:
                record = found.record
                if record.id in seen:
                    continue
                seen.add(record.id)
                item = view(record, prefix=self.namespace_prefix)
                if item is None or not under(item.namespace, prefix) or run.gone(item):
                    continue
                if not matches(item.value, op.filter):
                    continue
                if item.indexed:
                    ranked.append((float(found.score.total), item))
                else:
                    unscored.append(item)
        ranked.sort(key=lambda p: (-(p[0] or 0.0), p[1].namespace, p[1].key))
        return ranked, unscored

    def _list_namespaces(self, op: ListNamespacesOp, run: _Run) -> list[tuple[str, ...]]:
        start: tuple[str, ...] = ()
        for condition in op.match_conditions or ():
            if condition.match_type == "prefix" and "*" not in condition.path:
                start = tuple(condition.path)
        namespaces = {v.namespace for v in self._listing(start) if not run.gone(v)}
        found = [ns for ns in namespaces if all(_match(c, ns) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            found = [ns[: op.max_depth] for ns in found]
        return sorted(set(found))[op.offset : op.offset + op.limit]

    def _listing(self, prefix: tuple[str, ...]) -> list[ItemView]:
        """Every current item under ``prefix``, in no particular order."""
        scope = search_scope(prefix, prefix=self.namespace_prefix)
        query = RecordQuery(scope=scope, kinds=ITEM_KINDS, superseded=False)
        return [v for v in self._views(query) if under(v.namespace, prefix)]

    def _scopes_under(self, prefix: tuple[str, ...]) -> list[Scope]:
        scopes = {_owner(v.record.scope) for v in self._listing(prefix)}
        return sorted(scopes, key=lambda s: s.parts())

    def _current(self, namespace: tuple[str, ...], key: str) -> ItemView | None:
        """The current version of an item, or the memory's own record named ``key``."""
        if not namespace:  # nothing is ever put under () (a get or delete may name it)
            return None
        fact = fact_for(namespace, key)
        owner = _owner(item_scope(namespace, prefix=self.namespace_prefix))
        query = RecordQuery(
            scope=owner, subject=fact.subject, predicate=fact.predicate, superseded=False
        )
        for found in self._views(query):
            if found.namespace == namespace and found.key == key:
                return found
        record = self.memory.store.get_record(key)
        if record is not None and record.superseded_by is None:
            own = view(record, prefix=self.namespace_prefix)
            if own is not None and not own.stored and own.namespace == namespace:
                return own
        return None

    def _views(self, query: RecordQuery) -> Iterator[ItemView]:
        for record in self.memory.backend.iter_records(query):
            found = view(record, prefix=self.namespace_prefix)
            if found is not None:
                yield found

    # -- writes ------------------------------------------------------------------------

    def put_as(
        self, role: str, namespace: tuple[str, ...], key: str, value: dict[str, Any]
    ) -> None:
        """``put`` on behalf of ``role``: ``"tool"`` for what an agent saved through a tool
        (its episode says so), ``"system"`` (what ``put`` uses) for the application."""
        plan = Plan.of(
            [PutOp(namespace, key, value, ttl=(self.ttl_config or {}).get("default_ttl"))]
        )
        for op in plan.puts.values():
            self._put(op, self.memory.clock.now(), role=role)

    def _put(self, op: PutOp, now: datetime, *, role: str = "system") -> None:
        namespace, key = op.namespace, op.key
        current = self._current(namespace, key)
        if op.value is None:
            if current is not None:
                self._forget_items([current])
            return
        value = dict(op.value)
        text, indexed = self._text(value, op.index)
        alive = current is not None and current.stored and not current.expired(now)
        created = current.created_at if alive and current is not None else now
        refresh = bool((self.ttl_config or {}).get("refresh_on_read", True))
        scope = item_scope(namespace, prefix=self.namespace_prefix)
        self.memory.put_note(
            text[: self.memory.config.max_turn_chars],
            scope=scope,
            key="langgraph-store:" + uuid.uuid4().hex,
            data=item_data(
                namespace,
                key,
                value,
                created_at=created,
                indexed=indexed,
                ttl_minutes=op.ttl,
                refresh=refresh,
            ),
            importance=_importance(value),
            fact=fact_for(namespace, key),
            # the memory's own record, edited through the store: the new item replaces it
            replaces=[current.record.id] if current is not None and not current.stored else [],
            role=role,
            at=now,
        )

    def _text(self, value: Mapping[str, Any], index: Any) -> tuple[str, bool]:
        """The item's text, and whether it is indexed (it has text at an indexed path)."""
        if index is False:
            return plain_text(value), False
        paths = self._fields if index is None else [(p, tokenize_path(p)) for p in index]
        texts: list[str] = []
        for _, tokens in paths:
            if tokens == "$":
                texts.append(plain_text(value))
            else:
                texts += [t for t in get_text_at_path(value, tokens) if t.strip()]
        if not texts:
            return plain_text(value), False
        return "\n".join(dict.fromkeys(texts)), True

    def _forget_items(self, items: Iterable[ItemView]) -> None:
        for item in items:
            owner = _owner(item.record.scope)
            if item.stored:
                fact = fact_for(item.namespace, item.key)
                versions = [
                    r.id
                    for r in self.memory.backend.iter_records(
                        RecordQuery(scope=owner, subject=fact.subject, predicate=fact.predicate)
                    )
                ]
            else:
                versions = [item.record.id]
            for record_id in versions:
                # a version may be gone already, with an earlier one it was derived from
                with contextlib.suppress(NotFoundError):
                    self.memory.forget(record_id, scope=owner)

    def _sweep_if_due(self, now: datetime) -> None:
        interval = (self.ttl_config or {}).get("sweep_interval_minutes")
        if not interval:
            return
        if self._last_sweep is None or now - self._last_sweep >= timedelta(minutes=interval):
            self.sweep_ttl()


class _Run:
    """What one batch learns while it reads: expired items met, items used."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.expired: dict[str, ItemView] = {}
        self.used: list[str] = []

    def gone(self, item: ItemView) -> bool:
        if item.expired(self.now):
            self.expired[item.record.id] = item
            return True
        return False


def _check_paths(prefix: object, suffix: object) -> None:
    if prefix is not None:
        check_labels(prefix, what="prefix")
    if suffix is not None:
        check_labels(suffix, what="suffix")


def _owner(scope: Scope) -> Scope:
    if scope.user is None and scope.agent is None:
        return scope
    return Scope(user=scope.user, agent=scope.agent)


def _importance(value: Mapping[str, Any]) -> float | None:
    """The importance an item's value states, if it states a usable one."""
    importance = value.get("importance")
    if isinstance(importance, bool) or not isinstance(importance, (int, float)):
        return None
    return min(1.0, max(0.0, float(importance))) if math.isfinite(importance) else None


def _search_item(item: ItemView, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=item.namespace,
        key=item.key,
        value=item.value,
        created_at=item.created_at,
        updated_at=item.updated_at,
        score=score,
    )


def _match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    window = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, window))


def _index_fields(memory: Memory, index: IndexConfig | None) -> list[tuple[str, Any]]:
    if index is None:
        return [("$", "$")]
    if not isinstance(index, Mapping):
        raise InvalidTypeError(f"index must be an IndexConfig dict, not {type(index).__name__}")
    config = cast(Mapping[str, Any], index)
    if config.get("embed") is not None:
        raise InvalidInputError(
            "CommonplaceStore searches with the memory's own embedder "
            f"({memory.embedder.name!r}), so it ranks as recall does; drop index['embed'] "
            "and open the Memory with the embedder you want: Memory(url, embedder=...)"
        )
    dims = config.get("dims")
    if dims is not None:
        if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
            raise InvalidInputError(f"index['dims'] must be a positive int, not {dims!r}")
        if dims != memory.embedder.dim:
            raise EmbedderMismatchError(
                f"index['dims']={dims}, but the store searches with the memory's embedder "
                f"{memory.embedder.name!r} ({memory.embedder.dim} dims); drop 'dims' or "
                "open the Memory with the embedder you want"
            )
    fields: object = config.get("fields") or ["$"]
    if not isinstance(fields, list) or not all(isinstance(f, str) and f for f in fields):
        raise InvalidTypeError("index['fields'] must be a list of JSON paths such as ['text']")
    return [(p, "$" if p == "$" else tokenize_path(p)) for p in fields]
