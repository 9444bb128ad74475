"""`commonplace mcp --transport http`: streamable HTTP on 127.0.0.1, a free port, the
server started and stopped by the test; a second server process recalls what the first
was told."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
from mcp import Client
from mcp_support import ALICE_FACTS, TIMEOUT_S, TOOLS, command, data, refused, remember_all


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def http_server(url: str, log: Path) -> Iterator[str]:
    """`commonplace mcp` on a free loopback port until the block ends; its endpoint URL."""
    port = _free_port()
    params = command(url, "--user", "alice", "--transport", "http", "--port", str(port))
    with log.open("w") as out:
        process = subprocess.Popen(
            [params.command, *params.args],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ),
        )
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the server did not listen in time"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        endpoint = f"http://127.0.0.1:{port}/mcp"
        yield endpoint
    finally:
        process.send_signal(signal.SIGTERM)  # a graceful stop: the store is closed, exit 0
        try:
            process.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert process.returncode == 0, log.read_text()
    assert f"alice's memory at {endpoint}" in log.read_text()


def test_over_streamable_http_a_new_server_recalls_what_the_first_was_told(
    tmp_path: Path,
) -> None:
    url = "sqlite:///" + str(tmp_path / "memory.db")

    async def first(endpoint: str) -> str:
        with anyio.fail_after(TIMEOUT_S):
            async with Client(endpoint) as client:
                assert {t.name for t in (await client.list_tools()).tools} == TOOLS
                written = await remember_all(client, ALICE_FACTS[:1])
                assert "top_k" in refused(
                    await client.call_tool("recall", {"query": "where?", "top_k": 0})
                )
                note_id: str = written[0]["note"]["id"]
                return note_id

    async def second(endpoint: str) -> dict[str, object]:
        with anyio.fail_after(TIMEOUT_S):
            async with Client(endpoint) as client:
                return data(await client.call_tool("recall", {"query": "where do I live?"}))

    with http_server(url, tmp_path / "first.log") as endpoint:
        note_id = anyio.run(first, endpoint)
    with http_server(url, tmp_path / "second.log") as endpoint:
        recalled = anyio.run(second, endpoint)
    assert "Lisbon" in str(recalled["context"])
    assert [item["id"] for item in recalled["items"]] == [note_id]  # type: ignore[attr-defined]
