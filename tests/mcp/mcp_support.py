"""Helpers of the MCP tests: the store's full contents (to show a refused call changed
nothing), a tool's result as data or as its error, and the `commonplace mcp` command."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

# Every test is bounded: a server that hangs fails the test instead of the suite.
TIMEOUT_S = 60

TOOLS = {"remember", "recall", "forget", "explain"}

# Five facts each: the fifth note rewrites the profile card (ProfileRules.rewrite_every).
ALICE_FACTS = [
    "I live in Lisbon.",
    "My brother Tomas is a pilot.",
    "I prefer black coffee over tea.",
    "I work as a violinist.",
    "My cat Miso is two.",
]
BOB_FACTS = [
    "I live in Porto.",
    "My sister Ines is a nurse.",
    "I prefer green tea over coffee.",
    "I work as a carpenter.",
    "My dog Rex is three.",
]
BOB_WORDS = ["Porto", "Ines", "nurse", "green tea", "carpenter", "Rex"]


def dump(path: Path) -> list[str]:
    """Every row of every table of the SQLite file, as SQL: equal before and after a call
    means the call changed nothing at all (no episode, record, log entry or counter)."""
    with sqlite3.connect(path) as db:
        return list(db.iterdump())


def data(result: CallToolResult) -> dict[str, Any]:
    """A successful tool result's structured content (failing the test on a tool error)."""
    assert not result.is_error, error_text(result)
    assert result.structured_content is not None
    # the text content carries the same JSON, for clients that read only text
    first = result.content[0]
    assert isinstance(first, TextContent) and json.loads(first.text) == result.structured_content
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


def refused(result: CallToolResult) -> str:
    """The message of a tool error (failing the test when the call succeeded)."""
    assert result.is_error, result.structured_content
    return error_text(result)


def command(url: str, *args: str) -> StdioServerParameters:
    """`commonplace mcp` of this virtualenv, on the store ``url``. The child gets this
    process's environment (the SDK would give it a minimal one), so the suite's hashing
    embedder reaches it."""
    script = Path(sys.executable).with_name("commonplace")
    return StdioServerParameters(
        command=str(script), args=["mcp", "--url", url, *args], env=dict(os.environ)
    )


def stdio_client(url: str, *args: str) -> Client:
    return Client(command(url, *args), mode="legacy", read_timeout_seconds=TIMEOUT_S)


async def remember_all(client: Client, facts: list[str]) -> list[dict[str, Any]]:
    return [
        data(await client.call_tool("remember", {"text": fact, "said_by": "user"}))
        for fact in facts
    ]
