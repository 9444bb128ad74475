"""CommonplaceMemory: a LlamaIndex ``BaseMemory`` that keeps notes, not a transcript."""

from __future__ import annotations

import uuid
from collections.abc import Hashable, Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.bridge.pydantic import (
    Field,
    PrivateAttr,
    SerializeAsAny,
    field_serializer,
    field_validator,
)
from llama_index.core.llms.llm import LLM
from llama_index.core.memory.types import BaseMemory
from llama_index.core.storage.chat_store import BaseChatStore, SimpleChatStore
from llama_index.core.storage.chat_store.loading import load_chat_store

from commonplace import Memory, Recall, Scope, Turn
from commonplace.errors import InvalidInputError, InvalidTypeError
from commonplace.validation import checked_bool, checked_int, checked_user_names

from ._messages import (
    Tokenizer,
    checked_messages,
    fit_history,
    llama_index_tokenizer,
    message_tokens,
    query_text,
    user_role_turns,
)
from ._scopes import owner_scopes
from ._store import StoreHandle
from ._turns import TurnState

DEFAULT_TOKEN_LIMIT = 3000
# Like LlamaIndex's buffers: a model's context window, less room for its answer.
_CONTEXT_WINDOW_SHARE = 0.75
_MIN_BUDGET = 16  # the smallest compiled-memory budget commonplace accepts
_MAX_TOP_K = 1000


class CommonplaceMemory(BaseMemory):
    """Chat memory for LlamaIndex chat engines and agents, backed by commonplace.

    ``get(input=...)`` returns the compiled memory (notes recalled for ``input``, or for
    the latest user message) as one system message, followed by the most recent chat
    history that fits ``token_limit``. There is no system message when nothing is
    recalled, nor before anything is said in the session: engines that condense the
    question with the history before they store it (``CondensePlusContextChatEngine``,
    ``CondenseQuestionChatEngine``) then see an empty history on their first turn and
    make no condense call (their retriever, a :class:`CommonplaceRetriever`, brings
    the user's memory to that turn). ``put`` sends user messages through commonplace's
    write path (an immutable episode per message, even when the words repeat, and at
    most one note), right after the recall for
    their turn so that a turn never recalls itself, and keeps every other message (the
    assistant's replies, tool calls and results) in the short-term history only, so they
    never become notes. A user message named as someone else's (``additional_kwargs``
    ``name`` that is neither ``user_id`` nor one of ``user_names``: another agent, a tool,
    a model) is kept as evidence, an episode, never a note. ``reset`` and ``set`` touch
    the short-term history only: long-term notes belong to the user, not to the session.

    The short-term history lives in a LlamaIndex chat store under ``session_id``; notes
    are written in the scope ``(user_id, agent_id, session_id)`` and recalled across all
    sessions of the user (and agent) unless ``cross_session=False``. Build one with
    :meth:`from_defaults`. The object serialises to JSON (for an agent ``Context``)
    keeping the store's URL; a restored copy reopens the store on first use.
    """

    url: str = Field(description="URL of the commonplace store (kept to reopen it).")
    user_id: str | None = Field(default=None, description="Whose memory this is.")
    agent_id: str | None = Field(default=None, description="Which agent's memory of the user.")
    user_names: list[str] = Field(
        default_factory=list,
        description="Names a user message may carry (additional_kwargs['name']) and still be "
        "the user's, besides user_id; any other named message is kept as evidence only.",
    )
    session_id: str = Field(
        default_factory=lambda: uuid.uuid4().hex,
        description="The conversation: key of the short-term history, thread of its notes.",
    )
    cross_session: bool = Field(
        default=True,
        description="Recall notes from every session of the user, not just this one "
        "(the user's profile card spans sessions either way).",
    )
    token_limit: int = Field(
        default=DEFAULT_TOKEN_LIMIT, description="Tokens get() may return in all."
    )
    budget_tokens: int | None = Field(
        default=None,
        description="Tokens for the compiled memory (None: the store's Config.budget_tokens); "
        "never more than half of what is left of token_limit.",
    )
    top_k: int = Field(default=10, description="How many recalled records may be compiled.")
    chat_store: SerializeAsAny[BaseChatStore] = Field(default_factory=SimpleChatStore)
    tokenizer_fn: Tokenizer = Field(
        default=llama_index_tokenizer,
        exclude=True,
        description="Token counter for the history (LlamaIndex's tokenizer by default).",
    )

    _store: StoreHandle = PrivateAttr()
    _turn: TurnState = PrivateAttr(default_factory=TurnState)

    def __init__(self, *, memory: Memory | None = None, **data: Any) -> None:
        _check_options(data)
        handle = StoreHandle(memory=memory, url=data.pop("url", None))
        data["url"] = handle.url
        super().__init__(**data)
        self._store = handle

    @classmethod
    def class_name(cls) -> str:
        return "CommonplaceMemory"

    @classmethod
    def from_defaults(  # type: ignore[override]
        cls,
        memory: Memory | None = None,
        *,
        url: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        user_names: Sequence[str] = (),
        session_id: str | None = None,
        cross_session: bool = True,
        chat_history: Sequence[ChatMessage] | None = None,
        llm: LLM | None = None,
        token_limit: int | None = None,
        budget_tokens: int | None = None,
        top_k: int = 10,
        chat_store: BaseChatStore | None = None,
        tokenizer_fn: Tokenizer | None = None,
    ) -> CommonplaceMemory:
        """A memory on ``memory`` (an open :class:`commonplace.Memory`) or on the store at ``url``.

        ``token_limit`` defaults to three quarters of ``llm``'s context window, or 3000.
        ``chat_history`` seeds the short-term history (it is not written as notes).
        """
        if llm is not None and not isinstance(llm, LLM):
            raise InvalidTypeError(f"llm must be a LlamaIndex LLM, not {type(llm).__name__}")
        if chat_store is not None and not isinstance(chat_store, BaseChatStore):
            raise InvalidTypeError(
                f"chat_store must be a LlamaIndex BaseChatStore, not {type(chat_store).__name__}"
            )
        if token_limit is None:
            token_limit = (
                int(llm.metadata.context_window * _CONTEXT_WINDOW_SHARE)
                if llm is not None
                else DEFAULT_TOKEN_LIMIT
            )
        options: dict[str, Any] = {
            "user_id": user_id,
            "agent_id": agent_id,
            "user_names": user_names,
            "cross_session": cross_session,
            "token_limit": token_limit,
            "budget_tokens": budget_tokens,
            "top_k": top_k,
            "chat_store": chat_store if chat_store is not None else SimpleChatStore(),
        }
        if url is not None:
            options["url"] = url
        if session_id is not None:
            options["session_id"] = session_id
        if tokenizer_fn is not None:
            options["tokenizer_fn"] = tokenizer_fn
        created = cls(memory=memory, **options)
        if chat_history is not None:
            created.set(list(chat_history))
        return created

    # -- serialisation --------------------------------------------------------------------

    @field_serializer("chat_store")
    def _dump_chat_store(self, chat_store: BaseChatStore) -> dict[str, Any]:
        if isinstance(chat_store, SimpleChatStore):
            # Only this session's messages: a chat store shared by several sessions must
            # not leak the others into this one's serialised Context. Each message is
            # dumped on its own because SimpleChatStore's serializer fails on pydantic
            # 2.14, which would make a workflow Context silently drop this memory.
            messages = chat_store.get_messages(self.session_id)
            return {
                "class_name": chat_store.class_name(),
                "store": {self.session_id: [m.model_dump(mode="json") for m in messages]},
            }
        return {**chat_store.model_dump(), "class_name": chat_store.class_name()}

    @field_validator("chat_store", mode="before")
    @classmethod
    def _load_chat_store(cls, value: Any) -> Any:
        return load_chat_store(value) if isinstance(value, dict) else value

    # -- the store ------------------------------------------------------------------------

    @property
    def memory(self) -> Memory:
        """The commonplace Memory behind this object (opened on first use)."""
        return self._store.get()

    def bind(self, memory: Memory) -> None:
        """Use an open Memory, e.g. one with plugins, after restoring this object from JSON."""
        self._store.bind(memory)
        self.url = memory.url
        self._turn.forget()

    def close(self) -> None:
        """Write what is still pending, then close the store if this object opened it."""
        self.flush()
        self._store.close()

    def to_dict(self, **kwargs: Any) -> dict[str, Any]:
        """The memory as JSON-ready data (the store's URL, options and this session's history).

        Pending user messages are written first, so a restored copy recalls them.
        """
        self.flush()
        return super().to_dict(**kwargs)

    @property
    def write_scope(self) -> Scope:
        """The scope this session's user turns are written in."""
        write, _ = self._scopes()
        assert write is not None  # a memory always has a session
        return write

    @property
    def recall_scope(self) -> Scope:
        """The scope notes are recalled from."""
        return self._scopes()[1]

    def _scopes(self) -> tuple[Scope | None, Scope]:
        return owner_scopes(
            user_id=self.user_id,
            agent_id=self.agent_id,
            session_id=self.session_id,
            cross_session=self.cross_session,
        )

    # -- read -----------------------------------------------------------------------------

    def get(
        self, input: str | ChatMessage | None = None, initial_token_count: int = 0, **kwargs: Any
    ) -> list[ChatMessage]:
        """The compiled memory as a system message, then the recent history within the limit.

        ``initial_token_count`` is what the caller already spends (a chat engine's prefix
        messages). Other keyword arguments are accepted and ignored, as LlamaIndex passes
        memory-specific ones to every memory.
        """
        available = self._available(initial_token_count)
        history = list(self.chat_store.get_messages(self.session_id))
        if not history:
            self._query(input, history)  # a bad input is refused all the same
            self.flush()
            return []
        query, budget = self._recall_plan(input, history, available)
        text = self._compiled(query, budget) if budget else ""
        self.flush()  # after the recall: a turn never recalls itself
        return self._assemble(text, history, available)

    async def aget(
        self, input: str | ChatMessage | None = None, initial_token_count: int = 0, **kwargs: Any
    ) -> list[ChatMessage]:
        """:meth:`get` on the core's async methods (the event loop never waits on the store)."""
        available = self._available(initial_token_count)
        history = list(await self.chat_store.aget_messages(self.session_id))
        if not history:
            self._query(input, history)  # a bad input is refused all the same
            await self.aflush()
            return []
        query, budget = self._recall_plan(input, history, available)
        text = await self._acompiled(query, budget) if budget else ""
        await self.aflush()
        return self._assemble(text, history, available)

    def get_all(self) -> list[ChatMessage]:
        """The whole short-term history of this session (no compiled memory)."""
        return list(self.chat_store.get_messages(self.session_id))

    async def aget_all(self) -> list[ChatMessage]:
        return list(await self.chat_store.aget_messages(self.session_id))

    def _available(self, initial_token_count: object) -> int:
        spent = checked_int("initial_token_count", initial_token_count, low=0)
        if spent > self.token_limit:
            raise InvalidInputError(
                f"initial_token_count={spent} is over token_limit={self.token_limit}; "
                "raise token_limit or send shorter prefix messages"
            )
        return self.token_limit - spent

    def _recall_plan(
        self, given: object, history: Sequence[ChatMessage], available: int
    ) -> tuple[str, int]:
        """The query and the compiled-memory budget; a budget of 0 means recall nothing."""
        query = self._query(given, history)
        # The compiled memory never takes more than half of what is left, so the recent
        # turns always have room; without budget_tokens the store's default caps it too.
        budget = available // 2
        if self.budget_tokens is not None:
            budget = min(budget, self.budget_tokens)
        if not query or budget < _MIN_BUDGET:
            return "", 0
        return query, budget

    def _compiled(self, query: str, budget: int) -> str:
        memory, query, budget, key = self._recall_key(query, budget)
        cached = self._turn.compiled(key)
        if cached is not None:
            return cached
        recall = memory.recall(
            query, scope=self.recall_scope, top_k=self.top_k, budget_tokens=budget
        )
        return self._keep(key, recall)

    async def _acompiled(self, query: str, budget: int) -> str:
        memory, query, budget, key = self._recall_key(query, budget)
        cached = self._turn.compiled(key)
        if cached is not None:
            return cached
        recall = await memory.arecall(
            query, scope=self.recall_scope, top_k=self.top_k, budget_tokens=budget
        )
        return self._keep(key, recall)

    def _recall_key(self, query: str, budget: int) -> tuple[Memory, str, int, Hashable]:
        memory = self._store.get()
        if self.budget_tokens is None:
            budget = min(budget, memory.config.budget_tokens)
        # The query comes from the conversation, not from a caller who could shorten it:
        # an overlong message is recalled for by its most recent part instead of failing.
        query = query[-memory.config.max_query_chars :]
        return memory, query, budget, (query, budget)

    def _keep(self, key: Hashable, recall: Recall) -> str:
        text = recall.text if recall.items else ""  # nothing recalled: no system message
        self._turn.keep(key, text)
        return text

    def _assemble(self, text: str, history: list[ChatMessage], available: int) -> list[ChatMessage]:
        head = [ChatMessage(role=MessageRole.SYSTEM, content=text)] if text else []
        spent = sum(message_tokens(m, self.tokenizer_fn) for m in head)
        recent = fit_history(history, budget=available - spent, tokenizer=self.tokenizer_fn)
        return [*head, *recent]

    # -- write ----------------------------------------------------------------------------

    def put(self, message: ChatMessage) -> None:
        """Add a message to the history; a user message is also written to the store.

        The user's message is written once the memory for its turn has been recalled
        (the next :meth:`get`), or when the next message arrives, whichever comes first.
        """
        self.put_messages([message])

    async def aput(self, message: ChatMessage) -> None:
        await self.aput_messages([message])

    def put_messages(self, messages: list[ChatMessage]) -> None:
        """Add messages in order; nothing changes if any of them is refused."""
        checked = checked_messages(messages)
        self._turn_for(checked)
        for message in checked:
            self.chat_store.add_message(self.session_id, message)

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        checked = checked_messages(messages)
        turns = self._validated_turns(checked)
        await self.aflush()  # whatever was said before is part of the past now
        if turns:
            self._turn.start(turns)
        for message in checked:
            await self.chat_store.async_add_message(self.session_id, message)

    def _query(self, given: object, history: Sequence[ChatMessage]) -> str:
        return query_text(given, history, user=self.user_id, user_names=self.user_names)

    def _turn_for(self, messages: Sequence[ChatMessage]) -> None:
        """Validate the user turns among ``messages``, write the last turn's, start a new one."""
        turns = self._validated_turns(messages)
        self.flush()  # whatever was said before is part of the past now
        if turns:
            self._turn.start(turns)

    def _validated_turns(self, messages: Sequence[ChatMessage]) -> list[Turn]:
        if not any(m.role == MessageRole.USER for m in messages):
            return []
        scope = self.write_scope
        return user_role_turns(
            self._store.get(),
            [(m, scope) for m in messages],
            user=self.user_id,
            user_names=self.user_names,
        )

    def flush(self) -> None:
        """Write the user messages still waiting for their turn's recall, in one transaction.

        Chat engines and agents never need this (their next call writes them); call it
        when using the memory by hand, before reading the store directly.
        """
        turns = self._turn.take()
        if not turns:
            return
        try:
            self._store.get().write_many(turns)
        except BaseException:
            self._turn.give_back(turns)
            raise

    async def aflush(self) -> None:
        """:meth:`flush` on the core's async write."""
        turns = self._turn.take()
        if not turns:
            return
        try:
            await self._store.get().awrite_many(turns)
        except BaseException:
            self._turn.give_back(turns)
            raise

    def set(self, messages: list[ChatMessage]) -> None:
        """Replace the short-term history; the new messages are not written to the store."""
        checked = checked_messages(messages)
        self.flush()
        self.chat_store.set_messages(self.session_id, checked)
        self._turn.forget()

    async def aset(self, messages: list[ChatMessage]) -> None:
        checked = checked_messages(messages)
        await self.aflush()
        await self.chat_store.aset_messages(self.session_id, checked)
        self._turn.forget()

    def reset(self) -> None:
        """Forget this session's short-term history; its notes stay in the store."""
        self.flush()
        self.chat_store.delete_messages(self.session_id)
        self._turn.forget()

    async def areset(self) -> None:
        await self.aflush()
        await self.chat_store.adelete_messages(self.session_id)
        self._turn.forget()

    def __repr__(self) -> str:
        return (
            f"CommonplaceMemory(url={self.url!r}, user_id={self.user_id!r}, "
            f"agent_id={self.agent_id!r}, session_id={self.session_id!r})"
        )


def _check_options(data: dict[str, Any]) -> None:
    """Refuse bad options with commonplace's errors before pydantic sees them."""
    known = set(CommonplaceMemory.model_fields) | {"class_name"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise InvalidInputError(
            f"unknown option(s) {unknown} for CommonplaceMemory; the options are "
            f"{sorted(known - {'class_name'})}"
        )
    data.pop("class_name", None)  # written by to_dict(), read back by from_dict()
    for name in ("user_id", "agent_id", "session_id"):
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            raise InvalidTypeError(f"{name} must be a str, not {type(value).__name__}")
    if "token_limit" in data:
        checked_int("token_limit", data["token_limit"], low=1)
    if data.get("budget_tokens") is not None:
        checked_int("budget_tokens", data["budget_tokens"], low=_MIN_BUDGET)
    if "top_k" in data:
        checked_int("top_k", data["top_k"], low=1, high=_MAX_TOP_K)
    if "cross_session" in data:
        checked_bool("cross_session", data["cross_session"])
    if "user_names" in data:
        data["user_names"] = list(checked_user_names(data["user_names"]))
    store = data.get("chat_store")
    # A dict is how to_dict() wrote the chat store down, and how from_dict() reads it back.
    if store is not None and not (
        isinstance(store, BaseChatStore) or (isinstance(store, dict) and "class_name" in store)
    ):
        raise InvalidTypeError(
            f"chat_store must be a LlamaIndex BaseChatStore, not {type(store).__name__}"
        )
    tokenizer = data.get("tokenizer_fn")
    if tokenizer is not None and not callable(tokenizer):
        raise InvalidTypeError("tokenizer_fn must be a callable returning a list of tokens")
    # The scope rules (someone must own the memory; ids are printable and short) are
    # commonplace's own: build the scopes once so a bad id fails here, not mid-chat.
    owner_scopes(
        user_id=data.get("user_id"),
        agent_id=data.get("agent_id"),
        session_id=data.get("session_id") or "session",
        cross_session=True,
    )
