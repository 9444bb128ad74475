"""Adding the memory nodes to a user's StateGraph without touching the user's nodes.

Only edges move. ``before=X`` reroutes every edge into X (plain, waiting and
conditional) through the recall node; ``after=Y`` takes Y's outgoing edges and
conditional branches, hangs them off the last memory node, and links Y to the note
node. ``Command(goto=...)`` and ``Send`` targets chosen inside a node at run time cannot
be rerouted from outside, and are left as they are.
"""

from __future__ import annotations

import itertools
from typing import Any, cast

from langchain_core.runnables import RunnableLambda
from langgraph.graph import StateGraph

from commonplace import Memory
from commonplace.errors import InvalidInputError, InvalidTypeError

from ._nodes import ConsolidationNode, NoteNode, RecallNode

RECALL = "commonplace_recall"
NOTES = "commonplace_notes"
CONSOLIDATE = "commonplace_consolidate"


def add_memory_nodes(
    builder: StateGraph[Any, Any, Any, Any],
    memory: Memory,
    *,
    before: str | None = None,
    after: str | None = None,
    consolidate: bool = False,
    consolidate_every: int = 1,
    messages_key: str = "messages",
    user_key: str = "user_id",
    agent: str | None = None,
    top_k: int = 10,
    budget_tokens: int | None = None,
) -> StateGraph[Any, Any, Any, Any]:
    """Add recall before ``before`` and note-writing (and consolidation) after ``after``.

    Call it after your nodes and edges are added and before ``compile()``. Returns the
    builder. The nodes are named ``commonplace_recall``, ``commonplace_notes`` and
    ``commonplace_consolidate``.
    """
    if not isinstance(builder, StateGraph):
        raise InvalidTypeError(f"builder must be a StateGraph, not {type(builder).__name__}")
    if before is None and after is None:
        raise InvalidInputError("name a node: before='model' (recall), after='model' (notes)")
    if consolidate and after is None:
        raise InvalidInputError("consolidate=True needs after=<node> to run after")
    for name in (before, after):
        if name is not None and name not in builder.nodes:
            raise InvalidInputError(
                f"no node named {name!r} in this graph; its nodes are {sorted(builder.nodes)}"
            )
    taken = {RECALL, NOTES, CONSOLIDATE} & set(builder.nodes)
    if taken:
        raise InvalidInputError(f"this graph already has the memory node(s) {sorted(taken)}")
    common: dict[str, Any] = {"messages_key": messages_key, "user_key": user_key, "agent": agent}
    if before is not None:
        recall = RecallNode(memory, top_k=top_k, budget_tokens=budget_tokens, **common)
        builder.add_node(RECALL, cast(Any, recall))
        _reroute_into(builder, before, RECALL)
        builder.add_edge(RECALL, before)
    if after is not None:
        chain = [NOTES]
        builder.add_node(NOTES, cast(Any, NoteNode(memory, **common)))
        if consolidate:
            consolidation = ConsolidationNode(memory, every=consolidate_every, **common)
            builder.add_node(CONSOLIDATE, cast(Any, consolidation))
            chain.append(CONSOLIDATE)
        _move_out_edges(builder, after, chain[-1])
        builder.add_edge(after, chain[0])
        for a, b in itertools.pairwise(chain):
            builder.add_edge(a, b)
    return builder


def _reroute_into(builder: StateGraph[Any, Any, Any, Any], target: str, via: str) -> None:
    for start, end in list(builder.edges):
        if end == target:
            builder.edges.discard((start, end))
            builder.edges.add((start, via))
    for starts, end in list(builder.waiting_edges):
        if end == target:
            builder.waiting_edges.discard((starts, end))
            builder.waiting_edges.add((starts, via))
    for branches in builder.branches.values():
        for name, spec in list(branches.items()):
            branches[name] = _redirect(spec, target, via)


def _redirect(spec: Any, target: str, via: str) -> Any:
    # spec is LangGraph's BranchSpec (a NamedTuple in a private module): only _replace is used.
    if spec.ends is not None:
        ends = {key: (via if end == target else end) for key, end in spec.ends.items()}
        return spec._replace(ends=ends)

    # No path map: the path function returns node names itself, so map them on the way out.
    def rename(result: Any) -> Any:
        if isinstance(result, (list, tuple)):
            return [via if r == target else r for r in result]
        return via if result == target else result

    return spec._replace(path=spec.path | RunnableLambda(rename))


def _move_out_edges(builder: StateGraph[Any, Any, Any, Any], source: str, new_source: str) -> None:
    for start, end in list(builder.edges):
        if start == source:
            builder.edges.discard((start, end))
            builder.edges.add((new_source, end))
    for starts, end in list(builder.waiting_edges):
        if source in starts:
            builder.waiting_edges.discard((starts, end))
            moved = tuple(new_source if s == source else s for s in starts)
            builder.waiting_edges.add((moved, end))
    if source in builder.branches:
        branches = builder.branches.pop(source)
        builder.branches[new_source].update(branches)
