"""CommonplaceStore: a LangGraph ``BaseStore`` whose search is commonplace's recall ranking.

Items live in the adapter's own tables in the memory's SQLite file (namespace, key, JSON
value, timestamps, TTL, access statistics, one vector per indexed field). A search with a
query takes the items under the namespace prefix that pass the filter, finds each one's
best cosine similarity to the query (numpy, over that prefix only), and ranks them with
the same four signals as ``Memory.recall``: semantic, recency of last access, frequency
of retrieval and importance (an item's numeric ``importance`` field, else 0.5).
``SearchItem.score`` is that total; a retrieval counts as an access.

Without an ``index`` config the memory's own embedder indexes whole values (for the
``"$"`` path: the value's string leaves, not its JSON syntax), so search ranks out of the
box; ``index={"dims": ..., "embed": <any LangChain Embeddings>,
"fields": [...]}`` works as in LangGraph's stores. Expired items are deleted at the start
of every batch (there is no background thread) and are never returned.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
)

from commonplace import Kind, Memory, Record, Scope, Tags
from commonplace.errors import (
    EmbedderMismatchError,
    InvalidInputError,
    InvalidTypeError,
)
from commonplace.read import score_candidates
from commonplace.stores import Candidate

from ._db import Database, adapter_path
from ._filters import matches
from ._namespaces import check_labels, namespace_for, scope_for
from ._store_ops import Plan, check_ttl_config

STORE_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS langgraph_store (
        prefix TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        expires_at REAL,
        ttl_minutes REAL,
        access_count INTEGER NOT NULL DEFAULT 0,
        last_access REAL NOT NULL,
        PRIMARY KEY (prefix, key)
    ) WITHOUT ROWID""",
    """CREATE INDEX IF NOT EXISTS langgraph_store_expiry
        ON langgraph_store (expires_at) WHERE expires_at IS NOT NULL""",
    """CREATE TABLE IF NOT EXISTS langgraph_store_vectors (
        prefix TEXT NOT NULL,
        key TEXT NOT NULL,
        field TEXT NOT NULL,
        text TEXT NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (prefix, key, field)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS langgraph_store_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) WITHOUT ROWID""",
)

_COLUMNS = "prefix, key, value, created_at, updated_at, access_count, last_access"
# Items outside the memory prefix still need a scope to be scored as records; it is
# never used to read or write memory.
_NO_SCOPE = Scope(agent="langgraph-store")


class CommonplaceStore(BaseStore):
    """A LangGraph store on commonplace: namespaces, filters, TTL, four-signal search.

    ``memory`` supplies the SQLite file (or give ``path``), the clock, the scoring
    settings and, without ``index``, the embedder. ``namespace_prefix`` is where the
    items of memory scopes live (see :meth:`namespace_for`). ``ttl`` is LangGraph's
    ``TTLConfig`` (``default_ttl`` and ``refresh_on_read`` in minutes).
    """

    supports_ttl = True

    def __init__(
        self,
        memory: Memory,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        path: str | Path | None = None,
        namespace_prefix: tuple[str, ...] = ("memories",),
    ) -> None:
        if not isinstance(memory, Memory):
            raise InvalidTypeError(
                f"memory must be a commonplace.Memory, not {type(memory).__name__}"
            )
        self.memory = memory
        self.namespace_prefix = check_labels(namespace_prefix, what="namespace_prefix")
        self.ttl_config = check_ttl_config(ttl)
        self.index_config, self.embeddings, self._fields = _index(memory, index)
        # Scoring reuses the memory's settings, without the keyword blend: store items
        # have no keyword index, and a zero keyword score would only scale relevance down.
        config = memory.config
        if "keyword_weight" in {f.name for f in dataclasses.fields(config)}:
            config = dataclasses.replace(config, keyword_weight=0.0)
        self._score_config = config
        self._db = Database(adapter_path(memory, path), schema=STORE_SCHEMA)
        try:
            self._pin_dims(int(self.index_config["dims"]))
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        """Close the store's tables (the memory stays open)."""
        self._db.close()

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

    # -- BaseStore ---------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        plan = Plan.of(ops)
        queries = sorted({op.query for _, op in plan.searches if op.query})
        query_vectors = {q: self.embeddings.embed_query(q) for q in queries}
        texts = self._texts_to_embed(plan)
        vectors = self.embeddings.embed_documents([t for *_, t in texts]) if texts else []
        return self._run(plan, query_vectors, list(zip(texts, vectors)))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        plan = Plan.of(ops)
        queries = sorted({op.query for _, op in plan.searches if op.query})
        embedded_queries = await asyncio.gather(*(self.embeddings.aembed_query(q) for q in queries))
        query_vectors = dict(zip(queries, embedded_queries))
        texts = self._texts_to_embed(plan)
        vectors = await self.embeddings.aembed_documents([t for *_, t in texts]) if texts else []
        return await asyncio.to_thread(self._run, plan, query_vectors, list(zip(texts, vectors)))

    def sweep_ttl(self) -> int:
        """Delete expired items now; returns how many were deleted."""
        with self._db.transaction() as db:
            return self._sweep(db, self._now())

    # -- the work ------------------------------------------------------------------------

    def _texts_to_embed(self, plan: Plan) -> list[tuple[str, str, str, str]]:
        """(prefix, key, field, text) for every indexed field of every value put."""
        out = []
        for op in plan.puts.values():
            if op.value is None or op.index is False:
                continue
            paths = self._fields if op.index is None else [(p, tokenize_path(p)) for p in op.index]
            for path, tokens in paths:
                found = (
                    [_plain_text(op.value)] if tokens == "$" else get_text_at_path(op.value, tokens)
                )
                for i, text in enumerate(found):
                    field = f"{path}.{i}" if len(found) > 1 else path
                    out.append((_encode(op.namespace), op.key, field, text))
        return out

    def _run(
        self,
        plan: Plan,
        query_vectors: Mapping[str, Sequence[float]],
        embedded: Sequence[tuple[tuple[str, str, str, str], Sequence[float]]],
    ) -> list[Result]:
        now = self._now()
        results: list[Result] = [None] * plan.size
        with self._db.transaction() as db:
            self._sweep(db, now)
            for i, get in plan.gets:
                results[i] = self._get(db, get, now)
            for i, search in plan.searches:
                vector = query_vectors.get(search.query) if search.query else None
                results[i] = self._search(db, search, vector, now)
            for i, listing in plan.listings:
                results[i] = self._list_namespaces(db, listing)
            self._put(db, plan, embedded, now)
        return results

    def _get(self, db: Any, op: GetOp, now: float) -> Item | None:
        prefix = _encode(op.namespace)
        row = db.execute(
            f"SELECT {_COLUMNS} FROM langgraph_store WHERE prefix = ? AND key = ?",
            (prefix, op.key),
        ).fetchone()
        if row is None:
            return None
        if op.refresh_ttl:
            _refresh(db, prefix, [op.key], now)
        return _item(row)

    def _search(
        self, db: Any, op: SearchOp, query: Sequence[float] | None, now: float
    ) -> list[SearchItem]:
        prefix = _encode(op.namespace_prefix)
        where, params = _prefix_where(prefix)
        rows = db.execute(
            f"SELECT {_COLUMNS} FROM langgraph_store WHERE {where} "
            "ORDER BY updated_at DESC, prefix, key",
            params,
        ).fetchall()
        kept = [(row, json.loads(row[2])) for row in rows]
        kept = [(row, value) for row, value in kept if matches(value, op.filter)]
        if query is None:
            page = kept[op.offset : op.offset + op.limit]
            found = [_search_item(row, value, None) for row, value in page]
        else:
            found = self._ranked(db, kept, op, query, now)
        if found and (op.refresh_ttl or query is not None):
            by_prefix: dict[str, list[str]] = {}
            for item in found:
                by_prefix.setdefault(_encode(item.namespace), []).append(item.key)
            for item_prefix, keys in by_prefix.items():
                if op.refresh_ttl:
                    _refresh(db, item_prefix, keys, now)
                if query is not None:  # retrieved by a query: one more use, for frequency
                    db.executemany(
                        "UPDATE langgraph_store SET access_count = access_count + 1, "
                        "last_access = ? WHERE prefix = ? AND key = ?",
                        [(now, item_prefix, key) for key in keys],
                    )
        return found

    def _ranked(
        self,
        db: Any,
        kept: Sequence[tuple[Sequence[Any], dict[str, Any]]],
        op: SearchOp,
        query: Sequence[float],
        now: float,
    ) -> list[SearchItem]:
        q = _unit(np.asarray(query, dtype=np.float32))
        best: dict[tuple[str, str], tuple[float, str]] = {}
        for row_prefix, row_key, text, blob in self._vectors(db, kept):
            vector = np.frombuffer(blob, dtype=np.float32)
            if vector.shape != q.shape:
                continue
            similarity = float(np.dot(vector, q))
            if (row_prefix, row_key) not in best or similarity > best[(row_prefix, row_key)][0]:
                best[(row_prefix, row_key)] = (similarity, text)
        scored, scoreless = [], []
        for row, value in kept:
            hit = best.get((row[0], row[1]))
            if hit is None:
                scoreless.append((row, value))
            else:
                scored.append((row, value, hit))
        candidates = [
            Candidate(_record(row, value, text, self.scope_for(_decode(row[0]))), similarity)
            for row, value, (similarity, text) in scored
        ]
        scores = score_candidates(
            candidates, query=str(op.query), now=_datetime(now), config=self._score_config
        )
        ranked = sorted(
            zip(scored, scores), key=lambda pair: (-pair[1].total, pair[0][0][0], pair[0][0][1])
        )
        page: list[SearchItem] = [
            _search_item(row, value, score.total)
            for (row, value, _), score in ranked[op.offset : op.offset + op.limit]
        ]
        # As in InMemoryStore: items stored with index=False fill the page after the
        # ranked ones, unscored.
        if len(page) < op.limit:
            skip = max(0, op.offset - len(ranked))
            page += [
                _search_item(row, value, None)
                for row, value in scoreless[skip : skip + op.limit - len(page)]
            ]
        return page

    def _vectors(
        self, db: Any, kept: Sequence[tuple[Sequence[Any], dict[str, Any]]]
    ) -> list[tuple[str, str, str, bytes]]:
        out = []
        prefixes = sorted({row[0] for row, _ in kept})
        wanted = {(row[0], row[1]) for row, _ in kept}
        for prefix in prefixes:
            for row in db.execute(
                "SELECT prefix, key, text, vector FROM langgraph_store_vectors WHERE prefix = ?",
                (prefix,),
            ):
                if (row[0], row[1]) in wanted:
                    out.append(row)
        return out

    def _list_namespaces(self, db: Any, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = [
            _decode(r[0]) for r in db.execute("SELECT DISTINCT prefix FROM langgraph_store")
        ]
        if op.match_conditions:
            namespaces = [
                ns for ns in namespaces if all(_match(c, ns) for c in op.match_conditions)
            ]
        if op.max_depth is not None:
            namespaces = [ns[: op.max_depth] for ns in namespaces]
        return sorted(set(namespaces))[op.offset : op.offset + op.limit]

    def _put(
        self,
        db: Any,
        plan: Plan,
        embedded: Sequence[tuple[tuple[str, str, str, str], Sequence[float]]],
        now: float,
    ) -> None:
        for (namespace, key), op in plan.puts.items():
            prefix = _encode(namespace)
            db.execute(
                "DELETE FROM langgraph_store_vectors WHERE prefix = ? AND key = ?", (prefix, key)
            )
            if op.value is None:
                db.execute(
                    "DELETE FROM langgraph_store WHERE prefix = ? AND key = ?", (prefix, key)
                )
                continue
            expires = None if op.ttl is None else now + op.ttl * 60.0
            # An update keeps the item's creation time and its use history: it is the
            # same memory, revised.
            db.execute(
                "INSERT INTO langgraph_store (prefix, key, value, created_at, updated_at, "
                "expires_at, ttl_minutes, access_count, last_access) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?) ON CONFLICT (prefix, key) DO UPDATE SET "
                "value = excluded.value, updated_at = excluded.updated_at, "
                "expires_at = excluded.expires_at, ttl_minutes = excluded.ttl_minutes",
                (prefix, key, plan.encoded[(namespace, key)], now, now, expires, op.ttl, now),
            )
        db.executemany(
            "INSERT OR REPLACE INTO langgraph_store_vectors (prefix, key, field, text, vector) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                (prefix, key, field, text, _unit(np.asarray(vector, dtype=np.float32)).tobytes())
                for (prefix, key, field, text), vector in embedded
            ],
        )

    def _sweep(self, db: Any, now: float) -> int:
        expired = db.execute(
            "SELECT prefix, key FROM langgraph_store WHERE expires_at IS NOT NULL "
            "AND expires_at <= ?",
            (now,),
        ).fetchall()
        for prefix, key in expired:
            db.execute("DELETE FROM langgraph_store WHERE prefix = ? AND key = ?", (prefix, key))
            db.execute(
                "DELETE FROM langgraph_store_vectors WHERE prefix = ? AND key = ?", (prefix, key)
            )
        return len(expired)

    def _pin_dims(self, dims: int) -> None:
        with self._db.transaction() as db:
            row = db.execute("SELECT value FROM langgraph_store_meta WHERE key = 'dims'").fetchone()
            if row is None:
                db.execute(
                    "INSERT INTO langgraph_store_meta (key, value) VALUES ('dims', ?)", (str(dims),)
                )
            elif int(row[0]) != dims:
                raise EmbedderMismatchError(
                    f"this store's items were indexed with {row[0]}-dimensional vectors but "
                    f"the index config gives dims={dims}; open it with the same embeddings"
                )

    def _now(self) -> float:
        return self.memory.clock.now().timestamp()


def _index(
    memory: Memory, index: IndexConfig | None
) -> tuple[IndexConfig, Embeddings, list[tuple[str, Any]]]:
    if index is None:
        config: IndexConfig = {"dims": memory.embedder.dim, "fields": ["$"]}
        embeddings: Embeddings = _MemoryEmbeddings(memory)
    else:
        if not isinstance(index, Mapping):
            raise InvalidTypeError(f"index must be an IndexConfig dict, not {type(index).__name__}")
        config = cast(IndexConfig, dict(index))
        dims = config.get("dims")
        if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
            raise InvalidInputError(f"index['dims'] must be a positive int, not {dims!r}")
        if config.get("embed") is None:
            raise InvalidInputError(
                "index['embed'] is required: a LangChain Embeddings or a function"
            )
        embeddings = ensure_embeddings(config["embed"])
    fields: object = config.get("fields") or ["$"]
    if not isinstance(fields, list) or not all(isinstance(f, str) and f for f in fields):
        raise InvalidTypeError("index['fields'] must be a list of JSON paths such as ['text']")
    return config, embeddings, [(p, "$" if p == "$" else tokenize_path(p)) for p in fields]


class _MemoryEmbeddings(Embeddings):
    """The memory's own embedder as LangChain ``Embeddings`` (offline by default)."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return cast(list[list[float]], self._memory.embedder.embed(texts).tolist())

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def _plain_text(value: object) -> str:
    """The text of a whole value for ``"$"``: its string leaves, not its JSON syntax.

    (LangGraph embeds the JSON text; embedding only the words keeps field names and
    punctuation, shared by every item, from making all items look alike.)
    """
    parts: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, str):
            parts.append(node)
        elif isinstance(node, Mapping):
            for child in node.values():
                walk(child)
        elif isinstance(node, (list, tuple)):
            for child in node:
                walk(child)

    walk(value)
    return "\n".join(parts) or json.dumps(value, ensure_ascii=False, sort_keys=True)


def _encode(namespace: Sequence[str]) -> str:
    # Labels never contain ".", so joining on it is reversible.
    return ".".join(namespace)


def _decode(prefix: str) -> tuple[str, ...]:
    return tuple(prefix.split(".")) if prefix else ()


def _prefix_where(prefix: str) -> tuple[str, list[Any]]:
    if not prefix:
        return "1 = 1", []
    # Whole labels only: "a.b" matches "a.b" and "a.b.c", never "a.bc".
    return "(prefix = ? OR substr(prefix, 1, ?) = ?)", [prefix, len(prefix) + 1, prefix + "."]


def _refresh(db: Any, prefix: str, keys: Sequence[str], now: float) -> None:
    db.executemany(
        "UPDATE langgraph_store SET expires_at = ? + ttl_minutes * 60.0 "
        "WHERE prefix = ? AND key = ? AND ttl_minutes IS NOT NULL",
        [(now, prefix, key) for key in keys],
    )


def _match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    window = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, window))


def _unit(vector: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    norm = float(np.linalg.norm(vector))
    return (vector / norm if norm > 0 else vector).astype(np.float32)


def _datetime(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=timezone.utc)


def _item(row: Sequence[Any]) -> Item:
    return Item(
        value=json.loads(row[2]),
        key=row[1],
        namespace=_decode(row[0]),
        created_at=_datetime(row[3]),
        updated_at=_datetime(row[4]),
    )


def _search_item(row: Sequence[Any], value: dict[str, Any], score: float | None) -> SearchItem:
    return SearchItem(
        namespace=_decode(row[0]),
        key=row[1],
        value=value,
        created_at=_datetime(row[3]),
        updated_at=_datetime(row[4]),
        score=score,
    )


def _record(row: Sequence[Any], value: Mapping[str, Any], text: str, scope: Scope | None) -> Record:
    importance = value.get("importance")
    if isinstance(importance, bool) or not isinstance(importance, (int, float)):
        importance = 0.5
    importance = min(1.0, max(0.0, float(importance))) if math.isfinite(importance) else 0.5
    return Record(
        id=f"{row[0]}/{row[1]}",
        kind=Kind.NOTE,
        scope=scope or _NO_SCOPE,
        text=text,
        tags=Tags(importance=importance),
        provenance=(),
        created_at=_datetime(row[3]),
        last_access=_datetime(row[6]),
        access_count=int(row[5]),
    )
