"""A saved vector graph is a cache that proves itself (docs/guarantees.md, sections 6 and 7).

The graphs of large scopes are saved beside the store's file (``<file>.vectors/``). A saved
graph is used only when its file has the checksum its manifest names and the scope's rows
are still those it was saved from; anything else is rebuilt from the rows. A graph file
never holds the vector of a deleted row, whichever process deleted it.

Recalls on damaged files run in a child process: usearch reading a damaged file killed the
process with SIGSEGV, which here is the child's exit code, a failure, not a lost pytest.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from functools import cache
from pathlib import Path

import crash_child
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from reliability_support import BUSY, SIZES, profile, tally, url_of

from commonplace import Memory

ANN_ROWS = "40"  # a scope of 40 vectors moves into a graph
TOPICS = ["chess", "jazz", "ramen", "kayaks", "tomatoes", "violins", "kittens", "tango"]
QUERIES = ["chess", "jazz club", "ramen on day 7", "kayaks and tango", "violins"]


def _notes(memory: Memory, user: str, n: int, *, shift: int = 0) -> None:
    for i in range(n):
        topic = TOPICS[(i + shift) % len(TOPICS)]
        memory.write(
            f"My friend number {i + shift} from {user}'s club loves {topic} on day {i}.",
            scope=user,
        )


def _store_with_graphs(
    path: Path, monkeypatch: pytest.MonkeyPatch, *, from_all_rows: bool = False
) -> None:
    """120 notes of ana and 60 of bo, each scope's graph built (by a recall) and saved;
    ``from_all_rows``: each graph built from all its scope's rows at once, as a rebuild
    builds it (not from the first 40 while the notes are written)."""
    monkeypatch.setenv("COMMONPLACE_ANN_ROWS", "off" if from_all_rows else ANN_ROWS)
    with Memory(url_of(path), config=BUSY) as memory:
        _notes(memory, "ana", 120)
        _notes(memory, "bo", 60)
    monkeypatch.setenv("COMMONPLACE_ANN_ROWS", ANN_ROWS)
    with Memory(url_of(path), config=BUSY) as memory:
        memory.recall("chess", scope="ana")
        memory.recall("chess", scope="bo")
    assert len(list(_folder(path).glob("*.usearch"))) == 2


def _folder(path: Path) -> Path:
    return path.parent / (path.name + ".vectors")


def _saved_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(_folder(path).glob("*")))


def _vectors(path: Path, where: str, *params: str) -> dict[str, bytes]:
    db = sqlite3.connect(path)
    try:
        return dict(
            db.execute(
                f"SELECT id, vector FROM records WHERE vector IS NOT NULL AND {where}", params
            )
        )
    finally:
        db.close()


def _in_child(target: object, *args: object) -> None:
    child = crash_child.start(target, *args)
    child.join(120)
    assert child.exitcode == 0, f"the child ended with {child.exitcode} (negative: a signal)"


def _recalled(store: Path, out: Path) -> list[list[str]]:
    _in_child(crash_child.recall_ids, str(store), ANN_ROWS, "ana", QUERIES, str(out))
    return list(json.loads(out.read_text("utf-8")))


# -- (a) a damaged graph file is never read ---------------------------------------------------


@cache
def _base(root: str) -> tuple[Path, list[list[str]]]:
    """A store with saved graphs (built once), and what its recalls find with graphs
    rebuilt from the rows."""
    folder = Path(root)
    store = folder / "base" / "m.db"
    store.parent.mkdir(parents=True)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _store_with_graphs(store, monkeypatch, from_all_rows=True)
    rebuilt = folder / "rebuilt"
    shutil.copytree(store.parent, rebuilt)
    shutil.rmtree(_folder(rebuilt / "m.db"))
    expected = _recalled(rebuilt / "m.db", folder / "rebuilt.json")
    intact = folder / "intact"
    shutil.copytree(store.parent, intact)
    # the test's premise: a graph read from its file answers as one rebuilt from the rows
    assert _recalled(intact / "m.db", folder / "intact.json") == expected
    return store, expected


_DAMAGE = st.one_of(
    st.tuples(
        st.just("flip"),
        st.lists(st.tuples(st.floats(0, 1), st.integers(1, 255)), min_size=1, max_size=8),
    ),
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("append"), st.binary(min_size=1, max_size=64)),
)


def _damage(data: bytes, damage: tuple[str, object]) -> bytes:
    kind, how = damage
    if kind == "append":
        assert isinstance(how, bytes)
        return data + how
    if kind == "truncate":
        assert isinstance(how, float)
        return data[: min(len(data) - 1, int(how * len(data)))]
    out = bytearray(data)
    assert isinstance(how, list)
    for where, mask in how:
        out[min(len(out) - 1, int(where * len(out)))] ^= mask
    return bytes(out)


@profile(max(30, SIZES.fuzz_examples // 5))
@given(damage=_DAMAGE, manifest=st.booleans(), scope=st.sampled_from(["ana", "bo"]))
def test_a_damaged_graph_file_is_rebuilt_and_never_read(
    tmp_path_factory: pytest.TempPathFactory,
    damage: tuple[str, object],
    manifest: bool,
    scope: str,
) -> None:
    """Random byte flips, truncations and appends anywhere in a saved graph's file or its
    manifest: every recall (in a child process) finds what it finds with graphs rebuilt
    from the rows. Before the checksum, 3 of 8 damaged files crashed the recall
    (SIGSEGV inside usearch) and others made it miss a note."""
    store, expected = _base(str(tmp_path_factory.getbasetemp() / "graph-base"))
    work = tmp_path_factory.mktemp("damaged")
    shutil.copytree(store.parent, work, dirs_exist_ok=True)
    copy = work / "m.db"
    # closed at once: a connection to the base left for the garbage collector would, when
    # closed, delete the base's -wal and -shm while a later example copies the folder
    with contextlib.closing(sqlite3.connect(store)) as db:
        (store_id,) = db.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
    target = next(
        p
        for p in sorted(_folder(copy).glob("*.json"))
        if json.loads(p.read_text("utf-8"))["parts"][0] == scope
    )
    if not manifest:
        target = _folder(copy) / json.loads(target.read_text("utf-8"))["file"]
    before = target.read_bytes()
    damaged = _damage(before, damage)
    # two flips of one byte by one value undo each other: that is no damage at all
    assume(damaged != before)
    target.write_bytes(damaged)
    assert store_id  # the copy is of the same store: only the damage can make it refused
    tally("graph files damaged")
    assert _recalled(copy, work / "found.json") == expected
    if not manifest:  # the damaged graph file was dropped (one rebuilt saved instead)
        assert all(p.read_bytes() != damaged for p in _folder(copy).iterdir())


# -- (b) a vector changed in the rows ------------------------------------------------------


def test_a_vector_changed_in_the_rows_rebuilds_the_saved_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One vector of 120 changed in place by hand (the sample of 16 vectors the load
    compares misses it 7 times in 8): the saved graph is not used, but rebuilt."""
    path = tmp_path / "m.db"
    _store_with_graphs(path, monkeypatch)
    old = {p.name for p in _folder(path).glob("*.usearch")}
    db = sqlite3.connect(path)
    seq, blob = db.execute(
        "SELECT seq, vector FROM records WHERE scope_user = 'ana' AND vector IS NOT NULL "
        "ORDER BY seq LIMIT 1 OFFSET 57"
    ).fetchone()
    changed = np.roll(np.frombuffer(blob, np.float32), 5)
    db.execute("UPDATE records SET vector = ? WHERE seq = ?", (changed.tobytes(), seq))
    db.commit()
    db.close()
    with Memory(url_of(path), config=BUSY) as memory:
        memory.recall("chess", scope="ana")
        graphs = dict(memory.backend._index.graphs())  # type: ignore[attr-defined]
        ana = next(ann for parts, ann in graphs.items() if parts[0] == "ana")
        assert np.array_equal(ana.vector(seq), changed)  # the rows' vector, not the file's
        assert ana.dirty or {p.name for p in _folder(path).glob("*.usearch")} - old
        bo = next(ann for parts, ann in graphs.items() if parts[0] == "bo")
        assert not bo.dirty  # another scope's graph is still loaded from its file
    new = {p.name for p in _folder(path).glob("*.usearch")}
    assert len(new) == 2 and len(new & old) == 1  # ana's saved anew, bo's kept


# -- (c) a forgotten vector is never saved again --------------------------------------------


def _to_forget(path: Path, scope: str, *, every: bool) -> tuple[list[str], list[bytes]]:
    """The ids of the notes a test forgets (``every`` note of the scope, or ten of those
    its saved graph holds: the last few of a scope wait outside it, unsaved), and their
    vectors."""
    notes = _vectors(path, "scope_user = ? AND kind = 'note'", scope)
    saved = _saved_bytes(path)
    held = [rid for rid in sorted(notes) if notes[rid] in saved]
    assert len(held) >= 40  # the saved graph holds the scope's notes
    chosen = sorted(notes) if every else held[10:20]
    return chosen, [notes[rid] for rid in chosen]


@pytest.mark.parametrize("how", ["forget", "forget_scope", "forget unread", "forget then write"])
def test_a_forgotten_vector_is_in_no_graph_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Forget notes (or a scope) in a process that holds the graphs (or, ``unread``, one
    that never searched), close: no saved graph file holds a forgotten vector's bytes, and
    the next process finds none of them."""
    path = tmp_path / "m.db"
    _store_with_graphs(path, monkeypatch)
    scope = "bo" if how == "forget_scope" else "ana"
    chosen, gone = _to_forget(path, scope, every=how == "forget_scope")
    with Memory(url_of(path), config=BUSY) as memory:
        if how != "forget unread":
            memory.recall("chess", scope=scope)
        if how == "forget_scope":
            memory.forget_scope(scope)
        for rid in [] if how == "forget_scope" else chosen:
            memory.forget(rid, scope=scope)
        if how == "forget then write":  # the graph grows (merged), so it is changed
            _notes(memory, "ana", 45, shift=3)
            memory.recall("jazz", scope="ana")
        assert not any(v in _saved_bytes(path) for v in gone)  # none now
    assert not any(v in _saved_bytes(path) for v in gone)  # none after the close either
    with Memory(url_of(path), config=BUSY) as memory:  # and a new process finds none
        found = {i.record.id for q in QUERIES for i in memory.recall(q, scope="ana").items}
    assert found and not found & set(chosen)
    saved = _saved_bytes(path)
    assert saved and not any(v in saved for v in gone)  # nor any graph saved since
    tally("forgotten vectors looked for in graph files", len(gone))


# -- (d) two processes ---------------------------------------------------------------------


@pytest.mark.parametrize("how", ["forget", "forget_scope"])
def test_a_graph_held_while_another_process_forgets_is_not_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A holds ana's graph (it recalled); B, another process, forgets some of ana's notes
    (or all of ana) and closes; A then writes enough to grow its graph and closes. A's graph
    still holds what B erased: it is not saved, no graph file holds an erased vector, and
    the next process finds no forgotten note."""
    path = tmp_path / "m.db"
    _store_with_graphs(path, monkeypatch)
    chosen, gone = _to_forget(path, "ana", every=how == "forget_scope")
    with Memory(url_of(path), config=BUSY) as memory:
        memory.recall("chess", scope="ana")  # A holds the graph
        held = dict(memory.backend._index.graphs())  # type: ignore[attr-defined]
        assert any(parts[0] == "ana" for parts in held)
        _in_child(
            crash_child.forget_in_child,
            str(path),
            ANN_ROWS,
            "ana",
            [] if how == "forget_scope" else chosen,
        )
        assert not any(v in _saved_bytes(path) for v in gone)
        _notes(memory, "ana", 45, shift=5)  # merged into A's graph: it changed
        memory.recall("jazz", scope="ana")
        assert all(ann.dirty for parts, ann in held.items() if parts[0] == "ana")
    saved = _saved_bytes(path)
    assert not any(v in saved for v in gone)
    with Memory(url_of(path), config=BUSY) as memory:
        found = {i.record.id for q in QUERIES for i in memory.recall(q, scope="ana").items}
        assert found  # the 45 new notes
    assert not found & set(chosen)


# -- (e) any sequence of forgets, writes and reopenings --------------------------------------

_STEP = st.one_of(
    st.tuples(st.just("forget"), st.sampled_from(["ana", "bo"]), st.integers(0, 10_000)),
    st.tuples(st.just("forget kept turn"), st.sampled_from(["ana", "bo"]), st.integers(0, 10_000)),
    st.tuples(st.just("forget scope"), st.sampled_from(["ana", "bo"]), st.just(0)),
    st.tuples(st.just("recall"), st.sampled_from(["ana", "bo"]), st.integers(0, 4)),
    st.tuples(st.just("write"), st.sampled_from(["ana", "bo"]), st.integers(1, 45)),
    st.tuples(st.just("reopen"), st.just(""), st.just(0)),
)


@profile(max(8, SIZES.fuzz_examples // 15))
@given(steps=st.lists(_STEP, min_size=1, max_size=8))
def test_no_sequence_of_forgets_leaves_an_erased_vector_in_a_graph_file(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, str, int]]
) -> None:
    """Forgets of notes (with or without their turns) and of whole scopes, interleaved with
    recalls, writes that grow the graphs and reopenings, in any order: after every step and
    after the last close, no saved graph file holds the vector of a note that was forgotten
    (its float32 bytes, as the rows held them)."""
    base, _ = _base(str(tmp_path_factory.getbasetemp() / "graph-base"))
    folder = tmp_path_factory.mktemp("sequence")
    shutil.copytree(base.parent, folder, dirs_exist_ok=True)
    path = folder / "m.db"
    gone: list[bytes] = []
    written = 0
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("COMMONPLACE_ANN_ROWS", ANN_ROWS)
        memory = Memory(url_of(path), config=BUSY)
        try:
            for action, scope, n in steps:
                if action == "reopen":
                    memory.close()
                    memory = Memory(url_of(path), config=BUSY)
                elif action == "recall":
                    memory.recall(QUERIES[n], scope=scope)
                elif action == "write":
                    _notes(memory, scope, n, shift=1_000 + written)
                    written += n
                elif action == "forget scope":
                    gone += _vectors(path, "scope_user = ?", scope).values()
                    memory.forget_scope(scope)
                else:
                    notes = _vectors(path, "scope_user = ? AND kind = 'note'", scope)
                    if not notes:
                        continue
                    rid = sorted(notes)[n % len(notes)]
                    gone.append(notes[rid])
                    memory.forget(rid, scope=scope, include_evidence=action == "forget")
                assert not any(v in _saved_bytes(path) for v in gone), action
        finally:
            memory.close()
    saved = _saved_bytes(path)
    assert not any(v in saved for v in gone)
    tally("forget sequences checked against graph files")
    tally("forgotten vectors looked for in graph files", len(gone))
