"""`commonplace mcp` as a client starts it: a child process on stdio, spoken to by the SDK's
stdio client; memory outlives the process (a new process recalls it from the same file)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
from mcp_support import (
    ALICE_FACTS,
    BOB_FACTS,
    BOB_WORDS,
    TIMEOUT_S,
    TOOLS,
    command,
    data,
    dump,
    refused,
    remember_all,
    stdio_client,
)

from commonplace import Kind, Memory
from commonplace_mcp import PROFILE_URI


def test_a_fact_remembered_in_one_process_is_recalled_in_a_new_one(tmp_path: Path) -> None:
    url = "sqlite:///" + str(tmp_path / "memory.db")
    claim = "Alice is probably a morning person."

    async def main() -> None:
        with anyio.fail_after(TIMEOUT_S):
            async with stdio_client(url, "--user", "alice") as first:
                assert {t.name for t in (await first.list_tools()).tools} == TOOLS
                written = await remember_all(first, ALICE_FACTS)
                assert data(await first.call_tool("remember", {"text": claim}))["note"] is None
            async with stdio_client(url, "--user", "alice") as second:
                recalled = data(await second.call_tool("recall", {"query": "where do I live?"}))
                assert "Lisbon" in recalled["context"]
                assert recalled["items"][0]["id"] == written[0]["note"]["id"]
                assert not any("morning" in item["text"] for item in recalled["items"])
                morning = data(await second.call_tool("recall", {"query": "morning person"}))
                assert "morning" not in morning["context"]

    anyio.run(main)
    with Memory(url) as memory:
        assert memory.count(Kind.NOTE, scope="alice") == len(ALICE_FACTS)


def test_over_stdio_another_users_memory_is_unreachable(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    url = "sqlite:///" + str(path)
    with Memory(url) as memory:
        bob = [memory.write(fact, scope="bob") for fact in BOB_FACTS]
    bob_note = bob[0].note
    assert bob_note is not None
    before = dump(path)

    async def main() -> None:
        with anyio.fail_after(TIMEOUT_S):
            async with stdio_client(url, "--user", "alice") as client:
                missing = refused(
                    await client.call_tool("explain", {"record_id": "nt_" + "0" * 24})
                )
                for tool in ("explain", "forget"):
                    for record_id in (bob_note.id, bob[0].episode_id):
                        message = refused(await client.call_tool(tool, {"record_id": record_id}))
                        expected = missing.replace("nt_" + "0" * 24, record_id)
                        assert message == expected.replace("tool explain", f"tool {tool}")
                recalled = data(await client.call_tool("recall", {"query": "Porto nurse"}))
                assert not any(word in json.dumps(recalled) for word in BOB_WORDS)
                profile = await client.read_resource(PROFILE_URI)
                assert not any(word in profile.model_dump_json() for word in BOB_WORDS)
                assert "no `user`" in refused(
                    await client.call_tool("recall", {"query": "Porto", "user": "bob"})
                )

    anyio.run(main)
    assert dump(path) != before  # the recall was logged ...
    with Memory(url) as memory:  # ... and Bob's memory is whole
        assert memory.count(Kind.NOTE, scope="bob") == len(BOB_FACTS)
        assert memory.profile(scope="bob").identity["city"] == "Porto"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    params = command(*args)
    return subprocess.run(
        [params.command, *params.args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
    )


def test_the_command_refuses_a_public_address_unless_told_and_stray_http_options(
    tmp_path: Path,
) -> None:
    url = "sqlite:///" + str(tmp_path / "memory.db")
    public = _cli(url, "--user", "alice", "--transport", "http", "--host", "0.0.0.0")
    assert public.returncode == 2
    assert "not a loopback address" in public.stderr and "--allow-remote" in public.stderr
    stray = _cli(url, "--user", "alice", "--port", "9000")
    assert stray.returncode == 2 and "apply to --transport http only" in stray.stderr
    no_user = _cli(url)
    assert no_user.returncode == 2 and "--user" in no_user.stderr
    assert not (tmp_path / "memory.db").exists()  # refused before the store was opened


def test_the_command_is_found_through_the_entry_point_group() -> None:
    from importlib.metadata import entry_points

    (entry,) = [e for e in entry_points(group="commonplace.commands") if e.name == "mcp"]
    assert entry.value == "commonplace_mcp._cli:add_command"
    helped = subprocess.run(
        [sys.executable, "-m", "commonplace", "mcp", "--help"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert helped.returncode == 0 and "--trust-client-scope" in helped.stdout
