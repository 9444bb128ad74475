"""A chat loop with memory around any OpenAI-style chat client.

Use this when you call the model yourself (OpenAI, or any server with the same
``chat.completions.create`` API): each user turn is written to memory, the recalled context
goes in as a system message, the reply is kept as evidence (never as a note), and feedback
tells memory which notes the reply used.

    python examples/cookbook/chat_loop.py

The client is an offline stub with the same call shape; use ``openai.OpenAI()`` instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from commonplace import Memory


@dataclass
class Message:
    content: str


@dataclass
class Choice:
    message: Message


@dataclass
class Completion:
    id: str
    choices: list[Choice]


class FakeCompletions:
    def __init__(self) -> None:
        self.calls = 0

    def create(self, *, model: str, messages: list[dict[str, str]]) -> Completion:
        # Repeat the first remembered note, as a real model would draw on it, and invent
        # something about itself: neither may ever become a note about the user.
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        notes = [line[2:] for line in system.splitlines() if line.startswith("- ")]
        remembered = f" I remember: {notes[0]}" if notes else ""
        reply = f"Got it.{remembered} (My own sister lives in Madrid.)"
        self.calls += 1
        return Completion(f"chatcmpl-{self.calls}", [Choice(Message(reply))])


class FakeChat:
    def __init__(self) -> None:
        self.completions = FakeCompletions()


class FakeOpenAI:
    """Stands in for ``openai.OpenAI()``: ``client.chat.completions.create(...)``."""

    def __init__(self) -> None:
        self.chat = FakeChat()


def chat_turn(client: Any, memory: Memory, user: str, text: str, message_id: str) -> str:
    # Recall before writing the turn, so the context is what was known before it.
    recall = memory.recall(text, scope=user)
    # Write the turn before calling the model: a failing model call must not lose it.
    # key= is the message id: without it, the same words said twice are stored once.
    written = memory.write(text, scope=user, key=message_id)
    print(f"user: {text}\n  note: {written.note.text if written.note else written.skipped}")
    context = recall.render()  # the compiled memory block; "" while there is none
    messages = [{"role": "system", "content": context}] if context else []
    messages.append({"role": "user", "content": text})  # add the thread's history as usual
    completion = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    reply = str(completion.choices[0].message.content)
    kept = memory.write(reply, role="assistant", scope=user, key=completion.id)
    assert kept.note is None  # the assistant's words are evidence, never memory
    print(f"assistant: {reply}\n  note: none ({kept.skipped})")
    feedback = memory.feedback(recall.id, reply=reply)  # used notes get stronger
    print(f"  feedback: {len(feedback.used)} used, {len(feedback.ignored)} ignored")
    return reply


def main() -> None:
    client = FakeOpenAI()
    conversation = [
        "Hi! I just moved to Porto with my partner Joana.",
        "ok",
        "I work night shifts as a nurse at the children's hospital.",
        "Any ideas for a weekend trip with my partner?",
    ]
    with Memory("sqlite:///:memory:") as memory:
        replies = [
            chat_turn(client, memory, "ana", text, message_id=f"msg-{n}")
            for n, text in enumerate(conversation)
        ]
        final = memory.recall("where does my sister live?", scope="ana").render()
        print("\nmemory now:\n" + final)

        assert "Joana" in replies[-1]  # the last reply drew on the first turn's note
        assert "Madrid" not in final  # what the assistant said about itself is not memory
        assert memory.count("note", scope="ana") == 3  # "ok" left no note
        assert memory.count("episode", scope="ana") == 8  # every turn, both roles, is kept
    print("chat_loop: the model saw its memory; its own words never became notes")


if __name__ == "__main__":
    main()
