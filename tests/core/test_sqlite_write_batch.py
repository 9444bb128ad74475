"""The SQLite store's batched write: one statement per table, each new episode stored
once and in order, and a turn's note only with its new episode."""

from __future__ import annotations

from pathlib import Path

from commonplace import Scope
from commonplace.stores import SQLiteBackend, TurnWrite, WriteBatch
from commonplace.testing import PIN, episode, note, unit
from commonplace.testing._fixtures import rows

ANA = Scope(user="ana")


def pinned_backend(tmp_path: Path) -> SQLiteBackend:
    backend = SQLiteBackend(tmp_path / "m.db")
    backend.write_pin(PIN)
    return backend


def test_a_batch_stores_each_new_episode_once_in_order_and_its_note_only_then(
    tmp_path: Path,
) -> None:
    backend = pinned_backend(tmp_path)
    a, b, c = (episode(ANA, text) for text in ("first", "second", "third"))
    assert backend.apply(WriteBatch([TurnWrite(a, note(a))], unit(1.0).reshape(1, -1))) == [True]
    # b twice in one batch, a already stored: only the first copy of b is new
    turns = [TurnWrite(b, note(b)), TurnWrite(a, note(a)), TurnWrite(b, note(b)), TurnWrite(c)]
    vectors = rows(unit(0.0, 1.0), unit(1.0), unit(0.0, 1.0))
    assert backend.apply(WriteBatch(turns, vectors)) == [True, False, False, True]
    with backend._reading() as db:
        assert [r[0] for r in db.execute("SELECT id FROM episodes ORDER BY seq")] == [
            a.id,
            b.id,
            c.id,
        ]
        assert [r[0] for r in db.execute("SELECT id FROM records ORDER BY seq")] == [
            note(a).id,
            note(b).id,
        ]
    backend.close()


def test_an_episode_sqlite_ignores_for_another_reason_is_not_reported_new(
    tmp_path: Path,
) -> None:
    backend = pinned_backend(tmp_path)
    kept, dropped = episode(ANA, "kept"), episode(ANA, "dropped by a trigger")
    with backend._transaction() as db:
        db.execute(
            "CREATE TEMP TRIGGER drop_one BEFORE INSERT ON episodes "
            "WHEN NEW.text = 'dropped by a trigger' BEGIN SELECT RAISE(IGNORE); END"
        )
    turns = [TurnWrite(kept, note(kept)), TurnWrite(dropped, note(dropped))]
    assert backend.apply(WriteBatch(turns, rows(unit(1.0), unit(0.0, 1.0)))) == [True, False]
    assert [r.id for r in backend.get_records([note(kept).id, note(dropped).id])] == [note(kept).id]
    backend.close()
