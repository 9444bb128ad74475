"""CommonplaceStore is a view over the Memory, not a second storage engine beside it.

Before, it kept its own tables, scanned every vector under a prefix in Python, faked
records to reuse the scorer, ran on SQLite only, and what was put there never became a
note: ``store.search(("memories", "ana"), query=...)`` found nothing ``memory.recall``
found. Now a put is a note with an episode as evidence, an update supersedes, a delete
forgets, and search is the memory's recall, on any backend.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from commonplace import Config, ManualClock, Memory, Role, Scope
from commonplace_langgraph import CommonplaceStore

ANA = ("memories", "ana")
CONVERSATION = [
    "I just moved to Porto with my partner Joana.",
    "My sister Rita is a nurse in Lisbon.",
    "I am learning to play the cello.",
    "My dog Bolt loves the beach.",
    "I work as a baker at night.",
]


def test_the_store_keeps_nothing_of_its_own(memory: Memory, db_url: str) -> None:
    store = CommonplaceStore(memory)
    store.put(ANA, "prefs", {"text": "Ana prefers short answers"})
    store.put(("docs",), "1", {"text": "a report"})
    with sqlite3.connect(Path(db_url.removeprefix("sqlite:///"))) as db:
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert not {n for n in names if n.startswith("langgraph")}
    assert memory.count("note", scope="ana") == 1


def test_a_put_is_a_note_with_evidence(memory: Memory) -> None:
    store = CommonplaceStore(memory)
    store.put(ANA, "prefs", {"text": "Ana prefers short answers", "importance": 0.9})
    recall = memory.recall("how does Ana like her answers?", scope="ana")
    record = next(i.record for i in recall.items if "short answers" in i.record.text)
    assert record.importance == 0.9
    [episode] = memory.explain(record.id).episodes()
    assert episode.role is Role.SYSTEM  # the application said it, not the user
    assert "short answers" in recall.render()  # the model sees it like any memory


def test_an_update_supersedes_and_keeps_its_history(memory: Memory, clock: ManualClock) -> None:
    store = CommonplaceStore(memory)
    store.put(ANA, "city", {"text": "Ana lives in Lisbon"})
    first = store.get(ANA, "city")
    clock.advance(days=30)
    store.put(ANA, "city", {"text": "Ana lives in Porto"})
    now = store.get(ANA, "city")
    assert now is not None and first is not None
    assert now.value == {"text": "Ana lives in Porto"} and now.created_at == first.created_at
    # the memory keeps the old value as history, below (and superseded by) the new one
    items = memory.recall("where does Ana live?", scope="ana").items
    texts = [i.record.text for i in items]
    assert texts.index("Ana lives in Porto") < texts.index("Ana lives in Lisbon")
    assert items[texts.index("Ana lives in Lisbon")].record.superseded_by is not None
    then = memory.recall("where does Ana live?", scope="ana", as_of=clock.now() - timedelta(days=1))
    assert [i.record.text for i in then.items] == ["Ana lives in Lisbon"]
    assert [i.key for i in store.search(ANA)] == ["city"]  # one item, its latest version


def test_a_delete_forgets_every_version_with_its_evidence(
    memory: Memory, clock: ManualClock
) -> None:
    store = CommonplaceStore(memory)
    store.put(ANA, "city", {"text": "Ana lives in Lisbon"})
    clock.advance(days=1)
    store.put(ANA, "city", {"text": "Ana lives in Porto"})
    store.delete(ANA, "city")
    assert store.get(ANA, "city") is None
    assert memory.count("episode", scope="ana") == 0
    assert memory.recall("where does Ana live?", scope="ana").items == ()


def test_use_strengthens_and_forgetting_a_scope_empties_it(memory: Memory) -> None:
    store = CommonplaceStore(memory)
    store.put(ANA, "tea", {"text": "Ana drinks green tea every morning"})
    for _ in range(3):
        assert store.search(ANA, query="green tea")[0].key == "tea"
    record = next(r for r in memory.recall("tea", scope="ana").items)
    assert record.record.access_count >= 3  # retrieved by search: used, like any memory
    memory.forget_scope("ana")
    assert store.search(ANA, query="green tea") == [] and store.get(ANA, "tea") is None


def agree(memory: Memory, store: CommonplaceStore, query: str) -> None:
    """Everything the memory recalls for Ana, the store's search finds, and nobody else's."""
    recalled = {i.record.text for i in memory.recall(query, scope="ana").items}
    found = store.search(ANA, query=query, limit=50)
    texts = {str(i.value.get("text")) for i in found}
    assert recalled and recalled <= texts, (recalled, texts)
    assert all(i.namespace[:2] == ANA for i in found)
    assert all(i.score is not None for i in found)
    assert [i.score for i in found] == sorted((i.score for i in found), reverse=True)  # type: ignore[type-var]


def fill(memory: Memory, store: CommonplaceStore, clock: ManualClock) -> None:
    for n, text in enumerate(CONVERSATION):
        memory.write(text, scope=Scope(user="ana", thread=f"t{n % 2}"))
        clock.advance(minutes=5)
    memory.write("My brother Tom is a pilot in Oslo.", scope=Scope(user="bob", thread="b1"))
    store.put(ANA, "locker", {"text": "Ana's gym locker code is 4411"})
    store.put(("memories", "bob"), "locker", {"text": "Bob's gym locker code is 9000"})


@pytest.mark.parametrize("config", [Config(), Config(search_min_notes=0)], ids=["default", "eager"])
def test_search_and_recall_agree_on_sqlite(
    tmp_db: Callable[[str], str], clock: ManualClock, config: Config
) -> None:
    with Memory(tmp_db("agree.db"), clock=clock, config=config) as memory:
        store = CommonplaceStore(memory)
        fill(memory, store, clock)
        for query in ("who does Ana live with?", "what is the locker code?", "sister"):
            agree(memory, store, query)
        # the memory's own notes are items of the store, keyed by record id
        porto = next(i for i in store.search(ANA, query="Porto") if "Porto" in str(i.value["text"]))
        assert porto.key.startswith("nt_") and porto.namespace == (*ANA, "threads", "t0")
        assert store.get(porto.namespace, porto.key) is not None


@pytest.mark.weaviate
def test_search_and_recall_agree_on_weaviate(
    weaviate_backend_factory: Callable[[], object], clock: ManualClock
) -> None:
    url = weaviate_backend_factory().url  # type: ignore[attr-defined]
    with Memory(url, clock=clock) as memory:
        store = CommonplaceStore(memory)
        fill(memory, store, clock)
        for query in ("who does Ana live with?", "what is the locker code?", "sister"):
            agree(memory, store, query)
        assert store.get(ANA, "locker") is not None
        store.delete(ANA, "locker")
        assert store.get(ANA, "locker") is None
