"""Isolation through the LangGraph store (commonplace-langgraph's ``CommonplaceStore``).

Hypothesis puts items under random namespaces (each memory scope's namespace, built from
values made to escape, and arbitrary namespaces beside them), then searches, lists and
reads with random namespace prefixes, queries, filters and pages. No result may come
from outside the prefix asked for; for memory namespaces that means no item of a scope
the asking scope does not contain. Hostile labels are plain data or refused with
LangGraph's ``InvalidNamespaceError``, with one exception LangGraph itself defines: "*"
in a ``list_namespaces`` prefix is a wildcard (so a user whose id is "*" lists every
user's namespace names: reported to the adapter's owners, see docs/guarantees.md).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from langgraph.store.base import InvalidNamespaceError
from reliability_support import BUSY, SIZES, marker, profile, tally, url_of

from commonplace import Memory, Scope
from commonplace.errors import CommonplaceError
from commonplace_langgraph import CommonplaceStore

LABELS = (
    "ana",
    "bob",
    "ana ",
    "ANA",
    "аna",
    "*",
    "%",
    "_",
    "'",
    "ana' OR '1'='1",
    "threads",
    "agents",
    "memories",
    "t1",
    "t2",
    "coach",
    "ａｎａ",
    "ana\u200b",
    "a/b",
)
SCOPES = st.tuples(
    st.sampled_from(LABELS),
    st.sampled_from((None, "coach", "%", "agents")),
    st.sampled_from((None, "t1", "t2", "threads", "*")),
).map(lambda p: Scope(user=p[0], agent=p[1], thread=p[2]))
OTHER_NAMESPACES = st.lists(st.sampled_from(LABELS), min_size=1, max_size=4).map(tuple)
FILTERS = st.one_of(
    st.none(),
    st.fixed_dictionaries({"owner": st.sampled_from(LABELS)}),
    st.fixed_dictionaries(
        {
            "n": st.fixed_dictionaries(
                {},
                optional={
                    "$gt": st.integers(-2, 12),
                    "$lte": st.integers(-2, 12),
                    "$ne": st.integers(0, 9),
                },
            )
        }
    ),
    st.fixed_dictionaries({"tags": st.lists(st.sampled_from(LABELS), max_size=2)}),
)


def within(namespace: tuple[str, ...], prefix: tuple[str, ...], *, wildcards: bool = False) -> bool:
    """Whether ``namespace`` starts with ``prefix``, label by label ("*" matching any
    label where LangGraph says it does: in ``list_namespaces`` prefixes)."""
    return len(namespace) >= len(prefix) and all(
        p == n or (wildcards and p == "*") for p, n in zip(prefix, namespace)
    )


@given(data=st.data())
@profile(SIZES.isolation_examples)
def test_store_results_never_leave_the_namespace_asked_for(data: st.DataObject) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="cp-lg-") as folder,
        Memory(url_of(Path(folder) / "m.db"), config=BUSY) as memory,
        CommonplaceStore(memory) as store,
    ):
        placed: dict[tuple[tuple[str, ...], str], Any] = {}
        owners: dict[str, Scope | None] = {}
        items = data.draw(
            st.lists(
                st.tuples(st.one_of(SCOPES, OTHER_NAMESPACES), st.integers(0, 9)),
                min_size=1,
                max_size=12,
            )
        )
        for n, (where, number) in enumerate(items):
            namespace = store.namespace_for(where) if isinstance(where, Scope) else where
            value = {
                "text": f"My sister Mia plays chess {marker(n)}",
                "n": number,
                "owner": namespace[-1],
                "tags": list(namespace[:2]),
            }
            store.put(namespace, f"k{n}", value)
            placed[(namespace, f"k{n}")] = value
            owners[marker(n)] = store.scope_for(namespace)
        asks = data.draw(
            st.lists(
                st.one_of(
                    SCOPES.map(store.namespace_for),
                    st.sampled_from(sorted({ns for ns, _ in placed})).flatmap(
                        lambda ns: st.integers(1, len(ns)).map(lambda k: ns[:k])
                    ),
                    OTHER_NAMESPACES,
                ),
                min_size=1,
                max_size=4,
            )
        )
        for prefix in asks:
            asker = store.scope_for(prefix)
            found = store.search(
                prefix,
                query=data.draw(
                    st.one_of(
                        st.none(), st.sampled_from(["Mia chess", marker(0), "' OR 1=1 --", "*"])
                    )
                ),
                filter=data.draw(FILTERS),
                limit=data.draw(st.integers(1, 20)),
                offset=data.draw(st.integers(0, 3)),
            )
            for item in found:
                assert within(tuple(item.namespace), prefix), (prefix, item.namespace)
                owner = store.scope_for(tuple(item.namespace))
                if asker is not None and owner is not None:
                    assert asker.contains(owner), (asker, owner)
            for namespace in store.list_namespaces(prefix=prefix, limit=100):
                assert within(tuple(namespace), prefix, wildcards=True), (prefix, namespace)
            tally("isolation: LangGraph store searches checked")
        for (namespace, key), value in placed.items():
            got = store.get(namespace, key)
            assert got is not None and got.value == value
            for other in {ns for ns, _ in placed} - {namespace}:
                got = store.get(other, key)
                assert got is None or placed.get((other, key)) == got.value


def test_hostile_namespace_labels_are_refused_or_plain_data(tmp_path: Path) -> None:
    with (
        Memory(url_of(tmp_path / "m.db"), config=BUSY) as memory,
        CommonplaceStore(memory) as store,
    ):
        store.put(("memories", "ana"), "k", {"text": "Ana's locker is 12"})
        for bad in [("memories", "ana.bob"), ("memories", ""), ("memories", "a\x00b"), ()]:
            try:
                store.put(bad, "k", {"text": "x"})
            except (InvalidNamespaceError, CommonplaceError):
                continue
            raise AssertionError(f"{bad!r} was accepted")
        for prefix in [
            ("memories", "ana%"),
            ("memories", "an"),
            ("memories", "*"),
            ("memories", "ana' OR '1'='1"),
            ("memor",),
        ]:
            assert store.search(prefix, query="locker") == []
            if "*" not in prefix:  # a wildcard in list_namespaces, as LangGraph defines it
                assert store.list_namespaces(prefix=prefix) == []
        assert [i.key for i in store.search(("memories", "ana"), query="locker")] == ["k"]
