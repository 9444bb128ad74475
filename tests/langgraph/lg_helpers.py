"""Helpers shared by the LangGraph adapter tests (a unique name: tests have no packages)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import BaseMessage
from pydantic import Field

from commonplace import Kind, Memory, Role


class ScriptedModel(GenericFakeChatModel):
    """A deterministic chat model: replies from a script, accepts bind_tools, records inputs."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        self.seen.append(list(input) if isinstance(input, list) else [input])
        return super().invoke(input, config, **kwargs)


def note_texts(memory: Memory, scope: Any) -> list[str]:
    """Every note visible in ``scope``, via recall over everything the scope holds."""
    recall = memory.recall("anything at all", scope=scope, top_k=100, budget_tokens=100_000)
    texts = {item.record.text for item in recall.items} | {r.text for r in recall.recent}
    return sorted(texts)


def assert_notes_only_from_users(memory: Memory, scope: Any) -> None:
    """Every note in ``scope`` traces back to user episodes only (the firewall)."""
    recall = memory.recall("anything at all", scope=scope, top_k=100, budget_tokens=100_000)
    records = [i.record for i in recall.items] + list(recall.recent)
    for record in records:
        assert record.kind is Kind.NOTE
        for episode in memory.explain(record.id).episodes():
            assert episode.role is Role.USER, (record.text, episode.text)
