"""The SQLite store's links: weighted pairs of records recalled together.

Apart from the record store because links are a small graph kept beside the records (they
only name record ids), reinforced by recall and decayed by maintenance.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

from .._clock import to_epoch
from ._protocol import Link
from ._sqlite_connection import SQLiteConnection
from ._sqlite_rows import chunks, marks, maybe_datetime


class SQLiteLinks(SQLiteConnection):
    """Links between records, for :class:`~commonplace.stores.SQLiteBackend`."""

    def reinforce_links(
        self, pairs: Sequence[tuple[str, str, str]], *, delta: float, at: datetime
    ) -> None:
        rows = [
            (*sorted((a, b)), kind, min(1.0, delta), to_epoch(at), delta)
            for a, b, kind in pairs
            if a != b
        ]
        if not rows:
            return
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO links (a, b, kind, weight, updated_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (a, b, kind) DO UPDATE SET "
                "weight = min(1.0, weight + ?6), updated_at = excluded.updated_at",
                rows,
            )

    def links_of(self, record_ids: Collection[str], *, min_weight: float) -> list[Link]:
        out: dict[tuple[str, str, str], Link] = {}
        with self._reading() as db:
            for chunk in chunks(list(record_ids)):
                q = marks(len(chunk))
                for a, b, kind, weight, updated in db.execute(
                    f"SELECT a, b, kind, weight, updated_at FROM links WHERE (a IN ({q}) "
                    f"OR b IN ({q})) AND weight >= ?",
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
            return db.execute("DELETE FROM links WHERE weight < ?", (min_weight,)).rowcount
