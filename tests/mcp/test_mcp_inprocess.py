"""The MCP server in-process: the SDK's own client over memory streams (``mode="legacy"``:
the initialize handshake and JSON-RPC framing, as over a pipe), on a real SQLite file."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import TextResourceContents
from mcp_support import (
    ALICE_FACTS,
    BOB_FACTS,
    BOB_WORDS,
    TIMEOUT_S,
    TOOLS,
    data,
    dump,
    refused,
    remember_all,
)

from commonplace import Kind, Memory, Role
from commonplace.errors import InvalidScopeError, InvalidTypeError
from commonplace_mcp import MAX_TOP_K, PROFILE_URI, build_server


def run(memory: Memory, body: Callable[[Client], Awaitable[None]], **options: Any) -> None:
    async def main() -> None:
        with anyio.fail_after(TIMEOUT_S):
            server = build_server(memory, user="alice", **options)
            async with Client(server, mode="legacy") as client:
                await body(client)

    anyio.run(main)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"  # the file of the suite's `memory` fixture


def test_the_client_lists_four_tools_with_typed_schemas_and_the_profile_resource(
    memory: Memory,
) -> None:
    async def body(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        remember = tools["remember"].input_schema
        assert remember["required"] == ["text"]
        assert remember["properties"]["said_by"]["enum"] == ["assistant", "user"]
        assert remember["properties"]["said_by"]["default"] == "assistant"
        assert "never becomes a note" in (tools["remember"].description or "")
        top_k = tools["recall"].input_schema["properties"]["top_k"]
        assert (top_k["type"], top_k["minimum"], top_k["maximum"]) == ("integer", 1, MAX_TOP_K)
        for tool in tools.values():
            assert "user" not in tool.input_schema["properties"]  # the scope is fixed
            assert all(p.get("description") for p in tool.input_schema["properties"].values())
        forget = tools["forget"].annotations
        assert forget is not None and forget.destructive_hint is True
        explain = tools["explain"].annotations
        assert explain is not None and explain.read_only_hint is True
        resources = (await client.list_resources()).resources
        assert [str(r.uri) for r in resources] == [PROFILE_URI]

    run(memory, body)


def test_what_the_assistant_says_is_an_episode_and_only_the_users_own_words_a_note(
    memory: Memory, db_path: Path
) -> None:
    claim = "Alice's favourite colour is teal."

    async def body(client: Client) -> None:
        said = data(await client.call_tool("remember", {"text": claim}))
        assert said["said_by"] == "assistant" and said["note"] is None
        assert memory.count(Kind.NOTE) == 0
        episode = memory.store.get_episode(said["episode_id"])
        assert episode is not None and episode.role is Role.ASSISTANT and episode.text == claim
        explained = data(await client.call_tool("explain", {"record_id": said["episode_id"]}))
        assert explained["episodes"] == [
            {
                "id": said["episode_id"],
                "role": "assistant",
                "at": episode.at.isoformat(),
                "text": claim,
            }
        ]
        recalled = data(await client.call_tool("recall", {"query": "favourite colour teal"}))
        assert recalled["items"] == [] and "teal" not in recalled["context"]

        own = data(
            await client.call_tool(
                "remember", {"text": "My favourite colour is teal.", "said_by": "user"}
            )
        )
        assert own["said_by"] == "user" and own["note"] is not None
        assert memory.count(Kind.NOTE, scope="alice") == 1
        recalled = data(await client.call_tool("recall", {"query": "favourite colour teal"}))
        assert [i["id"] for i in recalled["items"]] == [own["note"]["id"]]
        assert "teal" in recalled["context"]

    run(memory, body)


def test_recall_gives_the_compiled_block_and_items_and_explain_reaches_the_episode_text(
    memory: Memory,
) -> None:
    async def body(client: Client) -> None:
        written = await remember_all(client, ALICE_FACTS)
        recalled = data(await client.call_tool("recall", {"query": "where do I live?"}))
        assert recalled["context"].startswith("<memory>") and "Lisbon" in recalled["context"]
        best = recalled["items"][0]
        assert best["text"] == "The user lives in Lisbon."
        assert {"semantic", "recency", "frequency", "importance", "total"} <= set(best["score"])
        assert best["provenance"] == [written[0]["episode_id"]]
        explained = data(await client.call_tool("explain", {"record_id": best["id"]}))
        assert explained["record"]["id"] == best["id"]
        assert explained["episodes"][0]["text"] == "I live in Lisbon."
        assert explained["episodes"][0]["role"] == "user"

    run(memory, body)


def test_forget_removes_a_note_and_its_turn(memory: Memory) -> None:
    async def body(client: Client) -> None:
        written = await remember_all(client, ALICE_FACTS[:2])
        note_id = written[0]["note"]["id"]
        gone = data(await client.call_tool("forget", {"record_id": note_id}))
        assert gone == {
            "removed_records": [note_id],
            "removed_episodes": [written[0]["episode_id"]],
        }
        recalled = data(await client.call_tool("recall", {"query": "where do I live?"}))
        assert "Lisbon" not in recalled["context"]
        assert note_id not in [i["id"] for i in recalled["items"]]
        assert "no record or episode" in refused(
            await client.call_tool("explain", {"record_id": note_id})
        )

    run(memory, body)


def test_the_profile_resource_is_the_users_card(memory: Memory) -> None:
    for fact in BOB_FACTS:
        memory.write(fact, scope="bob")

    async def body(client: Client) -> None:
        await remember_all(client, ALICE_FACTS)
        result = await client.read_resource(PROFILE_URI)
        (content,) = result.contents
        assert isinstance(content, TextResourceContents)
        assert content.mime_type == "application/json"
        card = json.loads(content.text)
        assert card["user"] == "alice"
        assert "Lisbon" in card["text"] and card["card"]["identity"]["city"] == "Lisbon"
        assert not any(word in content.text for word in BOB_WORDS)

    run(memory, body)


def test_the_profile_resource_knows_a_fact_remembered_just_before(memory: Memory) -> None:
    async def body(client: Client) -> None:
        await client.call_tool("remember", {"text": "I live in Lisbon.", "said_by": "user"})
        result = await client.read_resource(PROFILE_URI)
        (content,) = result.contents
        assert isinstance(content, TextResourceContents)
        card = json.loads(content.text)
        assert "Lisbon" in card["text"] and card["card"]["identity"]["city"] == "Lisbon"

    run(memory, body)


def test_the_server_tells_its_name_and_version(memory: Memory) -> None:
    import importlib.metadata

    async def body(client: Client) -> None:
        info = client.server_info
        assert info is not None and info.name == "commonplace"
        assert info.version == importlib.metadata.version("commonplace-mcp") != ""

    run(memory, body)


def test_another_users_memory_is_unreachable_through_every_tool_and_the_resource(
    memory: Memory, db_path: Path
) -> None:
    bob = [memory.write(fact, scope="bob") for fact in BOB_FACTS]
    bob_note = bob[0].note
    assert bob_note is not None and memory.profile(scope="bob").identity["city"] == "Porto"
    bob_ids = [bob_note.id, bob[0].episode_id]
    unknown = "nt_000000000000000000000000"

    async def body(client: Client) -> None:
        before = dump(db_path)
        for tool in ("explain", "forget"):
            missing = refused(await client.call_tool(tool, {"record_id": unknown}))
            for record_id in bob_ids:
                message = refused(await client.call_tool(tool, {"record_id": record_id}))
                # the same answer as for an id that exists nowhere: nothing tells them apart
                assert message == missing.replace(unknown, record_id)
                assert not any(word in message for word in BOB_WORDS)
        for tool, args in [
            ("recall", {"query": "Porto"}),
            ("explain", {"record_id": bob_note.id}),
            ("forget", {"record_id": bob_note.id}),
            ("remember", {"text": "I moved to Faro.", "said_by": "user"}),
        ]:
            message = refused(await client.call_tool(tool, {**args, "user": "bob"}))
            assert "takes no `user` argument" in message
        assert dump(db_path) == before  # nothing of Bob's (or anyone's) changed

        recalled = data(await client.call_tool("recall", {"query": "Porto nurse carpenter"}))
        assert recalled["items"] == []
        assert not any(word in json.dumps(recalled) for word in BOB_WORDS)
        profile = await client.read_resource(PROFILE_URI)
        assert not any(word in profile.model_dump_json() for word in BOB_WORDS)

    run(memory, body)
    assert memory.count(Kind.NOTE, scope="bob") == len(BOB_FACTS)
    assert memory.count(Kind.NOTE, scope="alice") == 0


def test_a_trusting_server_takes_a_user_per_call(memory: Memory) -> None:
    bob = memory.write("I live in Porto.", scope="bob").note
    assert bob is not None

    async def body(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert all("user" in t.input_schema["properties"] for t in tools.values())
        await client.call_tool("remember", {"text": "I live in Lisbon.", "said_by": "user"})
        as_bob = data(await client.call_tool("recall", {"query": "where?", "user": "bob"}))
        as_alice = data(await client.call_tool("recall", {"query": "where?"}))
        assert [i["text"] for i in as_bob["items"]] == ["The user lives in Porto."]
        assert [i["text"] for i in as_alice["items"]] == ["The user lives in Lisbon."]
        # without `user` a call is still the server's user's: Bob's id is unknown there
        assert "no record or episode" in refused(
            await client.call_tool("explain", {"record_id": bob.id})
        )
        explained = data(await client.call_tool("explain", {"record_id": bob.id, "user": "bob"}))
        assert explained["episodes"][0]["text"] == "I live in Porto."
        assert "user" in refused(await client.call_tool("recall", {"query": "x", "user": ""}))

    run(memory, body, trust_client_scope=True)


BAD_CALLS = [
    ("remember", {"text": ""}, "text"),
    ("remember", {"text": "   "}, "empty"),
    ("remember", {"text": 42}, "valid string"),
    ("remember", {"text": "a" * 20_001, "said_by": "user"}, "20000"),
    ("remember", {"text": "I live in Faro.", "said_by": "the user"}, "said_by"),
    ("remember", {}, "text"),
    ("remember", {"text": "I live in Faro.", "colour": "red"}, "unknown argument(s) ['colour']"),
    ("recall", {"query": "where?", "top_k": 0}, "top_k"),
    ("recall", {"query": "where?", "top_k": MAX_TOP_K + 1}, "top_k"),
    ("recall", {"query": "where?", "top_k": "many"}, "top_k"),
    ("recall", {"query": "where?", "budget_tokens": 3}, "budget_tokens"),
    ("recall", {"query": ""}, "query"),
    ("recall", {"query": "where? " * 1000}, "4000"),
    ("forget", {"record_id": "nt_000000000000000000000000"}, "no record or episode"),
    ("forget", {"record_id": ""}, "record_id"),
    ("forget", {"record_id": 7}, "record_id"),
    ("forget", {"record_id": "nt_x", "include_evidence": "perhaps"}, "include_evidence"),
    ("explain", {"record_id": "ep_000000000000000000000000"}, "no record or episode"),
    ("explain", {}, "record_id"),
]


@pytest.mark.parametrize(("tool", "arguments", "names"), BAD_CALLS)
def test_a_bad_argument_is_a_tool_error_that_says_what_is_wrong_and_changes_nothing(
    memory: Memory, db_path: Path, tool: str, arguments: dict[str, Any], names: str
) -> None:
    memory.write("I live in Lisbon.", scope="alice")
    memory.write("I live in Porto.", scope="bob")

    async def body(client: Client) -> None:
        before = dump(db_path)
        message = refused(await client.call_tool(tool, arguments))
        assert names in message
        assert dump(db_path) == before

    run(memory, body)


def test_build_server_refuses_a_bad_user_or_memory(memory: Memory) -> None:
    with pytest.raises(InvalidScopeError):
        build_server(memory, user="")
    with pytest.raises(InvalidTypeError, match=r"commonplace\.Memory"):
        build_server("sqlite:///x.db", user="alice")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="trust_client_scope"):
        build_server(memory, user="alice", trust_client_scope="yes")  # type: ignore[arg-type]


def test_explain_never_follows_provenance_into_another_users_memory(memory: Memory) -> None:
    # The core never writes such a record (a write reaches only its own user's records);
    # one is planted through the public Store to show explain would not follow it.
    ana = memory.write("I live in Lisbon.", scope="alice")
    bob = memory.write("My bank PIN is 4321.", scope="bob")
    assert ana.note is not None
    planted = dataclasses.replace(ana.note, provenance=(*ana.note.provenance, bob.episode_id))
    memory.store.put_records([planted], memory.store.get_vectors([planted.id]), replace=True)

    async def body(client: Client) -> None:
        explained = data(await client.call_tool("explain", {"record_id": planted.id}))
        assert [e["id"] for e in explained["episodes"]] == [ana.episode_id]
        assert "4321" not in json.dumps(explained)

    run(memory, body)
