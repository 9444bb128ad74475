"""The embedded SQLite store: persistence, the embedder pin, schema versions, bad files."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

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


@pytest.mark.parametrize("common", [50, 10_000])
def test_a_word_in_thousands_of_records_is_left_out_of_the_any_word_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, common: int
) -> None:
    """Ranking every record that holds a common word cost most of a recall at 100k notes:
    the any-word search leaves such a word out, the all-words search still uses it. (The
    bound is lowered to 50 here, and raised past the store's size to show the difference.)"""
    from commonplace import Scope
    from commonplace.stores import EmbedderPin, SQLiteBackend, TurnWrite, _sqlite
    from commonplace.testing import episode, note

    monkeypatch.setattr(_sqlite, "_COMMON_TERM_ROWS", common)

    scope = Scope(user="ana")
    texts = [f"tram ride {i} in lisbon" for i in range(51)]
    texts += ["a zanzibar spice market", "lisbon and zanzibar both"]
    turns = [episode(scope, text) for text in texts]
    writes = [TurnWrite(turn, note(turn, turn.text)) for turn in turns]
    with SQLiteBackend(tmp_path / "m.db") as backend:
        backend.write_pin(EmbedderPin("test-embedder", 32))
        vectors = np.zeros((len(texts), 32), np.float32)
        vectors[:, 0] = 1.0
        backend.write_turns(writes, vectors)
        query = np.zeros(32, np.float32)
        query[1] = 1.0  # orthogonal to every note: only keyword hits carry information
        hits = backend.search(scope, query, text="lisbon zanzibar", limit=5)
        by_keyword = {h.record.text for h in hits if h.keyword}
        # both words: found by the all-words search; only the rare word: by the any-word one
        zanzibar = {"lisbon and zanzibar both", "a zanzibar spice market"}
        if common == 50:
            assert by_keyword == zanzibar
        else:  # lisbon is not common in a store of 53 records: it joins the any-word search
            assert by_keyword > zanzibar
        # a query of common words alone still finds records holding all of them
        hits = backend.search(scope, query, text="lisbon tram", limit=3)
        assert sum(h.keyword for h in hits) == 3
