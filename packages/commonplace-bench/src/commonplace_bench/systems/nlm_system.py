"""NLM (neural-long-memory 1.1.1): the real package in a subprocess, or its formula.

:class:`NLMProcess` drives the unmodified package over ChromaDB in its own virtualenv
(see :mod:`.nlm_worker`; ``python -m commonplace_bench.systems.nlm_system setup DIR``
builds one: ``neural-long-memory`` with ``--no-deps``, so no sentence-transformers or
torch, plus ``chromadb`` and ``numpy``). Every turn is saved with ``save_many`` at its
simulated time, role kept in metadata, and ``search`` reranks its candidate pool with
the 1.1.1 defaults (0.60 semantic, 0.10 time, 0.05 frequency, 0.20 importance); search
itself bumps the frequency of what it returns, as NLM does.

:class:`NLMFormula` is a re-implementation of the same scoring (exact cosine instead of
ChromaDB's HNSW), used where the real package cannot run; the results page labels it
as such.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import math
import os
import subprocess
import sys
import venv
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import numpy as np

from commonplace.embedders import Embedder

from .base import Memo, Retrieved, System, Turn, line, pack

__all__ = [
    "NLM_PACKAGES",
    "NLMFormula",
    "NLMNotAvailable",
    "NLMProcess",
    "setup_venv",
    "specificity_score",
]

NLM_PACKAGES = ("neural-long-memory==1.1.1", "chromadb==1.5.9", "numpy")
WEIGHTS = {"semantic": 0.60, "time": 0.10, "frequency": 0.05, "importance": 0.20}
HALF_LIFE_DAYS = 90.0
CONSOLIDATION_DISTANCE = 0.15


class NLMNotAvailable(RuntimeError):
    """The real package could not be started; the message says exactly why."""


def _encode(vector: np.ndarray[Any, Any]) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


class NLMProcess(System):
    """neural-long-memory 1.1.1 in its own interpreter, over a JSON-lines pipe."""

    def __init__(
        self,
        folder: Path,
        embedder: Embedder,
        *,
        python: str,
        pool: int | None = None,
        consolidation: bool = True,
    ) -> None:
        super().__init__(folder, embedder)
        self.pool = pool
        self._sent: set[str] = set()
        self._roles: dict[str, tuple[str | None, datetime | None]] = {}
        folder.mkdir(parents=True, exist_ok=True)
        self._log: IO[str] = open(folder / "worker.log", "w", encoding="utf-8")  # noqa: SIM115
        env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "TOKENIZERS_PARALLELISM": "false"}
        worker = Path(__file__).with_name("nlm_worker.py")
        try:
            self._process = subprocess.Popen(
                [python, str(worker)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                text=True,
                env=env,
            )
        except OSError as exc:
            self._log.close()
            raise NLMNotAvailable(f"cannot start {python}: {exc}") from exc
        try:
            self.versions = self._call(
                "open",
                path=str(folder / "chroma"),
                dim=embedder.dim,
                model=embedder.name,
                consolidation=consolidation,
            )
        except NLMNotAvailable:
            self.close()
            raise
        self.versions.pop("ok", None)

    def _call(self, op: str, **fields: Any) -> dict[str, Any]:
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps({"op": op, **fields}) + "\n")
            process.stdin.flush()
            raw = process.stdout.readline()
        except (BrokenPipeError, OSError) as exc:
            raise NLMNotAvailable(f"the NLM worker died ({exc}); see {self.folder}") from exc
        if not raw:
            self._log.flush()
            tail = (self.folder / "worker.log").read_text(encoding="utf-8")[-2000:]
            raise NLMNotAvailable(f"the NLM worker exited during {op!r}: {tail.strip()}")
        reply: dict[str, Any] = json.loads(raw)
        if not reply.get("ok"):
            raise NLMNotAvailable(f"NLM {op!r} failed: {reply.get('error')}")
        return reply

    def _send_vectors(self, texts: Sequence[str]) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self._sent))
        if not missing:
            return
        # NLM's own embedder is the one that counts calls (in the worker); the vectors
        # come from the run's shared cache without being counted here
        vectors = self.embedder.uncounted.embed(missing)
        self._call("vectors", items=[[t, _encode(v)] for t, v in zip(missing, vectors)])
        self._sent.update(missing)

    def add(self, turns: Sequence[Turn]) -> None:
        if not turns:
            return
        self._send_vectors([t.text for t in turns])
        for t in turns:
            self._roles.setdefault(t.text, (t.role, t.at))
        items = [
            {
                "text": t.text,
                "meta": {
                    "role": t.role,
                    "created_at": t.at.isoformat(),
                    "last_accessed": t.at.isoformat(),
                },
            }
            for t in turns
        ]
        self._call("save", items=items, now=max(t.at for t in turns).isoformat())

    def add_memos(self, memos: Sequence[Memo]) -> None:
        self._send_vectors([m.text for m in memos])
        for memo in memos:
            meta: dict[str, Any] = {
                "created_at": memo.created_at.isoformat(),
                "last_accessed": memo.created_at.isoformat(),
                "frequency": memo.frequency,
            }
            if memo.importance is not None:
                meta["importance"] = memo.importance
            self._roles.setdefault(memo.text, ("user", memo.created_at))
            self._call(
                "save", items=[{"text": memo.text, "meta": meta}], now=memo.created_at.isoformat()
            )

    def query(
        self,
        text: str,
        *,
        at: datetime,
        top_k: int,
        budget: int,
        as_of: datetime | None = None,
    ) -> Retrieved:
        if as_of is not None:
            raise NotImplementedError("NLM has no time filter")
        self._send_vectors([text])
        reply = self._call(
            "search", query=text, top_k=top_k, n_candidates=self.pool, now=at.isoformat()
        )
        hits = tuple(str(r["text"]) for r in reply["results"])
        lines = []
        for hit in hits:
            role, when = self._roles.get(hit, (None, None))
            lines.append(line(role, hit, when))
        context, tokens = pack(lines, budget)
        return Retrieved(hits=hits, context=context, tokens=tokens)

    def counts(self) -> dict[str, int]:
        reply = self._call("stats")
        return {k: int(reply[k]) for k in ("calls", "texts", "count")}

    def embed_counts(self) -> tuple[int, int]:
        """NLM's own embedder calls, counted by the stub inside the worker."""
        counts = self.counts()
        return counts["calls"], counts["texts"]

    def close(self) -> None:
        process = getattr(self, "_process", None)
        if process is not None and process.poll() is None:
            with contextlib.suppress(NLMNotAvailable):
                self._call("close")
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for stream in (process.stdin, process.stdout) if process is not None else ():
            if stream is not None:
                stream.close()
        self._log.close()


def specificity_score(text: str) -> float:
    """NLM 1.1.1's CPU importance heuristic: digits, capitalised words, length."""
    words = text.split()
    if not words:
        return 0.0
    score = 0.3 if any(any(c.isdigit() for c in w) for w in words) else 0.0
    score += min(0.4, 0.1 * sum(1 for w in words[1:] if w and w[0].isupper()))
    if 5 <= len(words) <= 50:
        score += 0.3
    return min(1.0, score)


class NLMFormula(System):
    """A re-implementation of NLM 1.1.1's save and search, for when the package cannot run.

    Same defaults: consolidation of a new memory into an existing one at cosine distance
    under 0.15 (frequency +1, importance x1.15), importance from the specificity
    heuristic, candidate pool ``max(top_k * 10, 50)``, score ``0.60 * (1 - d / 2) + 0.10
    * time + 0.05 * frequency + 0.20 * importance`` with time decay from creation
    (90-day half-life) and ``log(1 + n) / log(101)`` frequency, and a frequency bump for
    every result returned. Exact cosine replaces ChromaDB's approximate HNSW search.
    """

    def __init__(
        self,
        folder: Path,
        embedder: Embedder,
        *,
        pool: int | None = None,
        consolidation: bool = True,
    ) -> None:
        super().__init__(folder, embedder)
        self.pool = pool
        self.consolidation = consolidation
        self._texts: list[str] = []
        self._meta: list[dict[str, Any]] = []
        self._vectors: list[np.ndarray[Any, Any]] = []

    def _nearest(self, vector: np.ndarray[Any, Any], n: int) -> list[tuple[int, float]]:
        if not self._vectors:
            return []
        sims = np.stack(self._vectors) @ vector
        order = np.argsort(-sims, kind="stable")[:n]
        return [(int(i), float(1.0 - sims[i])) for i in order]  # cosine distance

    def _save(self, text: str, vector: np.ndarray[Any, Any], meta: dict[str, Any]) -> None:
        if self.consolidation:
            near = self._nearest(vector, 1)
            if near and near[0][1] < CONSOLIDATION_DISTANCE:
                old = self._meta[near[0][0]]
                old["frequency"] += 1
                old["importance"] = min(1.0, max(0.1, old["importance"]) * 1.15)
                return
        self._texts.append(text)
        self._meta.append(meta)
        self._vectors.append(vector)

    def add(self, turns: Sequence[Turn]) -> None:
        if not turns:
            return
        vectors = self.embedder.embed([t.text for t in turns])
        for t, vector in zip(turns, vectors):
            meta = {
                "created_at": t.at,
                "frequency": 0,
                "importance": specificity_score(t.text),
                "role": t.role,
            }
            self._save(t.text, vector, meta)

    def add_memos(self, memos: Sequence[Memo]) -> None:
        vectors = self.embedder.embed([m.text for m in memos])
        for memo, vector in zip(memos, vectors):
            importance = memo.importance
            meta = {
                "created_at": memo.created_at,
                "frequency": memo.frequency,
                "importance": specificity_score(memo.text) if importance is None else importance,
                "role": "user",
            }
            self._save(memo.text, vector, meta)

    def query(
        self,
        text: str,
        *,
        at: datetime,
        top_k: int,
        budget: int,
        as_of: datetime | None = None,
    ) -> Retrieved:
        if as_of is not None:
            raise NotImplementedError("NLM has no time filter")
        vector = self.embedder.embed([text])[0]
        pool = self.pool if self.pool is not None else max(top_k * 10, 50)
        scored = []
        for index, distance in self._nearest(vector, pool):
            meta = self._meta[index]
            days = (at - meta["created_at"]).total_seconds() / 86_400
            score = (
                WEIGHTS["semantic"] * max(0.0, 1.0 - distance / 2.0)
                + WEIGHTS["time"] * math.exp(-math.log(2) / HALF_LIFE_DAYS * days)
                + WEIGHTS["frequency"] * min(1.0, math.log(1 + meta["frequency"]) / math.log(101))
                + WEIGHTS["importance"] * float(meta["importance"])
            )
            scored.append((score, index))
        scored.sort(key=lambda s: -s[0])
        chosen = [index for _, index in scored[:top_k]]
        for index in chosen:
            self._meta[index]["frequency"] += 1
        hits = tuple(self._texts[i] for i in chosen)
        lines = [
            line(self._meta[i]["role"], self._texts[i], self._meta[i]["created_at"]) for i in chosen
        ]
        context, tokens = pack(lines, budget)
        return Retrieved(hits=hits, context=context, tokens=tokens)

    def disk_bytes(self) -> int:
        return 0


def setup_venv(folder: Path) -> Path:
    """Create a virtualenv with NLM (no sentence-transformers, no torch); its Python."""
    python = folder / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    if not python.exists():
        venv.create(folder, with_pip=True, clear=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    # its dependencies first, then NLM itself without sentence-transformers (and torch)
    subprocess.run([*pip, *NLM_PACKAGES[1:]], check=True)
    subprocess.run([*pip, "--no-deps", NLM_PACKAGES[0]], check=True)
    return python


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m commonplace_bench.systems.nlm_system")
    sub = parser.add_subparsers(dest="command", required=True)
    setup = sub.add_parser("setup", help="create a virtualenv that can run NLM offline")
    setup.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    python = setup_venv(args.folder)
    print(python)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
