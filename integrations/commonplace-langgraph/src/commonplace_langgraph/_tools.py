"""remember / recall / forget: memory tools an agent can call.

Bad arguments from the model are answered as tool errors the model can read (text that
is empty, too long or not valid Unicode, anything the memory refuses to keep); a missing
memory, store or user id, or a user id no scope can hold, is a configuration error and
raises. Any user id a scope accepts works, emails included: namespaces encode it (see
``_namespaces``).

The tools reach the store and the run's config through LangGraph's ``ToolRuntime``,
which ``ToolNode`` injects and which never appears in the schema the model sees.

What the agent asks to ``remember`` is kept as an item in the user's namespace, marked
``source: "assistant"``. On a commonplace memory (given, or the ``CommonplaceStore``'s)
that item is a memory record whose evidence says a tool put it there, never the user
(an assistant's reply itself still never becomes a note). ``recall`` is the memory's own
recall, so it finds the user's notes and the saved items alike, labelled, with the ids
``forget`` takes. It never finds the question being answered: the user's messages of a
turn are only written once the turn is answered. On any other ``BaseStore`` the tools
work on store items only.
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.prebuilt import ToolRuntime
from langgraph.store.base import BaseStore

from commonplace import Memory, Record, Scope
from commonplace.errors import (
    InvalidInputError,
    InvalidScopeError,
    InvalidTypeError,
    NotFoundError,
)

from ._items import view
from ._namespaces import check_labels, namespace_for
from ._scope import ScopeRule
from ._text import has_surrogates

_MAX_SAVED_CHARS = 2_000


class _Tools:
    def __init__(
        self,
        memory: Memory | None,
        rule: ScopeRule,
        prefix: tuple[str, ...],
        top_k: int,
    ) -> None:
        self.memory = memory
        self.rule = rule
        self.prefix = prefix
        self.top_k = top_k

    def _memory(self, runtime: ToolRuntime[Any, Any]) -> Memory | None:
        found = self.memory or getattr(runtime.store, "memory", None)
        return found if isinstance(found, Memory) else None

    def _store(self, runtime: ToolRuntime[Any, Any]) -> BaseStore:
        """The memory's own store view, else the graph's store."""
        from ._store import CommonplaceStore

        memory = self._memory(runtime)
        if isinstance(runtime.store, CommonplaceStore) and runtime.store.memory is memory:
            return runtime.store
        if memory is not None:
            return CommonplaceStore(memory, namespace_prefix=self.prefix)
        if runtime.store is None:
            raise InvalidInputError(
                "the memory tools need a memory or a store: memory_tools(memory=...), or "
                "compile the graph with store=CommonplaceStore(memory)"
            )
        return runtime.store

    def _namespace(self, runtime: ToolRuntime[Any, Any]) -> tuple[str, ...]:
        user = self.rule.user(runtime.config, context=runtime.context)
        if user is None:
            raise InvalidScopeError(
                "saved memories are kept per user, and this run names none: pass "
                f"context=...({self.rule.user_key}=...) or "
                f"config['configurable'][{self.rule.user_key!r}]"
            )
        return namespace_for(Scope(user=user, agent=self.rule.agent), prefix=self.prefix)

    def remember(self, text: str, runtime: ToolRuntime[Any, Any]) -> str:
        text = _argument(text, what="the text to keep", tool="remember")
        if len(text) > _MAX_SAVED_CHARS:
            raise ToolException(f"keep memories short: at most {_MAX_SAVED_CHARS} characters")
        from ._store import CommonplaceStore

        store = self._store(runtime)
        namespace = self._namespace(runtime)
        key = "mem_" + uuid.uuid4().hex[:16]
        value = {
            "text": " ".join(text.split()),
            "source": "assistant",
            "thread_id": self.rule.thread(runtime.config),
        }
        try:
            if isinstance(store, CommonplaceStore):
                store.put_as("tool", namespace, key, value)
            else:
                store.put(namespace, key, value)
        except InvalidInputError as exc:
            # the namespace and the value's other fields are checked already: what is
            # refused here is the model's text, so the model reads why
            raise ToolException(f"that cannot be kept: {exc}") from None
        return f"Saved as {key}."

    def recall(self, query: str, runtime: ToolRuntime[Any, Any]) -> str:
        query = _argument(query, what="a query", tool="recall")
        memory = self._memory(runtime)
        if memory is None:
            store = self._store(runtime)
            hits = store.search(self._namespace(runtime), query=query, limit=self.top_k)
            found = [f"- [{item.key}] {item.value.get('text', item.value)}" for item in hits]
            return _answer([], found, [])
        scope = self.rule.read_scope(runtime.config, context=runtime.context)
        recall = memory.recall(
            query[: memory.config.max_query_chars], scope=scope, top_k=self.top_k
        )
        records: dict[str, Record] = {}
        for record in [
            *(i.record for i in recall.items if i.score.gate > 0),
            *recall.hot,
            *recall.recent,
        ]:
            records.setdefault(record.id, record)
        said: list[str] = []
        saved: list[str] = []
        kept: list[str] = []
        for record in list(records.values())[: self.top_k]:
            item = view(record, prefix=self.prefix)
            if item is None or not item.stored:
                said.append(f"- [{record.id}] {record.text}")
            elif item.value.get("source") == "assistant":
                saved.append(f"- [{item.key}] {item.value.get('text', record.text)}")
            else:
                kept.append(f"- [{item.key}] {record.text}")
        return _answer(said, saved, kept)

    def forget(self, memory_id: str, runtime: ToolRuntime[Any, Any]) -> str:
        memory_id = _argument(
            memory_id, what="the id of a memory, as recall shows it", tool="forget"
        ).strip()
        memory = self._memory(runtime)
        scope = self.rule.read_scope(runtime.config, context=runtime.context)
        if scope.user is not None:
            store = self._store(runtime)
            namespace = namespace_for(scope, prefix=self.prefix)
            if store.get(namespace, memory_id) is not None:
                store.delete(namespace, memory_id)
                return f"Forgot {memory_id}."
        if memory is not None:
            try:
                report = memory.forget(memory_id, scope=scope)
            except (NotFoundError, InvalidInputError):  # no such id, or no id at all
                pass
            else:
                return f"Forgot {memory_id} ({len(report.removed)} record(s) removed)."
        return f"No memory with id {memory_id} for this user."


def _argument(value: object, *, what: str, tool: str) -> str:
    """A text argument from the model, or a tool error it can read and act on."""
    if not isinstance(value, str) or not value.strip():
        raise ToolException(f"{tool} needs {what}")
    if has_surrogates(value):
        raise ToolException(
            f"{tool} got text that is not valid Unicode (a lone surrogate); send plain text"
        )
    return value


def _answer(said: list[str], saved: list[str], kept: list[str]) -> str:
    lines: list[str] = []
    for title, entries in (
        ("From the user's own messages:", said),
        ("Saved earlier by the assistant:", saved),
        ("Kept by the application:", kept),
    ):
        if entries:
            lines += [title, *entries]
    return "\n".join(lines) if lines else "Nothing remembered about that."


def memory_tools(
    *,
    memory: Memory | None = None,
    user_key: str = "user_id",
    agent: str | None = None,
    namespace_prefix: tuple[str, ...] = ("memories",),
    top_k: int = 5,
) -> list[BaseTool]:
    """The ``remember``, ``recall`` and ``forget`` tools, for a ``ToolNode``.

    ``memory`` defaults to the store's (``CommonplaceStore.memory``); with any other
    ``BaseStore`` the tools work on store items only. The user comes from the run's
    context or ``config["configurable"][user_key]`` (see :class:`CommonplaceSaver`);
    ``namespace_prefix`` must match the store's.
    """
    if memory is not None and not isinstance(memory, Memory):
        raise InvalidTypeError(f"memory must be a commonplace.Memory, not {type(memory).__name__}")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise InvalidInputError(f"top_k must be a positive int, not {top_k!r}")
    tools = _Tools(
        memory,
        ScopeRule(user_key=user_key, agent=agent),
        check_labels(namespace_prefix, what="namespace_prefix"),
        top_k,
    )

    def remember(text: str, runtime: ToolRuntime[Any, Any]) -> str:
        """Save a short fact about the user for later conversations.

        Args:
            text: One short sentence worth keeping, e.g. "Prefers answers in Portuguese".
        """
        return tools.remember(text, runtime)

    def recall(query: str, runtime: ToolRuntime[Any, Any]) -> str:
        """Look up what is remembered about the user. Results carry ids for forget.

        Args:
            query: What to look for, e.g. "where does the user live".
        """
        return tools.recall(query, runtime)

    def forget(memory_id: str, runtime: ToolRuntime[Any, Any]) -> str:
        """Forget one memory, by the id recall showed for it.

        Args:
            memory_id: The id in square brackets in recall's answer.
        """
        return tools.forget(memory_id, runtime)

    # A bad argument from the model comes back to it as the tool's answer (so it can try
    # again); a missing store or user is the developer's to fix, and raises.
    return [
        StructuredTool.from_function(fn, parse_docstring=True, handle_tool_error=True)
        for fn in (remember, recall, forget)
    ]
