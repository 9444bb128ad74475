"""Move a memory store from its SQLite file to a Weaviate server.

Use this when one file is no longer enough (many users, several app servers): the
migration copies everything (episodes, notes, summaries, vectors, counters, links, logs,
profile cards), then counts both sides and compares every vector. Stop the writers first;
an interrupted migration is finished by running it again. Needs ``commonplace-weaviate``
and a running Weaviate: its URL comes from the first argument or
``$COMMONPLACE_WEAVIATE_URL``.

    python examples/cookbook/move_to_weaviate.py "weaviate://127.0.0.1:8080?grpc_port=50051"

For your own store the same is one command:
``commonplace-weaviate migrate --from sqlite:///memory.db --to weaviate://host:8080``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import uuid
from pathlib import Path

from commonplace import Memory
from commonplace_weaviate import WeaviateBackend, migrate

LINES = {
    "ana": [
        "I live in Lisbon with my partner Joana.",
        "I work as a nurse at the children's hospital.",
        "I moved to Porto.",
    ],
    "bob": ["I am a software engineer in Berlin.", "I love climbing and jazz."],
}


def weaviate_url() -> str:
    url = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("COMMONPLACE_WEAVIATE_URL")
    if not url:
        sys.exit("give a Weaviate URL: move_to_weaviate.py weaviate://host:8080?grpc_port=50051")
    # prefix= names the store's collections: a fresh one, so this demo touches nothing else
    prefix = f"Cookbook{uuid.uuid4().hex[:8].upper()}"
    return url + ("&" if "?" in url else "?") + f"prefix={prefix}"


def main() -> None:
    target = weaviate_url()
    with tempfile.TemporaryDirectory() as folder:  # removed afterwards, with the store
        source = f"sqlite:///{Path(folder) / 'memory.db'}"
        with Memory(source) as memory:  # the store you have been running on
            for user, lines in LINES.items():
                for line in lines:
                    memory.write(line, scope=user)
            before = memory.recall("where does the user work?", scope="ana")

        try:
            report = migrate(source, target, progress=lambda what, n: print(f"  copied {n} {what}"))
            print(report.table())
            with Memory(target) as memory:  # from now on, open the Weaviate URL instead
                after = memory.recall("where does the user work?", scope="ana")
                print(f"on Weaviate: {after.items[0].record.text!r}")
                assert memory.count("note", scope="ana") == 3 and memory.count(scope="bob") == 2
            assert report.ok  # every count matches and every vector is the same
            assert after.items[0].record.id == before.items[0].record.id  # the same memory
        finally:
            with WeaviateBackend(target) as backend:  # a demo: leave nothing behind
                backend.drop()
        print("move_to_weaviate: every count and vector matched; the same memory answers")


if __name__ == "__main__":
    main()
