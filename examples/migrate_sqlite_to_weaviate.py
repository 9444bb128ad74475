"""Move a memory store from the embedded SQLite file to Weaviate, and prove nothing was lost.

A few weeks of conversation with two users go into an SQLite store; the migration
copies episodes, notes, summaries, vectors, provenance, counters, the use log, links,
the audit log, recall logs, conflicts and profile cards into Weaviate, then counts
both sides and compares every vector. Finally both stores answer the same questions.

    python examples/migrate_sqlite_to_weaviate.py                     # a local Weaviate
    python examples/migrate_sqlite_to_weaviate.py "weaviate://127.0.0.1:8080?grpc_port=50051"

Without a URL (or $COMMONPLACE_WEAVIATE_URL) the pinned Weaviate is built once with
``go install`` (cached) and started on 127.0.0.1 for the run. The same migration is
one command for your own store:

    commonplace-weaviate migrate --from sqlite:///memory.db --to weaviate://127.0.0.1:8080
"""

from __future__ import annotations

import argparse
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from commonplace import ManualClock, Memory
from commonplace_weaviate import WeaviateBackend, migrate
from commonplace_weaviate.server import LocalServer, install

CONVERSATION = {
    "ana": [
        "I live in Lisbon with my partner Joana.",
        "I work as a nurse at the children's hospital.",
        "My brother Tom plays the cello in an orchestra.",
        "I moved to Porto last week, the flat is near the river.",
        "I am learning to surf on weekends.",
    ],
    "bob": [
        "I am a software engineer in Berlin.",
        "I love climbing and jazz.",
        "My daughter Lena was born in March.",
    ],
}
QUESTIONS = [
    ("ana", "where does the user live now?"),
    ("ana", "what does the user's brother do?"),
    ("bob", "what are the user's hobbies?"),
]


def build_sqlite_store(url: str, clock: ManualClock) -> None:
    with Memory(url, clock=clock) as memory:
        for user, lines in CONVERSATION.items():
            for line in lines:
                clock.advance(days=2)
                memory.write(line, scope=user)
                memory.write(f"Thanks for telling me: {line}", role="assistant", scope=user)
        for user, question in QUESTIONS:
            recall = memory.recall(question, scope=user)
            if recall.included:
                memory.feedback(recall.id, used=list(recall.included[:1]))
        for user in CONVERSATION:
            memory.sleep(scope=user)
            memory.rewrite_profile(scope=user)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", nargs="?", default=os.environ.get("COMMONPLACE_WEAVIATE_URL"))
    parser.add_argument("--drop", action="store_true", help="delete the Weaviate store after")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="commonplace-migration-"))
    node = None
    url = args.url
    if not url:
        node = LocalServer(install().path, data_dir=folder / "weaviate")
        print(f"started Weaviate in {node.start():.1f}s at {node.url}")
        url = node.url
    target = url + ("&" if "?" in url else "?") + "prefix=MigrationExample"
    source = f"sqlite:///{folder / 'memory.db'}"
    clock = ManualClock(datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc))
    try:
        build_sqlite_store(source, clock)
        report = migrate(source, target, progress=lambda what, n: None)
        print(report.table())
        print("verified: every count matches" if report.ok else "MISMATCH")
        with Memory(source, clock=clock) as old, Memory(target, clock=clock) as new:
            for user, question in QUESTIONS:
                a, b = old.recall(question, scope=user), new.recall(question, scope=user)
                # the same memory is shown, best answer first (backends may order a tail
                # of equally weak matches differently: their keyword stemmers differ)
                same = set(a.included) == set(b.included) and (
                    a.items[:1] and b.items[:1] and a.items[0].record.id == b.items[0].record.id
                )
                best = b.items[0].record.text if b.items else "(nothing)"

                print(f"{user}: {question!r} -> {best!r} (same context: {bool(same)})")
    finally:
        if args.drop:
            with WeaviateBackend(target) as backend:
                backend.drop()
        if node is not None:
            node.stop()


if __name__ == "__main__":
    main()
