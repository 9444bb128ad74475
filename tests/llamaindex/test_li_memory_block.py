"""CommonplaceMemoryBlock inside LlamaIndex's own ``Memory`` class."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from li_support import assert_firewall, evidence_of, llama_memory, notes_of
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import StaticMemoryBlock
from llama_index.core.utils import get_tokenizer

from commonplace import Memory, Scope
from commonplace_llamaindex import CommonplaceMemoryBlock
from commonplace_llamaindex._truncate import shrink_block

FACTS = [
    "I just moved to Porto with my partner Joana.",
    "I work as a night nurse at the children's hospital.",
    "My sister Rita teaches maths in Braga.",
    "I have a grumpy old cat called Miso.",
    "My best friend Kenji runs a bakery in Lisbon.",
    "I am training for the Porto half marathon in May.",
]
REPLY = "Noted! Your uncle Bruno, the sea captain from Faro, will be proud."
# A short queue, so that old turns are flushed into the blocks after a few messages.
SHORT_QUEUE: dict[str, Any] = {
    "token_limit": 400,
    "chat_history_token_ratio": 0.25,
    "token_flush_size": 40,
}


def block_for(store: Memory, user_id: str = "ana", **options: Any) -> CommonplaceMemoryBlock:
    return CommonplaceMemoryBlock(memory=store, user_id=user_id, **options)


async def converse(store: Memory, *, session_id: str, user_id: str = "ana") -> None:
    async with llama_memory(
        [block_for(store, user_id)], session_id=session_id, **SHORT_QUEUE
    ) as memory:
        for fact in FACTS:
            await memory.aput(ChatMessage(role=MessageRole.USER, content=fact))
            await memory.aput(ChatMessage(role=MessageRole.ASSISTANT, content=REPLY))


def test_flushed_user_messages_become_notes_and_replies_never_do(store: Memory) -> None:
    asyncio.run(converse(store, session_id="s1"))

    notes = notes_of(store, "ana")
    assert 2 <= len(notes) < len(FACTS)  # the oldest turns were flushed, the newest queued
    for note in notes:
        (episode,) = evidence_of(store, note.id)
        assert episode.scope == Scope(user="ana", thread="s1")  # Memory's session
        assert episode.text in FACTS
    assert_firewall(store, "ana", forbidden=["Bruno", "captain", "Faro"])


def test_get_returns_the_compiled_memory_in_the_template(store: Memory) -> None:
    async def scenario() -> list[ChatMessage]:
        await converse(store, session_id="old")
        async with llama_memory([block_for(store)], session_id="new") as memory:
            return list(await memory.aget(input="Where did I move with my partner?"))

    system = asyncio.run(scenario())[0]
    assert system.role is MessageRole.SYSTEM
    assert "<commonplace>" in str(system.content)  # the block's name in Memory's template
    assert "partner Joana" in str(system.content)
    # one <memory> element, LlamaIndex's: ours is not nested inside it
    assert str(system.content).count("<memory>") == 1


def test_a_block_with_nothing_to_recall_adds_nothing(store: Memory) -> None:
    async def scenario() -> list[ChatMessage]:
        async with llama_memory([block_for(store, "nobody")], session_id="s") as memory:
            await memory.aput(ChatMessage(role="user", content="Hello there!"))
            return list(await memory.aget())

    assert all("<commonplace>" not in str(m.content) for m in asyncio.run(scenario()))


def test_other_users_notes_never_reach_the_block(store: Memory) -> None:
    async def scenario() -> list[ChatMessage]:
        await converse(store, session_id="a", user_id="ana")
        async with llama_memory([block_for(store, "bob")], session_id="b") as memory:
            return list(await memory.aget(input="Where did I move with my partner Joana?"))

    assert all("Joana" not in str(m.content) for m in asyncio.run(scenario()))


def compiled(store: Memory) -> str:
    block = block_for(store)
    asyncio.run(block.aput([ChatMessage(role="user", content=f) for f in FACTS]))
    text = asyncio.run(block.aget([ChatMessage(role="user", content="Porto partner sister")]))
    assert text.count("\n- ") >= 4, text
    return text


def test_truncation_drops_whole_lines_from_the_least_important(store: Memory) -> None:
    text = compiled(store)
    count = get_tokenizer()
    full = len(count(text))

    shrunk = asyncio.run(block_for(store).atruncate(text, full // 3))

    assert shrunk is not None and len(count(shrunk)) <= full - full // 3
    lines, kept = text.split("\n"), shrunk.split("\n")
    assert kept[0] == lines[0]  # the preamble stays
    assert kept == lines[: len(kept)]  # whole lines, in order: the bottom went first
    assert not kept[-1].endswith(":")  # no title is left heading nothing


def test_truncation_gives_up_whole_when_nothing_fits(store: Memory) -> None:
    text = compiled(store)
    block = block_for(store)
    assert asyncio.run(block.atruncate(text, len(get_tokenizer()(text)))) is None
    assert asyncio.run(block.atruncate(text, 0)) == text
    assert shrink_block("<memory>\nno entries\n</memory>", target=1, tokenizer=str.split) is None
    assert shrink_block("Preamble.\nRecent notes:\n- a b c", target=2, tokenizer=str.split) is None


@pytest.mark.parametrize("priority", [0, 1])
def test_memory_honours_the_block_priority(store: Memory, priority: int) -> None:
    question = ChatMessage(role="user", content="Porto partner Joana sister Rita")
    block = block_for(store, priority=priority)
    padding = cast(Any, "padding " * 40)  # StaticMemoryBlock takes a str too
    filler = StaticMemoryBlock(name="filler", static_content=padding, priority=0)

    async def scenario() -> tuple[str, str]:
        await block.aput([ChatMessage(role="user", content=f) for f in FACTS])
        full = await block.aget([question])
        async with llama_memory([block, filler], session_id="tight", token_limit=160) as memory:
            await memory.aput(question)
            return full, str((await memory.aget())[0].content)

    full, system = asyncio.run(scenario())
    assert "padding" in system  # priority 0: never truncated
    if priority == 0:
        assert system.count("\n- ") == full.count("\n- ")
    else:  # shrunk by whole lines, or dropped
        assert system.count("\n- ") < full.count("\n- ")
