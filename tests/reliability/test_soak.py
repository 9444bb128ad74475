"""A bounded soak: many mixed operations, with memory and file size sampled as it runs.

The short variant (the default) runs 2,000 operations; ``nox -s reliability`` runs the
long one, 100,000 (``COMMONPLACE_RELIABILITY=long``). The mix: single and batched writes
(among many users and threads, so the data keeps growing), recalls, feedback,
consolidation, the whole lifecycle with simulated time passing (years of it, so decay
and forgetting act), forgetting records and whole scopes, provenance lookups.

Growth must be explained by the data written:

- the file (database and log) stays within a fixed factor of the bytes of data its
  tables hold (``logical_bytes``), and the log never grows without bound;
- the process's resident memory grows by no more than what the data in memory accounts
  for: the vector cache (as allocated: one float32 row per note, in per-scope blocks that
  grow by doubling) and the bounded caches (the embedder's feature buckets and words,
  the content-word cache), plus a fixed allowance for the allocator. In the long variant a
  leak of a few hundred bytes per operation exceeds that allowance; the short variant is
  a smoke test of the same accounting.
"""

from __future__ import annotations

import random
from pathlib import Path

from reliability_support import (
    CITIES,
    DOINGS,
    NAMES,
    RELATIONS,
    SEED,
    SIZES,
    T0,
    describe,
    file_bytes,
    integrity_problems,
    logical_bytes,
    rss_bytes,
    tally,
    url_of,
)

from commonplace import Config, Kind, ManualClock, Memory, Scope
from commonplace._text import _content_terms

MiB = 1 << 20
FILE_FACTOR = 3.0  # indexes, the full-text index, page slack: measured at 1.9 to 2.0
FILE_ALLOWANCE = 6 * MiB  # an empty store, and a log of up to ~1000 pages between checkpoints
LOG_LIMIT = 16 * MiB  # four times the automatic checkpoint's threshold
RSS_ALLOWANCE = 48 * MiB  # the allocator's slack, measured at 10 to 15 MiB
BUCKET_BYTES = 400  # an embedder cache entry: the feature string, its code, the dict slot
WORD_BYTES = 1024  # an embedder word entry: the word, its stem and trigram strings, tuples
TERMS_BYTES = 1536  # a content-word cache entry: the text and its frozenset (~1.2 KiB)
ADJECTIVES = ("old", "new", "small", "big", "quiet", "loud", "kind", "busy", "calm", "shy")


def text_of(rng: random.Random) -> str:
    """Turns from a bounded vocabulary in many combinations: the data grows, the set of
    words (and so the embedder's feature cache) does not."""
    roll = rng.random()
    if roll < 0.7:
        return (
            f"My {rng.choice(ADJECTIVES)} {rng.choice(RELATIONS)} {rng.choice(NAMES)} "
            f"{rng.choice(DOINGS)} in {rng.choice(CITIES)}."
        )
    if roll < 0.8:
        return f"I live in {rng.choice(CITIES)} with my {rng.choice(RELATIONS)}."
    if roll < 0.9:
        return f"Can you draft my {rng.choice(ADJECTIVES)} report for {rng.choice(NAMES)}?"
    return rng.choice(("ok", "thanks!", "lol"))


def test_a_long_mixed_workload_grows_only_with_its_data(tmp_path: Path) -> None:
    path = tmp_path / "soak.db"
    rng = random.Random(SEED)
    clock = ManualClock(T0)
    users = [f"user{i}" for i in range(200)]

    def scope() -> Scope:
        return Scope(user=rng.choice(users), thread=rng.choice((None, "t1", "t2", "t3")))

    ops = SIZES.soak_ops
    every = max(1, ops // 25)
    samples: list[dict[str, float]] = []
    recalls: list[tuple[str, Scope]] = []
    problems: list[str] = []
    with Memory(url_of(path), config=Config(search_min_notes=0), clock=clock) as memory:
        baseline = 0
        for n in range(ops):
            clock.advance(minutes=rng.uniform(0, 30))
            roll = rng.random()
            if roll < 0.40:
                memory.write(
                    text_of(rng), scope=scope(), role="assistant" if rng.random() < 0.1 else "user"
                )
            elif roll < 0.45:
                where = scope()
                memory.write_many([memory.turn(text_of(rng), scope=where) for _ in range(5)])
            elif roll < 0.75:
                found = memory.recall(text_of(rng), scope=scope())
                if found.included:
                    recalls.append((found.id, found.scope))
                    if len(found.included) > 1 and rng.random() < 0.3:
                        memory.explain(found.included[0])
            elif roll < 0.85 and recalls:
                rid, _ = recalls.pop(rng.randrange(len(recalls)))
                memory.feedback(rid, reply=text_of(rng))
            elif roll < 0.89:
                memory.consolidate(scope=Scope(user=rng.choice(users)))
            elif roll < 0.91:
                memory.sleep(scope=Scope(user=rng.choice(users)))
            elif roll < 0.96:
                found = memory.recall(text_of(rng), scope=(who := scope()))
                if found.included:
                    memory.forget(found.included[-1], scope=who)
            elif roll < 0.965:
                gone = Scope(user=rng.choice(users), thread="t3")
                memory.forget_scope(gone)
                recalls = [(r, s) for r, s in recalls if not gone.contains(s)]
            else:
                memory.count(Kind.NOTE, scope=scope())
            if n == ops // 10:
                baseline = rss_bytes()  # after warm-up: tokenizer, numpy, first caches
            if n % every == every - 1:
                samples.append(_sample(memory, path, n + 1))
        final = _sample(memory, path, ops)
    tally("soak operations", ops)
    for s in samples:
        if s["file"] > FILE_FACTOR * s["logical"] + FILE_ALLOWANCE:
            problems.append(f"file {s['file']:.0f} B for {s['logical']:.0f} B of data at {s}")
        if s["log"] > LOG_LIMIT:
            problems.append(f"the log grew to {s['log']:.0f} B at {s}")
    explained = (
        final["vectors"]
        + final["buckets"] * BUCKET_BYTES
        + final["words"] * WORD_BYTES
        + final["terms"] * TERMS_BYTES
        + RSS_ALLOWANCE
    )
    grown = final["rss"] - baseline
    tally("soak: memory grown (MiB)", round(grown / MiB))
    tally("soak: memory the data explains (MiB)", round(explained / MiB))
    tally("soak: file at the end (MiB)", round(final["file"] / MiB))
    tally("soak: data in its tables at the end (MiB)", round(final["logical"] / MiB))
    if grown > explained:
        problems.append(
            f"memory grew {grown / MiB:.1f} MiB, the data explains "
            f"{explained / MiB:.1f} MiB: {final}"
        )
    problems += integrity_problems(path)
    table = "\n".join(
        f"{s['ops']:>8.0f} ops  rss {s['rss'] / MiB:7.1f} MiB  file "
        f"{s['file'] / MiB:7.2f} MiB  data {s['logical'] / MiB:7.2f} MiB  "
        f"notes {s['notes']:>7.0f}"
        for s in samples
    )
    assert not problems, describe(problems) + "\n" + table
    assert final["notes"] > 0 and final["episodes"] > ops // 10


def _sample(memory: Memory, path: Path, ops: int) -> dict[str, float]:
    index = getattr(memory.backend, "_index", None)
    blocks = getattr(index, "_blocks", {})
    return {
        "ops": ops,
        "rss": rss_bytes(),
        "file": file_bytes(path),
        "log": Path(f"{path}-wal").stat().st_size if Path(f"{path}-wal").exists() else 0,
        "logical": logical_bytes(path),
        "notes": memory.count(Kind.NOTE),
        "episodes": memory.count(Kind.EPISODE),
        # what the in-memory data is made of, to explain the process's growth
        "vectors": sum(b.matrix.nbytes + b.seqs.nbytes for b in blocks.values()),
        "buckets": len(getattr(memory.embedder, "_codes", {})),
        "words": len(getattr(memory.embedder, "_words", {})),
        "terms": _content_terms.cache_info().currsize,
    }
