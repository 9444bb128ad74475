"""Forget means gone: after a forget of one note, from any entry point, the forgotten words
are nowhere in the SQLite file.

Each test writes a secret only the forgotten note (and its turn) holds, recalls with a
question that names it (so a recall log holds it too), lets the lifecycle and the profile
card read it, forgets, and then looks for it: in the file's bytes and its ``-wal`` and
``-shm`` while the store is still open (so the forget itself erased, not the close's
checkpoint), again in the closed file's bytes (lower case, upper case and title case),
and in every cell of every table and every term of the full-text index
(``reliability_support.scan``). A word the forgotten note shares with a note that is
kept stays in the kept note. Entry points: ``Memory.forget`` (with and without the
evidence), the MCP ``forget`` tool, the LangGraph ``CommonplaceStore.delete`` and
``forget`` tool, ``Memory.forget_scope``, and the inspector's page afterwards; then a
hypothesis test over random secrets, sentences and forget paths.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from mcp import Client
from reliability_support import BUSY, SIZES, T0, profile, scan, tally, url_of

from commonplace import Kind, ManualClock, Memory, Scope
from commonplace_inspect import collect, render_page
from commonplace_langgraph import CommonplaceSaver, CommonplaceStore, memory_tools
from commonplace_mcp import build_server

SECRET = "zq7xk4pl"
ANA = Scope(user="ana")
ANA_T1 = Scope(user="ana", thread="t1")
KEPT_WORD = "locker"  # in the forgotten note and in a kept one: it stays in the kept one


def files(path: Path) -> bytes:
    """The store's bytes at rest: the database, its write-ahead log, its shared memory."""
    return b"".join(
        Path(f"{path}{suffix}").read_bytes()
        for suffix in ("", "-wal", "-shm")
        if Path(f"{path}{suffix}").exists()
    )


def spellings(word: str) -> list[bytes]:
    return [w.encode() for w in dict.fromkeys((word, word.lower(), word.upper(), word.title()))]


def copies(raw: bytes, word: str) -> int:
    return sum(raw.count(s) for s in spellings(word))


def assert_gone(path: Path, word: str, *, kept: int = 0) -> None:
    """``word`` is in no byte of the closed store (but in ``kept`` cells, the evidence the
    user kept), no cell of any table and no term of the full-text index."""
    assert copies(files(path), word) == kept, f"{word!r} is still in the file's bytes"
    hits = scan(path, [word])  # opens the file: after the bytes were read
    assert [(h.table, h.column) for h in hits] == [("episodes", "text")] * kept, hits


def assert_live_gone(path: Path, word: str, *, kept: int = 0) -> None:
    """Right after the forget, the store still open: the file, its log and shared memory."""
    assert copies(files(path), word) == kept, f"{word!r} is in the open store's bytes"


def fill(memory: Memory, *, secret: str = SECRET, scope: Scope = ANA_T1) -> tuple[str, str]:
    """A few notes, the secret's note, a recall naming it (upper case), feedback, the
    lifecycle and the profile card; the secret's note id and its turn's id."""
    memory.write("My sister Mia plays chess.", scope=scope)
    memory.write(f"My {KEPT_WORD} is blue and dented.", scope=scope)
    written = memory.write(f"My {KEPT_WORD} code is {secret}.", scope=scope)
    memory.write("I live in Porto.", scope=scope)
    assert written.note is not None and secret in written.note.text
    found = memory.recall(f"what is {secret.upper()}, my {KEPT_WORD} code?", scope=ANA)
    assert written.note.id in found.retrieved
    memory.feedback(found.id, used=[written.note.id])
    for each in (ANA, scope):
        memory.consolidate(scope=each)
        memory.sleep(scope=each)
        memory.rewrite_profile(scope=each)
    return written.note.id, written.episode_id


def assert_kept_word_stays(path: Path) -> None:
    hits = scan(path, [KEPT_WORD])
    assert ("records", "text") in {(h.table, h.column) for h in hits}
    assert ("records_fts (index terms)", "term") in {(h.table, h.column) for h in hits}


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "m.db"


@pytest.fixture
def memory(path: Path) -> Iterator[Memory]:
    with Memory(url_of(path), config=BUSY, clock=ManualClock(T0)) as memory:
        yield memory


def test_memory_forget_erases_the_note_its_turn_and_every_trace(memory: Memory, path: Path) -> None:
    note, turn = fill(memory)
    assert copies(files(path), SECRET) > 0
    report = memory.forget(note, scope=ANA)
    assert note in report.records and turn in report.episodes
    assert_live_gone(path, SECRET)
    memory.close()
    assert_gone(path, SECRET)
    assert_kept_word_stays(path)


def test_forget_without_the_evidence_leaves_the_words_only_in_the_kept_turn(
    memory: Memory, path: Path
) -> None:
    """The user asked to forget the note, not what they said: the turn stays as it was
    said (``include_evidence=False``), and it is the one place the words remain."""
    note, turn = fill(memory)
    report = memory.forget(note, scope=ANA, include_evidence=False)
    assert report.episodes == () and memory.store.get_episode(turn) is not None
    memory.close()
    assert_gone(path, SECRET, kept=1)
    assert_kept_word_stays(path)


def test_the_mcp_forget_tool_erases_every_trace(memory: Memory, path: Path) -> None:
    memory.write(f"My {KEPT_WORD} is blue and dented.", scope=ANA)

    async def main() -> None:
        with anyio.fail_after(60):
            server = build_server(memory, user="ana")
            async with Client(server, mode="legacy") as client:
                said = await client.call_tool(
                    "remember", {"text": f"My locker code is {SECRET}.", "said_by": "user"}
                )
                note = said.structured_content["note"]["id"]  # type: ignore[index]
                found = await client.call_tool("recall", {"query": f"{SECRET.upper()} locker?"})
                items = found.structured_content["items"]  # type: ignore[index]
                assert note in [i["id"] for i in items]
                gone = await client.call_tool("forget", {"record_id": note})
                assert not gone.is_error

    anyio.run(main)
    assert_live_gone(path, SECRET)
    memory.close()
    assert_gone(path, SECRET)
    assert_kept_word_stays(path)


def test_the_langgraph_store_delete_erases_every_trace(memory: Memory, path: Path) -> None:
    memory.write(f"My {KEPT_WORD} is blue and dented.", scope=ANA)
    with CommonplaceStore(memory) as store:
        store.put(("memories", "ana"), "locker", {"text": f"My locker code is {SECRET}."})
        found = store.search(("memories", "ana"), query=f"what is {SECRET.title()}?")
        assert "locker" in [i.key for i in found]
        store.delete(("memories", "ana"), "locker")
        assert store.get(("memories", "ana"), "locker") is None
    assert_live_gone(path, SECRET)
    memory.close()
    assert_gone(path, SECRET)
    assert_kept_word_stays(path)


ANA_RUN: RunnableConfig = {"configurable": {"thread_id": "t1", "user_id": "ana"}}


def one_node_graph(node: Any, **compiled: Any) -> Any:
    """START -> ``node`` -> END, on LangGraph's own StateGraph."""
    builder = StateGraph(MessagesState)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    builder.add_edge("node", END)
    return builder.compile(**compiled)


def _tool_call(graph: Any, name: str, **args: Any) -> str:
    message = AIMessage(
        "", tool_calls=[{"name": name, "args": args, "id": "c", "type": "tool_call"}]
    )
    return str(graph.invoke({"messages": [message]}, ANA_RUN)["messages"][-1].content)


def test_the_langgraph_forget_tool_erases_every_trace(memory: Memory, path: Path) -> None:
    """In a real graph (a ToolNode on the CommonplaceStore); the graph keeps no
    checkpoints here: a checkpointer's messages are the thread's history, not memory."""
    note, _ = fill(memory)
    with CommonplaceStore(memory) as store:
        graph = one_node_graph(ToolNode(memory_tools()), store=store)
        assert f"[{note}]" in _tool_call(graph, "recall", query=f"my {SECRET} code")
        assert _tool_call(graph, "forget", memory_id=note).startswith(f"Forgot {note}")
    assert_live_gone(path, SECRET)
    memory.close()
    assert_gone(path, SECRET)
    assert_kept_word_stays(path)


def test_forget_scope_erases_the_recall_logs_of_broader_scopes_that_named_it(
    memory: Memory, path: Path
) -> None:
    """The recall in the user's scope (broader than the forgotten thread) returned the
    thread's note and named the secret: its question goes, its ids stay."""
    memory.write(f"My {KEPT_WORD} is blue and dented.", scope=Scope(user="ana", thread="t2"))
    fill(memory)
    memory.forget_scope(ANA_T1)
    assert_live_gone(path, SECRET)
    memory.close()
    assert_gone(path, SECRET)
    assert_kept_word_stays(path)


def test_the_cards_and_audit_entries_a_forgotten_note_fed_keep_none_of_it(
    memory: Memory, path: Path
) -> None:
    """A move that replaced the old city: the rolling summary and the profile card were
    written from it, and the audit entry of the supersession names it. Afterwards the
    cards are rewritten from what remains and the audit entry keeps its ids only."""
    clock = memory.clock
    assert isinstance(clock, ManualClock)
    secret = SECRET.title()
    for text in (
        "I live in Lisbon.",
        "My sister Mia plays chess.",
        f"I moved to {secret} last week, we sold the flat in Lisbon.",
        "My sister Mia bakes bread.",
    ):
        memory.write(text, scope=ANA_T1)
        clock.advance(days=1)
    for each in (ANA, ANA_T1):
        memory.consolidate(scope=each)
        memory.sleep(scope=each)
        memory.rewrite_profile(scope=each)
    notes = memory.store.recent_records(ANA, kinds=[Kind.NOTE], limit=9)
    (moved,) = [r for r in notes if secret in r.text]
    (superseded,) = [e for e in memory.audit(scope=ANA, limit=50) if e.action == "superseded"]
    assert moved.id in superseded.detail
    assert ("ledger", "data") in {(h.table, h.column) for h in scan(path, [SECRET])}  # a card
    memory.forget(moved.id, scope=ANA)
    assert_live_gone(path, SECRET)
    (after,) = [e for e in memory.audit(scope=ANA, limit=50) if e.action == "superseded"]
    assert (after.record_id, after.rule, after.detail) == (superseded.record_id, "update", "")
    rolling = memory.store.books.get_card(ANA_T1, "rolling")
    assert rolling is not None and "Mia" in rolling.text
    memory.close()
    assert_gone(path, SECRET)


def test_the_inspector_page_never_shows_a_forgotten_note_again(memory: Memory, path: Path) -> None:
    note, _ = fill(memory)
    before = render_page(collect(memory, user="ana"))
    assert SECRET in before.lower()  # the note, and the question that named it
    memory.forget(note, scope=ANA)
    after = render_page(collect(memory, user="ana"))
    assert [s for s in spellings(SECRET) if s.decode() in after] == []
    assert f"{KEPT_WORD} is blue and dented" in after  # the kept note, with the shared word
    # the recall that named the secret is still listed, with its ids, not its question
    assert '<td class="recall-query"><em>not logged</em></td>' in after


# -- random secrets, sentences and forget paths -----------------------------------------------

_LETTERS = "bcdfghjklmnpqrstvwxz"
SENTENCES = (
    "My locker code is {s}.",
    "My neighbour {S} plays the cello.",
    "I live in {S}.",
    "My cat is called {S} and she is two.",
    "Can you draft my {s} report again?",
)
PATHS = ("forget", "forget_without_evidence", "forget_turn", "store_delete", "forget_scope")
secrets = st.builds(
    lambda head, tail: head + tail,
    st.text(_LETTERS, min_size=3, max_size=6),
    st.text(_LETTERS + "0123456789", min_size=2, max_size=5).map(lambda t: t + "7"),
)


@profile(max(10, SIZES.fuzz_examples // 5))
@given(
    secret=secrets,
    sentence=st.sampled_from(SENTENCES),
    path_=st.sampled_from(PATHS),
    twice=st.booleans(),
    lifecycle=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_any_forget_of_a_random_secret_leaves_none_of_it(
    tmp_path_factory: pytest.TempPathFactory,
    secret: str,
    sentence: str,
    path_: str,
    twice: bool,
    lifecycle: bool,
    seed: int,
) -> None:
    rng = random.Random(seed)
    path = tmp_path_factory.mktemp("forget") / "m.db"
    text = sentence.format(s=secret, S=secret.title())
    asker: Callable[[str], str] = rng.choice((str.lower, str.upper, str.title))
    clock = ManualClock(T0)
    with Memory(url_of(path), config=BUSY, clock=clock) as memory:
        memory.write("My sister Mia plays chess.", scope=ANA_T1)
        memory.write("I live in Porto.", scope=ANA_T1)
        turns: list[str] = []
        note = None
        if path_ == "store_delete":
            store = CommonplaceStore(memory)
            store.put(("memories", "ana"), "secret", {"text": text})
        else:
            for n in range(2 if twice else 1):  # said again later: merged into one note
                clock.advance(minutes=5)
                written = memory.write(text, scope=ANA_T1, key=f"message-{n}")
                turns.append(written.episode_id)
                note = note or written.note
        memory.recall(f"what about {asker(secret)}?", scope=rng.choice((ANA, ANA_T1)))
        if lifecycle:
            memory.consolidate(scope=ANA)
            memory.sleep(scope=ANA)
            memory.rewrite_profile(scope=ANA)
        kept = 0  # the turns that hold the secret and that the user did not ask to forget
        if path_ == "store_delete":
            store.delete(("memories", "ana"), "secret")
            store.close()
        elif path_ == "forget_scope":
            memory.forget_scope(ANA_T1)
        elif path_ == "forget_turn" or note is None:
            memory.forget(turns[0], scope=ANA)
            kept = len(turns) - 1
        else:
            evidence = path_ == "forget"
            memory.forget(note.id, scope=ANA, include_evidence=evidence)
            kept = 0 if evidence else len(turns)
        if kept == 0:
            assert_live_gone(path, secret)
    assert_gone(path, secret, kept=kept)
    tally(f"forget traces: {path_}")


def test_forget_and_delete_thread_erase_a_langgraph_conversation(
    memory: Memory, path: Path
) -> None:
    """A graph with the CommonplaceSaver keeps the thread's messages in its checkpoints
    (the thread's history, in the same file): ``memory.forget`` erases the memory of
    them, ``delete_thread`` the history, and the adapter's connection zeroes what it
    deletes as the core's does."""

    def answer(state: MessagesState) -> dict[str, list[AIMessage]]:
        return {"messages": [AIMessage("Noted.")]}

    with CommonplaceSaver(memory) as saver:
        graph = one_node_graph(answer, checkpointer=saver)
        graph.invoke({"messages": [HumanMessage(f"My locker code is {SECRET}.")]}, ANA_RUN)
        graph.invoke({"messages": [HumanMessage("Thanks!")]}, ANA_RUN)  # answers the first
        (note,) = memory.store.recent_records(ANA, kinds=[Kind.NOTE], limit=5)
        assert SECRET in note.text
        memory.forget(note.id, scope=ANA)
        saver.delete_thread("t1")
    memory.close()
    assert_gone(path, SECRET)
