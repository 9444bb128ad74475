"""A user's data export, then the right to be forgotten.

Use this when a user asks for their data, or to be forgotten: export everything memory
holds about them as JSON (every note with the provenance that justifies it, every raw
turn, the profile card), then forget one record with its evidence, or the whole user;
the counts prove nothing is left.

    python examples/cookbook/export_and_forget.py
"""

from __future__ import annotations

import json
from typing import Any

from commonplace import Kind, Memory
from commonplace.errors import NotFoundError

CONVERSATIONS = {
    "ana": [
        "I live in Lisbon with my partner Joana.",
        "ok",
        "I was diagnosed with asthma last year.",
        "I work as a nurse at the children's hospital.",
        "My brother Tom plays the cello.",
    ],
    "bob": ["I am a software engineer in Berlin.", "I love climbing and jazz."],
}


def export_user(memory: Memory, user: str) -> dict[str, Any]:
    """Everything the store holds about ``user``, as plain JSON data."""
    # export() gives every record (with the ids of what it was derived from) oldest first,
    # then every turn kept as evidence; explain(id) walks one record's chain in full
    rows = list(memory.export(scope=user))
    return {
        "user": user,
        "records": [row for row in rows if row["kind"] != "episode"],
        "episodes": [row for row in rows if row["kind"] == "episode"],
        "profile": memory.profile(scope=user).to_json(),
    }


def counts(memory: Memory, user: str) -> dict[str, int]:
    return {kind.value: memory.count(kind, scope=user) for kind in Kind}


def main() -> None:
    with Memory("sqlite:///:memory:") as memory:
        for user, lines in CONVERSATIONS.items():
            for line in lines:
                memory.write(line, scope=user)
                memory.write(f"Noted: {line}", role="assistant", scope=user)

        export = export_user(memory, "ana")
        document = json.dumps(export, indent=2, ensure_ascii=False)  # what the user receives
        print("first record of the export:")
        print(json.dumps(export["records"][0], indent=2, ensure_ascii=False))
        print(
            f"export: {len(export['records'])} records, {len(export['episodes'])} episodes, "
            f"{len(document)} characters of JSON"
        )
        print(f"ana before: {counts(memory, 'ana')}")
        assert len(export["episodes"]) == counts(memory, "ana")["episode"]

        # "Please forget what I told you about my health": the note and the turn behind it.
        target = next(r for r in export["records"] if "asthma" in r["text"])
        report = memory.forget(target["id"], scope="ana")  # include_evidence=True
        print(f"forgot {report.records} and their evidence {report.episodes}")
        # The assistant's reply that repeated it is an episode of its own, not the note's
        # evidence: forget() takes episode ids too.
        for echo in export["episodes"]:
            if echo["role"] == "assistant" and "asthma" in echo["text"]:
                gone = memory.forget(echo["id"], scope="ana").episodes
                print(f"forgot the reply that repeated it: {gone}")
        try:
            memory.explain(target["id"])
        except NotFoundError:
            print("explain() no longer finds it")
        else:
            raise AssertionError("the forgotten note is still there")
        context = memory.recall("what illness do I have?", scope="ana").render()
        assert "asthma" not in context
        after_one = counts(memory, "ana")
        print(f"ana after forgetting one note: {after_one}")

        # "Delete my account": everything in the user's scope, every thread included.
        removed = memory.forget_scope("ana")
        print(f"forget_scope removed: {removed}")
        after_all = counts(memory, "ana")
        print(f"ana after forget_scope: {after_all}   bob untouched: {counts(memory, 'bob')}")

        before = {kind: len(export[kind]) for kind in ("records", "episodes")}
        assert after_one["note"] == before["records"] - 1  # one note ...
        assert after_one["episode"] == before["episodes"] - 2  # ... its turn, and the echo
        assert all(n == 0 for n in after_all.values())
        assert export_user(memory, "ana")["records"] == []
        assert counts(memory, "bob")["note"] == 2  # only Ana's memory went
    print("export_and_forget: exported, then every record of the user is gone")


if __name__ == "__main__":
    main()
