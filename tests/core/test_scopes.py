"""Scopes isolate memories; scope values are data, never syntax."""

from __future__ import annotations

import pytest

from commonplace import Memory, Scope
from commonplace.errors import InvalidScopeError, InvalidTypeError, NotFoundError


def test_one_user_never_sees_another(memory: Memory) -> None:
    memory.write("I live in Lisbon and I love surfing.", scope="ana")
    memory.write("I live in Berlin and I love techno.", scope="bob")
    ana = memory.recall("where do I live, what do I love", scope="ana")
    bob = memory.recall("where do I live, what do I love", scope="bob")
    assert {i.record.scope.user for i in ana.items} == {"ana"}
    assert {i.record.scope.user for i in bob.items} == {"bob"}
    assert "Berlin" not in ana.render() and "Lisbon" not in bob.render()


def test_a_user_scope_sees_all_its_threads_a_thread_scope_only_its_own(memory: Memory) -> None:
    memory.write("I am planning a trip to Japan.", scope=Scope(user="ana", thread="t1"))
    memory.write("I am planning a trip to Peru.", scope=Scope(user="ana", thread="t2"))
    everything = memory.recall("trip planning", scope=Scope(user="ana"))
    assert len(everything.items) == 2
    t1 = memory.recall("trip planning", scope=Scope(user="ana", thread="t1"))
    assert [i.record.scope.thread for i in t1.items] == ["t1"]


def test_agents_are_isolated_within_a_user(memory: Memory) -> None:
    memory.write("I prefer short answers.", scope=Scope(user="ana", agent="coach"))
    found = memory.recall("short answers", scope=Scope(user="ana", agent="tutor"))
    assert found.items == ()


@pytest.mark.parametrize(
    "hostile",
    [
        "%",
        "*",
        "ana' OR '1'='1",
        'ana"; DROP TABLE records; --',
        "аna",
        "ana/../bob",
        "' OR 1=1 --",
    ],
)
def test_hostile_scope_values_are_plain_data(memory: Memory, hostile: str) -> None:
    memory.write("I live in Lisbon.", scope="ana")
    memory.write("I live in Oslo.", scope=hostile)
    found = memory.recall("where do I live", scope=hostile)
    assert [i.record.scope.user for i in found.items] == [hostile]
    assert all("Lisbon" not in i.record.text for i in found.items)
    assert [i.record.scope.user for i in memory.recall("live", scope="ana").items] == ["ana"]


@pytest.mark.parametrize(
    "bad", [{}, {"user": ""}, {"tenant": "x"}, "", {"user": "a\x00b"}, {"user": "x" * 300}]
)
def test_malformed_scopes_are_refused(memory: Memory, bad: object) -> None:
    with pytest.raises((InvalidScopeError, InvalidTypeError)):
        memory.write("I live in Lisbon.", scope=bad)  # type: ignore[arg-type]


def test_scope_of_wrong_type_is_refused(memory: Memory) -> None:
    with pytest.raises(InvalidTypeError):
        memory.recall("x", scope=42)  # type: ignore[arg-type]
    with pytest.raises(InvalidScopeError):
        Scope()


def test_explain_with_a_scope_refuses_another_scopes_record(memory: Memory) -> None:
    note = memory.write("I live in Lisbon.", scope="ana").note
    assert note is not None
    assert memory.explain(note.id, scope="ana").record.id == note.id
    with pytest.raises(NotFoundError):
        memory.explain(note.id, scope="bob")
