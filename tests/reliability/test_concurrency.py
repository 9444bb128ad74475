"""Many writers at once: threads, asyncio tasks and processes on one store.

Every racer writes its own turns and turns every other racer writes too, recalls, gives
feedback (sometimes twice on one recall, from two racers), consolidates and runs the
lifecycle. Afterwards the store must hold each turn exactly once (and report it created
exactly once), every counter must equal what the racers saw happen (no lost update),
and the race must have ended by itself: a deadlock shows up as a racer still running
after a generous bounded join, which fails the test.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.process import BaseProcess
from pathlib import Path

import crash_child
from reliability_support import (
    BUSY,
    SEED,
    SIZES,
    VARIANT,
    RaceLog,
    describe,
    integrity_problems,
    merge_logs,
    race,
    race_problems,
    tally,
    url_of,
)

from commonplace import Kind, Memory

# A generous bound on the whole race (the short one takes seconds, the long one about ten
# minutes on two cores): a racer still running after it is deadlocked, and the test fails.
DEADLINE_SECONDS = 600.0 if VARIANT == "short" else 7200.0


def join_all(workers: list[threading.Thread] | list[BaseProcess]) -> None:
    """Wait for every worker, all within one deadline."""
    end = time.monotonic() + DEADLINE_SECONDS
    for worker in workers:
        worker.join(max(0.0, end - time.monotonic()))


def test_threads_and_asyncio_tasks_race_on_one_store(tmp_path: Path) -> None:
    store = tmp_path / "memory.db"
    shared = Memory(url_of(store), config=BUSY)
    own: list[Memory] = []
    n = SIZES.race_workers
    logs = [RaceLog() for _ in range(2 * n)]
    start = threading.Barrier(n + 1)
    recalls: list[object] = []  # every racer gives feedback on every racer's recalls

    def thread_worker(i: int) -> None:
        # half the threads share one Memory (one connection), the others open their own
        memory = shared if i % 2 else Memory(url_of(store), config=BUSY)
        if memory is not shared:
            own.append(memory)
        start.wait()
        race(memory, worker=i, ops=SIZES.race_ops, seed=SEED, log=logs[i], recalls=recalls)

    async def tasks() -> None:
        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(max_workers=n) as pool:
            start.wait()
            await asyncio.gather(
                *(
                    loop.run_in_executor(
                        pool,
                        lambda i=i: race(
                            shared,
                            worker=n + i,
                            ops=SIZES.race_ops,
                            seed=SEED,
                            log=logs[n + i],
                            recalls=recalls,
                        ),
                    )
                    for i in range(n)
                )
            )

    threads = [threading.Thread(target=thread_worker, args=(i,), daemon=True) for i in range(n)]
    threads.append(threading.Thread(target=lambda: asyncio.run(tasks()), daemon=True))
    for thread in threads:
        thread.start()
    join_all(threads)
    stuck = [t.name for t in threads if t.is_alive()]
    assert not stuck, f"deadlock: {stuck} still running after {DEADLINE_SECONDS:.0f}s"
    for memory in [shared, *own]:
        memory.close()
    total = merge_logs(logs)
    tally("operations raced (threads and asyncio tasks)", total.ops)
    problems = race_problems(store, total)
    assert not problems, describe(problems)
    # the race was a race: feedback landed, and some came second and was refused
    assert total.feedback_taken > 0 and total.used, "no feedback landed"
    assert total.feedback_refused > 0, "no recall got feedback twice"
    with Memory(url_of(store), config=BUSY) as memory:
        assert memory.count(Kind.EPISODE) == len(total.turns)


def test_two_processes_race_on_one_new_file(tmp_path: Path) -> None:
    """Both processes create the store at the same moment, then race on it."""
    store = tmp_path / "memory.db"
    outs = [tmp_path / f"race-{i}.json" for i in range(2)]
    children = [
        crash_child.start(
            crash_child.race_process, str(store), str(out), i, SIZES.process_ops, SEED
        )
        for i, out in enumerate(outs)
    ]
    join_all(children)
    stuck = [c.pid for c in children if c.is_alive()]
    for child in children:
        child.kill()
        child.join()
    assert not stuck, f"deadlock: processes {stuck} still running after {DEADLINE_SECONDS:.0f}s"
    assert [c.exitcode for c in children] == [0, 0]
    total = merge_logs(RaceLog.from_json(json.loads(out.read_text())) for out in outs)
    tally("operations raced (two processes)", total.ops)
    problems = race_problems(store, total)
    assert not problems, describe(problems)
    assert integrity_problems(store) == []


def test_many_processes_open_one_new_file_at_once(tmp_path: Path) -> None:
    """Creating a store is a race too: every opener must get the same, healthy store."""
    for attempt in range(3 if VARIANT == "short" else 30):
        store = tmp_path / f"new-{attempt}.db"
        outs = [tmp_path / f"open-{attempt}-{i}.json" for i in range(4)]
        children = [
            crash_child.start(crash_child.race_process, str(store), str(out), i, 2, SEED)
            for i, out in enumerate(outs)
        ]
        join_all(children)
        assert [c.exitcode for c in children] == [0] * len(children)
        total = merge_logs(RaceLog.from_json(json.loads(out.read_text())) for out in outs)
        tally("processes opening a new store at once", len(children))
        assert not total.errors, describe(total.errors)
        assert integrity_problems(store) == []


def test_a_procedure_keeps_its_counts_and_pin_when_a_new_request_confirms_it(
    tmp_path: Path,
) -> None:
    """Consolidation rewrites a procedure whole; what use and the user gave it survives."""
    with Memory(url_of(tmp_path / "m.db"), config=BUSY) as memory:
        for text in ("Can you draft my weekly report?", "Please draft my weekly report again."):
            memory.write(text, scope="ana")
        (made,) = [
            a.record_id
            for a in memory.consolidate(scope="ana").actions
            if a.action == "new_procedure"
        ]
        memory.pin(made, scope="ana")
        found = memory.recall("draft my weekly report", scope="ana")
        assert made in found.included
        memory.feedback(found.id, used=[made])
        memory.write("Could you draft my weekly report once more?", scope="ana")
        assert "promote_procedure" in {a.action for a in memory.consolidate(scope="ana").actions}
        after = memory.explain(made).record
        assert after.pinned and after.used_count == 1 and after.tier.value == "hot"
        assert "once more" in after.text
