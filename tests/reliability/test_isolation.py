"""No result ever comes from another scope, whatever the scopes, queries and calls.

Hypothesis writes turns into random scopes drawn from values built to escape (SQL
fragments, LIKE and glob wildcards, path separators, case and unicode look-alikes,
invisible characters, the longest value allowed), then asks every read and write entry
point of the core API from random query scopes. Each turn carries a marker word, so
whatever a call returns, and every line of the compiled context, can be traced back to
the scope it came from. Scope values that are refused are refused with
``InvalidScopeError``; everything else is plain data, compared for equality only.
"""

from __future__ import annotations

import re
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from reliability_support import (
    BUSY,
    DOINGS,
    NAMES,
    RELATIONS,
    SIZES,
    dump,
    marker,
    profile,
    tally,
    url_of,
)

from commonplace import Kind, Memory, Recall, Scope
from commonplace._scope import owner_scope as card_scope
from commonplace.errors import InvalidScopeError, InvalidTypeError, NotFoundError
from commonplace.stores._sqlite_rows import scope_from_parts

USERS = (
    "ana",
    "bob",
    "ana ",
    " ana",
    "ANA",
    "аna",  # Cyrillic a
    "ａｎａ",  # fullwidth
    "ana\u200b",  # zero-width space
    "ana\u202e",  # right-to-left override
    "ana%",
    "%",
    "_",
    "*",
    "?",
    "ana' OR '1'='1",
    'ana"; DROP TABLE records; --',
    "ana/../bob",
    "ana\\",
    "ana.bob",
    "a" * 256,
)
AGENTS = (None, "coach", "*", "%", "coach\u200d", "coach' --")
THREADS = (None, "t1", "t2", "T1", "t1%", "t1 OR 1=1", "t_")
SECTIONS = (
    "Profile",
    "Conversation so far",
    "Disagreements",
    "Always remembered",
    "Recent notes",
    "Relevant notes",
)
MARKER = re.compile(r"zx\d{7}q")


def scopes() -> st.SearchStrategy[Scope]:
    return (
        st.tuples(
            st.sampled_from((None, *USERS)), st.sampled_from(AGENTS), st.sampled_from(THREADS)
        )
        .filter(any)
        .map(lambda p: Scope(user=p[0], agent=p[1], thread=p[2]))
    )


def queries(written: int) -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(0, max(0, written - 1)).map(marker),  # another turn's marker word
        st.sampled_from([*NAMES, *DOINGS, *RELATIONS]),
        st.sampled_from(['"', "*", "NEAR(a b)", "a OR b", "-x", "col:val", "' OR 1=1 --", "%"]),
        st.text(min_size=1, max_size=40).filter(str.strip),
    )


def write_text(n: int, pick: int) -> str:
    rel, name = RELATIONS[pick % len(RELATIONS)], NAMES[(pick // 7) % len(NAMES)]
    doing = DOINGS[(pick // 11) % len(DOINGS)]
    if pick % 5 == 0:
        return f"Can you draft my weekly report {marker(n)}?"
    return f"My {rel} {name} {doing} {marker(n)}."


@contextmanager
def fresh_store() -> Iterator[tuple[Path, Memory]]:
    with tempfile.TemporaryDirectory(prefix="cp-isolation-") as folder:
        path = Path(folder) / "m.db"
        with Memory(url_of(path), config=BUSY) as memory:
            yield path, memory


def stored_scopes(path: Path) -> dict[str, Scope]:
    """The scope of every episode and record id, read from the file itself."""
    db = sqlite3.connect(path)
    try:
        return {
            rid: scope_from_parts(u, a, t)
            for table in ("episodes", "records")
            for rid, u, a, t in db.execute(
                f"SELECT id, scope_user, scope_agent, scope_thread FROM {table}"
            )
        }
    finally:
        db.close()


def leaks(recall: Recall, query: Scope, owner: dict[str, Scope], marks: dict[str, Scope]) -> list:
    """Everything a recall shows that ``query`` may not see."""
    out = []
    shown = [i.record for i in recall.items] + list(recall.hot) + list(recall.recent)
    out += [("record", r.id, r.scope) for r in shown if not query.contains(r.scope)]
    out += [
        ("included", i, owner.get(i))
        for i in recall.included
        if i not in owner or not query.contains(owner[i])
    ]
    section = None
    for line in recall.text.splitlines():
        if line.endswith(":") and line[:-1] in SECTIONS:
            section = line[:-1]
            continue
        # the profile card belongs to the user (and agent) across threads, by design
        allowed = card_scope(query) if section == "Profile" else query
        out += [
            ("context", section, m, line)
            for m in MARKER.findall(line)
            if m not in marks or not allowed.contains(marks[m])
        ]
    return out


@given(data=st.data())
@profile(SIZES.isolation_examples)
def test_no_call_ever_returns_or_touches_another_scope(data: st.DataObject) -> None:
    writes = data.draw(
        st.lists(
            st.tuples(
                scopes(), st.integers(0, 10_000), st.sampled_from(("user", "user", "assistant"))
            ),
            min_size=1,
            max_size=14,
        ),
        label="writes",
    )
    with fresh_store() as (path, memory):
        marks: dict[str, Scope] = {}
        for n, (scope, pick, role) in enumerate(writes):
            memory.write(write_text(n, pick), scope=scope, role=role)
            marks[marker(n)] = scope
        for _ in range(data.draw(st.integers(1, 4), label="recalls")):
            query = data.draw(scopes(), label="query scope")
            text = data.draw(queries(len(writes)), label="query")
            owner = stored_scopes(path)
            found = memory.recall(text, scope=query, top_k=data.draw(st.integers(1, 20)))
            assert leaks(found, query, owner, marks) == [], (query, text, found.text)
            tally("isolation: recalls checked")
        query = data.draw(scopes(), label="lifecycle scope")
        for action in memory.consolidate(scope=query).actions + memory.sleep(scope=query).actions:
            if action.record_id.startswith(("sm_", "pr_")) and action.action != "reject_sentence":
                chain = memory.explain(action.record_id)
                assert query.contains(chain.record.scope), action
                assert all(query.contains(node.record.scope) for node in chain.walk()), action
        owner = stored_scopes(path)
        for rid, scope in owner.items():
            visible = query.contains(scope)
            if visible:
                assert memory.explain(rid, scope=query).record.id == rid
                continue
            before = dump(path)
            for call in (
                lambda rid=rid: memory.explain(rid, scope=query),
                lambda rid=rid: memory.forget(rid, scope=query),
                lambda rid=rid: memory.pin(rid, scope=query),
            ):
                with pytest.raises(NotFoundError):
                    call()
            assert dump(path) == before, f"a refused call on {rid} changed the store"
        for kind in (Kind.EPISODE, Kind.NOTE):
            expected = _count(path, kind, query)
            assert memory.count(kind, scope=query) == expected
        assert all(query.contains(e.scope) for e in memory.audit(scope=query, limit=1000))
        assert all(query.contains(c.scope) for c in memory.conflicts(scope=query, open_only=False))
        # forgetting a scope takes exactly what it sees: every other episode stays
        gone = data.draw(scopes(), label="forgotten scope")
        keep = {
            rid
            for rid, s in stored_scopes(path).items()
            if rid.startswith("ep_") and not gone.contains(s)
        }
        memory.forget_scope(gone)
        after = stored_scopes(path)
        assert not [r for r, s in after.items() if gone.contains(s)]
        assert keep <= set(after)
        tally("isolation: stores checked")


def _count(path: Path, kind: Kind, query: Scope) -> int:
    db = sqlite3.connect(path)
    try:
        if kind is Kind.EPISODE:
            rows = db.execute("SELECT scope_user, scope_agent, scope_thread FROM episodes")
        else:
            rows = db.execute(
                "SELECT scope_user, scope_agent, scope_thread FROM records "
                "WHERE kind = ? AND status = 'active'",
                (kind.value,),
            )
        return sum(1 for parts in rows if query.contains(scope_from_parts(*parts)))
    finally:
        db.close()


@pytest.mark.parametrize("value", [u for u in USERS if u != "ana"])
def test_an_escaping_scope_value_is_plain_data(tmp_path: Path, value: str) -> None:
    """Each hostile value is its own scope, stored exactly, seeing only itself."""
    with Memory(url_of(tmp_path / "m.db"), config=BUSY) as memory:
        memory.write(f"My sister Mia plays chess {marker(1)}.", scope="ana")
        memory.write(f"My friend Tom bakes bread {marker(2)}.", scope=value)
        memory.write(
            f"My boss Karen studies law {marker(3)}.", scope={"user": value, "thread": "t1"}
        )
        for query in (value, {"user": value}, Scope(user=value, thread="t1")):
            found = memory.recall(f"{marker(1)} Mia chess Tom Karen", scope=query)
            assert marker(1) not in found.text
            assert {i.record.scope.user for i in found.items} <= {value}
        assert memory.count(Kind.EPISODE, scope=value) == 2
        assert memory.count(Kind.EPISODE, scope="ana") == 1
        (episode,) = memory.explain(
            memory.recall(marker(2), scope=value).items[0].record.id
        ).episodes()
        assert episode.scope.user == value  # byte for byte


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ({}, InvalidScopeError),
        ("", InvalidScopeError),
        ({"user": ""}, InvalidScopeError),
        ({"user": "a\x00b"}, InvalidScopeError),
        ({"user": "a\nb"}, InvalidScopeError),
        ({"user": "\x1f"}, InvalidScopeError),
        ({"user": "\ud800"}, InvalidScopeError),
        ({"user": "a" * 257}, InvalidScopeError),
        ({"tenant": "ana"}, InvalidScopeError),
        ({"user": "ana", "role": "admin"}, InvalidScopeError),
        ({"user": ["ana"]}, InvalidTypeError),
        ({"user": 1}, InvalidTypeError),
        (42, InvalidTypeError),
        (None, InvalidTypeError),
        (b"ana", InvalidTypeError),
    ],
)
def test_malformed_scopes_are_refused_everywhere(
    tmp_path: Path, bad: object, error: type[Exception]
) -> None:
    path = tmp_path / "m.db"
    with Memory(url_of(path), config=BUSY) as memory:
        memory.write("My sister Mia plays chess.", scope="ana")
        found = memory.recall("Mia", scope="ana")
        before = dump(path)
        calls = [
            lambda: memory.write("I live in Oslo.", scope=bad),  # type: ignore[arg-type]
            lambda: memory.turn("I live in Oslo.", scope=bad),  # type: ignore[arg-type]
            lambda: memory.recall("Mia", scope=bad),  # type: ignore[arg-type]
            lambda: memory.consolidate(scope=bad),  # type: ignore[arg-type]
            lambda: memory.sleep(scope=bad),  # type: ignore[arg-type]
            lambda: memory.forget_scope(bad),  # type: ignore[arg-type]
            lambda: memory.forget(found.included[0], scope=bad),  # type: ignore[arg-type]
            lambda: memory.pin(found.included[0], scope=bad),  # type: ignore[arg-type]
            lambda: memory.profile(scope=bad),  # type: ignore[arg-type]
        ]
        if bad is not None:  # for these two, no scope (None) means the whole store
            calls.append(lambda: memory.count(Kind.NOTE, scope=bad))  # type: ignore[arg-type]
            calls.append(
                lambda: memory.explain(found.included[0], scope=bad)  # type: ignore[arg-type]
            )
        for call in calls:
            with pytest.raises(error):
                call()
        assert dump(path) == before
