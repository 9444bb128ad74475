"""CommonplaceMemory on its own: what get() returns, what put() writes, what is isolated."""

from __future__ import annotations

import asyncio

from li_support import assert_firewall, evidence_of, notes_of
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.utils import get_tokenizer

from commonplace import Kind, Memory, Role, count_tokens
from commonplace_llamaindex import CommonplaceMemory

PORTO = "I just moved to Porto with my partner Joana."
NURSE = "I work as a night nurse at the children's hospital."
CAT = "I have a grumpy old cat called Miso."
SISTER = "My sister Rita teaches maths in Braga."


def user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text)


def assistant(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def make(store: Memory, **options: object) -> CommonplaceMemory:
    options.setdefault("user_id", "ana")
    return CommonplaceMemory.from_defaults(store, **options)  # type: ignore[arg-type]


def tell(store: Memory, *texts: str, **options: object) -> None:
    """An earlier session in which the user said ``texts`` (all written by its end)."""
    earlier = make(store, **options)
    earlier.put_messages([user(t) for t in texts])
    earlier.flush()


def test_a_user_message_becomes_a_note_and_an_assistant_message_does_not(store: Memory) -> None:
    memory = make(store, session_id="s1")
    memory.put(user(PORTO))
    memory.put(assistant("Lovely! Say hi to your brother Tom, the pilot who lives in Faro."))

    notes = notes_of(store, "ana")
    assert [n.text for n in notes] == [
        "The user just moved to Porto with the user's partner Joana."
    ]
    (episode,) = evidence_of(store, notes[0].id)
    assert episode.role is Role.USER and episode.text == PORTO
    assert episode.scope.thread == "s1"  # the session is the note's thread
    assert store.count(Kind.EPISODE, scope="ana") == 1  # the reply was not logged at all
    assert [m.role for m in memory.get_all()] == [MessageRole.USER, MessageRole.ASSISTANT]
    assert_firewall(store, "ana", forbidden=["Tom", "pilot", "Faro"])


def test_a_turn_recalls_what_was_known_before_it_and_is_written_after(store: Memory) -> None:
    tell(store, NURSE, CAT, SISTER, PORTO, session_id="earlier")
    memory = make(store, session_id="now")
    memory.put(user("Who is my partner?"))
    assert store.count(Kind.EPISODE, scope="ana") == 4  # not written before its recall

    system = str(memory.get()[0].content)

    relevant = system.split("Relevant notes:")[1]
    assert "partner Joana" in relevant  # not pushed under the gate by the question itself
    assert "Who is my partner" not in system
    assert store.count(Kind.EPISODE, scope="ana") == 5  # written right after the recall


def test_a_user_message_is_written_by_the_next_message_at_the_latest(store: Memory) -> None:
    memory = make(store)
    memory.put(user(PORTO))
    assert notes_of(store, "ana") == []
    memory.put(assistant("Welcome!"))
    assert len(notes_of(store, "ana")) == 1


def test_closing_writes_what_is_pending(db_url: str) -> None:
    memory = CommonplaceMemory.from_defaults(url=db_url, user_id="ana")
    memory.put(user(PORTO))
    memory.close()
    with Memory(db_url) as reopened:
        assert [n.text for n in notes_of(reopened, "ana")] == [
            "The user just moved to Porto with the user's partner Joana."
        ]


def test_get_puts_the_compiled_memory_first_as_a_system_message(store: Memory) -> None:
    memory = make(store)
    memory.put(user(PORTO))
    memory.put(assistant("Welcome to Porto!"))

    messages = memory.get(input="who does the user live with?")

    assert messages[0].role is MessageRole.SYSTEM
    assert messages[0].content is not None
    assert "<memory>" in messages[0].content and "partner Joana" in messages[0].content
    assert messages[1:] == memory.get_all()


def test_the_profile_card_reaches_the_model(store: Memory) -> None:
    tell(store, PORTO, NURSE, CAT, SISTER, "I am training for the Porto half marathon.")
    card = store.recall("anything", scope="ana").profile
    assert card  # the core keeps a card once there are enough notes

    memory = make(store)
    memory.put(user("What should I cook tonight?"))
    system = str(memory.get()[0].content)

    for line in card.splitlines():
        assert line in system


def test_without_input_the_latest_user_message_is_the_query(store: Memory) -> None:
    tell(store, NURSE, session_id="earlier")
    memory = make(store, session_id="now")
    memory.put(user("What hospital do I work at?"))

    system = memory.get()[0]

    assert system.role is MessageRole.SYSTEM
    assert "night nurse" in str(system.content)


def test_with_nothing_to_recall_for_get_returns_the_history_only(store: Memory) -> None:
    make(store, session_id="earlier").put(user(PORTO))
    memory = make(store, session_id="now")
    assert memory.get() == []
    memory.put(assistant("Hello! How can I help?"))
    assert memory.get() == [assistant("Hello! How can I help?")]


def test_history_is_trimmed_to_the_token_limit_from_the_oldest_whole_turn(store: Memory) -> None:
    memory = make(store, token_limit=400)
    for day in range(30):
        memory.put(user(f"Day {day}: I walked the dog along the river for an hour."))
        memory.put(assistant(f"Day {day}: that sounds like a lovely walk, well done."))

    messages = memory.get(input="dog walks")
    tokens = [len(memory.tokenizer_fn(str(m.content))) for m in messages]

    assert messages[0].role is MessageRole.SYSTEM
    assert sum(tokens) <= 400
    assert tokens[0] <= 200  # the compiled memory takes at most half
    history = messages[1:]
    assert history[0].role is MessageRole.USER  # never starts mid-turn
    assert history == memory.get_all()[-len(history) :]  # the newest ones
    assert 2 < len(history) < 60


def test_initial_token_count_is_taken_off_the_limit(store: Memory) -> None:
    memory = make(store, token_limit=300)
    for day in range(20):
        memory.put(user(f"Day {day}: I practised the cello scales for an hour."))
    full = memory.get(input="cello")
    squeezed = memory.get(input="cello", initial_token_count=200)
    spent = sum(len(memory.tokenizer_fn(str(m.content))) for m in squeezed)
    assert spent <= 100 < sum(len(memory.tokenizer_fn(str(m.content))) for m in full)


def test_the_latest_message_is_kept_even_when_it_alone_is_over_the_limit(store: Memory) -> None:
    memory = make(store, token_limit=20)
    memory.put(assistant("hi"))
    long = assistant("a very long reply " * 20)
    memory.put(long)
    assert memory.get() == [long]


def test_set_replaces_the_history_without_writing_and_reset_keeps_the_notes(
    store: Memory,
) -> None:
    memory = make(store)
    memory.put(user(PORTO))
    memory.set([user("I have a cat called Miso."), assistant("Cute!")])
    assert [m.content for m in memory.get_all()] == ["I have a cat called Miso.", "Cute!"]
    assert [n.text for n in notes_of(store, "ana")] == [
        "The user just moved to Porto with the user's partner Joana."
    ]

    memory.reset()
    assert memory.get_all() == []
    assert len(notes_of(store, "ana")) == 1
    assert memory.get(input="partner") == []  # memory comes with a conversation
    memory.put(user("Who is my partner?"))
    assert "partner Joana" in str(memory.get()[0].content)


def test_chat_history_given_to_from_defaults_is_not_written(store: Memory) -> None:
    memory = make(store, chat_history=[user(PORTO), assistant("Nice.")])
    assert len(memory.get_all()) == 2
    assert notes_of(store, "ana") == []


def test_sessions_keep_their_own_history_and_share_the_notes(store: Memory) -> None:
    monday = make(store, session_id="monday")
    tuesday = make(store, session_id="tuesday")
    monday.put(user(PORTO))
    tuesday.put(user(NURSE))
    monday.flush()

    assert [m.content for m in monday.get_all()] == [PORTO]
    assert [m.content for m in tuesday.get_all()] == [NURSE]
    assert "partner Joana" in str(tuesday.get(input="partner Joana")[0].content)


def test_cross_session_off_keeps_notes_within_the_session(store: Memory) -> None:
    tell(store, PORTO, session_id="monday")
    private = make(store, session_id="tuesday", cross_session=False)
    private.put(user(NURSE))
    text = str(private.get(input="partner Joana Porto nurse")[0].content)
    assert "night nurse" in text and "Joana" not in text


def test_users_never_see_each_others_notes(store: Memory) -> None:
    ana = make(store, user_id="ana", session_id="same-session-id")
    bob = make(store, user_id="bob", session_id="same-session-id")
    ana.put(user(PORTO))
    bob.put(user("I live in Oslo with my husband Erik."))
    ana.flush()
    bob.flush()
    assert "Erik" in str(bob.get(input="husband")[0].content)

    bob_view = " ".join(str(m.content) for m in bob.get(input="partner Joana Porto"))
    assert "Joana" not in bob_view and "Porto" not in bob_view
    assert [m.content for m in ana.get_all()] == [PORTO]
    assert all("Erik" not in n.text for n in notes_of(store, "ana"))


def test_agents_of_one_user_are_isolated_when_named(store: Memory) -> None:
    tell(store, PORTO, agent_id="travel")
    health = make(store, agent_id="health")
    health.put(user(NURSE))
    text = str(health.get(input="partner Joana Porto nurse")[0].content)
    assert "night nurse" in text and "Joana" not in text


def test_a_tool_loop_counts_as_one_recall(store: Memory) -> None:
    tell(store, NURSE, CAT, SISTER, PORTO, session_id="earlier")  # enough notes to search
    (note,) = [n for n in notes_of(store, "ana") if "Joana" in n.text]
    memory = make(store)
    memory.put(user("Who is my partner?"))
    before = store.store.get_record(note.id)
    assert before is not None
    for _ in range(4):  # an agent asks once per model call
        memory.get()
    after = store.store.get_record(note.id)
    assert after is not None and after.access_count == before.access_count + 1
    memory.put(user("Tell me about Joana."))  # a new turn: recall again
    memory.get()
    again = store.store.get_record(note.id)
    assert again is not None and again.access_count == before.access_count + 2


def test_token_counts_agree_with_llama_index_and_commonplace(store: Memory) -> None:
    memory = make(store)
    texts = [PORTO, NURSE, "naïve café — 東京 🍣", "def f(x):\n    return x ** 2\n"]
    for text in texts:
        assert len(memory.tokenizer_fn(text)) == len(get_tokenizer()(text)) == count_tokens(text)


def test_the_async_twins_do_what_the_sync_methods_do(store: Memory) -> None:
    async def scenario() -> None:
        memory = make(store, session_id="async")
        await memory.aput(user(PORTO))
        await memory.aput(assistant("Welcome!"))
        await memory.aput_messages([user(NURSE), assistant("Hard work.")])
        got = await memory.aget(input="partner Joana")
        assert got[0].role is MessageRole.SYSTEM and "Joana" in str(got[0].content)
        assert got[1:] == await memory.aget_all() == memory.get_all()
        assert len(got) == 5
        await memory.aset([assistant("Fresh start.")])
        assert [m.content for m in await memory.aget_all()] == ["Fresh start."]
        await memory.areset()
        assert await memory.aget_all() == []

    asyncio.run(scenario())
    assert len(notes_of(store, "ana")) == 2
    assert_firewall(store, "ana", forbidden=["Welcome", "Hard work", "Fresh start"])


def test_sync_methods_work_inside_a_running_event_loop(store: Memory) -> None:
    async def inside_a_loop() -> list[ChatMessage]:
        memory = make(store)
        memory.put(user(PORTO))  # no nested loop: the sync path never starts one
        memory.set(memory.get_all())
        return memory.get(input="partner")

    messages = asyncio.run(inside_a_loop())
    assert "Joana" in str(messages[0].content)


def test_tool_calls_and_results_stay_whole_in_the_history(store: Memory) -> None:
    from llama_index.core.base.llms.types import ToolCallBlock

    memory = make(store)
    call = ChatMessage(
        role=MessageRole.ASSISTANT,
        blocks=[ToolCallBlock(tool_call_id="c1", tool_name="weather", tool_kwargs={"city": "x"})],
    )
    result = ChatMessage(
        role=MessageRole.TOOL, content="Sunny in Porto", additional_kwargs={"tool_call_id": "c1"}
    )
    memory.put_messages([user("Weather in Porto?"), call, result])
    assert memory.get_all()[1:] == [call, result]
    assert_firewall(store, "ana", forbidden=["Sunny"])
