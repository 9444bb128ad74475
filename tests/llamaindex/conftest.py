"""Fixtures for the LlamaIndex adapter: real SQLite stores, no network, LlamaIndex's mocks."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from commonplace import ManualClock, Memory

# LlamaIndex's workflows find their steps with inspect.getmembers(), which reads every
# attribute of the agent, pydantic's deprecated ones included. Those warnings are
# attributed to the inspect module; they are LlamaIndex's, not the adapter's.
_THIRD_PARTY_WARNINGS = ("ignore::DeprecationWarning:inspect",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/llamaindex/" in item.nodeid.replace("\\", "/"):
            for spec in _THIRD_PARTY_WARNINGS:
                item.add_marker(pytest.mark.filterwarnings(spec))


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs offline: any attempt to open a connection fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a test tried to reach the network: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.fixture
def store(db_url: str, clock: ManualClock) -> Iterator[Memory]:
    """A commonplace store on a real SQLite file in the test's tmp_path."""
    with Memory(db_url, clock=clock) as m:
        yield m
