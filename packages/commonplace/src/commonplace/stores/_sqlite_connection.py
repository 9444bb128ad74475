"""The SQLite store's connection: opening the file, its header and WAL, transactions and
the errors SQLite raises, translated into commonplace's own.

It is the base every part of :class:`~commonplace.stores.SQLiteBackend` builds on (the
record store, the ledger, the links, the embedder pin): they only ever reach the database
through ``_transaction`` and ``_reading``, so locking, the closed check and error
translation live here once.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .._records import Record
from ..errors import (
    CorruptStoreError,
    InvalidInputError,
    InvalidURLError,
    NotFoundError,
    SchemaVersionError,
    StoreClosedError,
    StoreError,
)
from ._ann import AnnFiles
from ._sqlite_rows import chunks, marks, records_from_rows
from ._sqlite_schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from ._vector_index import ANN_ROWS, VectorIndex

# How long opening a store waits for another process to finish switching it to WAL.
_WAL_PATIENCE_SECONDS = 30.0
# The write-ahead log is checkpointed into the file once it holds a quarter of the file's
# pages, within these bounds (SQLite's own threshold is 1,000 pages of 4 KiB)
_CHECKPOINT_PAGES = (1000, 8192)
# decoded records kept for rows read again (a bound, whatever the store's size)
_DECODED_ROWS = 8192


class SQLiteConnection:
    """One SQLite file (or ``":memory:"``) opened as a commonplace store, and the
    transactions every part of the store runs in."""

    def __init__(
        self, path: str | Path, *, timeout: float = 30.0, ann_rows: int | None = ANN_ROWS
    ) -> None:
        if ann_rows is not None and (
            isinstance(ann_rows, bool) or not isinstance(ann_rows, int) or ann_rows < 1
        ):
            raise InvalidInputError(
                f"ann_rows must be a positive int (a scope that large is searched through a "
                f"graph) or None (every scope searched exactly), not {ann_rows!r}"
            )
        self._path = str(path)
        self._lock = threading.RLock()
        # the record store's vector cache; declared here because closing drops it and a
        # new pin or a finished re-embed makes it stale
        self._index: VectorIndex | None = None
        self._ann_rows = ann_rows
        self._decoded: OrderedDict[int, tuple[tuple[Any, ...], Record]] = OrderedDict()
        self._ann_files = None if self._path == ":memory:" else AnnFiles(self._path)
        self._closed = False
        self._writing = False  # inside a transaction of ours (see _transaction)
        self._checkpoint_pages = 0  # the log's checkpoint threshold set on the connection
        try:
            folder_exists = self._path == ":memory:" or Path(self._path).parent.is_dir()
        except OSError as exc:  # a name too long for the file system, say
            raise StoreError(f"cannot use the path {self._path!r}: {exc.strerror}") from None
        if not folder_exists:
            raise StoreError(
                f"cannot create a store at {self._path!r}: the folder "
                f"{str(Path(self._path).parent)!r} does not exist; create it first"
            )
        if self._path != ":memory:":
            _check_file(self._path)
        try:
            self._db = sqlite3.connect(
                self._path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot open {self._path!r}: {exc}; check the path and permissions"
            ) from exc
        try:
            self._open()
        except BaseException:
            self._db.close()
            raise

    # -- opening and transactions -------------------------------------------------------

    def _open(self) -> None:
        version = self._check_header()
        with self._translate_errors():
            self._db.execute("PRAGMA busy_timeout = 30000")
            # what is deleted is zeroed, not only unlinked: forgetting must leave nothing
            # readable in the file (the ledger, the records and the indexes alike)
            self._db.execute("PRAGMA secure_delete = ON")
            if self._path != ":memory:":
                self._enable_wal()
                # WAL with synchronous=NORMAL survives a killed process; FULL adds power loss.
                self._db.execute("PRAGMA synchronous = NORMAL")
                self._size_checkpoints()
            if version < SCHEMA_VERSION:
                with self._transaction():
                    # another process may have created or migrated the store meanwhile
                    version = self._check_header()
                    for migrate in MIGRATIONS[version:]:
                        migrate(self._db)
                    self._db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                    self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _enable_wal(self) -> None:
        """Switch to WAL. Changing the journal mode needs the file to itself for a moment
        and SQLite may answer "locked" at once, without waiting out the busy timeout, when
        another process opens the same new file: so wait and ask again, within bounds."""
        deadline = time.monotonic() + _WAL_PATIENCE_SECONDS
        delay = 0.005
        while True:
            try:
                self._db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    def _check_header(self) -> int:
        """The schema version, read in one snapshot; refuses files that are not ours."""
        with self._translate_errors():
            outer = self._db.in_transaction
            if not outer:
                self._db.execute("BEGIN")
            try:
                app_id = self._db.execute("PRAGMA application_id").fetchone()[0]
                version = self._db.execute("PRAGMA user_version").fetchone()[0]
                has_tables = self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            finally:
                if not outer:
                    self._db.execute("COMMIT")
        if app_id != APPLICATION_ID and (app_id != 0 or has_tables):
            raise CorruptStoreError(
                f"{self._path!r} is an SQLite database but not a commonplace store; "
                "commonplace will not touch it: point the URL at a new or a commonplace file"
            )
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"{self._path!r} has schema version {version}, newer than this commonplace "
                f"understands ({SCHEMA_VERSION}); upgrade commonplace to open it"
            )
        return int(version)

    @contextlib.contextmanager
    def _translate_errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as exc:
            raise StoreError(f"SQLite error on {self._path!r}: {exc}{_hint(exc)}") from exc
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            if isinstance(exc, sqlite3.DatabaseError) and type(exc) is not sqlite3.DatabaseError:
                raise  # integrity and programming errors are not damage
            # (text that is no longer UTF-8 is damage SQLite's own checks did not catch)
            raise CorruptStoreError(
                f"{self._path!r} is damaged or not an SQLite file ({exc}); restore it from a "
                "backup or point the URL at a new file: commonplace will not overwrite it"
            ) from exc

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; one asked for inside another (by the same thread, which
        holds the lock) is part of it, so two writes can be made one commit."""
        with self._lock:
            self._check_open()
            if self._writing:
                yield self._db
                return
            with self._translate_errors():
                self._db.execute("BEGIN IMMEDIATE")
                self._writing = True
                try:
                    yield self._db
                except BaseException:
                    if self._db.in_transaction:  # SQLite may have rolled back already
                        self._db.execute("ROLLBACK")
                    raise
                finally:
                    self._writing = False
                if not self._db.in_transaction:
                    # SQLite rolled the transaction back itself (an I/O error on the
                    # journal): a COMMIT now would only say "no transaction is active"
                    raise StoreError(
                        f"SQLite rolled back a write on {self._path!r} after an I/O error "
                        "(was its -wal or -shm file deleted, or its disk removed, while it "
                        "was open?); nothing of this call was stored. Close this Memory and "
                        "open the store again; if it then reports damage, restore the file "
                        "from a backup"
                    )
                self._db.execute("COMMIT")

    def _size_checkpoints(self) -> None:
        """Let the log grow with the file before a commit checkpoints it.

        A batch of notes dirties thousands of pages in a large store (random ids in every
        unique index) and each checkpoint copies the log's pages into the file and syncs it
        twice; a page written by several commits in between is copied once. A quarter of
        the file keeps the log's disk space in proportion to the data. What a kill keeps
        is the same at any size: every commit is in the log.
        """
        if self._path == ":memory:":
            return
        (pages,) = self._db.execute("PRAGMA page_count").fetchone()
        low, high = _CHECKPOINT_PAGES
        want = min(high, max(low, int(pages) // 4))
        if want != self._checkpoint_pages:
            self._db.execute(f"PRAGMA wal_autocheckpoint = {want}")
            self._checkpoint_pages = want

    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._check_open()
            with self._translate_errors():
                yield self._db

    def _save_graphs(self) -> None:
        """Save the vector graphs that changed (the vector cache's module does)."""

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError("this store is closed; open a new Memory to use it")

    @property
    def url(self) -> str:
        return "sqlite:///" + self._path

    @property
    def path(self) -> str:
        return self._path

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._save_graphs()
                self._closed = True
                self._index = None
                self._db.close()

    # -- row mapping --------------------------------------------------------------------
    # Here, not in the record store, because re-embedding reads records too.

    def _records(self, db: sqlite3.Connection, rows: Sequence[Any]) -> list[Record]:
        # A row read again that is equal, column for column, to the one a Record was made
        # from gives that Record back: nothing to invalidate (a changed counter or tier is
        # a different row), and a row's seq names its provenance for good (a replaced
        # record gets a new seq). Decoding was most of a recall's cost in a large store.
        cache = self._decoded
        made: dict[int, Record] = {}
        fresh = []
        for row in rows:
            held = cache.get(row[0])
            if held is not None and held[0] == row:
                cache.move_to_end(row[0])
                made[row[0]] = held[1]
            else:
                fresh.append(row)
        if fresh:
            for row, record in zip(fresh, self._decode(db, fresh)):
                made[row[0]] = record
                cache[row[0]] = (tuple(row), record)
            while len(cache) > _DECODED_ROWS:
                cache.popitem(last=False)
        return [made[row[0]] for row in rows]

    def _decode(self, db: sqlite3.Connection, rows: Sequence[Any]) -> list[Record]:
        id_of = {row[0]: row[1] for row in rows}
        sources: dict[str, list[str]] = {}
        for chunk in chunks(list(id_of)):
            for seq, source_id in db.execute(
                "SELECT record_seq, source_id FROM provenance WHERE record_seq IN "
                f"({marks(len(chunk))}) ORDER BY source_id",
                chunk,
            ):
                sources.setdefault(id_of[seq], []).append(source_id)
        return records_from_rows(rows, sources)


def _check_file(path: str) -> None:
    """Refuse, before SQLite opens it, a file SQLite would take for an empty database
    (and so overwrite) or one shorter than its own header says: a truncated copy."""
    try:
        # the header first: a checkpoint in another process writes it before growing the file
        with open(path, "rb") as f:
            header = f.read(100)
        size = os.path.getsize(path)
        log = os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0
    except OSError:
        return  # let SQLite say what is wrong with it
    if not header:
        return  # an empty file: a new store
    damaged = (
        f"{path!r} is damaged or not an SQLite file; restore it from a backup or point the URL "
        "at a new file: commonplace will not overwrite it"
    )
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        raise CorruptStoreError(damaged)
    if log:
        return  # newer pages live in the write-ahead log; SQLite reads them from there
    page = int.from_bytes(header[16:18], "big")
    page = 65_536 if page == 1 else page
    pages = int.from_bytes(header[28:32], "big")
    short = header[24:28] == header[92:96] and size < pages * page  # header size is valid
    if page < 512 or page & (page - 1) or size % page or short:
        raise CorruptStoreError(
            f"{path!r} is truncated ({size} bytes; its header says {pages} pages of {page}); "
            "restore it from a backup or point the URL at a new file: commonplace will not "
            "overwrite it"
        )


def _hint(exc: sqlite3.OperationalError) -> str:
    """What to do about an operational error, for the ones a user can act on."""
    text = str(exc).lower()
    if "no transaction is active" in text or "disk i/o error" in text:
        return (
            "; the store's journal (its -wal or -shm file) may have been deleted or its disk "
            "removed while it was open: close this Memory and open the store again"
        )
    if "database or disk is full" in text:
        return "; free disk space (nothing of this call was stored) and retry"
    if "readonly" in text or "read-only" in text:
        return "; the file or its folder is not writable: fix its permissions or use a copy"
    if "locked" in text or "busy" in text:
        return "; another process holds a write lock for too long: retry, or raise its timeout"
    if "unable to open" in text:
        return "; check that the folder exists and is writable"
    return ""


def sqlite_path(url: str) -> str:
    """The file path of an SQLite URL (SQLAlchemy's convention: ``sqlite:////abs``), or of a
    plain path; ``:memory:`` as it is. The one reading of an SQLite URL: the core's
    ``sqlite://`` backend and the integrations that need the file all use it."""
    if url == ":memory:":
        return url
    if not url.lower().startswith("sqlite://"):
        path = url  # a plain file path
    else:
        rest = url[len("sqlite://") :]
        if not rest.startswith("/") or rest == "/":
            raise InvalidURLError(
                f"{url!r} has no file path; write sqlite:///memory.db (relative), "
                "sqlite:////var/data/memory.db (absolute) or sqlite:///:memory:"
            )
        path = rest[1:]
    if not path or "\x00" in path or "?" in path:
        raise InvalidURLError(
            f"{url!r} is not a usable SQLite path; query strings and NUL are not supported"
        )
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidURLError(f"{url!r} is not valid unicode (lone surrogates)") from None
    return path


def refuse_missing_store(url: str) -> None:
    """Raise :class:`NotFoundError` when ``url`` is an SQLite file that does not exist (or
    an in-memory store, which is new and empty in every process); other schemes pass."""
    if "://" in url and not url.lower().startswith("sqlite://"):
        return  # a server's store: only the backend can tell, when it connects
    path = sqlite_path(url)
    if path == ":memory:":
        raise NotFoundError(
            f"{url!r} is a new, empty in-memory store; give the URL of a store file"
        )
    if not Path(path).is_file():
        raise NotFoundError(
            f"no store at {path!r} (from {url!r}); check the path, or give the URL of an "
            "existing store (writing to a new one creates it)"
        )
