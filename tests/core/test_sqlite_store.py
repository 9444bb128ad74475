"""The embedded SQLite store: persistence, the embedder pin, schema versions, bad files."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from commonplace import Config, HashingEmbedder, Kind, ManualClock, Memory
from commonplace.embedders import Vectors
from commonplace.errors import (
    CorruptStoreError,
    EmbedderMismatchError,
    SchemaVersionError,
    StoreClosedError,
    StoreError,
)
from commonplace.stores._sqlite_schema import SCHEMA_VERSION

SEARCH_ALWAYS = Config(search_min_notes=0)


class TinyEmbedder:
    name = "tiny-test-embedder-v1"
    dim = 8

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), np.float32)
        for row, text in enumerate(texts):
            for ch in text.lower():
                out[row, ord(ch) % self.dim] += 1.0
        return out


def test_records_survive_reopening_and_are_seen_by_a_second_instance(
    tmp_path: Path, clock: ManualClock
) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with (
        Memory(url, clock=clock) as writer,
        Memory(url, clock=clock, config=SEARCH_ALWAYS) as reader,
    ):
        assert reader.recall("Lisbon", scope="ana").items == ()
        writer.write("I live in Lisbon.", scope="ana")
        # the reader's vector cache catches up with rows another connection wrote
        assert [i.record.text for i in reader.recall("live Lisbon", scope="ana").items] == [
            "The user lives in Lisbon."
        ]
    with Memory(url, clock=clock) as again:
        assert again.count(Kind.NOTE) == 1 and again.count(Kind.EPISODE) == 1


def test_the_store_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    Memory(f"sqlite:///{path}").close()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_the_embedder_is_pinned_and_another_one_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with Memory(url, embedder=TinyEmbedder()) as memory:
        memory.write("I live in Lisbon.", scope="ana")
    with pytest.raises(EmbedderMismatchError, match="tiny-test-embedder-v1"):
        Memory(url)  # the default embedder is not the pinned one, and no plugin provides it
    with pytest.raises(EmbedderMismatchError, match="pinned"):
        Memory(url, embedder=HashingEmbedder(dim=64))
    with Memory(url, embedder=TinyEmbedder()) as memory:
        assert memory.count(Kind.NOTE) == 1


def test_a_store_pinned_to_a_builtin_embedder_reopens_without_naming_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    Memory(url, embedder=HashingEmbedder(dim=64)).close()
    with Memory(url) as memory:
        assert memory.embedder.name == "commonplace-hashing-v1-64" and memory.embedder.dim == 64


def test_a_newer_schema_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    Memory(f"sqlite:///{path}").close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    before = path.read_bytes()
    with pytest.raises(SchemaVersionError, match="upgrade commonplace"):
        Memory(f"sqlite:///{path}")
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "content", [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 3000]
)
def test_garbage_files_are_refused_and_not_overwritten(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "m.db"
    path.write_bytes(content)
    with pytest.raises(CorruptStoreError, match="will not overwrite"):
        Memory(f"sqlite:///{path}")
    assert path.read_bytes() == content


def test_another_applications_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "theirs.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE invoices (id INTEGER)")
    db.commit()
    db.close()
    with pytest.raises(CorruptStoreError, match="not a commonplace store"):
        Memory(str(path))
    assert sqlite3.connect(path).execute("SELECT name FROM sqlite_master").fetchall() == [
        ("invoices",)
    ]


def test_a_truncated_store_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(f"sqlite:///{path}") as memory:
        memory.write_many(
            [memory.turn(f"I planted tree number {i}.", scope="ana") for i in range(300)]
        )
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(CorruptStoreError), Memory(f"sqlite:///{path}") as memory:
        memory.recall("tree", scope="ana")


def test_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        Memory(f"sqlite:///{tmp_path / 'nope' / 'm.db'}")


def test_a_closed_memory_refuses_calls(memory: Memory) -> None:
    memory.close()
    memory.close()  # twice is fine
    with pytest.raises(StoreClosedError):
        memory.write("I live in Lisbon.", scope="ana")
    with pytest.raises(StoreClosedError):
        memory.recall("Lisbon", scope="ana")


def test_in_memory_stores_work_for_tests() -> None:
    for url in (":memory:", "sqlite:///:memory:"):
        with Memory(url) as memory:
            memory.write("I live in Lisbon.", scope="ana")
            assert memory.count(Kind.NOTE) == 1


def test_url_conventions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Memory("sqlite:///relative.db").close()
    assert (tmp_path / "relative.db").exists()
    Memory(f"sqlite:///{tmp_path}/absolute.db").close()
    assert (tmp_path / "absolute.db").exists()
    Memory(tmp_path / "pathlib.db").close()
    assert (tmp_path / "pathlib.db").exists()


def test_default_url_is_in_the_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COMMONPLACE_URL", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    with Memory() as memory:
        memory.write("I live in Lisbon.", scope="ana")
    assert (tmp_path / "data" / "commonplace" / "memory.db").exists()
    monkeypatch.setenv("COMMONPLACE_URL", f"sqlite:///{tmp_path}/env.db")
    Memory().close()
    assert (tmp_path / "env.db").exists()


def test_a_version_1_store_is_migrated_and_its_records_stay_findable(tmp_path: Path) -> None:
    import json as _json

    from commonplace.stores._sqlite_schema import APPLICATION_ID, MIGRATIONS

    path = tmp_path / "v1.db"
    db = sqlite3.connect(path, isolation_level=None)
    MIGRATIONS[0](db)
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute("PRAGMA user_version = 1")
    vector = HashingEmbedder().embed(["sourdough starter named Clint"])[0]
    db.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [("embedder.name", HashingEmbedder().name), ("embedder.dim", "256")],
    )
    db.execute(
        "INSERT INTO episodes (id, scope_user, scope_agent, scope_thread, role, text, at, "
        "meta) VALUES ('ep_1', 'ana', '', '', 'user', 'My sourdough starter is Clint.', "
        "0, '{}')"
    )
    tags = _json.dumps({"modality": "statement", "entities": ["Clint"], "importance": 0.5})
    db.execute(
        "INSERT INTO records (id, kind, scope_user, scope_agent, scope_thread, text, tags, "
        "tier, created_at, last_access, vector) VALUES ('nt_1', 'note', 'ana', '', '', "
        "'The user''s sourdough starter is named Clint.', ?, 'warm', 0, 0, ?)",
        (tags, vector.tobytes()),
    )
    db.execute("INSERT INTO provenance VALUES ('nt_1', 'ep_1')")
    db.close()
    with Memory(f"sqlite:///{path}", config=SEARCH_ALWAYS) as memory:
        (item,) = memory.recall("Clint", scope="ana").items
        assert item.record.id == "nt_1" and item.score.keyword == 1.0
        assert memory.recall("Clint", scope="bob").items == ()
        assert [e.id for e in memory.explain("nt_1").episodes()] == ["ep_1"]
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


@pytest.mark.parametrize("bound", [50, 60, 10_000])
def test_the_any_word_search_keeps_the_rarest_words_while_their_matches_fit_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: int
) -> None:
    """Ranking every record that holds a common word cost most of a recall at 100k notes:
    in a store larger than the bound the keyword search keeps the rarest words while the
    records they match add up to the bound. (The bound is lowered here, and raised past
    the store's size to show the difference.)"""
    from commonplace import Scope
    from commonplace.stores import EmbedderPin, SQLiteBackend, TurnWrite, WriteBatch, _sqlite
    from commonplace.testing import episode, note

    monkeypatch.setattr(_sqlite, "_ANY_WORD_ROWS", bound)

    scope = Scope(user="ana")
    # lisbon: 52 records, tram: 51, zanzibar: 2, ferry: 8
    texts = [f"tram ride {i} in lisbon" for i in range(51)]
    texts += ["a zanzibar spice market", "lisbon and zanzibar both"]
    texts += [f"ferry crossing number {i}" for i in range(8)]
    turns = [episode(scope, text) for text in texts]
    writes = [TurnWrite(turn, note(turn, turn.text)) for turn in turns]
    with SQLiteBackend(tmp_path / "m.db") as backend:
        backend.write_pin(EmbedderPin("test-embedder", 32))
        vectors = np.zeros((len(texts), 32), np.float32)
        vectors[:, 0] = 1.0
        backend.apply(WriteBatch(writes, vectors))
        query = np.zeros(32, np.float32)
        query[1] = 1.0  # orthogonal to every note: only keyword hits carry information
        hits = backend.search(scope, query, text="lisbon zanzibar ferry", limit=20)
        by_keyword = {h.record.text for h in hits if h.keyword}
        zanzibar = {"lisbon and zanzibar both", "a zanzibar spice market"}
        ferries = {t for t in texts if t.startswith("ferry")}
        if bound in (50, 60):
            # zanzibar and ferry (2 + 8 matches) fit; lisbon (52 more) does not
            assert by_keyword == zanzibar | ferries
        else:  # nothing is common in a store of 61 records: lisbon joins the search too
            assert by_keyword > zanzibar | ferries
        # a query of common words alone: none by keyword when each word matches more
        # records than the bound (50); at 60 the rarer, tram (51), fits and finds them
        hits = backend.search(scope, query, text="lisbon tram", limit=3)
        assert sum(h.keyword for h in hits) == (0 if bound == 50 else 3)


@contextlib.contextmanager
def _keyword_only_store(tmp_path: Path, turns: list[Any]) -> Iterator[tuple[Any, Any]]:
    """A store of one note per turn, every vector alike, and a query vector orthogonal
    to all of them: only keyword hits carry information."""
    from commonplace.stores import EmbedderPin, SQLiteBackend, TurnWrite, WriteBatch
    from commonplace.testing import note

    with SQLiteBackend(tmp_path / "m.db") as backend:
        backend.write_pin(EmbedderPin("test-embedder", 32))
        vectors = np.zeros((len(turns), 32), np.float32)
        vectors[:, 0] = 1.0
        backend.apply(WriteBatch([TurnWrite(t, note(t, t.text)) for t in turns], vectors))
        query = np.zeros(32, np.float32)
        query[1] = 1.0
        yield backend, query


def test_the_any_word_search_drops_a_rare_word_whose_matches_pass_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bound is on the matches of the kept words together: two words that each fit
    but not both keep the rarer one only."""
    from commonplace import Scope
    from commonplace.stores import _sqlite
    from commonplace.testing import episode

    monkeypatch.setattr(_sqlite, "_ANY_WORD_ROWS", 10)
    scope = Scope(user="ana")
    texts = [f"ferry crossing number {i}" for i in range(8)]
    texts += [f"a zanzibar market stall {i}" for i in range(4)]
    texts += [f"filler note {i}" for i in range(10)]
    turns = [episode(scope, text) for text in texts]
    with _keyword_only_store(tmp_path, turns) as (backend, query):
        hits = backend.search(scope, query, text="zanzibar ferry", limit=20)
        by_keyword = {h.record.text for h in hits if h.keyword}
        # zanzibar (4) fits the bound of 10, zanzibar and ferry (4 + 8) do not
        assert by_keyword == {t for t in texts if "zanzibar" in t}


def test_keyword_hits_are_the_best_ranked_rows_the_search_may_return(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a large store the keyword index's ranking is not joined to the rows: the row
    read filters it, and when the best-ranked matches are another scope's the next ones
    are read, so the search still has ``limit`` keyword hits of its own scope."""
    from commonplace import Scope
    from commonplace.stores import _sqlite
    from commonplace.testing import episode

    monkeypatch.setattr(_sqlite, "_ANY_WORD_ROWS", 20)
    ana, bob = Scope(user="ana"), Scope(user="bob")
    # bob's notes are short, so BM25 ranks all six above ana's
    texts = [(bob, f"zanzibar {i}") for i in range(6)]
    texts += [(ana, f"a long walk through the zanzibar spice market, stall {i}") for i in range(6)]
    texts += [(ana, f"filler note {i}") for i in range(20)]
    turns = [episode(scope, text) for scope, text in texts]
    with _keyword_only_store(tmp_path, turns) as (backend, query):
        hits = backend.search(ana, query, text="zanzibar", limit=5)
        by_keyword = [h.record for h in hits if h.keyword]
        assert len(by_keyword) == 5
        assert all(r.scope == ana and "zanzibar" in r.text for r in by_keyword)
        # bob's own search finds his, ranked first
        hits = backend.search(bob, query, text="zanzibar", limit=5)
        assert {h.record.text for h in hits if h.keyword} <= {f"zanzibar {i}" for i in range(6)}
        assert sum(h.keyword for h in hits) == 5


def test_vectors_of_records_without_one_are_zeros_sized_by_the_others(tmp_path: Path) -> None:
    """``get_vectors`` sizes its rows by the vectors it reads; a row stored without one
    (NULL) reads as zeros, wherever it comes in the request."""
    from commonplace import Scope
    from commonplace.stores import EmbedderPin, SQLiteBackend, TurnWrite, WriteBatch
    from commonplace.testing import episode, note

    scope = Scope(user="ana")
    turns = [episode(scope, text) for text in ("first note", "second note")]
    with SQLiteBackend(tmp_path / "m.db") as backend:
        backend.write_pin(EmbedderPin("test-embedder", 8))
        vectors = np.eye(2, 8, dtype=np.float32)
        writes = [TurnWrite(t, note(t, t.text)) for t in turns]
        backend.apply(WriteBatch(writes, vectors))
        ids = [w.note.id for w in writes if w.note is not None]
        # SQLite reads rows looked up by id in id order: the first one read has none
        empty = min(ids)
        with backend._transaction() as db:
            db.execute("UPDATE records SET vector = NULL WHERE id = ?", (empty,))
        out = backend.get_vectors(ids)
    assert out.shape == (2, 8)
    for row, rid, vector in zip(out, ids, vectors):
        assert not row.any() if rid == empty else np.array_equal(row, vector)


def test_a_recalls_accesses_and_its_log_are_one_commit(tmp_path: Path) -> None:
    """A batch of the accesses and the log (a recall's end) is one transaction: a log that
    cannot be written leaves the counters as they were."""
    from datetime import datetime, timezone

    from commonplace import Scope
    from commonplace.stores import (
        EmbedderPin,
        LedgerEntry,
        RecordUpdate,
        SQLiteBackend,
        TurnWrite,
        WriteBatch,
    )
    from commonplace.testing import episode, note

    scope = Scope(user="ana")
    turn = episode(scope, "I keep bees.")
    at = datetime(2026, 3, 1, tzinfo=timezone.utc)
    with SQLiteBackend(tmp_path / "m.db") as backend:
        backend.write_pin(EmbedderPin("test-embedder", 8))

        def touch_and_put(entry: LedgerEntry) -> None:
            touched = RecordUpdate([rid], at, counter="access")
            backend.apply(WriteBatch(updates=[touched], entries=[entry]))

        write = TurnWrite(turn, note(turn, turn.text))
        backend.apply(WriteBatch([write], np.eye(1, 8, dtype=np.float32)))
        assert write.note is not None
        rid = write.note.id
        log = LedgerEntry("recall", "rc_1", scope, at, {"retrieved": [rid]})
        touch_and_put(log)
        assert backend.get_records([rid])[0].access_count == 1
        assert backend.ledger.get("recall", "rc_1") is not None
        unwritable = LedgerEntry("recall", "rc_2", scope, at, {"retrieved": object()})
        with pytest.raises(TypeError):
            touch_and_put(unwritable)
        assert backend.get_records([rid])[0].access_count == 1
        assert backend.ledger.get("recall", "rc_2") is None
        # and the store still writes afterwards
        touch_and_put(LedgerEntry("recall", "rc_3", scope, at))
        assert backend.get_records([rid])[0].access_count == 2
