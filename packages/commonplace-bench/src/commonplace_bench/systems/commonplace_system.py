"""commonplace on its embedded SQLite store, with its default configuration.

Turns go through ``Memory.write_many`` (episodes, the rule-based note writer,
supersession, profile card), queries through ``Memory.recall`` (hybrid search,
gated four-signal rerank, budgeted context) and answers through
``Memory.feedback``; ``maintain`` is the scheduled ``Memory.sleep``. The only
change from the defaults is the candidate pool when a workload asks for one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from commonplace import Config, ManualClock, Memory, Recall, Scope, count_tokens
from commonplace.embedders import Embedder

from .base import Memo, Retrieved, System, Turn

__all__ = ["CommonplaceSystem"]

SCOPE = Scope(user="bench", thread="chat")


class CommonplaceSystem(System):
    supports_as_of = True

    def __init__(
        self,
        folder: Path,
        embedder: Embedder,
        *,
        pool: int | None = None,
        config: Config | None = None,
    ) -> None:
        super().__init__(folder, embedder)
        config = config or Config()
        if pool is not None:
            # the pool is max(top_k * pool_factor, pool_min): with factor 1 it is the
            # requested size for the small top_k the workloads ask with
            config = dataclasses.replace(config, pool_min=pool, pool_factor=1)
        self.config = config
        folder.mkdir(parents=True, exist_ok=True)
        self.memory = Memory(
            f"sqlite:///{folder / 'commonplace.db'}",
            embedder=self.embedder,
            clock=ManualClock(datetime(2020, 1, 1, tzinfo=timezone.utc)),
            config=config,
        )

    def add(self, turns: Sequence[Turn]) -> None:
        memory = self.memory
        memory.write_many(
            [memory.turn(t.text, role=t.role, scope=SCOPE, at=t.at, key=t.key) for t in turns]
        )

    def add_memos(self, memos: Sequence[Memo]) -> None:
        """Write each memory at its time, then inject its signals through the store API.

        Frequency becomes that many recorded accesses (``Backend.touch`` at the
        memory's own time, so recency is unchanged) and importance replaces the
        note's tag, marked as stated by the application (what ``put_note(importance=)``
        records), which is what NLM's benchmark does with metadata.
        """
        memory = self.memory
        for n, memo in enumerate(memos):
            (result,) = memory.write_many(
                [memory.turn(memo.text, scope=SCOPE, at=memo.created_at, key=f"memo-{n}")]
            )
            note = result.note
            if note is None:
                continue
            for _ in range(memo.frequency):
                memory.store.books.touch([note.id], at=memo.created_at)
            if memo.importance is not None:  # stated by the application, as NLM's metadata is
                tags = dataclasses.replace(
                    note.tags, importance=memo.importance, importance_stated=True
                )
                memory.store.update_records([note.id], at=memo.created_at, tags=tags)

    def query(
        self,
        text: str,
        *,
        at: datetime,
        top_k: int,
        budget: int,
        as_of: datetime | None = None,
    ) -> Retrieved:
        recall = self.memory.recall(
            text, scope=SCOPE, top_k=top_k, budget_tokens=budget, at=at, as_of=as_of
        )
        return Retrieved(
            hits=tuple(i.record.text for i in recall.items),
            context=recall.text,
            tokens=recall.tokens,
            handle=recall,
            profile_tokens=_profile_tokens(recall),
        )

    def feedback(self, retrieved: Retrieved, used: Sequence[int]) -> None:
        recall = retrieved.handle
        assert isinstance(recall, Recall)
        shown = set(recall.included)
        ids = [recall.items[i].record.id for i in used if recall.items[i].record.id in shown]
        self.memory.feedback(recall.id, used=ids, at=recall.at)

    def maintain(self, *, at: datetime) -> None:
        self.memory.sleep(scope=SCOPE, at=at)

    def close(self) -> None:
        self.memory.close()


def _profile_tokens(recall: Recall) -> int:
    return count_tokens(recall.profile) if recall.profile else 0
