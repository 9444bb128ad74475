"""``commonplace inspect`` as a command: the page served by a real server on a loopback
port, with its security headers, and the static report written with ``--out``."""

from __future__ import annotations

import ast
import http.client
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from inspect_support import HOSTILE, USER, Built, build_store, parse, serving, write_report

from commonplace import HashingEmbedder, Memory, Scope
from commonplace._cli import main
from commonplace.errors import InvalidInputError
from commonplace.stores import LedgerKind
from commonplace_inspect import InspectorServer, content_security_policy, is_loopback


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    folder = tmp_path_factory.mktemp("inspect-server")
    return build_store(f"sqlite:///{folder / 'memory.db'}", hostile=True)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: str


def _get(address: str, path: str = "/", *, host: str | None = None) -> Answer:
    parts = urlsplit(address)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.request("GET", path, headers={} if host is None else {"Host": host})
        response = connection.getresponse()
        body = response.read().decode()
        return Answer(response.status, dict(response.getheaders()), body)
    finally:
        connection.close()


def test_the_served_page_is_the_store_s_under_a_strict_policy(built: Built) -> None:
    with serving(built.url) as address:
        assert urlsplit(address).hostname == "127.0.0.1"
        answer = _get(address)
    assert answer.status == 200
    assert answer.headers["Content-Type"] == "text/html; charset=utf-8"
    assert answer.headers["Content-Security-Policy"] == content_security_policy(forms=True)
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert answer.headers["Cache-Control"] == "no-store"
    assert answer.headers["X-Frame-Options"] == "DENY"
    text = parse(answer.body).text
    assert built.porto_turn in text and all(h in text for h in HOSTILE)


def test_the_page_is_read_afresh_on_each_request(built: Built, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'grow.db'}"
    with Memory(url, embedder=HashingEmbedder()) as memory:
        memory.write("I keep bees on my roof.", scope=USER)
    with serving(url) as address:
        assert "bees" in _get(address).body
        with Memory(url, embedder=HashingEmbedder()) as memory:
            memory.write("I bought a kayak.", scope=USER)
        assert "kayak" in _get(address).body


def test_only_the_page_and_only_on_its_loopback_name(built: Built) -> None:
    with serving(built.url) as address:
        port = urlsplit(address).port
        missing = _get(address, "/etc/passwd")
        assert missing.status == 404 and missing.headers["Content-Security-Policy"]
        # a DNS name rebound to 127.0.0.1 carries its own Host: refused
        rebound = _get(address, host=f"evil.example:{port}")
        assert rebound.status == 421 and "Porto" not in rebound.body
        assert _get(address, host=f"localhost:{port}").status == 200


def test_a_non_loopback_host_needs_the_explicit_flag(built: Built) -> None:
    # in a child with a time limit: were the check gone, it would serve on every interface
    done = subprocess.run(
        [sys.executable, "-m", "commonplace", "inspect", "--user", USER, "--url", built.url,
         "--host", "0.0.0.0"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "--allow-remote" in done.stderr
    assert "serving" not in done.stdout
    with Memory(built.url, embedder=HashingEmbedder()) as memory:
        with pytest.raises(InvalidInputError, match="loopback"):
            InspectorServer(memory, user=USER, host="192.0.2.1")
        with InspectorServer(memory, user=USER) as server:
            assert server.server_address[0] == "127.0.0.1"
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")


def test_out_writes_the_static_report_with_its_meta_policy(built: Built, tmp_path: Path) -> None:
    page = write_report(built.url, tmp_path / "report.html")
    parsed = parse(page)
    policies = [a.get("content") for _, a in parsed.tags if a.get("http-equiv")]
    assert policies == [content_security_policy(for_meta=True)]
    assert built.porto_turn in parsed.text


def test_a_missing_store_is_refused_and_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "typo.db"
    assert main(["inspect", "--user", USER, "--url", f"sqlite:///{missing}"]) == 2
    assert "no store at" in capsys.readouterr().err and not missing.exists()
    assert main(["inspect", "--user", USER, "--url", "sqlite:///:memory:"]) == 2


def test_a_port_in_use_is_a_clear_error(built: Built) -> None:
    with Memory(built.url, embedder=HashingEmbedder()) as memory:
        with (
            InspectorServer(memory, user=USER) as first,
            pytest.raises(InvalidInputError, match="cannot listen"),
        ):
            InspectorServer(memory, user=USER, port=first.server_address[1])
        with pytest.raises(InvalidInputError, match="port"):
            InspectorServer(memory, user=USER, port=70000)


def test_the_command_is_installed_through_the_entry_point_group() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "commonplace", "inspect", "--help"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 0 and "--allow-remote" in done.stdout and "--out" in done.stdout


def test_the_package_uses_only_the_core_s_public_api() -> None:
    source = Path(__file__).resolve().parents[2] / "packages" / "commonplace-inspect" / "src"
    private = []
    for path in sorted(source.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            for module in modules:
                parts = module.split(".")
                if parts[0] == "commonplace" and any(p.startswith("_") for p in parts[1:]):
                    private.append(f"{path.name}:{node.lineno}: {module}")
    assert len(list(source.rglob("*.py"))) >= 5
    assert private == []


def test_a_probe_query_runs_one_recall_however_often_the_page_is_read(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'probe.db'}"
    with Memory(url, embedder=HashingEmbedder()) as memory:
        memory.write("I keep bees on my roof.", scope=USER)

    def recalls() -> int:
        with Memory(url, embedder=HashingEmbedder()) as memory:
            return len(
                memory.store.backend.ledger.list(LedgerKind.RECALL.value, scope=Scope(user=USER))
            )

    with serving(url, "--query", "what does alice keep on her roof?") as address:
        first = _get(address).body
        assert _get(address).body.count("signal by signal") == 1
        assert recalls() == 1
    assert "what does alice keep on her roof?" in parse(first).text
    assert ">frequency</th>" in first
