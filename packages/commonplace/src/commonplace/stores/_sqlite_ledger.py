"""The SQLite store's ledger: keyed entries beside the records, one table.

The core keeps its audit log, recall logs, conflicts, cards, use log and the ids of
forgotten turns here (see ``Store``); this module only stores and finds entries. The
ids an entry names (``refs``) sit in a table of their own, indexed, so the use log of a
thousand records or the traces of a forgotten one are found without a scan.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from .._clock import to_epoch
from .._scope import Scope
from ._protocol import LedgerEntry
from ._sqlite_connection import SQLiteConnection
from ._sqlite_rows import chunks, decoding, marks, maybe_datetime, scope_clause, scope_from_parts

_WRITTEN = "kind, key, scope_user, scope_agent, scope_thread, at, data, refs"
_COLUMNS = "seq, kind, key, scope_user, scope_agent, scope_thread, at, data, refs"


class SQLiteLedger:
    """The :class:`~commonplace.stores.Ledger` of an SQLite store (its ``ledger``)."""

    def __init__(self, store: SQLiteConnection) -> None:
        self._store = store

    def put(self, entries: Sequence[LedgerEntry], *, replace: bool = True) -> builtins.list[bool]:
        written: builtins.list[bool] = []
        with self._store._transaction() as db:
            for e in entries:
                parts = e.scope.parts() if e.scope is not None else ("", "", "")
                values = (
                    e.kind,
                    e.key,
                    *parts,
                    to_epoch(e.at),
                    _encoded(e.data),
                    json.dumps(list(e.refs), ensure_ascii=False),
                )
                if replace:  # an upsert keeps the entry's place (its seq)
                    row = db.execute(
                        f"INSERT INTO ledger ({_WRITTEN}) VALUES ({marks(8)}) "
                        "ON CONFLICT (kind, key) DO UPDATE SET scope_user = excluded.scope_user, "
                        "scope_agent = excluded.scope_agent, scope_thread = "
                        "excluded.scope_thread, at = excluded.at, data = excluded.data, "
                        "refs = excluded.refs RETURNING seq",
                        values,
                    ).fetchone()
                else:
                    row = db.execute(
                        f"INSERT OR IGNORE INTO ledger ({_WRITTEN}) VALUES ({marks(8)}) "
                        "RETURNING seq",
                        values,
                    ).fetchone()
                    if row is None:  # already there: left as it is
                        written.append(False)
                        continue
                (seq,) = row
                db.execute("DELETE FROM ledger_refs WHERE seq = ?", (seq,))
                db.executemany(
                    "INSERT OR IGNORE INTO ledger_refs (kind, ref, seq) VALUES (?, ?, ?)",
                    [(e.kind, ref, seq) for ref in e.refs],
                )
                written.append(True)
        return written

    def get(self, kind: str, key: str) -> LedgerEntry | None:
        with self._store._reading() as db:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM ledger WHERE kind = ? AND key = ?", (kind, key)
            ).fetchone()
            return None if row is None else _entries(db, [row])[0]

    def list(
        self,
        kind: str,
        *,
        scope: Scope | None = None,
        refs: Collection[str] | None = None,
        since: datetime | None = None,
        limit: int | None = None,
    ) -> builtins.list[LedgerEntry]:
        where, params = scope_clause(scope)
        clauses = [where, "kind = ?"]
        values: builtins.list[Any] = [*params, kind]
        if since is not None:
            clauses.append("at >= ?")
            values.append(to_epoch(since))
        if refs is not None:
            return self._by_refs(kind, refs, " AND ".join(clauses), values, limit)
        with self._store._reading() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM ledger WHERE {' AND '.join(clauses)} "
                "ORDER BY seq DESC LIMIT ?",
                (*values, -1 if limit is None else limit),
            ).fetchall()
            return _entries(db, rows)

    def _by_refs(
        self,
        kind: str,
        refs: Collection[str],
        where: str,
        values: builtins.list[Any],
        limit: int | None,
    ) -> builtins.list[LedgerEntry]:
        seqs: set[int] = set()
        with self._store._reading() as db:
            for chunk in chunks(list(refs)):
                seqs.update(
                    r[0]
                    for r in db.execute(
                        f"SELECT seq FROM ledger_refs WHERE kind = ? AND ref IN "
                        f"({marks(len(chunk))})",
                        (kind, *chunk),
                    )
                )
            rows: builtins.list[Any] = []
            for chunk in chunks(sorted(seqs)):
                rows += db.execute(
                    f"SELECT {_COLUMNS} FROM ledger WHERE {where} AND seq IN ({marks(len(chunk))})",
                    (*values, *chunk),
                ).fetchall()
            rows.sort(key=lambda r: -r[0])
            return _entries(db, rows[:limit] if limit is not None else rows)

    def delete(self, kind: str, keys: Collection[str]) -> int:
        removed = 0
        with self._store._transaction() as db:
            for chunk in chunks(list(keys)):
                q = marks(len(chunk))
                db.execute(
                    "DELETE FROM ledger_refs WHERE seq IN (SELECT seq FROM ledger WHERE "
                    f"kind = ? AND key IN ({q}))",
                    (kind, *chunk),
                )
                removed += db.execute(
                    f"DELETE FROM ledger WHERE kind = ? AND key IN ({q})", (kind, *chunk)
                ).rowcount
        return removed

    def kinds(self) -> builtins.list[str]:
        with self._store._reading() as db:
            return [r[0] for r in db.execute("SELECT DISTINCT kind FROM ledger ORDER BY kind")]


def _encoded(data: Any) -> str:
    return json.dumps(dict(data), ensure_ascii=False, sort_keys=True)


def _entries(db: sqlite3.Connection, rows: Sequence[Any]) -> builtins.list[LedgerEntry]:
    out = []
    with decoding("ledger entry"):
        for _, kind, key, user, agent, thread, at, data, refs in rows:
            scope = scope_from_parts(user, agent, thread) if (user or agent or thread) else None
            out.append(
                LedgerEntry(
                    kind,
                    key,
                    scope,
                    maybe_datetime(at) or datetime.min,
                    json.loads(data),
                    tuple(json.loads(refs)),
                )
            )
    return out
