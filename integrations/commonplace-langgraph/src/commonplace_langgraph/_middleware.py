"""CommonplaceMiddleware: memory for LangChain's prebuilt ``create_agent``, in one object.

``create_agent(model, tools, middleware=[CommonplaceMiddleware(memory)])`` is all it
takes. Before every model call the middleware recalls the user's memory for the current
question and adds the compiled block to the system message (the state is not touched,
so nothing extra is checkpointed and no block piles up in the history). Within one turn
the recall is made once: the calls of a tool loop reuse it. When the agent is done with
the turn, the user's messages of that turn are written to memory (keyed by message id,
so a checkpointer tapping the same messages writes nothing twice). Writing only then is
what keeps the question out of its own memory, for the model and for the recall tool.

The user comes from the run's context (``context=Ctx(user_id="ana")``), else
``config["configurable"]["user_id"]`` or ``"langgraph_user_id"``; without one the memory
is the thread's own and a :class:`NoUserWarning` says so.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.runtime import Runtime

from commonplace import Memory, Scope
from commonplace.errors import InvalidInputError, InvalidTypeError
from commonplace.validation import checked_user_names

from ._messages import current_turn, human_turns
from ._nodes import turn_batch
from ._scope import ScopeRule
from ._tools import memory_tools

_CACHE_SIZE = 512


class CommonplaceMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Recall before each model call, notes from the user's turns after the agent ran.

    ``user_key`` names the user's field in the context (or ``configurable``); ``agent``
    is an agent id added to every scope. ``top_k`` and ``budget_tokens`` go to
    ``Memory.recall``. ``write_notes=False`` leaves writing to a
    :class:`CommonplaceSaver` (or to you). ``tools=True`` also gives the agent the
    ``remember``, ``recall`` and ``forget`` tools on the same memory. ``user_names``:
    names a human message may carry and still be the user's (any other named one is
    written as evidence only, and is never the question recalled for).
    """

    def __init__(
        self,
        memory: Memory,
        *,
        user_key: str = "user_id",
        agent: str | None = None,
        user_names: Sequence[str] = (),
        top_k: int = 10,
        budget_tokens: int | None = None,
        write_notes: bool = True,
        tools: bool = False,
    ) -> None:
        if not isinstance(memory, Memory):
            raise InvalidTypeError(
                f"memory must be a commonplace.Memory, not {type(memory).__name__}"
            )
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise InvalidInputError(f"top_k must be a positive int, not {top_k!r}")
        for name, flag in (("write_notes", write_notes), ("tools", tools)):
            if not isinstance(flag, bool):
                raise InvalidTypeError(f"{name} must be a bool, not {type(flag).__name__}")
        self.memory = memory
        self.rule = ScopeRule(
            user_key=user_key, agent=agent, user_names=checked_user_names(user_names)
        )
        self.top_k = top_k
        self.budget_tokens = budget_tokens
        self.write_notes = write_notes
        self.tools: list[BaseTool] = (
            memory_tools(memory=memory, user_key=user_key, agent=agent) if tools else []
        )
        self._lock = threading.Lock()
        self._recalled: OrderedDict[tuple[Scope, str], str] = OrderedDict()

    # -- before the model: the compiled memory in the system message --------------------

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        question = self._question(request)
        if question is None:
            return handler(request)
        scope, message_id, text = question
        block = self._cached(scope, message_id)
        if block is None:
            recall = self.memory.recall(
                text, scope=scope, top_k=self.top_k, budget_tokens=self.budget_tokens
            )
            block = self._keep(scope, message_id, recall.render())
        return handler(with_memory(request, block))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        question = self._question(request)
        if question is None:
            return await handler(request)
        scope, message_id, text = question
        block = self._cached(scope, message_id)
        if block is None:
            recall = await self.memory.arecall(
                text, scope=scope, top_k=self.top_k, budget_tokens=self.budget_tokens
            )
            block = self._keep(scope, message_id, recall.render())
        return await handler(with_memory(request, block))

    # -- after the agent: the user's messages of the turn become memory ------------------

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        batch = self._turns(state, runtime)
        if batch:
            self.memory.write_many(batch)
        return None

    async def aafter_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        batch = self._turns(state, runtime)
        if batch:
            await self.memory.awrite_many(batch)
        return None

    # -- helpers ------------------------------------------------------------------------

    def _question(self, request: ModelRequest[Any]) -> tuple[Scope, str, str] | None:
        config, context = _config(), request.runtime.context
        who = self.rule.speakers(self.rule.user(config, context=context))
        turns = [t for t in human_turns(request.messages, who) if t.said_by is None]
        if not turns:
            return None
        scope = self.rule.read_scope(config, context=context)
        latest = turns[-1]
        return scope, latest.message_id, latest.text[: self.memory.config.max_query_chars]

    def _turns(self, state: Mapping[str, Any], runtime: Runtime[Any]) -> list[Any]:
        if not self.write_notes:
            return []
        config = _config()
        who = self.rule.speakers(self.rule.user(config, context=runtime.context))
        turns = human_turns(current_turn(state.get("messages") or [], who), who)
        if not turns:
            return []
        scope = self.rule.write_scope(config, context=runtime.context)
        return turn_batch(self.memory, turns, scope=scope, config=config)

    def _cached(self, scope: Scope, message_id: str) -> str | None:
        with self._lock:
            block = self._recalled.get((scope, message_id))
            if block is not None:
                self._recalled.move_to_end((scope, message_id))
            return block

    def _keep(self, scope: Scope, message_id: str, block: str) -> str:
        with self._lock:
            self._recalled[(scope, message_id)] = block
            while len(self._recalled) > _CACHE_SIZE:
                self._recalled.popitem(last=False)
        return block


def with_memory(request: ModelRequest[Any], block: str) -> ModelRequest[Any]:
    """The request with the compiled memory after the system prompt (unchanged if empty)."""
    if not block:
        return request
    system = request.system_message
    if system is None:
        return request.override(system_message=SystemMessage(content=block))
    content = system.content
    if isinstance(content, str):
        merged: Any = f"{content}\n\n{block}" if content.strip() else block
    else:
        merged = [*content, {"type": "text", "text": block}]
    return request.override(system_message=system.model_copy(update={"content": merged}))


def _config() -> Mapping[str, Any] | None:
    try:
        return get_config()
    except RuntimeError:  # called outside a run (a unit test driving the hook by hand)
        return None
