"""Copying answered human messages into memory, once per message id.

A human message named as someone else's (see ``_messages``) is copied as evidence only:
an episode ``said_by`` its sender, never a note.

Every checkpoint carries the whole message list, so the tap looks at the human messages
of the turns that have been answered (see ``settled``: the question being worked on is
left for later, so it can never be recalled as its own memory), asks its ledger which
ids it has not seen in this thread, and writes only those. Each is written with its
message id as the core's ``key``, so two identical messages are two episodes and the
same message written twice is one. The memory write comes first and the ledger row
after it: a crash in between means the message is written again next time, and the
core's idempotency makes that second write a no-op. So each message becomes one
episode, and a note only if the core's writer keeps one.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from commonplace import Memory, Scope, Turn
from commonplace.errors import InvalidInputError, InvalidTypeError

from ._db import Database, chunks
from ._messages import HumanTurn, human_turns, is_human_type, settled
from ._scope import ScopeRule

logger = logging.getLogger("commonplace_langgraph")

LEDGER_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS langgraph_tapped (
        thread_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        episode_id TEXT,
        PRIMARY KEY (thread_id, message_id)
    ) WITHOUT ROWID""",
    # The user a thread belongs to, as last named by a config. Configs LangGraph builds
    # itself (a StateSnapshot's, used to resume or time-travel) carry only the thread
    # and checkpoint ids; without this, their messages would land outside the user's memory.
    """CREATE TABLE IF NOT EXISTS langgraph_thread_users (
        thread_id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL
    ) WITHOUT ROWID""",
)


class Tap:
    """Writes the unseen human messages of a checkpoint into memory."""

    def __init__(self, memory: Memory, db: Database, *, rule: ScopeRule, messages_key: str) -> None:
        if not isinstance(messages_key, str) or not messages_key:
            raise InvalidTypeError("messages_key must be a non-empty str (e.g. 'messages')")
        self.memory = memory
        self.rule = rule
        self.messages_key = messages_key
        self._db = db

    def wants(self, new_versions: Mapping[str, Any]) -> bool:
        """Only a checkpoint that changed the messages channel can hold a new message."""
        return self.messages_key in new_versions

    def __call__(self, config: Mapping[str, Any], channel_values: Mapping[str, Any]) -> None:
        messages = channel_values.get(self.messages_key)
        if not isinstance(messages, (list, tuple)) or not any(map(is_human_type, messages)):
            return
        thread = self.rule.thread(config)
        if thread is None:  # LangGraph never checkpoints without one; nothing to key on
            return
        # whose named messages are the user's depends on the thread's user
        scope = self._scope(config, thread)
        who = self.rule.speakers(scope.user)
        turns = human_turns(settled(messages, who), who)
        fresh = self._unseen(thread, turns) if turns else []
        if not fresh:
            return
        meta_base = {"source": "langgraph", "thread_id": thread}
        valid: list[tuple[HumanTurn, Turn]] = []
        refused: list[HumanTurn] = []
        for turn in fresh:
            try:
                valid.append((turn, turn.validated(self.memory, scope=scope, meta=meta_base)))
            except InvalidInputError as exc:
                # An empty or oversized message must not break the user's graph: it is
                # recorded as seen (so it is not retried forever) and the reason is logged.
                logger.warning("message %s not written to memory: %s", turn.message_id, exc)
                refused.append(turn)
        results = self.memory.write_many([t for _, t in valid]) if valid else []
        rows: list[tuple[str, str, str | None]] = [
            (thread, t.message_id, r.episode_id) for (t, _), r in zip(valid, results)
        ]
        rows += [(thread, t.message_id, None) for t in refused]
        with self._db.transaction() as db:
            db.executemany(
                "INSERT OR IGNORE INTO langgraph_tapped (thread_id, message_id, episode_id) "
                "VALUES (?, ?, ?)",
                rows,
            )

    def _scope(self, config: Mapping[str, Any], thread: str) -> Scope:
        user = self.rule.user(config)
        with self._db.reading() as db:
            row = db.execute(
                "SELECT user_id FROM langgraph_thread_users WHERE thread_id = ?", (thread,)
            ).fetchone()
        known = None if row is None else str(row[0])
        if user is None:
            user = known
        elif user != known:
            with self._db.transaction() as db:
                db.execute(
                    "INSERT OR REPLACE INTO langgraph_thread_users (thread_id, user_id) "
                    "VALUES (?, ?)",
                    (thread, user),
                )
        if user is None:
            self.rule.warn_no_user(thread)
        return Scope(user=user, agent=self.rule.agent, thread=thread)

    def _unseen(self, thread: str, turns: Sequence[HumanTurn]) -> list[HumanTurn]:
        ids = list(dict.fromkeys(t.message_id for t in turns))
        seen: set[str] = set()
        with self._db.reading() as db:
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                seen.update(
                    row[0]
                    for row in db.execute(
                        "SELECT message_id FROM langgraph_tapped "
                        f"WHERE thread_id = ? AND message_id IN ({marks})",
                        (thread, *chunk),
                    )
                )
        out, taken = [], set()
        for turn in turns:
            if turn.message_id not in seen and turn.message_id not in taken:
                taken.add(turn.message_id)
                out.append(turn)
        return out

    # -- thread bookkeeping, mirroring the checkpointer's own thread operations ----

    def forget_thread(self, thread_id: str) -> None:
        with self._db.transaction() as db:
            db.execute("DELETE FROM langgraph_tapped WHERE thread_id = ?", (str(thread_id),))
            db.execute("DELETE FROM langgraph_thread_users WHERE thread_id = ?", (str(thread_id),))

    def copy_thread(self, source: str, target: str) -> None:
        # The copy's messages are the source's: they are already in memory, so the
        # target thread must not write them again (that would duplicate every note).
        with self._db.transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO langgraph_tapped (thread_id, message_id, episode_id) "
                "SELECT ?, message_id, episode_id FROM langgraph_tapped WHERE thread_id = ?",
                (str(target), str(source)),
            )
            db.execute(
                "INSERT OR IGNORE INTO langgraph_thread_users (thread_id, user_id) "
                "SELECT ?, user_id FROM langgraph_thread_users WHERE thread_id = ?",
                (str(target), str(source)),
            )

    def tapped(self, thread_id: str) -> dict[str, str | None]:
        """Message id -> episode id of everything tapped in a thread (for tests and audit)."""
        with self._db.reading() as db:
            return dict(
                db.execute(
                    "SELECT message_id, episode_id FROM langgraph_tapped WHERE thread_id = ?",
                    (str(thread_id),),
                )
            )
