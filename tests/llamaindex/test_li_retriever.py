"""CommonplaceRetriever: four-signal recall as NodeWithScore."""

from __future__ import annotations

import asyncio

from llama_index.core.schema import MetadataMode, QueryBundle

from commonplace import Config, ManualClock, Memory, Role
from commonplace_llamaindex import CommonplaceRetriever

FACTS = [
    "I just moved to Porto with my partner Joana.",
    "I work as a night nurse at the children's hospital.",
    "My sister Rita teaches maths in Braga.",
    "I have a grumpy old cat called Miso.",
    "My best friend Kenji runs a bakery in Lisbon.",
]
SIGNALS = {"semantic", "recency", "frequency", "importance", "gate", "total"}


def seed(store: Memory, user: str = "ana", facts: list[str] = FACTS) -> None:
    for fact in facts:
        store.write(fact, scope={"user": user, "thread": "t1"})


def test_nodes_carry_kind_tier_provenance_and_the_signal_breakdown(store: Memory) -> None:
    seed(store)
    (top, *_) = CommonplaceRetriever(store, scope="ana").retrieve("who is my sister Rita?")

    meta = top.node.metadata
    assert top.node.get_content() == "The user's sister Rita teaches maths in Braga."
    assert meta["kind"] == "note" and meta["tier"] == "warm"
    assert set(meta["signals"]) >= SIGNALS
    assert top.score is not None and abs(top.score - meta["signals"]["total"]) < 1e-3
    assert meta["tags"]["entities"] and meta["created_at"].startswith("2026-01-05")
    (episode,) = store.explain(top.node.node_id).episodes()  # the node id is the record id
    assert [episode.id] == meta["provenance"]
    assert episode.role is Role.USER and episode.text == FACTS[2]


def test_the_model_sees_the_note_and_its_date_not_the_bookkeeping(store: Memory) -> None:
    seed(store)
    (top, *_) = CommonplaceRetriever(store, scope="ana").retrieve("sister Rita")
    shown = top.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "Rita teaches maths" in shown and "2026-01-05" in shown
    assert "provenance" not in shown and "signals" not in shown and "ep_" not in shown
    assert top.node.get_content(metadata_mode=MetadataMode.EMBED) == top.node.get_content()


def test_only_records_past_the_relevance_gate_by_default(store: Memory) -> None:
    seed(store)
    gated = CommonplaceRetriever(store, scope="ana").retrieve("sister Rita maths")
    ranked = CommonplaceRetriever(store, scope="ana", relevant_only=False).retrieve(
        "sister Rita maths"
    )
    assert gated and all(n.node.metadata["signals"]["gate"] > 0 for n in gated)
    assert len(ranked) == len(FACTS) > len(gated)
    scores = [n.score or 0.0 for n in ranked]
    assert scores == sorted(scores, reverse=True)


def test_top_k_bounds_the_results(store: Memory) -> None:
    seed(store)
    got = CommonplaceRetriever(store, scope="ana", top_k=2, relevant_only=False).retrieve("x y")
    assert len(got) == 2


def test_a_scope_never_returns_another_users_records(store: Memory) -> None:
    seed(store, "ana")
    seed(store, "bob", ["I live in Oslo with my husband Erik.", *FACTS[1:]])
    bob = CommonplaceRetriever(store, scope={"user": "bob"}, relevant_only=False)
    hits = bob.retrieve("my partner Joana in Porto")
    assert hits and all("Joana" not in n.node.get_content() for n in hits)
    for hit in hits:
        (episode,) = store.explain(hit.node.node_id).episodes()
        assert episode.scope.user == "bob"


def test_aretrieve_returns_what_retrieve_returns(db_url: str, clock: ManualClock) -> None:
    # touch_on_recall off: the first retrieval would otherwise change the second's scores
    with Memory(db_url, clock=clock, config=Config(touch_on_recall=False)) as store:
        seed(store)
        retriever = CommonplaceRetriever(store, scope="ana")
        sync = retriever.retrieve(QueryBundle("sister Rita"))
        concurrent = asyncio.run(retriever.aretrieve("sister Rita"))
    assert [(n.node.node_id, n.score) for n in sync] == [
        (n.node.node_id, n.score) for n in concurrent
    ]


def test_a_scope_too_small_to_search_comes_back_whole_and_unranked(store: Memory) -> None:
    seed(store, facts=FACTS[:2])  # fewer notes than Config.search_min_notes
    hits = CommonplaceRetriever(store, scope="ana").retrieve("anything at all")
    assert sorted(n.node.get_content() for n in hits) == [
        "The user just moved to Porto with the user's partner Joana.",
        "The user works as a night nurse at the children's hospital.",
    ]
    assert all(n.score is None and n.node.metadata["signals"] == {} for n in hits)
