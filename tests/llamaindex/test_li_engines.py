"""Real LlamaIndex chat and query engines with commonplace as their memory and retriever.

The LLMs are LlamaIndex's own mocks. ``MockLLM`` answers by echoing its whole prompt,
which makes it an adversarial assistant: every reply repeats the user's words, the
compiled memory and the system prompt, and none of it may come back as a note.
"""

from __future__ import annotations

import asyncio

from li_support import assert_firewall, counting_llm, notes_of
from llama_index.core.chat_engine import CondensePlusContextChatEngine, SimpleChatEngine
from llama_index.core.llms import ChatMessage, MessageRole, MockLLM
from llama_index.core.llms.mock import MockLLMWithChatMemoryOfLastCall
from llama_index.core.query_engine import RetrieverQueryEngine

from commonplace import Kind, ManualClock, Memory
from commonplace_llamaindex import CommonplaceMemory, CommonplaceRetriever

SECRET = "Zebra-7 is the assistant's secret codename"
FACTS = [
    "I just moved to Porto with my partner Joana.",
    "I work as a night nurse at the children's hospital.",
    "My sister Rita teaches maths in Braga.",
    "I have a grumpy old cat called Miso.",
]


def seen_by_llm(llm: MockLLMWithChatMemoryOfLastCall) -> str:
    assert llm.last_chat_messages is not None, "the engine never called the model"
    return "\n".join(f"{m.role.value}: {m.content}" for m in llm.last_chat_messages)


def test_simple_chat_engine_remembers_across_sessions_and_processes(
    db_url: str, clock: ManualClock
) -> None:
    with Memory(db_url, clock=clock) as store:
        monday = CommonplaceMemory.from_defaults(store, user_id="ana", session_id="monday")
        engine = SimpleChatEngine.from_defaults(
            llm=MockLLM(),
            memory=monday,
            prefix_messages=[ChatMessage(role="system", content=SECRET)],
        )
        for fact in FACTS:
            reply = engine.chat(fact)
            assert fact in reply.response  # the echo: the assistant repeats the user
            clock.advance(hours=1)
        assert len(monday.get_all()) == 2 * len(FACTS)

    clock.advance(days=1)
    with Memory(db_url, clock=clock) as store:  # a new process on the same file
        tuesday = CommonplaceMemory.from_defaults(store, user_id="ana", session_id="tuesday")
        llm = MockLLMWithChatMemoryOfLastCall(max_tokens=None)
        engine = SimpleChatEngine.from_defaults(llm=llm, memory=tuesday)
        engine.chat("Who do I live with?")

        prompt = seen_by_llm(llm)
        assert llm.last_chat_messages is not None
        assert llm.last_chat_messages[0].role is MessageRole.SYSTEM
        assert "partner Joana" in prompt  # recalled from Monday's notes
        assert "I just moved to Porto" not in prompt  # ... not from Monday's transcript
        assert tuesday.get_all()[0].content == "Who do I live with?"
        assert len(notes_of(store, "ana")) == len(FACTS) + 1  # plus today's question
        assert_firewall(store, "ana", forbidden=["Zebra", "codename", "<memory>"])


def test_simple_chat_engine_async_and_streaming_paths(store: Memory) -> None:
    memory = CommonplaceMemory.from_defaults(store, user_id="ana")
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=memory)

    async def talk() -> None:
        await engine.achat(FACTS[0])
        streamed = await engine.astream_chat(FACTS[1])
        async for _ in streamed.async_response_gen():
            pass

    asyncio.run(talk())
    streamed = engine.stream_chat(FACTS[2])
    for _ in streamed.response_gen:  # joins the thread that puts the reply in memory
        pass

    roles = [m.role for m in memory.get_all()]
    assert roles == [MessageRole.USER, MessageRole.ASSISTANT] * 3
    assert len(notes_of(store, "ana")) == 3
    assert_firewall(store, "ana", forbidden=["<memory>", "assistant:"])


def test_condense_plus_context_with_commonplace_as_memory_and_retriever(store: Memory) -> None:
    earlier = CommonplaceMemory.from_defaults(store, user_id="ana", session_id="earlier")
    SimpleChatEngine.from_defaults(llm=MockLLM(), memory=earlier).chat(FACTS[0])
    for fact in FACTS[1:]:
        earlier.put(ChatMessage(role="user", content=fact))
    earlier.flush()

    memory = CommonplaceMemory.from_defaults(store, user_id="ana", session_id="now")
    retriever = CommonplaceRetriever(store, scope="ana", top_k=3)
    llm = MockLLM()
    # MockLLM would "condense" the question into an echo of its whole prompt; the
    # engine's condense step is not what is under test here.
    engine = CondensePlusContextChatEngine.from_defaults(
        retriever=retriever, llm=llm, memory=memory, system_prompt=SECRET, skip_condense=True
    )

    first = engine.chat("Who is my partner?")
    assert first.source_nodes, "the retriever found nothing"
    assert all(n.node.metadata["kind"] == "note" for n in first.source_nodes)
    assert "partner Joana" in first.source_nodes[0].node.get_content()
    # The echo shows what the model was given. On the first turn the session has no
    # history yet: the user's memory comes as the retriever's context alone.
    assert "partner Joana" in first.response and "<memory>" not in first.response

    second = asyncio.run(engine.achat("What does my sister Rita teach?"))
    assert any("Rita" in n.node.get_content() for n in second.source_nodes)
    assert "<memory>" in second.response  # with a conversation, the compiled memory too
    assert [m.role for m in memory.get_all()] == [MessageRole.USER, MessageRole.ASSISTANT] * 2
    assert store.count(Kind.NOTE, scope="ana") == len(FACTS) + 2
    assert_firewall(store, "ana", forbidden=["Zebra", "codename", "context information"])


CONDENSE_MARK = "standalone question"


def test_no_condense_call_on_a_first_turn(store: Memory) -> None:
    """The memory used to answer every get() with a system message, so the engine
    condensed the question (one more model call) on every turn, from the first."""
    earlier = CommonplaceMemory.from_defaults(store, user_id="ana", session_id="earlier")
    earlier.put_messages([ChatMessage(role="user", content=f) for f in FACTS])
    earlier.flush()

    llm = counting_llm()
    memory = CommonplaceMemory.from_defaults(store, user_id="ana", session_id="now")
    engine = CondensePlusContextChatEngine.from_defaults(
        retriever=CommonplaceRetriever(store, scope="ana"), llm=llm, memory=memory
    )
    first = engine.chat("Who is my partner?")
    assert not [p for p in llm.prompts if CONDENSE_MARK in p]
    assert "partner Joana" in first.response  # the retriever brought the memory along
    asyncio.run(engine.achat("And what does my sister teach?"))
    # a follow-up has a conversation to be condensed with: that call is the engine's own
    assert len([p for p in llm.prompts if CONDENSE_MARK in p]) == 1


def test_retriever_query_engine_answers_from_notes(store: Memory) -> None:
    memory = CommonplaceMemory.from_defaults(store, user_id="ana")
    memory.put_messages([ChatMessage(role="user", content=f) for f in FACTS])
    memory.flush()

    engine = RetrieverQueryEngine.from_args(CommonplaceRetriever(store, scope="ana"), llm=MockLLM())
    response = engine.query("Where does my sister teach?")

    top = response.source_nodes[0]
    assert "Rita" in top.node.get_content()
    assert set(top.node.metadata) >= {"kind", "tier", "provenance", "signals"}
    assert "Rita teaches maths in Braga" in str(response)  # the echo: it reached the prompt
    assert "signals" not in str(response) and "provenance" not in str(response)
