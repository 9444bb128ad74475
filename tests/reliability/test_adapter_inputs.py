"""Hostile input through the adapters: only commonplace errors, and a refusal changes nothing.

Hypothesis drives the integrations on real SQLite files, with a scripted chat model as
the only stand-in:

- LangGraph's ``CommonplaceStore``: every ``BaseStore`` method (sync and async) and raw
  batches, with namespaces, keys, values, filters, queries, paging and TTLs made of
  lone surrogates at any depth, nesting far past the documented bound, non-JSON values,
  NaN, non-str keys, emails and percent signs as labels. Each example runs on a fresh
  copy of a small store; a refused call must leave every table as it was, an accepted
  put must read back exactly what was put (tuples as lists), and the store must still
  work afterwards.
- LangGraph's memory tools in a real ``ToolNode`` graph, for user ids that are emails,
  dotted, percent-encoded look-alikes, Unicode, or no usable id at all: a usable id
  just works (what was remembered is found again by that user only), an unusable one
  is a commonplace error, and a bad argument from the model is a tool error result that
  changes nothing.
- The same words said several times in one conversation, each message with its own id,
  through the memory nodes, the checkpointer, the ``create_agent`` middleware and both
  LlamaIndex adapters: as many user episodes as messages (and messages without ids keep
  the text as their identity, as before).
- A message carrying the id of RecallNode's memory block is refused before the model
  answers, and the memory is left as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sqlite3
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from llama_index.core.llms import ChatMessage, MessageRole
from reliability_support import BUSY, SIZES, T0, dump, marker, profile, tally, url_of

# the LangGraph tests' scripted chat model, shared rather than copied
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "langgraph"))
from lg_helpers import ScriptedModel

import commonplace_langgraph
from commonplace import ManualClock, Memory, Scope
from commonplace.errors import CommonplaceError, InvalidInputError
from commonplace_langgraph import (
    MEMORY_MESSAGE_ID,
    CommonplaceMiddleware,
    CommonplaceSaver,
    CommonplaceStore,
    NoteNode,
    add_memory_nodes,
    memory_tools,
)
from commonplace_llamaindex import CommonplaceMemory, CommonplaceMemoryBlock

# -- hostile values -------------------------------------------------------------------------

# fmt: off
SPECIAL_TEXT = [
    "", " ", "*", "' OR '1'='1", "x" * 300,
    ".", "a.b", "ana@example.com", "first.last",  # dots: LangGraph refuses them in labels
    "%", "50%", "%2E", "%25", "a%2Eb", "a%2eb",  # what the label encoding escapes
    "\ud800", "a\udcffb", "\x00", "a\x00b", "a\nb",  # no UTF-8 store holds the first two
    "langgraph", "memories", "agents", "threads",  # labels with a meaning
    "ａｎａ", "ana\u200b",  # look-alikes
]
# fmt: on
TEXT = st.one_of(st.text(max_size=20), st.sampled_from(SPECIAL_TEXT))  # surrogates included
# what LangGraph and commonplace accept, so that accepted calls are explored as much as
# refused ones: labels hold no '.', NUL or surrogate
PLAIN = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
GOOD_LABELS = st.one_of(
    st.text(st.characters(exclude_categories=["Cs"], exclude_characters=".\x00"), min_size=1),
    st.sampled_from(["ana", "%", "50%", "a%2Eb", "ana@example%2Ecom", "*", "threads", "a\nb"]),
)
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(),
    st.binary(max_size=4),
    st.just(object()),
    st.just({1, 2}),
    st.just(datetime(2026, 1, 5, tzinfo=timezone.utc)),
)


def maybe(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly good (a call is accepted only if every argument is), often bad."""
    return st.integers(0, 2).flatmap(lambda n: bad if n == 2 else good)


GOOD_NAMESPACES = st.one_of(
    st.tuples(st.just("memories"), GOOD_LABELS),
    st.tuples(
        st.just("memories"), GOOD_LABELS, st.sampled_from(["threads", "agents"]), GOOD_LABELS
    ),
    st.lists(GOOD_LABELS, min_size=1, max_size=3).map(tuple),
)
BAD_NAMESPACES = st.one_of(
    st.lists(st.one_of(TEXT, JUNK), max_size=4).map(tuple),
    st.tuples(st.just("memories"), TEXT),
    st.lists(TEXT, max_size=3),  # a list, not a tuple
    JUNK,
    st.sampled_from(["memories", "abc", ()]),  # a str, not a tuple of labels
)
NAMESPACES = maybe(GOOD_NAMESPACES, BAD_NAMESPACES)
KEYS = maybe(PLAIN, st.one_of(TEXT, JUNK))


@dataclass(frozen=True)
class Deep:
    """A recipe for a deeply nested value, built only when used (so a failing example is
    reported as this short recipe, not as a value too deep to print)."""

    depth: int
    kind: str
    bottom: Any

    def build(self) -> Any:
        out = self.bottom
        for _ in range(self.depth):
            out = [out] if self.kind == "list" else {"a": out}
        return out


@dataclass(frozen=True)
class Huge:
    """A recipe for an integer too long to print (or to read back from JSON)."""

    digits: int

    def build(self) -> int:
        return int(10**self.digits) - 1  # (int("9" * digits) is refused past 4,300 digits)


DEPTHS = st.sampled_from([1, 10, 62, 63, 64, 65, 200, 1_000, 5_000, 100_000])
DEEP = st.builds(
    Deep,
    depth=DEPTHS,
    kind=st.sampled_from(["list", "dict"]),
    bottom=st.sampled_from(["bottom", "\ud800", float("nan"), 1, None]),
)
GOOD_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    PLAIN,
)
BAD_LEAVES = st.one_of(
    st.floats(),  # NaN and infinities included
    st.text(max_size=12),  # lone surrogates included
    st.sampled_from(["\ud800", "a\udcffb"]),
    st.builds(Huge, st.sampled_from([4_000, 4_300, 4_301, 50_000])),
    JUNK,
    DEEP,
)
LEAVES = maybe(GOOD_LEAVES, BAD_LEAVES)
VALUE_KEYS = maybe(PLAIN, st.one_of(st.sampled_from(["\ud800", "a\udcffb"]), st.integers()))


def nested(leaves: st.SearchStrategy[Any], keys: st.SearchStrategy[Any]) -> Any:
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(keys, inner, max_size=3),
            st.tuples(inner, inner),
        ),
        max_leaves=10,
    )


GOOD_NESTED = nested(GOOD_LEAVES, PLAIN)
NESTED = nested(LEAVES, VALUE_KEYS)
STORE_VALUES = maybe(
    st.one_of(
        st.dictionaries(PLAIN, GOOD_NESTED, max_size=4),
        st.fixed_dictionaries({"text": PLAIN}, optional={"n": GOOD_NESTED}),
    ),
    st.one_of(
        st.dictionaries(VALUE_KEYS, NESTED, max_size=4),
        st.fixed_dictionaries({"text": TEXT}, optional={"n": NESTED, "tags": NESTED}),
        DEEP,  # a list or dict at the top
        JUNK,  # None is a delete, as in LangGraph
        st.lists(st.integers(), max_size=2),
    ),
)
FILTERS = maybe(
    st.one_of(
        st.none(),
        st.dictionaries(PLAIN, GOOD_LEAVES, max_size=2),
        st.fixed_dictionaries({"n": st.fixed_dictionaries({}, optional={"$gt": st.integers()})}),
    ),
    st.one_of(
        st.dictionaries(VALUE_KEYS, NESTED, max_size=2),
        st.fixed_dictionaries({"n": st.fixed_dictionaries({}, optional={"$gt": LEAVES})}),
        DEEP,
        JUNK,
    ),
)
INDEXES = maybe(
    st.sampled_from([None, False, ["text"], ["n[*]", "text"]]),
    st.one_of(st.lists(st.one_of(TEXT, JUNK), max_size=2), JUNK),
)
TTLS = maybe(st.sampled_from([None, 1, 60.5]), st.one_of(st.floats(), st.integers(-2, 10**6), JUNK))
COUNTS = maybe(st.integers(0, 50), st.one_of(st.integers(-3, -1), JUNK))
QUERIES = maybe(st.one_of(st.none(), PLAIN, st.just("green tea")), st.one_of(TEXT, JUNK))
FLAGS = maybe(st.booleans(), JUNK)


def built(value: Any) -> Any:
    """The drawn value with every recipe (:class:`Deep`, :class:`Huge`) built."""
    if isinstance(value, (Deep, Huge)):
        return value.build()
    if isinstance(value, dict):
        return {k: built(v) for k, v in value.items()}
    if isinstance(value, list):
        return [built(v) for v in value]
    if isinstance(value, tuple):
        return tuple(built(v) for v in value)
    return value


def as_stored(value: Any) -> Any:
    """What an accepted value must read back as: itself, with tuples as JSON arrays.
    (Keys are kept as given, so a key silently turned into a str would not compare equal.)
    """
    if isinstance(value, dict):
        return {k: as_stored(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_stored(v) for v in value]
    return value


# -- the store --------------------------------------------------------------------------------

TEA = {"text": "Ana likes green tea", "n": 1}


@pytest.fixture(scope="module")
def store_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("adapter-template") / "m.db"
    with Memory(url_of(path), config=BUSY, clock=ManualClock(T0)) as memory:
        memory.write("I live in Lisbon.", scope="ana")
        store = CommonplaceStore(memory)
        store.put(("memories", "ana"), "k1", TEA)
        store.put(("memories", "ana@example%2Ecom"), "k2", {"text": "Likes jasmine tea"})
        store.put(("docs", "manuals"), "k3", {"text": "outside any user"}, ttl=60)
    return path


@contextlib.contextmanager
def fresh_store(template: Path) -> Iterator[tuple[Path, CommonplaceStore]]:
    with tempfile.TemporaryDirectory(prefix="cp-adapter-") as folder:
        path = Path(folder) / "m.db"
        shutil.copy(template, path)
        clock = ManualClock(T0 + timedelta(minutes=5))
        with Memory(url_of(path), config=BUSY, clock=clock) as memory:
            yield path, CommonplaceStore(memory)


STORE_METHODS = "put aput get aget delete search asearch list_namespaces batch abatch".split()


def store_call(data: st.DataObject, store: CommonplaceStore) -> tuple[str, Any]:
    """A drawn call on the store: its name and a thunk running it."""
    name = data.draw(st.sampled_from(STORE_METHODS), label="method")
    if name in ("put", "aput"):
        args: tuple[Any, ...] = (data.draw(NAMESPACES), data.draw(KEYS))
        args += (built(data.draw(STORE_VALUES)),)
        options: dict[str, Any] = data.draw(
            st.fixed_dictionaries({}, optional={"index": INDEXES, "ttl": TTLS})
        )
        index = options.pop("index", None)
        return name, lambda: _run(getattr(store, name)(*args, index, **options))
    if name in ("get", "aget"):
        args = (data.draw(NAMESPACES), data.draw(KEYS))
        options = data.draw(st.fixed_dictionaries({}, optional={"refresh_ttl": FLAGS}))
        return name, lambda: _run(getattr(store, name)(*args, **options))
    if name == "delete":
        args = (data.draw(NAMESPACES), data.draw(KEYS))
        return name, lambda: store.delete(*args)
    if name in ("search", "asearch"):
        prefix = data.draw(NAMESPACES)
        options = data.draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "query": QUERIES,
                    "filter": FILTERS.map(built),
                    "limit": COUNTS,
                    "offset": COUNTS,
                    "refresh_ttl": FLAGS,
                },
            )
        )
        return name, lambda: _run(getattr(store, name)(prefix, **options))
    if name == "list_namespaces":
        options = data.draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "prefix": NAMESPACES,
                    "suffix": NAMESPACES,
                    "max_depth": COUNTS,
                    "limit": COUNTS,
                    "offset": COUNTS,
                },
            )
        )
        return name, lambda: store.list_namespaces(**options)
    ops = data.draw(st.lists(raw_ops(), min_size=1, max_size=4), label="ops")
    ops = [op._replace(value=built(op.value)) if isinstance(op, PutOp) else op for op in ops]
    return name, lambda: _run(getattr(store, name)(ops))


def raw_ops() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(PutOp, NAMESPACES, KEYS, STORE_VALUES, INDEXES, TTLS),
        st.builds(PutOp, st.just(("memories", "ana")), st.just("k9"), st.just({"text": "ok"})),
        st.builds(GetOp, NAMESPACES, KEYS, FLAGS),
        st.builds(SearchOp, NAMESPACES, FILTERS.map(built), COUNTS, COUNTS, QUERIES, FLAGS),
        st.builds(
            ListNamespacesOp,
            st.one_of(
                st.none(),
                st.lists(
                    st.builds(MatchCondition, st.sampled_from(["prefix", "suffix"]), NAMESPACES),
                    max_size=2,
                ).map(tuple),
            ),
            COUNTS,
            COUNTS,
            COUNTS,
        ),
        JUNK,
    )


def _run(result: Any) -> Any:
    return asyncio.run(result) if asyncio.iscoroutine(result) else result


def test_the_store_refuses_bad_input_cleanly(store_template: Path) -> None:
    @given(data=st.data())
    @profile(SIZES.fuzz_examples)
    def run(data: st.DataObject) -> None:
        with fresh_store(store_template) as (path, store):
            name, call = store_call(data, store)
            before = dump(path)
            try:
                call()
            except CommonplaceError as exc:
                assert dump(path) == before, f"a refused {name} changed the store"
                assert 0 < len(str(exc)) < 1_000, str(exc)[:2_000]
                tally("adapter inputs: store calls refused cleanly")
            else:
                tally("adapter inputs: store calls accepted")
            # whatever happened, the store still works
            store.search(("memories", "ana"), query="green tea")
            store.list_namespaces(prefix=("memories",))
            store.put(("memories", "ana"), "after", {"text": "still writable"})
            after = store.get(("memories", "ana"), "after")
            assert after is not None and after.value == {"text": "still writable"}

    run()


def test_an_accepted_put_reads_back_exactly_what_was_put(store_template: Path) -> None:
    @given(
        namespace=NAMESPACES,
        key=KEYS,
        value=maybe(
            st.dictionaries(PLAIN, GOOD_NESTED, min_size=1, max_size=4),
            st.dictionaries(VALUE_KEYS, NESTED, min_size=1, max_size=4),
        ),
    )
    @profile(SIZES.fuzz_examples)
    def run(namespace: Any, key: Any, value: Any) -> None:
        value = built(value)
        with fresh_store(store_template) as (path, store):
            before = dump(path)
            try:
                store.put(namespace, key, value)
            except CommonplaceError:
                assert dump(path) == before, "a refused put changed the store"
                tally("adapter inputs: store puts refused cleanly")
                return
            tally("adapter inputs: store puts accepted")
            got = store.get(tuple(namespace), str(key))
            assert got is not None and got.value == as_stored(value), (got, value)
            listed = store.search(tuple(namespace), limit=100)
            assert any(i.key == str(key) and i.value == got.value for i in listed)

    run()


DOCUMENTED_DEPTH = 64  # commonplace_langgraph.MAX_VALUE_DEPTH, as its README says


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_nesting_is_bounded_explicitly_not_by_the_interpreter_stack(
    store_template: Path, kind: str
) -> None:
    bound = DOCUMENTED_DEPTH
    with fresh_store(store_template) as (path, store):
        # the value dict is the first level: bound - 1 more levels fit, one more does not
        deepest = {"v": Deep(bound - 1, kind, "bottom").build()}
        store.put(("memories", "ana"), "deep", deepest)
        got = store.get(("memories", "ana"), "deep")
        assert got is not None and got.value == deepest
        for depth in (bound, bound + 1, 5_000, 200_000):
            before = dump(path)
            with pytest.raises(InvalidInputError, match=f"more than {bound} levels"):
                store.put(("memories", "ana"), "deeper", {"v": Deep(depth, kind, "x").build()})
            with pytest.raises(InvalidInputError, match=f"more than {bound} levels"):
                store.search(("memories",), filter={"v": Deep(depth, kind, "x").build()})
            assert dump(path) == before
    assert commonplace_langgraph.MAX_VALUE_DEPTH == DOCUMENTED_DEPTH


@given(
    options=st.fixed_dictionaries(
        {},
        optional={
            "index": maybe(
                st.sampled_from([None, {"fields": ["text"]}, {"fields": ["$"], "dims": 256}]),
                st.one_of(
                    st.dictionaries(st.sampled_from(["fields", "dims", "embed"]), LEAVES), JUNK
                ),
            ),
            "ttl": maybe(
                st.sampled_from([None, {"default_ttl": 5}, {"sweep_interval_minutes": 1}]),
                st.one_of(
                    st.dictionaries(
                        st.sampled_from(
                            ["default_ttl", "sweep_interval_minutes", "refresh_on_read", "x"]
                        ),
                        st.one_of(TTLS, JUNK),
                    ),
                    JUNK,
                ),
            ),
            "namespace_prefix": st.one_of(NAMESPACES, st.just(("langgraph",))),
        },
    )
)
@profile(SIZES.fuzz_examples)
def test_store_options_are_refused_cleanly(options: dict[str, Any]) -> None:
    with Memory(":memory:") as memory:
        try:
            store = CommonplaceStore(memory, **options)
        except CommonplaceError:
            tally("adapter inputs: store options refused cleanly")
            return
        tally("adapter inputs: store options accepted")
        namespace = (*store.namespace_prefix, "ana")
        store.put(namespace, "k", {"text": "Ana likes green tea"})
        assert store.search(namespace, query="green tea")[0].key == "k"
        store.sweep_ttl()


# -- the memory tools ----------------------------------------------------------------------

USER_IDS = st.one_of(
    st.sampled_from(
        [*SPECIAL_TEXT, "first.last@sub.example.co.uk", "...", "ana/../bob", "u" * 256, "u" * 257]
    ),
    st.emails(),
    st.text(max_size=12),
    st.integers(0, 10**6),
)


def usable(user: object) -> bool:
    if isinstance(user, bool) or not isinstance(user, (str, int)):
        return False
    try:
        Scope(user=str(user))
    except CommonplaceError:
        return False
    return True


def tools_graph(store: CommonplaceStore) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(memory_tools()))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    return builder.compile(store=store)


def call_tool(graph: Any, user: object, name: str, args: dict[str, Any]) -> Any:
    call = {"name": name, "args": args, "id": "c1", "type": "tool_call"}
    config = {"configurable": {"thread_id": "t1", "user_id": user}}
    out = graph.invoke({"messages": [AIMessage("", tool_calls=[call])]}, config)
    return out["messages"][-1]


TOOL_ARGS = st.one_of(TEXT, st.text(min_size=1_990, max_size=2_100), JUNK)


@given(user=USER_IDS, data=st.data())
@profile(SIZES.isolation_examples)
def test_memory_tools_take_any_usable_user_id_and_answer_bad_arguments(
    user: object, data: st.DataObject
) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="cp-tools-") as folder,
        Memory(url_of(Path(folder) / "m.db"), config=BUSY) as memory,
    ):
        path = Path(folder) / "m.db"
        store = CommonplaceStore(memory)
        graph = tools_graph(store)
        fact = f"Prefers jasmine tea {marker(1)}"
        if not usable(user):
            before = dump(path)
            with pytest.raises(CommonplaceError):
                call_tool(graph, user, "remember", {"text": fact})
            assert dump(path) == before
            tally("adapter inputs: unusable user ids refused")
            return
        saved = call_tool(graph, user, "remember", {"text": fact})
        assert saved.status == "success", saved.content
        key = str(saved.content).split()[-1].rstrip(".")
        namespace = store.namespace_for(Scope(user=str(user)))
        assert store.scope_for(namespace) == Scope(user=str(user))
        item = store.get(namespace, key)
        assert item is not None and item.value["text"] == fact
        assert namespace in store.list_namespaces(prefix=("memories",))
        found = call_tool(graph, user, "recall", {"query": f"jasmine tea {marker(1)}"})
        assert key in str(found.content)
        other = "someone-else" if str(user) != "someone-else" else "another"
        elsewhere = call_tool(graph, other, "recall", {"query": f"jasmine tea {marker(1)}"})
        assert key not in str(elsewhere.content)
        # bad arguments from the model: a tool error it can read, and nothing changes
        for _ in range(data.draw(st.integers(1, 4))):
            name = data.draw(st.sampled_from(["remember", "recall", "forget"]))
            field = {"remember": "text", "recall": "query", "forget": "memory_id"}[name]
            before = dump(path)
            result = call_tool(graph, user, name, {field: data.draw(TOOL_ARGS)})
            assert result.status in ("success", "error")
            if result.status == "error":
                assert dump(path) == before, f"a refused {name} changed the store"
                tally("adapter inputs: tool calls answered with a tool error")
            else:
                tally("adapter inputs: tool calls accepted")
        forgot = call_tool(graph, user, "forget", {"memory_id": key})
        assert forgot.status == "success"
        tally("adapter inputs: user ids that just work")


# -- the same words, said again ------------------------------------------------------------

SAID = st.lists(
    st.sampled_from(["yes", "ok", "I live in Lisbon.", "My sister Mia plays chess."]),
    min_size=2,
    max_size=5,
)
MESSAGE_IDS = st.one_of(
    st.uuids().map(str),
    st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40),
    st.text(min_size=201, max_size=260),
    st.sampled_from(["text:" + "0" * 32, "id:x", "a.b", "%2E"]),
)


def scripted(n: int = 50) -> ScriptedModel:
    return ScriptedModel(messages=iter([AIMessage("Noted.") for _ in range(n)]))


def user_episodes(path: Path, user: str) -> list[str]:
    """The user-role episodes of a user, read from the file beside commonplace."""
    db = sqlite3.connect(str(path))
    try:
        rows = db.execute(
            "SELECT text FROM episodes WHERE role = 'user' AND scope_user = ?", (user,)
        ).fetchall()
    finally:
        db.close()
    return sorted(str(r[0]) for r in rows)


def model_graph(memory: Memory | None, model: ScriptedModel, *, checkpointer: Any) -> Any:
    """A one-model graph, with the memory nodes around the model when ``memory`` is given."""
    builder = StateGraph(MessagesState)
    builder.add_node("model", lambda state: {"messages": [model.invoke(state["messages"])]})
    builder.add_edge(START, "model")
    builder.add_edge("model", END)
    if memory is not None:
        add_memory_nodes(builder, memory, before="model", after="model")
    return builder.compile(checkpointer=checkpointer)


@given(
    adapter=st.sampled_from(["nodes", "nodes+saver", "saver", "middleware", "nodes, stateless"]),
    user=st.sampled_from(["ana", "ana@example.com", "first.last", "50%", "ａｎａ"]),
    said=SAID,
    data=st.data(),
)
@profile(SIZES.isolation_examples)
def test_identical_messages_with_distinct_ids_are_distinct_episodes_in_langgraph(
    adapter: str, user: str, said: list[str], data: st.DataObject
) -> None:
    ids = data.draw(st.lists(MESSAGE_IDS, min_size=len(said), max_size=len(said), unique=True))
    if adapter == "nodes, stateless":  # no checkpointer: surrogates in ids are fine too
        ids = [i if n else i + "\udcff" for n, i in enumerate(ids)]
    config = {"configurable": {"thread_id": "t1", "user_id": user}}
    with (
        tempfile.TemporaryDirectory(prefix="cp-said-") as folder,
        Memory(url_of(Path(folder) / "m.db"), config=BUSY) as memory,
    ):
        path = Path(folder) / "m.db"
        model = scripted()
        graph: Any
        if adapter == "middleware":
            graph = create_agent(
                model, middleware=[CommonplaceMiddleware(memory)], checkpointer=InMemorySaver()
            )
        elif adapter == "saver":
            graph = model_graph(None, model, checkpointer=CommonplaceSaver(memory))
        elif adapter == "nodes+saver":
            graph = model_graph(memory, model, checkpointer=CommonplaceSaver(memory))
        elif adapter == "nodes":
            graph = model_graph(memory, model, checkpointer=InMemorySaver())
        else:
            graph = model_graph(memory, model, checkpointer=None)
        history: list[Any] = []
        for text, message_id in zip(said, ids):
            message = HumanMessage(text, id=message_id)
            if adapter == "nodes, stateless":
                history = graph.invoke({"messages": [*history, message]}, config)["messages"]
            else:
                graph.invoke({"messages": [message]}, config)
        assert user_episodes(path, user) == sorted(said), (adapter, said)
        tally("adapter inputs: repeated messages kept apart (LangGraph)")


@given(said=SAID)
@profile(SIZES.isolation_examples)
def test_messages_without_ids_keep_their_text_as_identity(said: list[str]) -> None:
    """A channel without add_messages gives no ids: the text is the identity, as before."""
    with (
        tempfile.TemporaryDirectory(prefix="cp-noid-") as folder,
        Memory(url_of(Path(folder) / "m.db"), config=BUSY) as memory,
    ):
        messages: list[Any] = []
        for text in said:
            messages += [{"role": "user", "content": text}, AIMessage("Noted.")]
            NoteNode(memory)({"messages": messages}, {"configurable": {"user_id": "ana"}})
        assert user_episodes(Path(folder) / "m.db", "ana") == sorted(set(said))


@given(
    user=st.sampled_from(["ana", "ana@example.com", "first.last", "ａｎａ"]),
    said=SAID,
    replies=st.booleans(),
)
@profile(SIZES.isolation_examples)
def test_identical_messages_are_distinct_episodes_in_llamaindex_memory(
    user: str, said: list[str], replies: bool
) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="cp-li-said-") as folder,
        Memory(url_of(Path(folder) / "m.db"), config=BUSY) as store,
    ):
        memory = CommonplaceMemory.from_defaults(store, user_id=user, session_id="s1")
        for text in said:
            memory.get(input=text)
            memory.put(ChatMessage(role=MessageRole.USER, content=text))
            if replies:
                memory.put(ChatMessage(role=MessageRole.ASSISTANT, content="Noted."))
        memory.flush()
        assert user_episodes(Path(folder) / "m.db", user) == sorted(said)
        # a message memory refuses changes nothing: not the history, not the store
        path = Path(folder) / "m.db"
        before, history = dump(path), memory.get_all()
        with pytest.raises(CommonplaceError):
            memory.put(ChatMessage(role=MessageRole.USER, content="I live in \ud800 Lisbon"))
        assert memory.get_all() == history and dump(path) == before
        tally("adapter inputs: repeated messages kept apart (LlamaIndex memory)")


# long enough that LlamaIndex's short queue flushes old turns to the block every turn
LONG_REPLY = "Noted! I will keep that in mind for the next time we talk about it. " * 3


@given(said=SAID)
@profile(max(5, SIZES.isolation_examples // 3))
def test_identical_messages_are_distinct_episodes_in_the_llamaindex_block(
    said: list[str],
) -> None:
    from llama_index.core.memory import Memory as LlamaMemory
    from llama_index.core.storage.chat_store.base_db import MessageStatus
    from sqlalchemy.ext.asyncio import create_async_engine

    async def converse(store: Memory) -> list[str]:
        engine = create_async_engine("sqlite+aiosqlite:///:memory:")
        try:
            memory = LlamaMemory.from_defaults(
                memory_blocks=[CommonplaceMemoryBlock(memory=store, user_id="ana")],
                async_engine=engine,
                session_id="s1",
                token_limit=400,
                chat_history_token_ratio=0.25,
                token_flush_size=40,
            )
            for text in [*said, "And one more thing to say.", "And the last one."]:
                await memory.aput(ChatMessage(role=MessageRole.USER, content=text))
                await memory.aput(ChatMessage(role=MessageRole.ASSISTANT, content=LONG_REPLY))
            archived = await memory.aget_all(status=MessageStatus.ARCHIVED)
            return [str(m.content) for m in archived if m.role == MessageRole.USER]
        finally:
            await engine.dispose()

    with (
        tempfile.TemporaryDirectory(prefix="cp-li-block-") as folder,
        Memory(url_of(Path(folder) / "m.db"), config=BUSY) as store,
    ):
        flushed = asyncio.run(converse(store))
        assert flushed, "the short queue should have flushed some turns to the block"
        assert user_episodes(Path(folder) / "m.db", "ana") == sorted(flushed)
        tally("adapter inputs: repeated messages kept apart (LlamaIndex block)")


# -- the memory block's id is reserved ------------------------------------------------------


@given(
    earlier=st.integers(0, 2),
    kind=st.sampled_from(["human", "ai", "human, then another"]),
    checkpointed=st.booleans(),
)
@profile(SIZES.isolation_examples)
def test_a_message_with_the_memory_blocks_id_never_replaces_it(
    earlier: int, kind: str, checkpointed: bool
) -> None:
    config = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
    with (
        tempfile.TemporaryDirectory(prefix="cp-block-id-") as folder,
        Memory(url_of(Path(folder) / "m.db"), config=BUSY) as memory,
    ):
        path = Path(folder) / "m.db"
        memory.write("My sister Mia plays chess.", scope=Scope(user="ana", thread="old"))
        model = scripted()
        graph = model_graph(memory, model, checkpointer=InMemorySaver() if checkpointed else None)
        history: list[Any] = [SystemMessage("Be brief.", id="sys")]
        for n in range(earlier):
            update = {"messages": [*history, HumanMessage(f"Tell me about Mia {n}", id=f"h{n}")]}
            history = graph.invoke(update, config)["messages"]
            blocks = [m for m in history if m.id == MEMORY_MESSAGE_ID]
            assert len(blocks) == 1 and blocks[0].type == "system"
        colliding: BaseMessage
        if kind == "human":
            colliding = HumanMessage("Where does Mia play?", id=MEMORY_MESSAGE_ID)
        elif kind == "ai":
            colliding = AIMessage("I remember Mia.", id=MEMORY_MESSAGE_ID)
        else:  # the clash hidden behind a later, innocent question
            colliding = HumanMessage("Who is Mia?", id=MEMORY_MESSAGE_ID)
        tail: list[Any] = [colliding]
        if kind == "human, then another":
            tail.append(HumanMessage("And her brother?", id=str(uuid.uuid4())))
        before, calls = dump(path), len(model.seen)
        update = {"messages": tail if checkpointed else [*history, *tail]}
        with pytest.raises(InvalidInputError, match=MEMORY_MESSAGE_ID):
            graph.invoke(update, config)
        assert len(model.seen) == calls, "the model answered a conversation missing its memory"
        assert dump(path) == before
        tally("adapter inputs: memory block id collisions refused")


def test_the_refusal_says_how_to_fix_it() -> None:
    with Memory(":memory:") as memory:
        graph = model_graph(memory, scripted(), checkpointer=None)
        with pytest.raises(InvalidInputError) as refused:
            graph.invoke(
                {"messages": [HumanMessage("hi", id=MEMORY_MESSAGE_ID)]},
                {"configurable": {"user_id": "ana"}},
            )
        assert "another id" in str(refused.value)
        # the same words with any other id go through
        out = graph.invoke(
            {"messages": [HumanMessage("hi", id="mine")]}, {"configurable": {"user_id": "ana"}}
        )
        assert out["messages"][-1].content == "Noted."
