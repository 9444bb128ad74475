"""CommonplaceRetriever: four-signal recall as NodeWithScore."""

from __future__ import annotations

import asyncio

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, QueryBundle

from commonplace import Config, ManualClock, Memory, Role
from commonplace.errors import CommonplaceError
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
    # the score is the relevance part of the ranking; the whole breakdown is in the metadata
    assert top.score is not None and abs(top.score - meta["signals"]["semantic"]) < 1e-3
    assert meta["section"] == "relevant"
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
    assert {n.node.node_id for n in gated} < {n.node.node_id for n in ranked}
    assert all(isinstance(n.score, float) for n in ranked)
    # in commonplace's order: the four-signal total
    totals = [n.node.metadata["signals"]["total"] for n in ranked]
    assert totals == sorted(totals, reverse=True)


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


def test_a_scope_too_small_to_search_comes_back_whole_and_scored(store: Memory) -> None:
    seed(store, facts=FACTS[:2])  # fewer notes than Config.search_min_notes
    everything = CommonplaceRetriever(store, scope="ana", relevant_only=False)
    hits = everything.retrieve("anything at all")
    assert sorted(n.node.get_content() for n in hits) == [
        "The user just moved to Porto with the user's partner Joana.",
        "The user works as a night nurse at the children's hospital.",
    ]
    assert all(isinstance(n.score, float) and n.node.metadata["signals"] for n in hits)
    (top, *_) = CommonplaceRetriever(store, scope="ana").retrieve("where does my partner live?")
    assert "Joana" in top.node.get_content() and top.score is not None and top.score > 0


def test_a_similarity_cutoff_keeps_what_matters(store: Memory) -> None:
    """Scores used to be None below search_min_notes: a cut-off dropped every node."""
    seed(store, facts=FACTS[:2])
    engine = RetrieverQueryEngine.from_args(
        CommonplaceRetriever(store, scope="ana"),
        llm=MockLLM(),
        node_postprocessors=[SimilarityPostprocessor(similarity_cutoff=0.2)],
    )
    response = engine.query("Who is my partner?")
    assert [n.node.get_content() for n in response.source_nodes] == [
        "The user just moved to Porto with the user's partner Joana."
    ]


def test_scores_are_stable_for_repeated_identical_queries(store: Memory) -> None:
    """Each recall strengthens what it returns, so the four-signal total drifts upwards
    with every retrieval; the score reported is the relevance, which does not."""
    seed(store)
    retriever = CommonplaceRetriever(store, scope="ana")
    runs = [retriever.retrieve("who is my sister Rita?") for _ in range(4)]
    scored = [[(n.node.node_id, n.score) for n in run] for run in runs]
    assert scored[0] and all(run == scored[0] for run in scored)
    first, last = runs[0][0].node.metadata["signals"], runs[-1][0].node.metadata["signals"]
    assert last["frequency"] > first["frequency"]  # the recalls did count as uses


def test_bad_options_are_refused_as_the_memory_refuses_them(store: Memory) -> None:
    """The adapter validates with the core's own checks (commonplace.validation): the
    same error type and message as the Memory call it wraps."""
    for top_k in (0, 1001, True, "5"):
        with pytest.raises(CommonplaceError) as from_adapter:
            CommonplaceRetriever(store, scope="ana", top_k=top_k)  # type: ignore[arg-type]
        with pytest.raises(CommonplaceError) as from_memory:
            store.recall("q", scope="ana", top_k=top_k)  # type: ignore[arg-type]
        assert type(from_adapter.value) is type(from_memory.value)
        assert str(from_adapter.value) == str(from_memory.value)
