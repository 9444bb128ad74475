"""Token counting works with no network and no tiktoken cache on disk."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_count_tokens_needs_no_network_and_no_cache(tmp_path: Path) -> None:
    code = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise OSError('network disabled in this test')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from commonplace import count_tokens\n"
        "print(count_tokens('hello world'), count_tokens('The user lives in Lisbon.'),"
        " count_tokens('<|endoftext|>'))\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty"),
        "HOME": str(tmp_path),
    }
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    # cl100k_base: "hello world" is 2 tokens; special-token text is counted as plain text
    hello, sentence, special = map(int, out.stdout.split())
    assert hello == 2 and sentence == 6 and special > 1
    assert not (tmp_path / "empty").exists()
