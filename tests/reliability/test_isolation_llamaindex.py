"""Isolation through the LlamaIndex adapters (commonplace-llamaindex).

Hypothesis opens ``CommonplaceMemory`` sessions for users, agents and sessions drawn from
values made to escape, has each user say things (every message carries a marker word),
then asks each session's ``get()`` and a ``CommonplaceRetriever`` on random scopes. The
compiled memory a session sees may only hold what was said in the scopes its recall
scope contains; the retriever may only return records of the scope it was given; a
session's short-term history is its own.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from llama_index.core.llms import ChatMessage, MessageRole
from reliability_support import BUSY, SIZES, marker, profile, tally, url_of

from commonplace import Memory, Scope
from commonplace_llamaindex import CommonplaceMemory, CommonplaceRetriever

USERS = (
    "ana",
    "bob",
    "ana ",
    "ANA",
    "аna",
    "*",
    "%",
    "_",
    "ana' OR '1'='1",
    "ａｎａ",
    "ana\u200b",
    "ana/../bob",
)
MARKER = re.compile(r"zx\d{7}q")
SESSIONS = st.tuples(
    st.sampled_from(USERS),
    st.sampled_from((None, "coach")),
    st.sampled_from(("s1", "s2", "s1 OR 1=1")),
    st.booleans(),
)


@given(data=st.data())
@profile(SIZES.isolation_examples)
def test_llamaindex_memory_and_retriever_never_cross_scopes(data: st.DataObject) -> None:
    sessions = data.draw(st.lists(SESSIONS, min_size=1, max_size=5, unique_by=lambda s: s[:3]))
    with (
        tempfile.TemporaryDirectory(prefix="cp-li-") as folder,
        Memory(url_of(Path(folder) / "m.db"), config=BUSY) as store,
    ):
        said: dict[str, Scope] = {}
        opened = []
        n = 0
        for user, agent, session, cross in sessions:
            memory = CommonplaceMemory.from_defaults(
                store, user_id=user, agent_id=agent, session_id=session, cross_session=cross
            )
            for _ in range(data.draw(st.integers(1, 3))):
                n += 1
                text = f"My sister Mia plays chess {marker(n)}."
                memory.put(ChatMessage(role=MessageRole.USER, content=text))
                memory.put(ChatMessage(role=MessageRole.ASSISTANT, content=f"Noted {marker(n)}"))
                said[marker(n)] = memory.write_scope
            memory.flush()
            opened.append(memory)
        for memory in opened:
            messages = memory.get(
                input=data.draw(st.sampled_from(["sister Mia chess", marker(1), "' OR 1=1 --"]))
            )
            recall_scope = memory.recall_scope
            for message in messages:
                content = message.content or ""
                seen = MARKER.findall(content)
                if message.role is MessageRole.SYSTEM:
                    leaked = [m for m in seen if not recall_scope.contains(said[m])]
                    assert leaked == [], (recall_scope, leaked, content)
                    tally("isolation: LlamaIndex recalled notes traced to their scope", len(seen))
                else:  # the short-term history: this session's own messages only
                    assert all(said[m] == memory.write_scope for m in seen), content
            tally("isolation: LlamaIndex sessions checked")
        for _ in range(data.draw(st.integers(1, 3))):
            user, agent, session, _ = data.draw(st.sampled_from(sessions))
            scope = data.draw(
                st.sampled_from(
                    [
                        Scope(user=user),
                        Scope(user=user, agent=agent),
                        Scope(user=user, agent=agent, thread=session),
                    ]
                )
            )
            retriever = CommonplaceRetriever(store, scope=scope, relevant_only=False)
            for node in retriever.retrieve("sister Mia chess"):
                owner = store.explain(node.node.node_id).record.scope
                assert scope.contains(owner), (scope, owner)
            tally("isolation: LlamaIndex retrievals checked")
        for memory in opened:
            memory.close()
