"""Helpers shared by the LangGraph adapter tests (a unique name: tests have no packages)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import BaseMessage
from pydantic import Field

from commonplace import Kind, Memory, Record, Role, Scope
from commonplace.stores import RecordQuery


class ScriptedModel(GenericFakeChatModel):
    """A deterministic chat model: replies from a script, accepts bind_tools, records inputs."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        self.seen.append(list(input) if isinstance(input, list) else [input])
        return super().invoke(input, config, **kwargs)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        self.seen.append(list(input) if isinstance(input, list) else [input])
        return await super().ainvoke(input, config, **kwargs)


def notes(memory: Memory, scope: Any) -> list[Record]:
    """Every current note visible in ``scope``."""
    return list(
        memory.backend.iter_records(RecordQuery(scope=Scope.coerce(scope), superseded=False))
    )


def note_texts(memory: Memory, scope: Any) -> list[str]:
    """The texts of every note visible in ``scope``."""
    return sorted({r.text for r in notes(memory, scope)})


def assert_notes_only_from_users(memory: Memory, scope: Any) -> None:
    """Every note in ``scope`` traces back to user episodes (the firewall), except what was
    stated on purpose through a store or a tool, whose evidence says so: never the
    assistant's words."""
    for record in notes(memory, scope):
        assert record.kind is Kind.NOTE
        for episode in memory.explain(record.id).episodes():
            assert episode.role is not Role.ASSISTANT, (record.text, episode.text)
            if "put_note" in episode.meta:
                assert episode.role in (Role.SYSTEM, Role.TOOL), (record.text, episode.text)
            else:
                assert episode.role is Role.USER, (record.text, episode.text)
