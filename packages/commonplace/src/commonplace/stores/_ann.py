"""An approximate nearest-neighbour index for one large block of vectors, and its files.

A scope with many vectors is searched through an HNSW graph (usearch) instead of a
product with every vector: a few hundred distance computations instead of one per
row. The graph is a cache. The rows of the SQLite file are the truth, so the graph
is saved beside the file only to spare the next process the build, and a saved graph
is used only once it proves itself: its file has the checksum its manifest names (usearch
never reads a byte that did not pass it), and the rows confirm it (:meth:`AnnFiles.load`
hands it to a check the store makes: the scope's row version, which every deleted or
changed vector row moves, is the one it was saved at); anything that does not match is
thrown away and rebuilt from the rows.

Files, in the folder ``<store file>.vectors/``:

- ``<block>.json``: which store and embedder the graph belongs to, the scope, the
  highest row it holds, how many rows, the scope's row version, and the name, size and
  SHA-256 checksum of the graph file;
- ``<block>.<generation>.usearch``: the graph and its vectors.

The manifest is replaced atomically after the graph file is complete, so a kill at
any moment leaves either the old pair or the new one; a graph file no manifest names
is an orphan, removed by the next save.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import numpy.typing as npt
from usearch.index import Index

from ..embedders._protocol import Vectors

ScopeParts = tuple[str, str, str]

# HNSW parameters, measured on 256-dimensional hashed notes (docs/performance.md): 16
# neighbours per node and 64 candidates while adding build in a third of the time of
# 32/128. A search looks at 256 candidates up to 250k vectors, and more as the graph grows
# (with the square root of its size, at most 1,024): recall@10 against exact search on
# questions that tie often was 0.950 / 0.980 / 0.989 at 128 / 256 / 512 candidates for
# 100k vectors (0.5-0.8 ms), and 0.914 / 0.966 / 0.980 at 256 / 512 / 768 for 1M
# (2.0 / 2.4 / 3.3 ms).
_CONNECTIVITY = 16
_EXPANSION_ADD = 64
_EXPANSION_SEARCH = 256
_EXPANSION_SEARCH_MAX = 1024
_EXPANSION_ROWS = 250_000
# How many candidates a search for the one nearest note looks at: 128 find the exact
# nearest for 96 of 100 clustered queries of a 6,000-row graph (tests/core's), 32 for 79.
# A search for near copies only (a bound of at least NEAR_COPY_BOUND, as the write path's
# near-duplicate check asks) needs fewer while the graph is small: a near copy sits right
# beside its original. One-word edits of stored notes, decisions that differ from exact
# search's: in a 100k graph 9 of 4,000 with 32 candidates and 6 with 128 (in half the time:
# 168 against 340 µs a note); in a 1M graph 49 of 2,000 with 32, 15 with 64, 3 with 128.
# So the near-copy search grows with the square root of the graph, 128 at 1M (40 at 100k),
# never fewer than 32.
NEAREST_WIDTH = 128
NEAR_COPY_BOUND = 0.9
_NEAR_COPY_MIN = 32
_NEAR_COPY_FULL_ROWS = 1_000_000
# 2: the manifest names the graph file's checksum and the scope's row version
_FORMAT = 2
_READ_BYTES = 1 << 20  # a graph file is hashed a MiB at a time
# Fewer queries than this are searched on the caller's thread (waking a pool costs more).
_PARALLEL_QUERIES = 32


class Ann:
    """One block's HNSW graph over unit vectors, keyed by row sequence number."""

    def __init__(self, dim: int, index: Index | None = None) -> None:
        self.dim = dim
        self.index = index if index is not None else _new_index(dim)
        # how many candidates an add and a search look at is not kept in a saved graph's
        # file, so it is set here, for new and loaded graphs alike (a search sets its own):
        # a loaded graph left at usearch's default of 128 adds twice as slowly as with ours
        setattr(self.index, "expansion_add", _EXPANSION_ADD)  # noqa: B010
        # the keys as one array: iterating them one by one takes minutes at 1M
        self.max_seq = int(np.asarray(self.index.keys).max()) if len(self.index) else 0
        self.dirty = index is None  # changed since it was loaded from (or saved to) disk
        # a row was deleted from it: HNSW removal only marks a node, so the vector is still
        # in the graph's memory and in any file saved from it (usearch's compact=True too)
        self.held_deleted = False
        # the scope's row version its rows are those of (None: unknown, never saved)
        self.version: int | None = None

    def __len__(self) -> int:
        return len(self.index)

    def add(self, seqs: npt.NDArray[np.int64], vectors: Vectors) -> None:
        if len(seqs) == 0:
            return
        self.index.add(seqs.astype(np.uint64), vectors, threads=_threads(len(seqs)))
        self.max_seq = max(self.max_seq, int(seqs.max()))
        self.dirty = True

    def remove(self, seqs: list[int]) -> None:
        held = [s for s in seqs if self.index.contains(s)]
        if held:
            self.index.remove(np.asarray(held, np.uint64))
            self.dirty = True
            self.held_deleted = True

    def contains(self, seq: int) -> bool:
        return bool(self.index.contains(seq))

    def vector(self, seq: int) -> Vectors | None:
        if not self.index.contains(seq):
            return None
        return np.asarray(self.index.get(seq), np.float32)

    def vectors(self, seqs: list[int]) -> tuple[list[int], Vectors]:
        """The seqs among ``seqs`` the graph holds, and their vectors, in one lookup."""
        keys = np.asarray(seqs, np.uint64)
        held = keys[np.asarray(self.index.contains(keys), bool).reshape(len(keys))]
        if len(held) == 0:
            return [], np.empty((0, self.dim), np.float32)
        found = np.asarray(self.index.get(held), np.float32).reshape(len(held), self.dim)
        return [int(k) for k in held], found

    def search(
        self, queries: Vectors, count: int, *, width: int | None = None
    ) -> tuple[npt.NDArray[np.int64], Vectors]:
        """The ``count`` nearest seqs and similarities per query row (rows of -1 / -inf
        pad a query that found fewer). ``width`` is how many candidates the search looks
        at (by default as many as recall@10 needs at this size, see :func:`search_width`)."""
        count = min(count, len(self.index))
        if count == 0:
            n = len(queries)
            return np.empty((n, 0), np.int64), np.empty((n, 0), np.float32)
        # widened to the number asked for (usearch's setter, which its stubs do not declare)
        wide = search_width(len(self.index)) if width is None else width
        setattr(self.index, "expansion_search", max(wide, count))  # noqa: B010
        # a batch (the write path's near-duplicate check) is shared among the cores: each
        # query walks the same unchanging graph, so its answer does not depend on the thread
        threads = 0 if len(queries) >= _PARALLEL_QUERIES else 1
        found = self.index.search(queries, count, threads=threads)
        n = len(queries)
        keys = np.asarray(found.keys, np.int64).reshape(n, -1)
        sims = (1.0 - np.asarray(found.distances, np.float32)).reshape(n, -1)
        # one query comes back as Matches (as many keys as found), several as BatchMatches
        counts = np.asarray(getattr(found, "counts", [len(found.keys)])).reshape(n).tolist()
        for row, got in enumerate(counts):
            keys[row, got:] = -1
            sims[row, got:] = -np.inf
        return keys, sims

    def keys(self) -> npt.NDArray[np.int64]:
        return np.asarray(self.index.keys, np.int64)


def search_width(size: int) -> int:
    """How many candidates a search of a graph of ``size`` vectors looks at."""
    return _grown(
        size, _EXPANSION_SEARCH, _EXPANSION_ROWS, _EXPANSION_SEARCH, _EXPANSION_SEARCH_MAX
    )


def near_copy_width(size: int) -> int:
    """How many candidates a search for near copies in a graph of ``size`` vectors looks at."""
    return _grown(size, NEAREST_WIDTH, _NEAR_COPY_FULL_ROWS, _NEAR_COPY_MIN, NEAREST_WIDTH)


def _grown(size: int, width: int, rows: int, least: int, most: int) -> int:
    # a graph's search finds as much with a width that grows with the square root of its
    # size: ``width`` candidates at ``rows`` vectors, held between ``least`` and ``most``
    return min(most, max(least, int(width * math.sqrt(size / rows))))


def _new_index(dim: int) -> Index:
    # what a saved graph's file keeps; the candidates an add looks at are set by Ann
    return Index(ndim=dim, metric="ip", dtype="f32", connectivity=_CONNECTIVITY)


def _threads(rows: int) -> int:
    # a handful of rows is added faster on one thread than by waking a pool
    return 0 if rows >= 1024 else 1


class AnnFiles:
    """The saved graphs of one store, beside its file."""

    def __init__(self, store_path: str) -> None:
        self.folder = Path(store_path + ".vectors")

    def load(
        self,
        parts: ScopeParts,
        *,
        store_id: str,
        embedder: str,
        dim: int,
        confirm: Callable[[Ann], bool],
    ) -> Ann | None:
        """The saved graph of this scope, if there is one, its file has the checksum its
        manifest names, it belongs to this store and embedder, and ``confirm`` (the rows'
        check, handed the graph with the row version it was saved at) accepts it;
        otherwise None and the files are removed."""
        manifest = self._manifest(parts)
        try:
            meta = json.loads(manifest.read_text("utf-8"))
            if (
                not isinstance(meta, dict)
                or meta.get("format") != _FORMAT
                or meta.get("store_id") != store_id
                or meta.get("embedder") != embedder
                or meta.get("dim") != dim
                or meta.get("parts") != list(parts)
            ):
                raise ValueError("another store, embedder or scope")
            graph = self.folder / str(meta["file"])
            if graph.parent != self.folder:
                raise ValueError("a graph outside the folder")
            # usearch trusts its file: a byte changed past the header made a search crash
            # the process (SIGSEGV) or miss a note, so it only ever sees bytes that are
            # exactly those saved (read once, checked, then handed over from memory)
            data = graph.read_bytes()
            if len(data) != int(meta["bytes"]) or _digest([data]) != str(meta["checksum"]):
                raise ValueError("a graph file that is not the one saved")
            index = Index.restore(data)
            del data
            if index is None or index.ndim != dim or len(index) != int(meta["size"]):
                raise ValueError("an incomplete graph")
            ann = Ann(dim, index)
            ann.version = int(meta["version"])
            if ann.max_seq != int(meta["max_seq"]) or not confirm(ann):
                raise ValueError("rows that do not match")
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, RuntimeError, OverflowError):
            self.drop(parts)
            return None
        ann.dirty = False
        return ann

    def save(
        self, parts: ScopeParts, ann: Ann, *, store_id: str, embedder: str, version: int
    ) -> None:
        """Write the graph, then the manifest naming it (atomically), then remove what
        the manifest no longer names. A cache: failing to write it loses nothing. The
        caller holds the store's write lock and has checked that ``version`` is the
        scope's row version now and the one the graph's rows are those of."""
        stem = _stem(parts)
        graph = self.folder / f"{stem}.{uuid.uuid4().hex[:12]}.usearch"
        try:
            self.folder.mkdir(exist_ok=True)
            ann.index.save(str(graph))
            _fsync(graph)
            # the checksum of the bytes on disk, as the next load will read them
            with open(graph, "rb") as handle:
                checksum = _digest(iter(lambda: handle.read(_READ_BYTES), b""))
            meta = {
                "format": _FORMAT,
                "store_id": store_id,
                "embedder": embedder,
                "dim": ann.dim,
                "parts": list(parts),
                "max_seq": ann.max_seq,
                "size": len(ann),
                "version": version,
                "file": graph.name,
                "bytes": graph.stat().st_size,
                "checksum": checksum,
            }
            manifest = self._manifest(parts)
            partial = manifest.with_suffix(".json.partial")
            partial.write_text(json.dumps(meta), "utf-8")
            _fsync(partial)
            os.replace(partial, manifest)
        except (OSError, RuntimeError):
            with contextlib.suppress(OSError):
                graph.unlink()
            return
        ann.dirty = False
        for old in self.folder.glob(f"{stem}.*.usearch"):
            if old != graph:
                with contextlib.suppress(OSError):
                    old.unlink()

    def saved_scopes(self) -> list[ScopeParts]:
        """The scopes with a saved graph (as their manifests name them)."""
        out: list[ScopeParts] = []
        for manifest in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []:
            try:
                parts = json.loads(manifest.read_text("utf-8"))["parts"]
            except (OSError, ValueError, KeyError, TypeError):
                with contextlib.suppress(OSError):
                    manifest.unlink()
                continue
            if (
                isinstance(parts, list)
                and len(parts) == 3
                and all(isinstance(p, str) for p in parts)
            ):
                out.append((parts[0], parts[1], parts[2]))
        return out

    def drop(self, parts: ScopeParts | None = None) -> None:
        """Remove the saved graph of one scope, or of every scope."""
        if not self.folder.is_dir():
            return
        pattern = "*" if parts is None else f"{_stem(parts)}.*"
        for path in self.folder.glob(pattern):
            with contextlib.suppress(OSError):
                path.unlink()

    def _manifest(self, parts: ScopeParts) -> Path:
        return self.folder / f"{_stem(parts)}.json"


def _stem(parts: ScopeParts) -> str:
    # scope values are user text: a digest names the files, the manifest holds the scope
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:24]


def _digest(chunks: Iterable[bytes]) -> str:
    # SHA-256: with the CPU's instructions for it, 1.1 GB/s here against BLAKE2b's 0.45
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


def _fsync(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
