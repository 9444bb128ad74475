"""Bad input gets a clear error from our hierarchy and changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from commonplace import Config, Kind, Memory, Weights
from commonplace.errors import (
    CommonplaceError,
    InvalidInputError,
    InvalidTypeError,
    InvalidURLError,
)


def _snapshot(memory: Memory) -> tuple[int, int]:
    return memory.count(Kind.EPISODE), memory.count(Kind.NOTE)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"text": ""}, InvalidInputError, "empty"),
        ({"text": "   \n\t"}, InvalidInputError, "empty"),
        ({"text": None}, InvalidTypeError, "must be a str"),
        ({"text": b"I live in Lisbon"}, InvalidTypeError, "must be a str"),
        ({"text": 42}, InvalidTypeError, "must be a str"),
        ({"text": "x" * 20_001}, InvalidInputError, "max_turn_chars"),
        ({"text": "bad \ud800 surrogate"}, InvalidInputError, "surrogates"),
        ({"role": "narrator"}, InvalidInputError, "unknown role"),
        ({"role": 3}, InvalidTypeError, "role"),
        ({"meta": {"k": object()}}, InvalidInputError, "JSON"),
        ({"meta": {1: "x"}}, InvalidTypeError, "str keys"),
        ({"meta": ["x"]}, InvalidTypeError, "mapping"),
        ({"meta": {"nan": float("nan")}}, InvalidInputError, "JSON"),
        ({"at": "yesterday"}, InvalidTypeError, "datetime"),
    ],
)
def test_bad_writes_are_refused_and_change_nothing(
    memory: Memory, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    memory.write("I live in Lisbon.", scope="ana")
    before = _snapshot(memory)
    call: dict[str, Any] = {"text": "I work at a bakery.", "scope": "ana", **kwargs}
    text = call.pop("text")
    with pytest.raises(error, match=match):
        memory.write(text, **call)
    assert _snapshot(memory) == before


def test_one_bad_turn_in_a_batch_writes_nothing(memory: Memory) -> None:
    good = memory.turn("I work at a bakery.", scope="ana")
    with pytest.raises(InvalidTypeError):
        memory.write_many([good, "not a turn"])  # type: ignore[list-item]
    assert _snapshot(memory) == (0, 0)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"query": ""}, InvalidInputError),
        ({"query": 7}, InvalidTypeError),
        ({"query": "q" * 5000}, InvalidInputError),
        ({"top_k": 0}, InvalidInputError),
        ({"top_k": "3"}, InvalidTypeError),
        ({"top_k": True}, InvalidTypeError),
        ({"budget_tokens": 2}, InvalidInputError),
    ],
)
def test_bad_recalls_are_refused(
    memory: Memory, kwargs: dict[str, Any], error: type[Exception]
) -> None:
    memory.write("I live in Lisbon.", scope="ana")
    call: dict[str, Any] = {"query": "Lisbon", "scope": "ana", **kwargs}
    query = call.pop("query")
    with pytest.raises(error):
        memory.recall(query, **call)
    (item,) = memory.recall("Lisbon", scope="ana").items
    assert item.record.access_count == 0  # the refused calls touched nothing


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:memory.db",
        "http:/x",
        "sqlite://",
        "sqlite:///",
        "nosuchdb://host/x",
        "sqlite:///a.db?mode=ro",
    ],
)
def test_malformed_urls_are_refused(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidURLError):
        Memory(url)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "build",
    [
        lambda: Config(half_life_days=0),
        lambda: Config(half_life_days=float("nan")),
        lambda: Config(pool_min=0),
        lambda: Config(budget_tokens="many"),
        lambda: Config(weights={"semantic": 1}),
        lambda: Weights(semantic=-1),
        lambda: Config(relevance_floor=2.0),
        lambda: Config(touch_on_recall="yes"),
    ],
)
def test_bad_configs_are_refused(build: Any) -> None:
    with pytest.raises(CommonplaceError):
        build()


def test_wrong_constructor_types_are_refused() -> None:
    with pytest.raises(InvalidTypeError):
        Memory(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError):
        Memory(":memory:", embedder="minilm")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError):
        Memory(":memory:", config={"budget_tokens": 10})  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError):
        Memory(":memory:", clock="now")  # type: ignore[arg-type]


def test_errors_are_also_builtin_exception_types() -> None:
    assert issubclass(InvalidInputError, ValueError)
    assert issubclass(InvalidTypeError, TypeError)
