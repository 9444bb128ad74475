"""A support bot serving many customers, each with several tickets (threads).

Use this when one agent talks to many users: write every turn with the full scope
``{"user": ..., "agent": ..., "thread": ...}`` and recall at the level the reply needs.
A user never sees another user's memory; a thread-level recall sees that ticket (and the
user's profile card), a user-level recall sees every ticket of that user.

    python examples/cookbook/multi_user_support.py
"""

from __future__ import annotations

from commonplace import Memory, Recall

AGENT = "support-bot"
TICKETS = {
    ("ana", "t-100"): [
        "My name is Ana.",
        "My router keeps dropping the wifi every evening.",
        "I am on the Fibre 500 plan.",
    ],
    ("ana", "t-101"): [
        "I prefer to be contacted by email.",
        "My March invoice was charged twice.",
    ],
    ("bob", "t-200"): [
        "My TP-Link router has a blinking red light.",
        "I am on the Basic 100 plan.",
    ],
}


def scope_of(user: str, thread: str | None = None) -> dict[str, str]:
    scope = {"user": user, "agent": AGENT}
    return scope if thread is None else {**scope, "thread": thread}


def show(title: str, recall: Recall) -> None:
    print(f"\n--- {title} ---")
    for item in recall.items:
        print(f"  [{item.record.scope.thread}] {item.record.text}")
    if recall.profile:
        print("  profile card: " + recall.profile.replace("\n", "; "))


def main() -> None:
    with Memory("sqlite:///:memory:") as memory:
        for (user, thread), lines in TICKETS.items():
            for line in lines:
                memory.write(line, scope=scope_of(user, thread))
        memory.rewrite_profile(scope=scope_of("ana"))  # normally every few notes, by itself

        question = "what plan is the user on and what is wrong with the router?"
        bob = memory.recall(question, scope=scope_of("bob"))
        show("bob, user level", bob)
        # Isolation: nothing of Ana's reaches Bob, however close the question.
        assert all(item.record.scope.user == "bob" for item in bob.items)
        assert "Fibre" not in bob.render() and "Ana" not in bob.render()

        # A thread-level recall: this ticket's notes, plus Ana's profile card.
        ticket = memory.recall(question, scope=scope_of("ana", "t-101"))
        show("ana, ticket t-101", ticket)
        assert {item.record.scope.thread for item in ticket.items} == {"t-101"}
        assert "name Ana" in ticket.render()  # the card is kept at the user level

        # A user-level recall: every ticket of Ana's, e.g. for a new ticket's first reply.
        everything = memory.recall(question, scope=scope_of("ana"))
        show("ana, user level", everything)
        assert {item.record.scope.thread for item in everything.items} == {"t-100", "t-101"}
        assert "Fibre 500" in everything.render() and "TP-Link" not in everything.render()

        # An agent-only scope sees every user's memory under the agent: fine for
        # analytics, never for a reply to one user.
        notes = memory.count("note", scope={"agent": AGENT})
        print(
            f"\nnotes under {AGENT}: {notes} (ana {memory.count(scope='ana')}, bob "
            f"{memory.count(scope='bob')})"
        )
        assert notes == memory.count(scope="ana") + memory.count(scope="bob")
    print("multi_user_support: no user's memory reached another user's recall")


if __name__ == "__main__":
    main()
