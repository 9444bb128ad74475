"""CommonplaceStore as a BaseStore: namespaces, filters, search ranking, TTL, errors."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any, cast

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from commonplace import ManualClock, Memory
from commonplace.errors import EmbedderMismatchError, InvalidInputError, InvalidTypeError
from commonplace_langgraph import CommonplaceStore

ITEMS: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
    (("docs", "a"), "1", {"kind": "report", "score": 4.5, "meta": {"lang": "pt", "n": 1}}),
    (("docs", "a"), "2", {"kind": "memo", "score": 2, "meta": {"lang": "en", "n": 2}}),
    (("docs", "ab"), "3", {"kind": "report", "score": 9, "tags": ["x", "y"]}),
    (("docs", "a", "deep"), "4", {"kind": "report", "score": 3.0, "meta": {"lang": "pt", "n": 3}}),
    (("other",), "5", {"kind": "report", "score": 7, "name": "zed"}),
]

FILTERS: list[dict[str, Any]] = [
    {"kind": "report"},
    {"kind": {"$eq": "memo"}},
    {"kind": {"$ne": "report"}},
    {"score": {"$gt": 3}},
    {"score": {"$gte": 3, "$lt": 9}},
    {"score": {"$lte": 2}},
    {"meta": {"lang": "pt"}},
    {"meta": {"lang": "pt", "n": 1}},
    {"meta": {"n": {"$gt": 1}}},
    {"tags": ["x", "y"]},
    {"kind": "report", "score": {"$gt": 4}},
    {"missing": None},
]


def fill(store: Any) -> None:
    for namespace, key, value in ITEMS:
        store.put(namespace, key, value, index=False)


@pytest.mark.parametrize("prefix", [("docs",), ("docs", "a"), ()])
@pytest.mark.parametrize("filter", FILTERS)
def test_filters_match_langgraphs_in_memory_store(
    store: CommonplaceStore, prefix: tuple[str, ...], filter: dict[str, Any]
) -> None:
    reference = InMemoryStore()
    fill(reference)
    fill(store)
    expected = {(i.namespace, i.key) for i in reference.search(prefix, filter=filter, limit=50)}
    got = {(i.namespace, i.key) for i in store.search(prefix, filter=filter, limit=50)}
    assert got == expected


def test_a_comparison_with_a_missing_field_is_no_match(store: CommonplaceStore) -> None:
    # InMemoryStore raises TypeError from inside the search here; a missing field
    # simply does not match, as in LangGraph's SQL stores.
    fill(store)
    store.put(("docs", "z"), "6", {"meta": {"lang": "fr"}, "score": "high"})
    assert {i.key for i in store.search(("docs",), filter={"meta": {"n": {"$gt": 1}}})} == {
        "2",
        "4",
    }
    assert {i.key for i in store.search(("docs",), filter={"score": {"$lt": 100}})} == {
        "1",
        "2",
        "3",
        "4",
    }


def test_namespace_prefixes_compare_whole_labels(store: CommonplaceStore) -> None:
    fill(store)
    keys = {i.key for i in store.search(("docs", "a"), limit=50)}
    assert keys == {"1", "2", "4"}  # never ("docs", "ab")
    assert {i.key for i in store.search(("docs", "ab"))} == {"3"}
    assert store.search(("doc",)) == []


def test_put_get_update_delete_and_list_namespaces(
    store: CommonplaceStore, clock: ManualClock
) -> None:
    store.put(("users", "ana"), "prefs", {"theme": "dark"})
    first = store.get(("users", "ana"), "prefs")
    assert first is not None and first.value == {"theme": "dark"}
    clock.advance(minutes=5)
    store.put(("users", "ana"), "prefs", {"theme": "light"})
    second = store.get(("users", "ana"), "prefs")
    assert second is not None and second.value == {"theme": "light"}
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    fill(store)
    assert store.list_namespaces(prefix=("docs",)) == [
        ("docs", "a"),
        ("docs", "a", "deep"),
        ("docs", "ab"),
    ]
    assert store.list_namespaces(suffix=("deep",)) == [("docs", "a", "deep")]
    assert store.list_namespaces(prefix=("docs", "*"), max_depth=2) == [
        ("docs", "a"),
        ("docs", "ab"),
    ]
    assert store.list_namespaces(limit=2, offset=1) == [("docs", "a", "deep"), ("docs", "ab")]
    store.delete(("users", "ana"), "prefs")
    assert store.get(("users", "ana"), "prefs") is None
    assert ("users", "ana") not in store.list_namespaces()


def test_search_scores_are_the_four_signal_total(
    store: CommonplaceStore, clock: ManualClock
) -> None:
    ns = ("memories", "ana")
    store.put(ns, "hike", {"text": "Ana loves hiking in the mountains"})
    store.put(ns, "hike2", {"text": "Ana loves hiking in the mountains", "importance": 0.5})
    store.put(ns, "cat", {"text": "Ana has a cat called Miso"})
    store.put(ns, "quiet", {"text": "Ana loves hiking in the mountains"}, index=False)
    results = store.search(ns, query="hiking mountains")
    assert [r.key for r in results[:2]] == ["hike2", "hike"]  # importance breaks the tie
    assert results[-1].key == "quiet" and results[-1].score is None  # unindexed, unscored
    scored = [r.score for r in results if r.score is not None]
    assert all(0 <= s <= 1 for s in scored) and scored == sorted(scored, reverse=True)
    assert results[0].score is not None and results[0].score > results[2].score  # type: ignore[operator]
    # A retrieval counts as a use: frequency lifts "hike" above the important twin
    # (31 uses are worth 0.15; the twin's stated importance 0.1 more than the guessed
    # one of "hike", and its one use 0.03).
    for _ in range(30):
        store.search(ns, query="hiking mountains", limit=1, filter={"importance": None})
    again = store.search(ns, query="hiking mountains", limit=2)
    assert [r.key for r in again] == ["hike", "hike2"]
    # ... and recency fades: a year later, the fresh but unused item is back on top.
    clock.advance(days=365)
    store.put(ns, "hike3", {"text": "Ana loves hiking in the mountains"})
    latest = store.search(ns, query="hiking mountains", limit=1)
    assert latest[0].key == "hike3"


def test_search_pages_with_offset_and_limit(store: CommonplaceStore) -> None:
    ns = ("memories", "ana")
    for i in range(6):
        store.put(ns, f"k{i}", {"text": f"note number {i} about hiking"})
    everything = [r.key for r in store.search(ns, query="hiking", limit=10)]
    assert [r.key for r in store.search(ns, query="hiking", limit=2, offset=2)] == everything[2:4]
    assert len(store.search(ns, limit=4)) == 4


def test_the_index_picks_fields_and_the_memory_embeds(memory: Memory) -> None:
    with CommonplaceStore(memory, index={"fields": ["text"]}) as store:
        store.put(("d",), "1", {"text": "alpha", "other": "beta"})
        store.put(("d",), "2", {"text": "gamma", "other": "alpha"}, index=["other"])
        store.put(("d",), "3", {"items": [{"t": "x"}, {"t": "alpha"}]}, index=["items[*].t"])
        store.put(("d",), "4", {"other": "alpha"})  # nothing at "text": not indexed
        top = store.search(("d",), query="alpha", limit=10)
        assert top[0].key in {"1", "2", "3"} and top[0].score is not None
        assert {r.key for r in top if r.score is not None} <= {"1", "2", "3"}
        assert all(r.score is None for r in top if r.key == "4")
    # The store ranks with the memory's own embedder, as recall does: another one is refused.
    with pytest.raises(InvalidInputError, match="memory's own embedder"):
        CommonplaceStore(memory, index={"dims": 32, "embed": DeterministicFakeEmbedding(size=32)})
    with pytest.raises(EmbedderMismatchError, match="dims"):
        CommonplaceStore(memory, index={"dims": 16, "fields": ["text"]})


def test_ttl_expires_refreshes_and_sweeps(memory: Memory, clock: ManualClock) -> None:
    with CommonplaceStore(memory, ttl={"default_ttl": 10, "refresh_on_read": True}) as store:
        ns = ("memories", "ana")
        store.put(ns, "short", {"text": "gone soon"}, ttl=1)
        store.put(ns, "default", {"text": "ten minutes"})
        store.put(ns, "forever", {"text": "stays"}, ttl=None)
        clock.advance(minutes=2)
        assert store.get(ns, "short") is None
        clock.advance(minutes=7)
        assert store.get(ns, "default") is not None  # read at 9 minutes: refreshed to 19
        clock.advance(minutes=7)
        assert store.get(ns, "default", refresh_ttl=False) is not None
        clock.advance(minutes=5)
        assert [i.key for i in store.search(ns)] == ["forever"]
        store.put(ns, "again", {"text": "x"}, ttl=1)
        clock.advance(minutes=3)
        assert store.sweep_ttl() == 1
        assert store.list_namespaces() == [ns]
    assert CommonplaceStore.supports_ttl is True


def test_async_api(store: CommonplaceStore) -> None:
    async def run() -> Any:
        await store.aput(("memories", "ana"), "1", {"text": "likes tea"})
        await store.aput(("memories", "bob"), "2", {"text": "likes coffee"})
        got = await store.aget(("memories", "ana"), "1")
        found = await store.asearch(("memories",), query="tea")
        spaces = await store.alist_namespaces(prefix=("memories",))
        await store.adelete(("memories", "ana"), "1")
        return got, found, spaces, await store.aget(("memories", "ana"), "1")

    got, found, spaces, deleted = asyncio.run(run())
    assert got.value == {"text": "likes tea"}
    assert found[0].key == "1" and found[0].score is not None
    assert spaces == [("memories", "ana"), ("memories", "bob")]
    assert deleted is None


def test_a_batch_reads_before_it_writes(store: CommonplaceStore) -> None:
    ns = ("memories", "ana")
    results = store.batch(
        [PutOp(ns, "k", {"v": 1}), GetOp(ns, "k"), PutOp(ns, "k", {"v": 2}), SearchOp(ns)]
    )
    assert results == [None, None, None, []]
    item = store.get(ns, "k")
    assert item is not None and item.value == {"v": 2}  # last write wins


def test_items_survive_reopening(db_url: str, reopen: Callable[[], Memory], memory: Memory) -> None:
    with CommonplaceStore(memory) as store:
        store.put(("memories", "ana"), "k", {"text": "persisted"})
    again = reopen()
    with again, CommonplaceStore(again) as store:
        item = store.get(("memories", "ana"), "k")
        assert item is not None and item.value == {"text": "persisted"}
        assert store.search(("memories",), query="persisted")[0].score is not None


BAD: list[tuple[Callable[[CommonplaceStore], Any], type[Exception], str]] = [
    (lambda s: s.put(("a.b",), "k", {}), InvalidNamespaceError, "periods"),
    (lambda s: s.put((), "k", {}), InvalidNamespaceError, "empty"),
    (lambda s: s.put(("langgraph",), "k", {}), InvalidNamespaceError, "langgraph"),
    (lambda s: s.put(("a", ""), "k", {}), InvalidNamespaceError, "empty"),
    (lambda s: s.get(("a", 1), "k"), InvalidNamespaceError, "str"),  # type: ignore[arg-type]
    (lambda s: s.batch([PutOp(("a.b",), "k", {})]), InvalidNamespaceError, "'.'"),
    (lambda s: s.batch([GetOp("abc", "k")]), InvalidNamespaceError, "tuple"),  # type: ignore[arg-type]
    (lambda s: s.search(("a",), filter={"n": {"$foo": 1}}), InvalidInputError, "operator"),
    (lambda s: s.search(("a",), filter={"n": {"$gt": 1, "x": 2}}), InvalidInputError, "mixes"),
    (lambda s: s.search(("a",), filter={"n": {"$gt": [1]}}), InvalidTypeError, "compares"),
    (lambda s: s.search(("a",), filter=["n"]), InvalidTypeError, "dict"),  # type: ignore[arg-type]
    (lambda s: s.search(("a",), filter={"n": math.nan}), InvalidInputError, "finite"),
    (lambda s: s.search(("a",), limit=-1), InvalidInputError, "limit"),
    (lambda s: s.put(("a",), "k", {"v": 1}, ttl=-5), InvalidInputError, "positive"),
    (lambda s: s.put(("a",), "k", {"v": 1}, ttl=0), InvalidInputError, "positive"),
    (lambda s: s.put(("a",), "k", {"v": 1}, ttl=math.inf), InvalidInputError, "positive"),
    (lambda s: s.put(("a",), "k", {"v": 1}, ttl="5"), InvalidTypeError, "minutes"),  # type: ignore[arg-type]
    (lambda s: s.put(("a",), "k", {"v": 1}, ttl=True), InvalidTypeError, "minutes"),
    (lambda s: s.put(("a",), "k", {"v": math.nan}), InvalidInputError, "JSON"),
    (lambda s: s.put(("a",), "k", {"v": object()}), InvalidInputError, "JSON"),
    (lambda s: s.put(("a",), "k", ["not", "a", "dict"]), InvalidTypeError, "dict"),  # type: ignore[arg-type]
    (lambda s: s.put(("a",), "k", {"v": 1}, index="text"), InvalidTypeError, "index"),  # type: ignore[arg-type]
    (lambda s: s.list_namespaces(max_depth=0), InvalidInputError, "max_depth"),
]


@pytest.mark.parametrize(("call", "error", "message"), BAD)
def test_bad_input_is_refused_and_changes_nothing(
    store: CommonplaceStore, call: Callable[[CommonplaceStore], Any], error: type, message: str
) -> None:
    store.put(("a",), "k", {"v": 0})
    with pytest.raises(error, match=message):
        call(store)
    item = store.get(("a",), "k")
    assert item is not None and item.value == {"v": 0}


def test_bad_store_configs_are_refused(memory: Memory) -> None:
    with pytest.raises(InvalidInputError, match="dims"):
        CommonplaceStore(memory, index={"dims": 0, "fields": ["text"]})
    with pytest.raises(InvalidTypeError, match="fields"):
        CommonplaceStore(memory, index=cast(Any, {"fields": "text"}))
    with pytest.raises(InvalidInputError, match="TTLConfig"):
        CommonplaceStore(memory, ttl=cast(Any, {"default_tll": 5}))
    with pytest.raises(InvalidInputError, match="positive"):
        CommonplaceStore(memory, ttl={"default_ttl": -1})
    with pytest.raises(InvalidNamespaceError):
        CommonplaceStore(memory, namespace_prefix=("a.b",))
    with pytest.raises(InvalidTypeError, match="Memory"):
        CommonplaceStore(None)  # type: ignore[arg-type]


def test_scopes_and_namespaces_map_both_ways(store: CommonplaceStore) -> None:
    from commonplace import Scope

    scope = Scope(user="ana", agent="bot", thread="t1")
    ns = store.namespace_for(scope)
    assert ns == ("memories", "ana", "agents", "bot", "threads", "t1")
    assert store.scope_for(ns) == scope
    assert store.scope_for(("memories", "ana", "notes")) == Scope(user="ana")
    assert store.scope_for(("elsewhere", "ana")) is None
    with pytest.raises(InvalidInputError, match="per user"):
        store.namespace_for(Scope(thread="t1"))
