"""pytest fixtures for tests against a real Weaviate server (the ``commonplace_weaviate`` plugin).

Installed as a pytest plugin (entry point ``pytest11``), so any test can ask for:

* ``weaviate_server`` (session): the server under test. With ``--weaviate-url`` or
  ``$COMMONPLACE_WEAVIATE_URL`` it is that server (checked once, the run fails if
  it does not answer); otherwise the pinned Weaviate is built with ``go install``
  (cached) and started on 127.0.0.1 with a temporary data path, then stopped at
  the end. A missing server never skips a test: it fails the run, loudly.
* ``weaviate_url``: its store URL.
* ``weaviate_backend_factory``: a function returning a fresh, empty
  :class:`~commonplace_weaviate.WeaviateBackend` on that server (its own collection
  prefix, wiped and reused across tests), closed after the test.

Tests that use the server carry the ``weaviate`` marker; ``-m "not weaviate"``
deselects them explicitly. Nothing here starts anything until a fixture is used.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ._backend import WeaviateBackend

__all__ = [
    "StorePool",
    "WeaviateTarget",
    "weaviate_backend_factory",
    "weaviate_server",
    "weaviate_store_pool",
    "weaviate_url",
]

_URL_ENV = "COMMONPLACE_WEAVIATE_URL"
_TIMING = pytest.StashKey["WeaviateTarget"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("commonplace-weaviate")
    group.addoption(
        "--weaviate-url",
        default=None,
        help=f"run Weaviate tests against this server (weaviate://host:port?grpc_port=P) "
        f"instead of starting one; also ${_URL_ENV}",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "weaviate: needs a real Weaviate server (started on loopback unless --weaviate-url "
        f"or ${_URL_ENV} names one); deselect explicitly with -m 'not weaviate'",
    )


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    target = config.stash.get(_TIMING, None)
    if target is None:
        return
    if target.managed:
        how = f"built in {target.build_seconds:.1f}s" if target.built else "binary cached"
        terminalreporter.write_line(
            f"weaviate {target.version}: {how}, started in {target.start_seconds:.1f}s "
            f"at {target.url}"
        )
    else:
        terminalreporter.write_line(f"weaviate: tests ran against {target.url}")


@dataclass
class WeaviateTarget:
    """The server the tests use, and what getting it cost."""

    url: str
    managed: bool
    version: str | None = None
    built: bool = False
    build_seconds: float = 0.0
    start_seconds: float = 0.0
    binary: Path | None = None


@pytest.fixture(scope="session")
def weaviate_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WeaviateTarget]:
    from . import server as srv
    from ._backend import _connect
    from ._errors import WeaviateServerError
    from ._url import parse_url

    given = request.config.getoption("--weaviate-url") or os.environ.get(_URL_ENV)
    if given:
        try:
            _connect(parse_url(given, environ=os.environ)).close()
        except Exception as exc:
            pytest.fail(
                f"the Weaviate server given by --weaviate-url/${_URL_ENV} ({given}) does "
                f"not answer: {exc}",
                pytrace=False,
            )
        target = WeaviateTarget(url=given, managed=False)
        request.config.stash[_TIMING] = target
        yield target
        return
    try:
        installed = srv.install()
    except WeaviateServerError as exc:
        where = " (CI=true: a Weaviate server is required)" if os.environ.get("CI") else ""
        pytest.fail(f"cannot build the Weaviate server for the tests{where}: {exc}", pytrace=False)
    folder = tmp_path_factory.mktemp("weaviate")
    node = srv.LocalServer(
        installed.path, data_dir=folder / "data", log_path=folder / "weaviate.log"
    )
    try:
        seconds = node.start()
    except WeaviateServerError as exc:
        pytest.fail(f"cannot start the Weaviate server for the tests: {exc}", pytrace=False)
    target = WeaviateTarget(
        url=node.url,
        managed=True,
        version=installed.version,
        built=installed.built,
        build_seconds=installed.seconds,
        start_seconds=seconds,
        binary=installed.path,
    )
    request.config.stash[_TIMING] = target
    try:
        yield target
    finally:
        node.stop()


@pytest.fixture
def weaviate_url(weaviate_server: WeaviateTarget) -> str:
    return weaviate_server.url


@dataclass
class StorePool:
    """Collection prefixes on the test server, wiped and handed out again between tests.

    Creating a store's ten collections takes about two seconds; emptying them
    takes a fraction of that, so tests reuse prefixes instead.
    """

    url: str
    free: list[str] = field(default_factory=list)
    made: list[str] = field(default_factory=list)

    def take(self) -> str:
        if self.free:
            return self.free.pop()
        prefix = "Test" + uuid.uuid4().hex[:10].upper()
        self.made.append(prefix)
        return prefix

    def give_back(self, prefix: str) -> None:
        from ._backend import wipe_store

        try:
            wipe_store(self.url, prefix)
        except Exception:  # a store that cannot be wiped is dropped instead of reused
            self.drop([prefix])
            return
        self.free.append(prefix)

    def drop(self, prefixes: list[str] | None = None) -> None:
        from ._backend import drop_store

        for prefix in list(self.made if prefixes is None else prefixes):
            drop_store(self.url, prefix)
            if prefix in self.free:
                self.free.remove(prefix)


@pytest.fixture(scope="session")
def weaviate_store_pool(weaviate_server: WeaviateTarget) -> Iterator[StorePool]:
    pool = StorePool(weaviate_server.url)
    try:
        yield pool
    finally:
        pool.drop()


@pytest.fixture
def weaviate_backend_factory(
    weaviate_store_pool: StorePool,
) -> Iterator[Callable[[], WeaviateBackend]]:
    """Call it for a fresh, empty WeaviateBackend (closed and recycled after the test)."""
    from ._backend import WeaviateBackend

    opened: list[WeaviateBackend] = []
    prefixes: list[str] = []

    def make() -> WeaviateBackend:
        prefix = weaviate_store_pool.take()
        prefixes.append(prefix)
        backend = WeaviateBackend(weaviate_store_pool.url, prefix=prefix)
        opened.append(backend)
        return backend

    try:
        yield make
    finally:
        for backend in opened:
            backend.close()
        for prefix in prefixes:
            weaviate_store_pool.give_back(prefix)
