"""explain(): every derived record traces back to the episodes that justify it."""

from __future__ import annotations

import pytest

from commonplace import Kind, Memory, Role
from commonplace.errors import InvalidTypeError, NotFoundError


def test_a_note_explains_down_to_its_user_episode(memory: Memory) -> None:
    result = memory.write("I got engaged to Sam last night!", scope="ana")
    assert result.note is not None
    chain = memory.explain(result.note.id)
    assert chain.record.kind is Kind.NOTE
    (episode,) = chain.episodes()
    assert episode.id == result.episode_id and episode.role is Role.USER
    assert episode.text == "I got engaged to Sam last night!"
    assert chain.to_json()["sources"][0]["id"] == result.episode_id


def test_an_episode_explains_itself(memory: Memory) -> None:
    result = memory.write("ok", scope="ana")
    chain = memory.explain(result.episode_id)
    assert chain.record.kind is Kind.EPISODE and chain.sources == ()


def test_unknown_ids_and_wrong_types_are_clear_errors(memory: Memory) -> None:
    with pytest.raises(NotFoundError, match="no record"):
        memory.explain("nt_doesnotexist")
    with pytest.raises(InvalidTypeError):
        memory.explain(42)  # type: ignore[arg-type]
