"""CommonplaceMemoryBlock: commonplace as a long-term block of LlamaIndex's ``Memory``."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory.memory import BaseMemoryBlock

from commonplace import Memory, Scope
from commonplace.errors import InvalidInputError, InvalidTypeError
from commonplace.validation import checked_bool, checked_int, checked_user_names

from ._messages import (
    Tokenizer,
    llama_index_tokenizer,
    query_text,
    user_role_turns,
)
from ._scopes import owner_scopes
from ._store import StoreHandle
from ._truncate import shrink_block, unwrapped
from ._turns import TurnState

_MIN_BUDGET = 16


class CommonplaceMemoryBlock(BaseMemoryBlock[str]):
    """A memory block that writes the user's turns as notes and returns compiled memory.

    ``Memory`` hands the block the messages it flushes out of its short-term queue
    (``_aput``): the user's among them go through commonplace's write path, in the scope
    ``(user_id, agent_id, session)``, one episode per message (the same words said twice
    are two); everything else is dropped, so the assistant's replies never become notes.
    A user message named as someone else's (an ``additional_kwargs`` ``name`` that is
    neither ``user_id`` nor one of ``user_names``) is kept as evidence, an episode, never
    a note. On ``_aget`` the block recalls for the latest user message and returns the
    compiled memory, which ``Memory`` places in its template: without commonplace's own
    ``<memory>`` tags, since the template wraps every block in one ``<memory>`` element
    already (and nothing when nothing was recalled). When ``Memory`` must shrink its
    blocks (``priority`` > 0), the block drops whole lines, least important first,
    instead of cutting a note in half.
    """

    name: str = Field(default="commonplace", description="The block's name in the template.")
    description: str | None = Field(
        default="Notes commonplace kept about what the user said in earlier conversations."
    )
    url: str = Field(description="URL of the commonplace store (kept to reopen it).")
    user_id: str | None = Field(default=None, description="Whose memory this is.")
    agent_id: str | None = Field(default=None, description="Which agent's memory of the user.")
    user_names: list[str] = Field(
        default_factory=list,
        description="Names a user message may carry (additional_kwargs['name']) and still be "
        "the user's, besides user_id; any other named message is kept as evidence only.",
    )
    cross_session: bool = Field(
        default=True,
        description="Recall notes from every session of the user, not just this one "
        "(the user's profile card spans sessions either way).",
    )
    budget_tokens: int | None = Field(
        default=None, description="Tokens for the compiled memory (None: the store's default)."
    )
    top_k: int = Field(default=10, description="How many recalled records may be compiled.")
    tokenizer_fn: Tokenizer = Field(default=llama_index_tokenizer, exclude=True)

    _store: StoreHandle = PrivateAttr()
    # ``Memory`` asks its blocks once per model call; within a turn (until new messages
    # are flushed in) the same query gets the same compiled memory, counted as one recall.
    _turn: TurnState = PrivateAttr(default_factory=TurnState)

    def __init__(self, *, memory: Memory | None = None, **data: Any) -> None:
        _check_options(data)
        handle = StoreHandle(memory=memory, url=data.pop("url", None))
        data["url"] = handle.url
        super().__init__(**data)
        self._store = handle

    @property
    def memory(self) -> Memory:
        """The commonplace Memory behind this block (opened on first use)."""
        return self._store.get()

    def close(self) -> None:
        """Close the store if this block opened it from its URL."""
        self._store.close()

    async def _aget(
        self,
        messages: list[ChatMessage] | None = None,
        session_id: str | None = None,
        **block_kwargs: Any,
    ) -> str:
        query = query_text(None, messages or [], user=self.user_id, user_names=self.user_names)
        if not query:
            return ""
        _, scope = self._scopes(session_id)
        memory = self._store.get()
        budget = self.budget_tokens or memory.config.budget_tokens
        # ``Memory`` asks with its whole active history; recall for the latest user turn,
        # and for its most recent part if it is longer than a query may be.
        query = query[-memory.config.max_query_chars :]
        key = (query, scope, budget)
        cached = self._turn.compiled(key)
        if cached is not None:
            return cached
        recall = await memory.arecall(query, scope=scope, top_k=self.top_k, budget_tokens=budget)
        # ``Memory`` puts every block inside its own <memory> element: ours goes in bare
        text = unwrapped(recall.text) if recall.items else ""
        self._turn.keep(key, text)
        return text

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Write the user turns among the flushed messages, all validated before any write."""
        placed = []
        for message in messages:
            session = message.additional_kwargs.get("session_id")
            write, _ = self._scopes(session if isinstance(session, str) else None)
            placed.append((message, write or Scope(user=self.user_id, agent=self.agent_id)))
        memory = self._store.get()
        turns = user_role_turns(memory, placed, user=self.user_id, user_names=self.user_names)
        if turns:
            await memory.awrite_many(turns)
            self._turn.forget()

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """The compiled memory less at least ``tokens_to_truncate`` tokens, or None."""
        if not content:
            return None
        target = len(self.tokenizer_fn(content)) - tokens_to_truncate
        return shrink_block(content, target=target, tokenizer=self.tokenizer_fn)

    def _scopes(self, session_id: str | None) -> tuple[Scope | None, Scope]:
        return owner_scopes(
            user_id=self.user_id,
            agent_id=self.agent_id,
            session_id=session_id,
            cross_session=self.cross_session,
        )


def _check_options(data: dict[str, Any]) -> None:
    known = set(CommonplaceMemoryBlock.model_fields)
    unknown = sorted(set(data) - known)
    if unknown:
        raise InvalidInputError(
            f"unknown option(s) {unknown} for CommonplaceMemoryBlock; the options are "
            f"{sorted(known)}"
        )
    for name in ("user_id", "agent_id"):
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            raise InvalidTypeError(f"{name} must be a str, not {type(value).__name__}")
    if data.get("budget_tokens") is not None:
        checked_int("budget_tokens", data["budget_tokens"], low=_MIN_BUDGET)
    if "top_k" in data:
        checked_int("top_k", data["top_k"], low=1, high=1000)
    if "priority" in data:
        checked_int("priority", data["priority"], low=0)
    if "cross_session" in data:
        checked_bool("cross_session", data["cross_session"])
    if "user_names" in data:
        data["user_names"] = list(checked_user_names(data["user_names"]))
    tokenizer = data.get("tokenizer_fn")
    if tokenizer is not None and not callable(tokenizer):
        raise InvalidTypeError("tokenizer_fn must be a callable returning a list of tokens")
    owner_scopes(
        user_id=data.get("user_id"),
        agent_id=data.get("agent_id"),
        session_id=None,
        cross_session=True,
    )
