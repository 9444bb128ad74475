"""The firewall holds for reported speech: what an assistant said is a quote, not a fact.

"You said I live in Paris" was already kept as a quote. The class this file generates is
the third-person form of the same thing: a user reporting what a machine told them
("The assistant told me ...", "According to ChatGPT, ...", "my AI assistant just said
..."). Every such turn must be written as a quote of the assistant, carry no fact key,
and leave the user's own fact in place. Reported speech of a person ("My mom told me I
was born in Lyon") stays the user's statement.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from reliability_support import SIZES, profile, tally

from commonplace import Memory, Modality
from commonplace.write import _lexicon as lex

DETERMINERS = ("", "the ", "my ", "your ", "this ", "an ", "a ")
ADVERBS = ("", "just ", "also ", "apparently ", "earlier ")
CLAIMS = ("I live in Paris", "my cat is called Tom", "I work at Initech", "I am vegetarian")


@st.composite
def reported_claim(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(lex.ASSISTANT_NAMES))
    claim = draw(st.sampled_from(CLAIMS))
    if draw(st.booleans()):
        det = draw(st.sampled_from(DETERMINERS))
        adverb = draw(st.sampled_from(ADVERBS))
        verb = draw(st.sampled_from(lex.REPORTING_VERBS))
        text = f"{det}{name} {adverb}{verb} {claim}."
    else:
        det = draw(st.sampled_from(DETERMINERS[:4]))
        text = f"According to {det}{name}, {claim}."
    if draw(st.booleans()):
        text = text.upper()[:1] + text[1:]
    return text


@given(text=reported_claim())
@profile(SIZES.fuzz_examples)
def test_what_an_assistant_said_is_quoted_and_supersedes_nothing(text: str) -> None:
    with Memory(":memory:") as memory:
        own = memory.write("I live in Lisbon. My cat is called Mimi.", scope="ana").note
        assert own is not None
        result = memory.write(text, scope="ana")
        note = result.note
        assert note is not None, text
        assert note.tags.modality is Modality.QUOTE, (text, note.text)
        assert note.tags.key is None and note.tags.value is None, (text, note.tags)
        assert note.text.startswith("The user refers to what the assistant said"), note.text
        stored = memory.store.get_record(own.id)
        assert stored is not None and stored.superseded_by is None, text
        tally("reported assistant claims checked")


@given(
    who=st.sampled_from(["My mom", "My sister", "My doctor", "Ana", "My landlord"]),
    verb=st.sampled_from(["told me", "said", "mentioned"]),
)
@profile(SIZES.fuzz_examples // 3)
def test_what_a_person_said_stays_the_users_statement(who: str, verb: str) -> None:
    with Memory(":memory:") as memory:
        note = memory.write(f"{who} {verb} the rent goes up in May.", scope="ana").note
        assert note is not None and note.tags.modality is Modality.STATEMENT, note


# -- the LangGraph side: the message type alone does not make a message the user's --------

AGENT_WORDS = ("researcher", "agent", "planner", "supervisor", "bot", "writer", "tool", "critic")


@st.composite
def agent_name(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(AGENT_WORDS), min_size=1, max_size=3))
    style = draw(st.sampled_from(["snake", "kebab", "camel", "plain", "numbered"]))
    if style == "snake":
        return "_".join(words)
    if style == "kebab":
        return "-".join(words)
    if style == "camel":
        return "".join(w.capitalize() for w in words)
    if style == "numbered":
        return f"{words[0]}{draw(st.integers(0, 99))}"
    return words[0]


@given(
    sender=agent_name(),
    person=st.sampled_from([None, "Ana", "ana", "Mary-Jane"]),
    claim=st.sampled_from(["I live in Paris.", "My name is Zed.", "I am vegetarian."]),
)
@profile(SIZES.isolation_examples)
def test_a_human_message_an_agent_sent_is_not_written_as_the_user(
    sender: str, person: str | None, claim: str
) -> None:
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    from commonplace_langgraph import add_memory_nodes

    with Memory(":memory:") as memory:
        builder = StateGraph(MessagesState)
        builder.add_node("model", lambda state: {"messages": [AIMessage("Noted.")]})
        builder.add_edge(START, "model")
        builder.add_edge("model", END)
        add_memory_nodes(builder, memory, before="model", after="model", user_names=["Mary-Jane"])
        graph = builder.compile(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
        graph.invoke({"messages": [HumanMessage("I live in Lisbon.", name=person)]}, config)
        graph.invoke({"messages": [HumanMessage(claim, name=sender)]}, config)
        for query in ("where do I live", claim):
            notes = [i.record.text for i in memory.recall(query, scope="ana").items]
            assert any("Lisbon" in n for n in notes), notes
            assert not any(claim.rstrip(".").split()[-1] in n for n in notes), (sender, notes)
        tally("agent-named human messages kept out")
