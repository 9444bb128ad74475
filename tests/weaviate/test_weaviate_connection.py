"""What a production user sees: unreachable servers, wrong ports, old servers, auth, retries."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from commonplace.errors import StoreClosedError, StoreError
from commonplace_weaviate import WeaviateBackend, parse_url
from commonplace_weaviate._errors import RetryPolicy, is_transient, with_retries
from commonplace_weaviate.server import LocalServer, install
from commonplace_weaviate.testing import WeaviateTarget

pytestmark = pytest.mark.weaviate


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_server_is_a_clear_error_quickly() -> None:
    port, grpc = _closed_port(), _closed_port() + 1
    started = time.monotonic()
    with pytest.raises(StoreError, match=r"cannot reach Weaviate at http://127\.0\.0\.1") as info:
        WeaviateBackend(f"weaviate://127.0.0.1:{port}?grpc_port={grpc}&connect_timeout=2")
    assert "server start" in str(info.value) and "running" in str(info.value)
    assert time.monotonic() - started < 60  # bounded by connect_timeout, not a hang


def test_a_wrong_grpc_port_says_so(weaviate_server: WeaviateTarget) -> None:
    settings = parse_url(weaviate_server.url)
    url = (
        f"weaviate://{settings.host}:{settings.http_port}?grpc_port={_closed_port()}"
        "&connect_timeout=2"
    )
    with pytest.raises(StoreError, match="gRPC"):
        WeaviateBackend(url)


def test_a_server_older_than_supported_is_refused(
    weaviate_server: WeaviateTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    from weaviate.client import WeaviateClient

    monkeypatch.setattr(WeaviateClient, "get_meta", lambda self: {"version": "1.20.3"})
    with pytest.raises(StoreError, match=r"version 1\.20\.3.*needs 1\.27\.0 or newer"):
        WeaviateBackend(weaviate_server.url)


def test_close_releases_the_connection_and_later_calls_fail_clearly(
    weaviate_backend_factory: Callable[[], WeaviateBackend],
) -> None:
    backend = weaviate_backend_factory()
    client = backend.client
    backend.close()
    assert not client.is_connected()
    with pytest.raises(StoreClosedError, match="closed"):
        backend.read_pin()


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    folder = tmp_path_factory.mktemp("secured")
    node = LocalServer(
        install().path,
        data_dir=folder / "data",
        api_key="right-key",
        log_path=folder / "weaviate.log",
    )
    node.start()
    yield node
    node.stop()


def test_api_key_authentication(secured: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEAVIATE_API_KEY", raising=False)
    with pytest.raises(StoreError, match="credentials"):
        WeaviateBackend(secured.url)
    with pytest.raises(StoreError, match="credentials"):
        WeaviateBackend(secured.url, api_key="wrong-key")
    url = secured.url.replace("weaviate://", "weaviate://:right-key@") + "&prefix=Authed"
    with WeaviateBackend(url) as backend:
        assert backend.read_pin() is None
        assert "right-key" not in backend.url
        backend.drop()
    monkeypatch.setenv("WEAVIATE_API_KEY", "right-key")
    with WeaviateBackend(secured.url + "&prefix=Authed2") as backend:
        backend.drop()


class _Flaky:
    def __init__(self, failures: list[BaseException]) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


def test_transient_errors_are_retried_with_backoff() -> None:
    import httpx
    from weaviate.exceptions import UnexpectedStatusCodeError, WeaviateConnectionError

    busy = httpx.Response(
        503, json={"error": "unavailable"}, request=httpx.Request("GET", "http://x")
    )
    flaky = _Flaky(
        [WeaviateConnectionError("connection refused"), UnexpectedStatusCodeError("busy", busy)]
    )
    policy = RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.02)
    assert with_retries(flaky, policy=policy, what="read", where="here") == "ok"
    assert flaky.calls == 3


def test_retries_give_up_with_a_clear_error() -> None:
    from weaviate.exceptions import WeaviateConnectionError

    flaky = _Flaky([WeaviateConnectionError("connection refused") for _ in range(5)])
    policy = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02)
    with pytest.raises(StoreError, match="kept failing to read after 3 tries"):
        with_retries(flaky, policy=policy, what="read", where="here")
    assert flaky.calls == 3


@pytest.mark.parametrize(
    "message",
    [
        # what a 3-node cluster answered for one object of a batch when a replica was killed
        "failed to execute query: rpc error: code = Canceled desc = grpc: the client "
        "connection is closing",
        "rpc error: code = Unavailable desc = connection error",
        "cannot reach enough replicas",
    ],
)
def test_a_replica_going_away_mid_write_is_transient(message: str) -> None:
    from weaviate.exceptions import WeaviateQueryError

    assert is_transient(WeaviateQueryError(message, "GRPC batch"))


def test_permanent_errors_are_not_retried() -> None:
    from weaviate.exceptions import WeaviateQueryError

    error = WeaviateQueryError("no such prop with name 'x' found in class", "GRPC search")
    flaky = _Flaky([error])
    assert not is_transient(error)
    with pytest.raises(StoreError, match=r"failed to read: .*no such prop"):
        with_retries(flaky, policy=RetryPolicy(attempts=5), what="read", where="here")
    assert flaky.calls == 1


def test_a_server_restart_is_ridden_out_by_retries(tmp_path: Path) -> None:
    node = LocalServer(
        install().path, data_dir=tmp_path / "data", log_path=tmp_path / "weaviate.log"
    )
    node.start()
    try:
        with WeaviateBackend(node.url + "&retries=12&prefix=Restart") as backend:
            from commonplace.testing import PIN

            backend.write_pin(PIN)
            node.stop()
            node.spawn()  # comes back on the same ports while the next call retries
            assert backend.read_pin() == PIN
    finally:
        node.stop()
