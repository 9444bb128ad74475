"""The child processes of the reliability suite.

``write_until_killed`` is the crash-test writer: a sustained workload of single and
batched writes, duplicate turns, recalls with feedback, consolidation and the whole
lifecycle, on one store, forever. After each call *returns* it appends one JSON line to an
acknowledgement log with ``os.write`` (no buffering in the process, so a kill cannot lose
an acknowledgement the call made, and an acknowledgement is never written before the
call committed). The test kills it with SIGKILL at a random moment and checks the store
against the log. ``race_process`` is one side of the two-process race.

The tests start these through a ``forkserver`` that imported this module once (see
``start``), so a child starts in milliseconds. To watch one by hand::

    python tests/reliability/crash_child.py /tmp/store.db /tmp/acks.jsonl 1
    # ... kill -9 it, then: sqlite3 /tmp/store.db 'PRAGMA integrity_check'
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.forkserver
import os
import random
import signal
import sys
import traceback
from datetime import datetime, timedelta, timezone
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from reliability_support import BUSY, SCOPES, RaceLog, race, turn_text, url_of

from commonplace import Config, Kind, Memory, ProfileRules, count_tokens
from commonplace._records import note_id

# when the turns written again were first said
SAID = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)

# Warm up once, in the fork server: the tokenizer, the entry-point plugins, the embedder.
count_tokens("warm up")
with Memory(":memory:", config=BUSY) as _warm:
    _warm.recall("warm up", scope="warm-up")


def _ack(fd: int, **entry: Any) -> None:
    os.write(fd, (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8"))


def write_until_killed(store: str, acks: str, errors: str, seed: int) -> None:
    """Run the crash workload on ``store`` until killed; only an error ends it early
    (its traceback goes to ``errors`` and the exit code is 3)."""
    fd = os.open(acks, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _workload(store, fd, random.Random(seed), seed)
    except BaseException:
        Path(errors).write_text(traceback.format_exc(), encoding="utf-8")
        os._exit(3)


def _workload(store: str, fd: int, rng: random.Random, seed: int) -> None:
    memory = Memory(url_of(store), config=BUSY)
    _ack(fd, op="open")
    recalls = []
    n = 0
    while True:
        n += 1
        roll = rng.random()
        scope = rng.choice(SCOPES)
        if roll < 0.40:
            text = turn_text(rng, seed * 1_000_000 + n)
            role = "assistant" if rng.random() < 0.15 else "user"
            result = memory.write(text, scope=scope, role=role)
            _ack(fd, op="write", turns=[_turn(scope, role, text, result)])
        elif roll < 0.55:
            turns = [
                (rng.choice(SCOPES), turn_text(rng, seed * 1_000_000 + n * 10 + k))
                for k in range(rng.randint(2, 8))
            ]
            results = memory.write_many([memory.turn(t, scope=s) for s, t in turns])
            _ack(
                fd,
                op="write",
                turns=[_turn(s, "user", t, r) for (s, t), r in zip(turns, results)],
            )
        elif roll < 0.60:  # the same turn again: idempotent, nothing new
            again = rng.randint(0, 9)
            text = f"My friend Mia plays chess {again}."
            # a turn is its time too: the same turn again is said at the same moment
            result = memory.write(text, scope=scope, at=SAID + timedelta(minutes=again))
            _ack(fd, op="write", turns=[_turn(scope, "user", text, result)])
        elif roll < 0.75:
            found = memory.recall(turn_text(rng), scope=scope, top_k=rng.randint(1, 8))
            if found.included:
                recalls.append(found)
        elif roll < 0.85 and recalls:
            found = recalls.pop(rng.randrange(len(recalls)))
            used = rng.sample(list(found.included), rng.randint(1, len(found.included)))
            feedback = memory.feedback(found.id, used=used)
            if not feedback.already_given:
                _ack(fd, op="feedback", recall=found.id, used=list(feedback.used))
        elif roll < 0.95:
            report = memory.consolidate(scope=scope)
            made = [a.record_id for a in report.actions if a.action == "summarise"]
            _ack(fd, op="consolidate", made=made)
        else:
            memory.sleep(scope=scope)
            _ack(fd, op="sleep")


# every batch of write_batches_until_killed rewrites the card: the card is current after
# each batch committed, so a card behind its notes is a batch committed in part
EVERY_BATCH = Config(search_min_notes=0, profile=ProfileRules(rewrite_every=1))
BATCH = 4
_DOINGS = (
    "started learning the cello",
    "booked a trip to Kyoto",
    "switched my commute to cycling",
    "adopted a grey cat called Pixel",
    "joined a Thursday climbing group",
    "planted tomatoes on the balcony",
    "finished reading Middlemarch",
)


def batch_texts(n: int) -> list[str]:
    """The turns of the batch starting at turn ``n``: news of the user's own, one naming
    a coworker Mia (a sister Mia is in the first batch: each such note opens a conflict),
    and one saying where the user lives now (each replaces the last: a supersession)."""
    texts = [
        f"My coworker Mia reviewed my report number {n}.",
        f"I moved to flat {n} on Rua {n // BATCH} this month.",
    ]
    texts += [f"I {_DOINGS[(n + k) % len(_DOINGS)]} in week {n + k}." for k in range(2)]
    if n == 0:
        texts[0] = "My sister Mia lives in Porto."
    return texts


def write_batches_until_killed(store: str, errors: str) -> None:
    """Write batches of ``BATCH`` turns to ``store`` (user ana), one after the other, until
    killed; the turns of each are said a minute apart and go on from what is stored."""
    try:
        with Memory(url_of(store), config=EVERY_BATCH) as memory:
            n = memory.count(Kind.EPISODE)
            while True:
                at = [SAID + timedelta(minutes=n + k) for k in range(BATCH)]
                turns = [memory.turn(t, scope="ana", at=a) for t, a in zip(batch_texts(n), at)]
                memory.write_many(turns)
                n += BATCH
    except BaseException:
        Path(errors).write_text(traceback.format_exc(), encoding="utf-8")
        os._exit(3)


def _turn(scope: Any, role: str, text: str, result: Any) -> dict[str, Any]:
    note = result.note
    return {
        "ep": result.episode_id,
        "scope": list(scope.parts()),
        "role": role,
        "text": text,
        # the turn's own note (a merge strengthens another note: that one must exist too)
        "note": None if note is None else note.id,
        "own_note": note is not None and note.id == note_id(result.episode_id),
    }


def race_process(store: str, out: str, worker: int, ops: int, seed: int) -> None:
    """One side of the two-process race: open the (possibly brand-new) store at the same
    moment as the other side, race, and leave what it saw in ``out``."""
    log = RaceLog()
    try:
        with Memory(url_of(store), config=BUSY) as memory:
            race(memory, worker=worker, ops=ops, seed=seed, log=log)
    except BaseException:
        log.errors.append(traceback.format_exc())
    Path(out).write_text(json.dumps(log.to_json()), encoding="utf-8")


_CONTEXT: ForkServerContext | None = None


def recall_ids(store: str, ann_rows: str, scope: str, queries: list[str], out: str) -> None:
    """The ids each of ``queries`` recalls in ``scope``, as JSON in ``out`` (the graph
    tests run a recall on a damaged graph file here: a crash is this child's, not pytest's)."""
    os.environ["COMMONPLACE_ANN_ROWS"] = ann_rows
    with Memory(url_of(store), config=BUSY) as memory:
        found = [[i.record.id for i in memory.recall(q, scope=scope).items] for q in queries]
    Path(out).write_text(json.dumps(found), encoding="utf-8")


def forget_in_child(store: str, ann_rows: str, scope: str, ids: list[str]) -> None:
    """Forget ``ids`` (or, with none, all of ``scope``) from a process of its own."""
    os.environ["COMMONPLACE_ANN_ROWS"] = ann_rows
    with Memory(url_of(store), config=BUSY) as memory:
        memory.recall("chess", scope=scope)  # it holds the graph too
        if not ids:
            memory.forget_scope(scope)
        for rid in ids:
            memory.forget(rid, scope=scope)


def start(target: Any, *args: Any) -> BaseProcess:
    """Start ``target(*args)`` in a child forked from a server that imported this module."""
    global _CONTEXT
    if _CONTEXT is None:
        context = multiprocessing.get_context("forkserver")
        assert isinstance(context, ForkServerContext)
        context.set_forkserver_preload(["crash_child"])
        # The server imports this module by name (and silently skips it if it cannot):
        # make sure it can, whatever the working directory.
        here, before = str(Path(__file__).resolve().parent), os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join([here, *([before] if before else [])])
        try:
            multiprocessing.forkserver.ensure_running()
        finally:
            if before is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = before
        _CONTEXT = context
    process = _CONTEXT.Process(target=target, args=args, daemon=True)
    process.start()
    return process


def kill_after(delay: float, errors: Path, target: Any, *args: Any, life: int = 0) -> None:
    """Run ``target(*args)`` in a child (see :func:`start`), SIGKILL it after ``delay``
    seconds, and check it died of the kill, not of an error of its own (a child writes its
    traceback to ``errors``)."""
    child = start(target, *args)
    child.join(delay)
    child.kill()
    child.join(60)
    assert not errors.exists(), f"the writer failed on its own:\n{errors.read_text()}"
    assert child.exitcode == -signal.SIGKILL, f"life {life}: exit code {child.exitcode}"
    child.close()


if __name__ == "__main__":
    store_arg, acks_arg = sys.argv[1], sys.argv[2]
    seed_arg = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    write_until_killed(store_arg, acks_arg, acks_arg + ".error", seed_arg)
