"""The SQLite store's links: weighted pairs of records recalled together.

Apart from the record store because links are a small graph kept beside the records (they
only name record ids), reinforced by recall and decayed by maintenance.

A link names its two ends by number, not by id: ``link_ends`` gives each id a number in
the order ids are first linked. Record ids are hashes, so a key of two ids put every new
link on a random page of both of the links' indexes, and a batch of 500 turns (about
2,000 links) dirtied most of their pages, which every commit writes to the log again. The
write path links a new note to notes a few turns older, so numbered ends put its links at
the end of both indexes; only ``link_ends``' index of ids takes one random page a new id.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime

from .._clock import to_epoch
from ._protocol import Link
from ._sqlite_connection import SQLiteConnection
from ._sqlite_rows import chunks, marks, maybe_datetime


def end_numbers(db: sqlite3.Connection, ids: Iterable[str]) -> dict[str, int]:
    """The numbers of those of ``ids`` that are the end of a link."""
    found: dict[str, int] = {}
    for chunk in chunks(sorted(set(ids))):
        found.update(
            db.execute(f"SELECT id, n FROM link_ends WHERE id IN ({marks(len(chunk))})", chunk)
        )
    return found


def delete_links_of(db: sqlite3.Connection, record_ids: Collection[str]) -> None:
    """Every link with an end in ``record_ids``, and those ends (a forgotten record leaves
    no row naming it; an end kept alive only by a removed link stays until pruned)."""
    numbers = list(end_numbers(db, record_ids).values())
    for chunk in chunks(numbers):
        q = marks(len(chunk))
        db.execute(f"DELETE FROM links WHERE a IN ({q}) OR b IN ({q})", chunk + chunk)
        db.execute(f"DELETE FROM link_ends WHERE n IN ({q})", chunk)


class SQLiteLinks(SQLiteConnection):
    """Links between records, for :class:`~commonplace.stores.SQLiteBackend`."""

    def reinforce_links(
        self, pairs: Sequence[tuple[str, str, str]], *, delta: float, at: datetime
    ) -> None:
        keys = [(*sorted((a, b)), kind) for a, b, kind in pairs if a != b]
        if not keys:
            return
        ends = sorted({end for a, b, _ in keys for end in (a, b)})
        with self._transaction() as db:
            db.executemany("INSERT OR IGNORE INTO link_ends (id) VALUES (?)", [(e,) for e in ends])
            number = end_numbers(db, ends)
            db.executemany(
                "INSERT INTO links (a, b, kind, weight, updated_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (a, b, kind) DO UPDATE SET "
                "weight = min(1.0, weight + ?6), updated_at = excluded.updated_at",
                [
                    (number[a], number[b], kind, min(1.0, delta), to_epoch(at), delta)
                    for a, b, kind in keys
                ],
            )

    def links_of(self, record_ids: Collection[str], *, min_weight: float) -> list[Link]:
        out: dict[tuple[str, str, str], Link] = {}
        with self._reading() as db:
            for chunk in chunks(list(end_numbers(db, record_ids).values())):
                q = marks(len(chunk))
                for a, b, kind, weight, updated in db.execute(
                    "SELECT ea.id, eb.id, l.kind, l.weight, l.updated_at FROM links AS l "
                    "JOIN link_ends AS ea ON ea.n = l.a JOIN link_ends AS eb ON eb.n = l.b "
                    f"WHERE (l.a IN ({q}) OR l.b IN ({q})) AND l.weight >= ?",
                    (*chunk, *chunk, min_weight),
                ):
                    out[(a, b, kind)] = Link(
                        a, b, kind, weight, maybe_datetime(updated) or datetime.min
                    )
        return list(out.values())

    def decay_links(self, *, factor: float, at: datetime) -> None:
        with self._transaction() as db:
            db.execute("UPDATE links SET weight = weight * ?", (factor,))

    def prune_links(self, *, min_weight: float) -> int:
        with self._transaction() as db:
            gone = db.execute(
                "DELETE FROM links WHERE weight < ? RETURNING a, b", (min_weight,)
            ).fetchall()
            ends = sorted({end for pair in gone for end in pair})
            for chunk in chunks(ends):  # the ends no link names any more
                q = marks(len(chunk))
                db.execute(
                    f"DELETE FROM link_ends WHERE n IN ({q}) AND NOT EXISTS "
                    "(SELECT 1 FROM links WHERE a = link_ends.n) AND NOT EXISTS "
                    "(SELECT 1 FROM links WHERE b = link_ends.n)",
                    chunk,
                )
            return len(gone)
