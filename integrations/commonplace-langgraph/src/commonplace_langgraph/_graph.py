"""Adding the memory nodes to a user's graph without touching the user's nodes.

A ``StateGraph`` is changed in place; a compiled graph (``builder.compile()``, LangGraph's
prebuilt agents, LangChain's ``create_agent``) is rebuilt from a copy of the builder it
was compiled from and compiled again with the same checkpointer, store, cache,
interrupts, name and stream transformers, and the original is left as it was. Only edges
move. ``before=X`` reroutes every edge into X (plain, waiting and
conditional) through the recall node; ``after=Y`` takes Y's outgoing edges and
conditional branches, hangs them off the last memory node, and links Y to the note
node. ``Command(goto=...)`` and ``Send`` targets chosen inside a node at run time cannot
be rerouted from outside, and are left as they are.
"""

from __future__ import annotations

import copy
import itertools
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, cast, overload

from langchain_core.runnables import RunnableLambda
from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph

from commonplace import Memory
from commonplace.errors import InvalidInputError, InvalidTypeError

from ._nodes import ConsolidationNode, NoteNode, RecallNode

RECALL = "commonplace_recall"
NOTES = "commonplace_notes"
CONSOLIDATE = "commonplace_consolidate"


@overload
def add_memory_nodes(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    memory: Memory,
    *,
    before: str | None = None,
    after: str | None = None,
    consolidate: bool = False,
    consolidate_every: int = 1,
    messages_key: str = "messages",
    user_key: str = "user_id",
    agent: str | None = None,
    user_names: Sequence[str] = (),
    top_k: int = 10,
    budget_tokens: int | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]: ...


@overload
def add_memory_nodes(
    graph: StateGraph[Any, Any, Any, Any],
    memory: Memory,
    *,
    before: str | None = None,
    after: str | None = None,
    consolidate: bool = False,
    consolidate_every: int = 1,
    messages_key: str = "messages",
    user_key: str = "user_id",
    agent: str | None = None,
    user_names: Sequence[str] = (),
    top_k: int = 10,
    budget_tokens: int | None = None,
) -> StateGraph[Any, Any, Any, Any]: ...


def add_memory_nodes(
    graph: StateGraph[Any, Any, Any, Any] | CompiledStateGraph[Any, Any, Any, Any],
    memory: Memory,
    *,
    before: str | None = None,
    after: str | None = None,
    consolidate: bool = False,
    consolidate_every: int = 1,
    messages_key: str = "messages",
    user_key: str = "user_id",
    agent: str | None = None,
    user_names: Sequence[str] = (),
    top_k: int = 10,
    budget_tokens: int | None = None,
) -> StateGraph[Any, Any, Any, Any] | CompiledStateGraph[Any, Any, Any, Any]:
    """Add recall before ``before`` and note-writing (and consolidation) after ``after``.

    Give it a ``StateGraph`` after your nodes and edges are added and before
    ``compile()``: it is changed in place and returned. Give it a compiled graph (a
    prebuilt agent, say: ``agent = add_memory_nodes(create_agent(...), memory,
    before="model", after="model")``) and it returns a new compiled graph with the same
    settings. The nodes are named ``commonplace_recall``, ``commonplace_notes`` and
    ``commonplace_consolidate``. For ``create_agent``, :class:`CommonplaceMiddleware`
    does the same from inside the agent. ``user_names``: names a human message may
    carry and still be the user's (any other named one is kept as evidence only).
    """
    if isinstance(graph, CompiledStateGraph):
        builder = _copy_builder(graph.builder)
        _add_nodes(
            builder,
            memory,
            before=before,
            after=after,
            consolidate=consolidate,
            consolidate_every=consolidate_every,
            messages_key=messages_key,
            user_key=user_key,
            agent=agent,
            user_names=user_names,
            top_k=top_k,
            budget_tokens=budget_tokens,
        )
        return builder.compile(
            checkpointer=graph.checkpointer,
            store=graph.store,
            cache=graph.cache,
            interrupt_before=_interrupts(graph.interrupt_before_nodes),
            interrupt_after=_interrupts(graph.interrupt_after_nodes),
            debug=graph.debug,
            name=graph.name,
            transformers=graph.stream_transformers or None,
        )
    if not isinstance(graph, StateGraph):
        raise InvalidTypeError(
            f"add_memory_nodes takes a StateGraph or a graph compiled from one, not "
            f"{type(graph).__name__}; in a functional-API entrypoint, call memory.recall() "
            "before the model and memory.write() after it"
        )
    _add_nodes(
        graph,
        memory,
        before=before,
        after=after,
        consolidate=consolidate,
        consolidate_every=consolidate_every,
        messages_key=messages_key,
        user_key=user_key,
        agent=agent,
        user_names=user_names,
        top_k=top_k,
        budget_tokens=budget_tokens,
    )
    return graph


def _interrupts(nodes: Any) -> Any:
    if nodes == "*":
        return "*"
    return list(nodes) if nodes else None


def _copy_builder(builder: StateGraph[Any, Any, Any, Any]) -> StateGraph[Any, Any, Any, Any]:
    """A builder that can be changed without changing the one a compiled graph came from."""
    new = copy.copy(builder)
    new.nodes = dict(builder.nodes)
    new.edges = set(builder.edges)
    new.waiting_edges = set(builder.waiting_edges)
    new.branches = defaultdict(dict, {k: dict(v) for k, v in builder.branches.items()})
    new.channels = dict(builder.channels)
    new.managed = dict(builder.managed)
    new.schemas = dict(builder.schemas)
    new.compiled = False
    return new


def _add_nodes(
    builder: StateGraph[Any, Any, Any, Any],
    memory: Memory,
    *,
    before: str | None,
    after: str | None,
    consolidate: bool,
    consolidate_every: int,
    messages_key: str,
    user_key: str,
    agent: str | None,
    user_names: Sequence[str],
    top_k: int,
    budget_tokens: int | None,
) -> None:
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
    common: dict[str, Any] = {
        "messages_key": messages_key,
        "user_key": user_key,
        "agent": agent,
        "user_names": user_names,
    }
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
