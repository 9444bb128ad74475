"""Bad input gets a clear error from commonplace's hierarchy, and changes nothing."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from llama_index.core.llms import ChatMessage

from commonplace import Config, Kind, ManualClock, Memory
from commonplace.errors import (
    CommonplaceError,
    InvalidInputError,
    InvalidScopeError,
    InvalidTypeError,
    StoreClosedError,
)
from commonplace_llamaindex import (
    CommonplaceMemory,
    CommonplaceMemoryBlock,
    CommonplaceRetriever,
    llm_note_writer,
)


@pytest.mark.parametrize(
    ("options", "error", "hint"),
    [
        ({}, InvalidScopeError, "user_id"),
        ({"user_id": 7}, InvalidTypeError, "user_id must be a str"),
        ({"user_id": ""}, InvalidScopeError, "empty string"),
        ({"user_id": "ana", "session_id": "x" * 300}, InvalidScopeError, "limit"),
        ({"user_id": "ana", "token_limit": 0}, InvalidInputError, "token_limit"),
        ({"user_id": "ana", "token_limit": "500"}, InvalidTypeError, "token_limit"),
        ({"user_id": "ana", "token_limit": True}, InvalidTypeError, "token_limit"),
        ({"user_id": "ana", "budget_tokens": 3}, InvalidInputError, "budget_tokens"),
        ({"user_id": "ana", "top_k": 0}, InvalidInputError, "top_k"),
        ({"user_id": "ana", "cross_session": "yes"}, InvalidTypeError, "cross_session"),
        ({"user_id": "ana", "chat_store": {}}, InvalidTypeError, "chat_store"),
        ({"user_id": "ana", "tokenizer_fn": 5}, InvalidTypeError, "tokenizer_fn"),
    ],
)
def test_bad_memory_options_are_refused(
    store: Memory, options: dict[str, Any], error: type[Exception], hint: str
) -> None:
    with pytest.raises(error, match=hint):
        CommonplaceMemory.from_defaults(store, **options)


def test_a_memory_needs_a_store(db_url: str) -> None:
    with pytest.raises(InvalidInputError, match=r"memory=commonplace\.Memory"):
        CommonplaceMemory.from_defaults(user_id="ana")
    with pytest.raises(InvalidTypeError, match=r"commonplace\.Memory"):
        CommonplaceMemory.from_defaults("sqlite:///x.db", user_id="ana")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="in-memory"):
        CommonplaceMemory.from_defaults(url=":memory:", user_id="ana")
    with pytest.raises(InvalidInputError, match="unknown option"):
        CommonplaceMemory(url=db_url, user_id="ana", tokens=5)
    with Memory(db_url) as store, pytest.raises(InvalidInputError, match="pass one"):
        CommonplaceMemory.from_defaults(store, url="sqlite:///other.db", user_id="ana")


def test_a_refused_message_changes_nothing(store: Memory) -> None:
    memory = CommonplaceMemory.from_defaults(store, user_id="ana", session_id="s")
    memory.put(ChatMessage(role="user", content="I live in Porto."))
    memory.put(ChatMessage(role="assistant", content="Nice."))
    before = (memory.get_all(), store.count(Kind.EPISODE, scope="ana"))

    with pytest.raises(InvalidTypeError, match="ChatMessage"):
        memory.put("I live in Lisbon now.")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="ChatMessage"):
        memory.put_messages([ChatMessage(role="user", content="ok"), {"role": "user"}])  # type: ignore[list-item]
    too_long = "word " * (Config().max_turn_chars // 4)
    with pytest.raises(InvalidInputError, match="max_turn_chars"):
        memory.put_messages(
            [ChatMessage(role="user", content="fine"), ChatMessage(content=too_long)]
        )
    with pytest.raises(InvalidTypeError, match="list of llama_index ChatMessage"):
        memory.set("hello")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError):
        asyncio.run(memory.aput(42))  # type: ignore[arg-type]
    memory.flush()

    assert (memory.get_all(), store.count(Kind.EPISODE, scope="ana")) == before


def test_bad_get_arguments_are_refused(store: Memory) -> None:
    memory = CommonplaceMemory.from_defaults(store, user_id="ana", token_limit=100)
    with pytest.raises(InvalidTypeError, match="input must be a str"):
        memory.get(input=42)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="initial_token_count"):
        memory.get(initial_token_count=500)
    with pytest.raises(InvalidInputError, match="initial_token_count"):
        asyncio.run(memory.aget(initial_token_count=-1))


def test_an_overlong_query_from_the_conversation_is_shortened_not_refused(store: Memory) -> None:
    for fact in ("My sister Rita teaches maths.", "I have a cat.", "I swim.", "I cook."):
        store.write(fact, scope="ana")
    memory = CommonplaceMemory.from_defaults(store, user_id="ana")
    pasted = "blah " * (Config().max_query_chars // 4) + "Where does my sister Rita teach?"
    memory.put(ChatMessage(role="user", content=pasted))
    assert "Rita" in str(memory.get()[0].content)


def test_a_closed_store_is_a_clear_error(db_url: str, clock: ManualClock) -> None:
    store = Memory(db_url, clock=clock)
    memory = CommonplaceMemory.from_defaults(store, user_id="ana")
    memory.put(ChatMessage(role="user", content="I live in Porto."))
    store.close()
    with pytest.raises(StoreClosedError, match="closed"):
        memory.get()
    with pytest.raises(StoreClosedError):
        CommonplaceRetriever(store, scope="ana").retrieve("Porto")


def test_bad_retriever_arguments_are_refused(store: Memory) -> None:
    with pytest.raises(InvalidTypeError, match=r"commonplace\.Memory"):
        CommonplaceRetriever("sqlite:///x.db", scope="ana")  # type: ignore[arg-type]
    with pytest.raises(InvalidScopeError, match="unknown scope field"):
        CommonplaceRetriever(store, scope={"tenant": "ana"})
    with pytest.raises(InvalidScopeError, match="at least one"):
        CommonplaceRetriever(store, scope={})
    with pytest.raises(InvalidTypeError, match="scope must be"):
        CommonplaceRetriever(store, scope=42)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="top_k"):
        CommonplaceRetriever(store, scope="ana", top_k=0)
    with pytest.raises(InvalidInputError, match="empty"):
        CommonplaceRetriever(store, scope="ana").retrieve("   ")


def test_bad_block_options_are_refused(store: Memory) -> None:
    with pytest.raises(InvalidScopeError, match="user_id"):
        CommonplaceMemoryBlock(memory=store)
    with pytest.raises(InvalidInputError, match="budget_tokens"):
        CommonplaceMemoryBlock(memory=store, user_id="ana", budget_tokens=1)
    with pytest.raises(InvalidInputError, match="priority"):
        CommonplaceMemoryBlock(memory=store, user_id="ana", priority=-1)
    with pytest.raises(InvalidInputError, match="unknown option"):
        CommonplaceMemoryBlock(memory=store, user_id="ana", budget=10)


def test_the_writer_wants_a_llama_index_llm() -> None:
    with pytest.raises(InvalidTypeError, match="LlamaIndex LLM"):
        llm_note_writer(lambda prompt: prompt)  # type: ignore[arg-type]


def test_every_error_is_a_commonplace_error(store: Memory) -> None:
    for bad in ({}, {"user_id": 1}, {"user_id": "a", "top_k": -1}):
        with pytest.raises(CommonplaceError):
            CommonplaceMemory.from_defaults(store, **cast(Any, bad))
