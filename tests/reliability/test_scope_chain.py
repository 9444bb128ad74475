"""Writes stay in their scope chain: no write changes what another user's memory holds.

A query scope sees by containment (``Scope(agent="coach")`` sees every user under the
agent). A write is narrower (``Scope.owns``): a write with a user reaches only that
user's records; a write without one (an anonymous LangGraph run under an agent) reaches
only records that have no user either. Hypothesis writes turns built to collide (one fact
key with different values, repeated sentences that merge, a name given two relations,
updates in words) into scopes with and without users, and after every write checks that
no record, link, card or conflict outside the writer's chain changed. Then a lifecycle run
over a broad scope must not write a summary from two owners' notes, and forgetting one
scope must leave every card that was not written from it as it was.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from reliability_support import BUSY, SIZES, profile, tally, url_of

from commonplace import Memory, Scope
from commonplace._scope import owner_scope
from commonplace.stores._sqlite_rows import scope_from_parts

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
USERS = ("ana", "bob", None)
AGENTS = ("coach", None)
THREADS = ("t1", "anon", None)
TEXTS = (
    "I live in Lisbon.",
    "I live in Porto.",
    "I moved to Paris last week.",
    "My sister Mia is a nurse.",
    "My coworker Mia moved to Berlin.",
    "I am vegetarian.",
    "I'm not vegetarian anymore, I eat fish now.",
    "My favourite tea is sencha.",
    "My manager is Rui.",
    "Tomas is my new manager.",
    "I work at Initech as a data analyst.",
    "Mia and I went hiking in Sintra.",
    "Mia and I went hiking in Sintra.",
    "Mia called me about the Sintra trip.",
    "Mia called me about the Sintra trip.",
)


def scopes() -> st.SearchStrategy[Scope]:
    return (
        st.tuples(st.sampled_from(USERS), st.sampled_from(AGENTS), st.sampled_from(THREADS))
        .filter(lambda p: any(p))
        .map(lambda p: Scope(user=p[0], agent=p[1], thread=p[2]))
    )


# a link names its ends by number; these are their ids
LINKS = (
    "SELECT ea.id, eb.id, l.kind, l.weight FROM links AS l "
    "JOIN link_ends AS ea ON ea.n = l.a JOIN link_ends AS eb ON eb.n = l.b"
)


def _rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Records, links, cards and conflicts, each row with the scope it belongs to."""
    db = sqlite3.connect(path)
    try:
        records = db.execute(
            "SELECT r.id, r.scope_user, r.scope_agent, r.scope_thread, r.text, r.status, "
            "r.superseded_by, r.tags, r.access_count, r.valid_to, "
            "(SELECT group_concat(p.source_id) FROM provenance AS p WHERE p.record_seq = r.seq) "
            "FROM records AS r"
        ).fetchall()
        scope_of = {r[0]: scope_from_parts(r[1], r[2], r[3]) for r in records}
        return {
            "records": [(scope_of[r[0]], r) for r in records],
            "links": [
                (scope_of.get(a), (a, b, kind, weight)) for a, b, kind, weight in db.execute(LINKS)
            ]
            + [(scope_of.get(b), (a, b, kind, weight)) for a, b, kind, weight in db.execute(LINKS)],
            "cards": [
                (scope_from_parts(u, a, t), (u, a, t, kind, text, data))
                for u, a, t, kind, text, data in db.execute(
                    "SELECT scope_user, scope_agent, scope_thread, data ->> '$.kind', "
                    "data ->> '$.text', data -> '$.data' FROM ledger WHERE kind = 'card'"
                )
            ],
            "conflicts": [
                (scope_from_parts(u, a, t), (cid, ids))
                for cid, u, a, t, ids in db.execute(
                    "SELECT key, scope_user, scope_agent, scope_thread, refs FROM ledger "
                    "WHERE kind = 'conflict'"
                )
            ],
        }
    finally:
        db.close()


def _outside(rows: dict[str, list[tuple[Any, ...]]], writer: Scope) -> dict[str, list[Any]]:
    """The rows a write in ``writer`` must leave alone: records, links and conflicts of
    scopes its owner does not own, and cards not written from its notes."""
    owner = owner_scope(writer)
    out: dict[str, list[Any]] = {}
    for table, pairs in rows.items():
        if table == "cards":
            kept = [row for scope, row in pairs if not scope.owns(writer)]
        else:
            kept = [row for scope, row in pairs if scope is not None and not owner.owns(scope)]
        out[table] = sorted(kept, key=repr)
    return out


@given(
    writes=st.lists(st.tuples(scopes(), st.sampled_from(TEXTS)), min_size=4, max_size=16),
    broad=st.sampled_from(
        [Scope(agent="coach"), Scope(user="ana"), Scope(thread="t1"), Scope(thread="anon")]
    ),
    forgotten=scopes(),
)
@profile(SIZES.isolation_examples)
def test_no_write_reaches_outside_its_scope_chain(
    writes: list[tuple[Scope, str]], broad: Scope, forgotten: Scope
) -> None:
    # every example also holds one entity named by three owners under one agent, so a
    # lifecycle run over the agent has something to (wrongly) put in one summary
    prelude = [
        (Scope(user=user, agent="coach", thread="t1"), text)
        for user in ("ana", "bob", None)
        for text in ("Mia and I went hiking in Sintra.", "Mia called me about the Sintra trip.")
    ]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "chain.db"
        with Memory(url_of(path), config=BUSY) as memory:
            for n, (scope, text) in enumerate(prelude + writes):
                before = _outside(_rows(path), scope)
                memory.write(text, scope=scope, at=START + timedelta(minutes=n))
                after = _outside(_rows(path), scope)
                for table in before:
                    assert after[table] == before[table], (n, scope, text, table)
                tally("scope chain: writes checked")
            memory.rewrite_profile(scope=writes[-1][0])
            # a card is written from the notes its scope owns, never from other users'
            rows = _rows(path)
            notes = [s for s, r in rows["records"] if r[0].startswith("nt_") and r[5] == "active"]
            for card, row in rows["cards"]:
                seen = json.loads(row[5]).get("notes_seen", 0)
                assert seen <= sum(card.owns(n) for n in notes), (card, row[3], seen)
                tally("scope chain: cards checked")
            # a lifecycle run over a broad scope never mixes two owners in one summary
            memory.consolidate(scope=broad, at=START + timedelta(days=2))
            for scope, row in _rows(path)["records"]:
                if row[0].startswith("sm_"):
                    summary = memory.explain(row[0]).record
                    sources = [r.scope for r in memory.backend.get_records(summary.provenance)]
                    owners = {owner_scope(s) for s in sources}
                    assert len(owners) == 1 and all(scope.owns(s) for s in sources), row
                    tally("scope chain: summaries checked")
            # forgetting a scope leaves every card that was not written from it as it was
            cards = _rows(path)["cards"]
            noted = {s for s, r in _rows(path)["records"] if r[0].startswith("nt_")}
            untouched = sorted(
                (
                    row
                    for card, row in cards
                    if not any(card.owns(n) for n in noted if forgotten.contains(n))
                    and not forgotten.contains(card)
                ),
                key=repr,
            )
            memory.forget_scope(forgotten)
            left = {repr(row) for _, row in _rows(path)["cards"]}
            assert all(repr(row) in left for row in untouched), forgotten
            tally("scope chain: cards kept through a forget", len(untouched))
            tally("scope chain: stores checked")


@given(
    runs=st.lists(
        st.tuples(
            st.sampled_from(["ana", "bob", None]),
            st.sampled_from(["t1", "anon"]),
            st.sampled_from(TEXTS),
        ),
        min_size=2,
        max_size=10,
    )
)
@profile(max(5, SIZES.isolation_examples // 3))
def test_anonymous_langgraph_runs_never_reach_a_users_memory(
    runs: list[tuple[str | None, str, str]],
) -> None:
    """The same rule through the LangGraph adapter: a run with no ``user_id`` under an
    agent writes beside the users' runs of that agent and changes none of their records."""
    import warnings

    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    from commonplace_langgraph import add_memory_nodes

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "graph.db"
        with Memory(url_of(path), config=BUSY) as memory:
            builder = StateGraph(MessagesState)
            builder.add_node("model", lambda state: {"messages": [AIMessage("Noted.")]})
            builder.add_edge(START, "model")
            builder.add_edge("model", END)
            add_memory_nodes(builder, memory, before="model", after="model", agent="coach")
            graph = builder.compile(checkpointer=InMemorySaver())
            for n, (user, thread, text) in enumerate(runs):
                configurable = {"thread_id": f"{user}-{thread}"}
                if user is not None:
                    configurable["user_id"] = user
                # what the adapter writes in (a run without a user: the agent and thread)
                writer = Scope(user=user, agent="coach", thread=f"{user}-{thread}")
                before = _outside(_rows(path), writer)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # NoUserWarning, on purpose here
                    graph.invoke(
                        {"messages": [HumanMessage(text, id=f"m{n}")]},
                        {"configurable": configurable},
                    )
                after = _outside(_rows(path), writer)
                for table in before:
                    assert after[table] == before[table], (n, user, thread, text, table)
                tally("scope chain: LangGraph runs checked")


# every shape of scope a turn can be written in: each of user, agent and thread set or not
# (at least one), with two values each, so that the broader and narrower scopes of one
# owner are both written
EXACT_USERS = ("ana", "bob", None)
EXACT_AGENTS = ("coach", "bot", None)
EXACT_THREADS = ("t1", "t2", None)
# repeated sentences that merge, statements, and a chat between people whose skipped turns
# are kept as evidence of the latest note of their scope
EVIDENCE_TEXTS = (
    "Long shift again today.",
    "I love hiking in the Alps.",
    "I love hiking in the Alps!",
    "My sister Mia is a nurse.",
    "I adopted a cat named Miso.",
    "Mel: I ran a charity race for mental health last Saturday.",
    "Mel: I ran a charity race for mental health last Saturday.",
    "Caroline: That charity race sounds great, what got you into running so much?",
    "Caroline: That charity race sounds great, what got you into running so much?",
    "Caroline: Did you go with your friends from the hospital?",
    "Caroline: I bet the view from the finish line over the river was amazing!",
    "Mel: Thanks Caroline, running keeps my head clear after long hospital shifts.",
)


def exact_scopes() -> st.SearchStrategy[Scope]:
    return (
        st.tuples(
            st.sampled_from(EXACT_USERS),
            st.sampled_from(EXACT_AGENTS),
            st.sampled_from(EXACT_THREADS),
        )
        .filter(lambda p: any(p))
        .map(lambda p: Scope(user=p[0], agent=p[1], thread=p[2]))
    )


def _evidence(path: Path) -> dict[str, tuple[Scope, tuple[str, ...], str]]:
    """Each note's scope, the scopes of the episodes it holds as evidence, and the words
    it is found by (its tags, where a turn kept as evidence adds its words)."""
    db = sqlite3.connect(path)
    try:
        episodes = {
            eid: repr(scope_from_parts(u, a, t))
            for eid, u, a, t in db.execute(
                "SELECT id, scope_user, scope_agent, scope_thread FROM episodes"
            )
        }
        out = {}
        for rid, u, a, t, tags, sources in db.execute(
            "SELECT r.id, r.scope_user, r.scope_agent, r.scope_thread, r.tags, "
            "(SELECT group_concat(p.source_id) FROM provenance AS p WHERE p.record_seq = r.seq) "
            "FROM records AS r WHERE r.kind = 'note'"
        ):
            held = tuple(sorted(episodes.get(s, s) for s in (sources or "").split(",") if s))
            out[rid] = (scope_from_parts(u, a, t), held, tags)
        return out
    finally:
        db.close()


@given(
    # a few scopes per example (of one owner or not), so that turns meet notes of theirs
    palette=st.lists(exact_scopes(), min_size=1, max_size=3, unique=True),
    writes=st.lists(
        st.tuples(st.integers(0, 2), st.sampled_from(EVIDENCE_TEXTS), st.integers(0, 3)),
        min_size=3,
        max_size=14,
    ),
)
@profile(SIZES.isolation_examples)
def test_merged_evidence_stays_in_the_writers_exact_scope(
    palette: list[Scope], writes: list[tuple[int, str, int]]
) -> None:
    """A turn becomes evidence of a note only of exactly its own scope: a repeat merged
    into a note, a skipped turn kept as evidence of the latest note. A broader turn
    (``user=ana``) never lands in a narrower scope's note (``user=ana, agent=bot,
    thread=t1``), nor a narrower one in a broader's, so ``explain`` and ``forget`` of a
    note reach only its own scope's episodes."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "exact.db"
        with Memory(url_of(path), config=BUSY) as memory:
            at = START
            for n, (pick, text, gap) in enumerate(writes):
                scope = palette[pick % len(palette)]
                at += timedelta(minutes=gap)  # within a session, or the same instant
                before = _evidence(path)
                result = memory.write(text, scope=scope, at=at)
                after = _evidence(path)
                for rid, (owner, held, _) in after.items():
                    # every episode a note holds is of the note's own scope
                    assert set(held) <= {repr(owner)}, (n, scope, text, rid, owner, held)
                for rid, old in before.items():
                    if old[0] != scope and rid in after:
                        # a note of another scope gained no evidence and no words
                        assert after[rid] == old, (n, scope, text, rid)
                if result.note is not None:
                    assert result.note.scope == scope, (n, scope, text, result.note.scope)
                if "kept as evidence" in (result.skipped or ""):
                    tally("scope chain: turns kept as evidence")
                elif result.created and result.note is not None and result.note.created_at < at:
                    tally("scope chain: repeats merged")
                tally("scope chain: evidence writes checked")
            # what explain shows of a note, and so what forget removes, is its own scope's
            for rid, (owner, _, _) in _evidence(path).items():
                episodes = memory.explain(rid, scope=owner).episodes()
                assert all(e.scope == owner for e in episodes), (rid, owner)
                tally("scope chain: notes explained")
