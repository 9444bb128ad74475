"""CommonplaceRetriever: four-signal recall as a LlamaIndex ``BaseRetriever``."""

from __future__ import annotations

from collections.abc import Mapping

from llama_index.core.callbacks import CallbackManager
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from commonplace import Memory, Recall, RecallItem, Record, Scope
from commonplace.errors import InvalidTypeError
from commonplace.validation import checked_bool, checked_int

from ._scopes import as_scope

# What a node carries about its record. Only the date is shown to the model (it helps
# with "when did I say that"); the rest is for the application and is kept out of
# prompts and embeddings, where ids and score tables are noise.
METADATA_KEYS = ("kind", "tier", "provenance", "signals", "tags", "created_at", "section")
_SHOWN_TO_LLM = frozenset({"created_at"})


class CommonplaceRetriever(BaseRetriever):
    """Retrieve a scope's notes ranked by the four signals, as ``NodeWithScore``.

    Each node is one record: its id is the record id (``memory.explain(node.node_id)``
    gives the evidence), its text the note, and its metadata the record's ``kind``,
    ``tier``, ``provenance`` (episode ids), ``tags``, ``created_at``, the ``section`` of
    the compiled memory it was shown in and ``signals`` (the per-signal breakdown,
    ``total`` included).

    Nodes come in commonplace's order (the four-signal total: relevance, recency,
    frequency, importance). ``NodeWithScore.score`` is always set, to the relevance part
    alone (``signals["semantic"]``: the cosine similarity blended with the keyword match,
    in [0, 1]): every recall strengthens what it returns (frequency, recency), so the
    total of a record grows each time it is retrieved, while its relevance to the same
    query stays the same. Score cut-offs (``SimilarityPostprocessor``) therefore mean
    what they mean for any vector retriever, and the same query scores the same twice.

    By default only records that pass commonplace's relevance gate are returned;
    ``relevant_only=False`` returns every record the recall showed, up to ``top_k``.
    """

    def __init__(
        self,
        memory: Memory,
        *,
        scope: Scope | str | Mapping[str, str],
        top_k: int = 10,
        relevant_only: bool = True,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        if not isinstance(memory, Memory):
            raise InvalidTypeError(
                f"memory must be a commonplace.Memory, not {type(memory).__name__}"
            )
        self._memory = memory
        self._scope = as_scope(scope)
        self._top_k = checked_int("top_k", top_k, low=1, high=1000)
        self._relevant_only = checked_bool("relevant_only", relevant_only)
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    @property
    def scope(self) -> Scope:
        return self._scope

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        recall = self._memory.recall(query_bundle.query_str, scope=self._scope, top_k=self._top_k)
        return self._nodes(recall)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        recall = await self._memory.arecall(
            query_bundle.query_str, scope=self._scope, top_k=self._top_k
        )
        return self._nodes(recall)

    def _nodes(self, recall: Recall) -> list[NodeWithScore]:
        return nodes_from_recall(recall, relevant_only=self._relevant_only)[: self._top_k]


def nodes_from_recall(recall: Recall, *, relevant_only: bool = True) -> list[NodeWithScore]:
    """The records of a recall as nodes, in its order, each scored by its relevance."""
    items = [i for i in recall.items if i.score.gate > 0 or not relevant_only]
    return [item_to_node(item) for item in items]


def item_to_node(item: RecallItem) -> NodeWithScore:
    """One recalled record as a ``NodeWithScore``: scored by its relevance, with the whole
    breakdown (and the four-signal total) in the metadata."""
    node = record_to_node(
        item.record, signals=item.score.breakdown(), section=getattr(item, "section", None)
    )
    return NodeWithScore(node=node, score=float(item.score.semantic))


def record_to_node(
    record: Record, *, signals: Mapping[str, float] | None = None, section: str | None = None
) -> TextNode:
    metadata = {
        "kind": record.kind.value,
        "tier": record.tier.value,
        "provenance": list(record.provenance),
        "signals": dict(signals or {}),
        "tags": record.tags.to_json(turn_terms=False),
        "created_at": record.created_at.isoformat(),
        "section": section,
    }
    hidden = [k for k in METADATA_KEYS if k not in _SHOWN_TO_LLM]
    return TextNode(
        id_=record.id,
        text=record.text,
        metadata=metadata,
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=list(METADATA_KEYS),
    )
