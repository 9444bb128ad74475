"""The firewall holds for named messages, the same in every adapter.

Frameworks let a user-role message carry a ``name``: multi-agent graphs hand work on as
human messages named after the agent that sent them, tools and models sign what they
send. A name is not proof of anything, so the rule is the other way round: a user-role
message is the user's only when it has no name, or its name is the configured user's, or
one the application declared (``user_names``). Hypothesis draws names of every sort
(agents, tools, models, other people, look-alikes of the user's name, random words, the
user's own in other forms, the declared ones) and sends one message through each adapter:
LangGraph's nodes, its checkpointer tap and its ``create_agent`` middleware, as a message
object or a dict; LlamaIndex's ``CommonplaceMemory`` and memory block; the MCP server's
``remember``. A message that is the user's may become a note; any other is kept as an
episode said by its sender, and no note, nor the compiled memory, holds its words.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from reliability_support import SIZES, profile, tally, url_of

from commonplace import Kind, Memory, Role, Scope, said_by
from commonplace.stores import RecordQuery

USER = "ana"
DECLARED = ("Ana Lima", "mum")
AGENT_WORDS = ("researcher", "agent", "planner", "supervisor", "writer", "critic", "router")
TOOLS = ("get_weather", "web_search", "calculator", "python_repl", "sql_db_query", "search")
MODELS = ("gpt-4o", "GPT-4o-mini", "claude-3-5-sonnet", "llama3", "mistral", "gemini-pro")
PEOPLE = ("Bob", "Mary-Jane", "Tom", "Ines", "Karen", "anna", "Ana Maria")
# the user's name with one letter swapped for a look-alike from another script, or with
# something a reader might not see added: another name, never the user's
LOOK_ALIKES = ("\u0430na", "an\u0430", "\u0391na", "ana_", "ana2", "ana.bot", "an\u200ba")


@st.composite
def foreign_name(draw: st.DrawFn) -> str:
    """A name that is not the user's: an agent's, a tool's, a model's, a person's, a
    look-alike of the user's, or random letters."""
    kind = draw(st.sampled_from(["agent", "tool", "model", "person", "look-alike", "random"]))
    if kind == "agent":
        words = draw(st.lists(st.sampled_from(AGENT_WORDS), min_size=1, max_size=3))
        joiner = draw(st.sampled_from(["_", "-", "", " "]))
        return joiner.join(w.capitalize() if joiner == "" else w for w in words)
    if kind == "tool":
        return draw(st.sampled_from(TOOLS))
    if kind == "model":
        return draw(st.sampled_from(MODELS))
    if kind == "person":
        return draw(st.sampled_from(PEOPLE))
    if kind == "look-alike":
        return draw(st.sampled_from(LOOK_ALIKES))
    letters = st.characters(categories=["Lu", "Ll", "Nd"], max_codepoint=0x2FFF)
    return draw(
        st.text(letters, min_size=1, max_size=12).filter(
            lambda n: said_by(n, user=USER, user_names=DECLARED) is not None
        )
    )


@st.composite
def users_name(draw: st.DrawFn) -> str | None:
    """A name that is the user's: none, the user id or a declared name in another case,
    with spaces around, or in full-width letters."""
    name = draw(st.sampled_from([None, "", USER, *DECLARED]))
    if not name:
        return name
    form = draw(st.sampled_from(["same", "upper", "title", "spaced", "full-width"]))
    if form == "upper":
        return name.upper()
    if form == "title":
        return name.title()
    if form == "spaced":
        return f"  {name} "
    if form == "full-width":
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name)
    return name


NAMES = st.one_of(users_name().map(lambda n: (n, True)), foreign_name().map(lambda n: (n, False)))


def claim(n: int) -> tuple[str, str]:
    number = f"{7_300_000 + n}"
    return number, f"My account number is {number}."


def check(memory: Memory, name: str | None, users: bool, number: str, where: str) -> None:
    """The user's message is noted; anyone else's is an episode said by them and nothing
    it says is in a note or in the compiled memory."""
    scope = Scope(user=USER)
    notes = [
        r.text
        for r in memory.backend.iter_records(RecordQuery(scope=scope, superseded=False))
        if r.kind is Kind.NOTE
    ]
    kept = [e for e in memory.store.recent_episodes(scope, limit=20) if number in e.text]
    assert kept, (where, name, "the message was not kept at all")
    if users:
        assert any(number in n for n in notes), (where, name, notes)
        assert all("said_by" not in e.meta for e in kept), (where, name)
        return
    assert not any(number in n for n in notes), (where, name, notes)
    assert all(e.role is Role.USER and e.meta.get("said_by") for e in kept), (where, name)
    rendered = memory.recall("what is my account number", scope=scope).render()
    assert number not in rendered, (where, name, rendered)


# -- LangGraph -----------------------------------------------------------------------------


def _scripted_model() -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Scripted:
            return self

    return Scripted(messages=iter([AIMessage("Noted.")]))


def _message(text: str, name: str | None, as_dict: bool) -> Any:
    from langchain_core.messages import HumanMessage

    if as_dict:
        return {"role": "user", "content": text, **({} if name is None else {"name": name})}
    return HumanMessage(text, name=name)


def _through_langgraph(memory: Memory, path: Path, adapter: str, message: Any) -> None:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    from commonplace_langgraph import CommonplaceMiddleware, CommonplaceSaver, add_memory_nodes

    config: Any = {"configurable": {"thread_id": "t1", "user_id": USER}}
    if adapter == "middleware":
        middleware = CommonplaceMiddleware(memory, user_names=DECLARED)
        agent = create_agent(_scripted_model(), middleware=[middleware])
        agent.invoke({"messages": [message]}, config)
        return
    builder = StateGraph(MessagesState)
    builder.add_node("model", lambda state: {"messages": [AIMessage("Noted.")]})
    builder.add_edge(START, "model")
    builder.add_edge("model", END)
    if adapter == "nodes":
        add_memory_nodes(builder, memory, before="model", after="model", user_names=DECLARED)
        builder.compile(checkpointer=InMemorySaver()).invoke({"messages": [message]}, config)
        return
    with CommonplaceSaver(memory, path=path / "checkpoints.db", user_names=DECLARED) as saver:
        builder.compile(checkpointer=saver).invoke({"messages": [message]}, config)


@given(
    named=NAMES,
    adapter=st.sampled_from(["nodes", "saver", "middleware"]),
    as_dict=st.booleans(),
    n=st.integers(0, 99_999),
)
@profile(SIZES.isolation_examples * 2)
def test_langgraph_notes_only_the_users_named_messages(
    named: tuple[str | None, bool], adapter: str, as_dict: bool, n: int
) -> None:
    name, users = named
    number, text = claim(n)
    with tempfile.TemporaryDirectory() as tmp, Memory(url_of(Path(tmp) / "m.db")) as memory:
        _through_langgraph(memory, Path(tmp), adapter, _message(text, name, as_dict))
        check(memory, name, users, number, f"langgraph {adapter}")
    tally(f"named messages through LangGraph ({'user' if users else 'other'})")


# -- LlamaIndex ----------------------------------------------------------------------------


def _through_llamaindex(memory: Memory, adapter: str, text: str, name: str | None) -> None:
    from llama_index.core.llms import ChatMessage, MessageRole

    from commonplace_llamaindex import CommonplaceMemory, CommonplaceMemoryBlock

    extra = {} if name is None else {"name": name}
    message = ChatMessage(role=MessageRole.USER, content=text, additional_kwargs=extra)
    reply = ChatMessage(role=MessageRole.ASSISTANT, content="Noted.")
    if adapter == "memory":
        chat = CommonplaceMemory.from_defaults(memory, user_id=USER, user_names=list(DECLARED))
        chat.put_messages([message, reply])
        chat.flush()
        return
    block = CommonplaceMemoryBlock(memory=memory, user_id=USER, user_names=list(DECLARED))
    asyncio.run(block.aput([message, reply]))


@given(named=NAMES, adapter=st.sampled_from(["memory", "block"]), n=st.integers(0, 99_999))
@profile(SIZES.isolation_examples * 2)
def test_llamaindex_notes_only_the_users_named_messages(
    named: tuple[str | None, bool], adapter: str, n: int
) -> None:
    name, users = named
    number, text = claim(n)
    with Memory(":memory:") as memory:
        _through_llamaindex(memory, adapter, text, name)
        check(memory, name, users, number, f"llamaindex {adapter}")
    tally(f"named messages through LlamaIndex ({'user' if users else 'other'})")


# -- MCP -----------------------------------------------------------------------------------


def _through_mcp(memory: Memory, text: str, name: str | None) -> dict[str, Any]:
    import anyio
    from mcp import Client

    from commonplace_mcp import build_server

    arguments: dict[str, Any] = {"text": text, "said_by": "user"}
    if name is not None:
        arguments["name"] = name
    out: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(60):
            server = build_server(memory, user=USER, user_names=DECLARED)
            async with Client(server, mode="legacy") as client:
                result = await client.call_tool("remember", arguments)
                assert not result.is_error, result.content
                assert result.structured_content is not None
                out.update(result.structured_content)

    anyio.run(main)
    return out


@given(named=NAMES, n=st.integers(0, 99_999))
@profile(SIZES.isolation_examples)
def test_mcp_notes_only_the_users_named_messages(named: tuple[str | None, bool], n: int) -> None:
    name, users = named
    name = name or None  # the tool's schema refuses an empty name: a client sends none
    number, text = claim(n)
    with Memory(":memory:") as memory:
        said = _through_mcp(memory, text, name)
        assert (said["sender"] is None) == users, (name, said)
        check(memory, name, users, number, "mcp")
    tally(f"named messages through MCP ({'user' if users else 'other'})")


def test_every_adapter_refuses_user_names_that_are_not_a_list_of_names() -> None:
    import pytest
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph

    from commonplace.errors import InvalidInputError, InvalidTypeError
    from commonplace_langgraph import CommonplaceMiddleware, CommonplaceSaver, add_memory_nodes
    from commonplace_llamaindex import CommonplaceMemory, CommonplaceMemoryBlock
    from commonplace_mcp import build_server

    with tempfile.TemporaryDirectory() as tmp, Memory(url_of(Path(tmp) / "m.db")) as memory:
        builder = StateGraph(MessagesState)
        builder.add_node("model", lambda state: {"messages": [AIMessage("Noted.")]})
        builder.add_edge(START, "model")
        builder.add_edge("model", END)
        makers = [
            lambda names: add_memory_nodes(builder, memory, after="model", user_names=names),
            lambda names: CommonplaceSaver(memory, path=Path(tmp) / "c.db", user_names=names),
            lambda names: CommonplaceMiddleware(memory, user_names=names),
            lambda names: CommonplaceMemory.from_defaults(memory, user_id=USER, user_names=names),
            lambda names: CommonplaceMemoryBlock(memory=memory, user_id=USER, user_names=names),
            lambda names: build_server(memory, user=USER, user_names=names),
        ]
        for make in makers:
            for names, error in (("Ana", InvalidTypeError), ([""], InvalidInputError)):
                with pytest.raises(error, match="user_names"):
                    make(names)
        assert memory.count(Kind.EPISODE) == 0 and "commonplace_notes" not in builder.nodes
