"""Runs neural-long-memory (NLM) 1.1.1 unmodified, in its own environment, over stdin.

Started by :class:`commonplace_bench.systems.nlm_system.NLMProcess` with the Python of
a virtualenv that holds ``neural-long-memory`` (installed ``--no-deps``), ``chromadb``
and ``numpy``; this file imports nothing else (not even commonplace), so it runs as a
plain script there. Two things are replaced, both from outside NLM's code:

* its embedder (``nlm.embedder.Embedder``, which would load sentence-transformers and
  download all-MiniLM-L6-v2) by a stub serving the vectors the harness computed with
  the run's embedder, so nothing is downloaded and every system sees the same vectors;
  the stub counts the calls NLM makes, so its embedding cost is reported as it is;
* its clock (``datetime.now`` in ``nlm.utils`` and ``nlm.memory``, and ``now_iso``), by
  the workload's simulated time, because time decay is one of its four signals.

Protocol: one JSON object per line each way. A request has ``op``; a reply has
``ok`` and either the result or ``error``. Vectors travel as base64 float32.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import sys
import traceback
import types
from array import array
from datetime import datetime, timezone, tzinfo
from typing import Any

_VECTORS: dict[str, list[float]] = {}
_COUNTS = {"calls": 0, "texts": 0}
_STATE: dict[str, Any] = {}


class _Frozen(datetime):
    """``datetime`` whose ``now()`` is the simulated time the harness last set."""

    current = datetime(2025, 1, 1, tzinfo=timezone.utc)

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> datetime:  # type: ignore[override]
        return cls.current if tz is None else cls.current.astimezone(tz)


def _now_iso() -> str:
    return _Frozen.current.isoformat()


class _StubEmbedder:
    """Stands in for ``nlm.embedder.Embedder``: vectors from the harness, calls counted."""

    def __init__(self, model_name: str = "", device: str = "cpu") -> None:
        self.model_name = str(_STATE["model"])
        self.dim = int(_STATE["dim"])

    def encode(self, text: str) -> list[float]:
        _COUNTS["calls"] += 1
        _COUNTS["texts"] += 1
        return _VECTORS[text]

    def encode_many(self, texts: list[str]) -> list[list[float]]:
        _COUNTS["calls"] += 1
        _COUNTS["texts"] += len(texts)
        return [_VECTORS[t] for t in texts]


def _install_stubs() -> None:
    stub = types.ModuleType("nlm.embedder")
    stub.Embedder = _StubEmbedder  # type: ignore[attr-defined]
    sys.modules["nlm.embedder"] = stub


def _set_clock(when: str | None) -> None:
    if when:
        _Frozen.current = datetime.fromisoformat(when)


def _open(request: dict[str, Any]) -> dict[str, Any]:
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    _STATE["dim"] = int(request["dim"])
    _STATE["model"] = str(request["model"])
    _install_stubs()
    nlm = importlib.import_module("nlm")
    utils = importlib.import_module("nlm.utils")
    memory_module = importlib.import_module("nlm.memory")
    for module in (utils, memory_module):
        module.datetime = _Frozen  # type: ignore[attr-defined]
        module.now_iso = _now_iso  # type: ignore[attr-defined]
    chromadb = importlib.import_module("chromadb")
    _set_clock(request.get("now"))
    _STATE["nlm"] = nlm.NLM(
        collection_name="bench",
        persist_path=str(request["path"]),
        enable_consolidation=bool(request.get("consolidation", True)),
    )
    return {"nlm": str(nlm.__version__), "chromadb": str(chromadb.__version__)}


def _vectors(request: dict[str, Any]) -> dict[str, Any]:
    for text, encoded in request["items"]:
        _VECTORS[text] = array("f", base64.b64decode(encoded)).tolist()
    return {"held": len(_VECTORS)}


def _save(request: dict[str, Any]) -> dict[str, Any]:
    memory = _STATE["nlm"]
    items = request["items"]
    _set_clock(request.get("now"))
    texts = [str(item["text"]) for item in items]
    metas = [dict(item.get("meta") or {}) for item in items]
    ids = memory.save_many(texts, metadatas=metas)
    return {"ids": list(ids)}


def _search(request: dict[str, Any]) -> dict[str, Any]:
    memory = _STATE["nlm"]
    _set_clock(request.get("now"))
    found = memory.search(
        str(request["query"]),
        top_k=int(request["top_k"]),
        n_candidates=request.get("n_candidates"),
    )
    return {"results": [{"text": r["text"], "score": r["score"]} for r in found]}


def _stats(request: dict[str, Any]) -> dict[str, Any]:
    memory = _STATE.get("nlm")
    return {**_COUNTS, "count": int(memory.count()) if memory is not None else 0}


_OPS = {"open": _open, "vectors": _vectors, "save": _save, "search": _search, "stats": _stats}


def main() -> int:
    for raw in sys.stdin:
        if not raw.strip():
            continue
        request = json.loads(raw)
        op = request.get("op")
        if op == "close":
            print(json.dumps({"ok": True}), flush=True)
            return 0
        try:
            reply = {"ok": True, **_OPS[str(op)](request)}
        except Exception as exc:  # reported to the harness, which says "not run" and why
            reply = {
                "ok": False,
                "error": f"{type(exc).__name__}: {exc}",
                "trace": traceback.format_exc(limit=5),
            }
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
