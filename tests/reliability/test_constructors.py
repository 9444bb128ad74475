"""Hand-built public values: refused when built, as Memory refuses them, and nothing written.

Callers and integrations build public values themselves and hand them back in: a
``Turn`` for ``Memory.write_many``, an embedder for ``Memory(embedder=...)`` or
``reembed(to=...)``, a ``ManualClock``, a ``FactKey`` for ``put_note``, a ``Scope``, the
settings. Each validates itself when built (or, for a FactKey, where it is handed in) with
the validators of ``commonplace._validate``. Hypothesis builds each with a hostile value in
one field at a time and checks:

- a refusal is an ``InvalidInputError`` with its message: never a bare ``TypeError``,
  ``AttributeError``, ``UnicodeEncodeError``, ``OverflowError`` or ``MemoryError``, nor a
  ``CorruptStoreError`` from a value that was stored and cannot be read back;
- a Turn is refused exactly as ``Memory.write`` with the same values is (same class, same
  message), and accepted exactly when it is, as the same episode;
- a refusal changes nothing (every table of the store is as it was), and afterwards the
  user's recall, sleep, explain and forget_scope still work;
- whatever was accepted works: a store pinned to an accepted embedder opens again.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import test_fuzz_inputs
from hypothesis import given
from hypothesis import strategies as st
from reliability_support import SIZES, T0, dump, profile, tally, url_of
from test_fuzz_inputs import DATETIMES, JUNK, METAS, SCOPES, TEXTS, fresh, maybe

from commonplace import (
    Config,
    ConsolidationRules,
    DecayRules,
    FactKey,
    HashingEmbedder,
    ManualClock,
    Memory,
    ProfileRules,
    Role,
    Scope,
    TierRules,
    Turn,
    Weights,
)
from commonplace._validate import MAX_EMBEDDER_DIM
from commonplace.embedders import CallableEmbedder, MiniLMEmbedder, reembed
from commonplace.errors import EmbedderUnavailableError, InvalidInputError, PluginError

# The fuzz suite's small store (a module fixture), copied fresh for every example by fresh().
template = test_fuzz_inputs.template

# -- what is checked after every example ------------------------------------------------------


def attempt(call: Callable[[], Any]) -> Any:
    """What ``call`` returns, or the class and message of the InvalidInputError it raised.

    Any other exception propagates and fails the test: a bad value must be refused as
    bad input, not crash deeper down or be stored and found broken later."""
    try:
        return call()
    except InvalidInputError as exc:
        return (type(exc).__name__, str(exc))


def refused(outcome: Any) -> bool:
    return isinstance(outcome, tuple)


def accepted(outcome: Any) -> bool:
    """Whether ``attempt`` built the value; counts the outcome either way."""
    tally("constructors fuzzed: " + ("refused cleanly" if refused(outcome) else "accepted"))
    return not refused(outcome)


def still_works(memory: Memory, user: str = "ana") -> None:
    """The user's memory answers, runs its lifecycle, explains, and can be forgotten."""
    memory.recall("Mia chess Lisbon", scope=user)
    memory.sleep(scope=user)
    found = memory.recall("Mia chess Lisbon", scope=user)  # after sleep: decay may delete
    for record_id in found.included[:2]:
        memory.explain(record_id, scope=user)
    memory.forget_scope(user)
    assert memory.count(scope=user) == 0


# -- Turn ----------------------------------------------------------------------------------------

GOOD_TURN: dict[str, Any] = {
    "text": "My sister Mia plays chess.",
    "role": Role.USER,
    "scope": Scope(user="ana"),
    "at": T0,
    "meta": {},
    "key": None,
    "speaker": None,
    "said_by": None,
}
TURN_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "text": maybe(TEXTS),
    "role": maybe(
        st.sampled_from(["user", "USER", "assistant", "tool", "system", "narrator", "", Role.TOOL])
    ),
    "scope": st.one_of(SCOPES, JUNK),
    # None is no time for a Turn, which has no clock: write() takes it as "now"
    "at": maybe(DATETIMES).filter(lambda at: at is not None),
    "meta": st.one_of(METAS, JUNK),
    "key": maybe(st.one_of(st.text(max_size=300), st.sampled_from(["", "k" * 257, "\ud800"]))),
    "speaker": maybe(
        st.one_of(
            st.text(max_size=120),
            st.sampled_from(["Mia", "", " \n", "\ud800", "M" * 101, "Mia\nRose", "\x00"]),
        )
    ),
    # who sent a message that is not the user's: the same checks as a speaker's name
    "said_by": maybe(
        st.one_of(
            st.text(max_size=120),
            st.sampled_from(["planner", "", " \n", "\ud800", "b" * 101, "get_weather", 7]),
        )
    ),
}


def write_by_hand(memory: Memory, values: dict[str, Any]) -> Any:
    return memory.write_many([Turn(**values)])


def write_by_call(memory: Memory, values: dict[str, Any]) -> Any:
    options = {k: v for k, v in values.items() if k != "text"}
    return memory.write(values["text"], **options)


@pytest.mark.parametrize("field", sorted(TURN_FIELDS))
def test_a_hand_built_turn_is_refused_exactly_as_write_refuses_it(
    template: dict[str, Any],
    field: str,
) -> None:
    @given(value=TURN_FIELDS[field])
    @profile(SIZES.fuzz_examples)
    def run(value: Any) -> None:
        values = {**GOOD_TURN, field: value}
        with fresh(template) as (path, memory):
            before = dump(path)
            by_hand = attempt(lambda: write_by_hand(memory, values))
            if refused(by_hand):
                assert dump(path) == before, "a refused Turn changed the store"
            by_call = attempt(lambda: write_by_call(memory, values))
            if refused(by_hand):
                assert by_call == by_hand, "Turn(...) and Memory.write refuse differently"
                assert dump(path) == before, "a refused write changed the store"
                tally("constructors fuzzed: refused cleanly")
            else:
                assert not refused(by_call), f"Memory.write refuses what Turn took: {by_call}"
                # the same turn, so the second write finds the episode the first stored
                assert (by_call.episode_id, by_call.created) == (by_hand[0].episode_id, False)
                tally("constructors fuzzed: accepted")
            still_works(memory)

    run()


def test_a_turn_at_datetime_max_is_refused_and_the_user_keeps_working(
    template: dict[str, Any],
) -> None:
    # The reported case: stored, the episode's time could not be read back, and from then
    # on every call about the user failed with CorruptStoreError, forget_scope included.
    with fresh(template) as (path, memory):
        before = dump(path)
        good = Turn(
            text="My brother Tom runs marathons.", role=Role.USER, scope=Scope(user="ana"), at=T0
        )
        late = "My cousin Rita studies law."
        for at in (datetime.max.replace(tzinfo=timezone.utc), datetime.max):
            with pytest.raises(InvalidInputError, match="out of range"):
                memory.write_many([Turn(late, Role.USER, Scope(user="ana"), at)])
        with pytest.raises(InvalidInputError, match="out of range"):
            memory.write_many([good, Turn(late, Role.USER, Scope(user="ana"), datetime.max)])
        with pytest.raises(InvalidInputError, match="out of range"):
            memory.write_many([good, dataclasses.replace(good, text=late, at=datetime.max)])
        assert dump(path) == before
        still_works(memory)


@pytest.mark.parametrize(
    ("values", "error"),
    [
        ({"text": ""}, "empty"),
        ({"text": "a\ud800b"}, "lone surrogates"),
        ({"text": 42}, "must be a str"),
        ({"at": datetime.max}, "out of range"),
        ({"at": datetime(1000, 1, 1, tzinfo=timezone.utc)}, "out of range"),
        ({"at": datetime(9500, 1, 1)}, "out of range"),
        ({"at": None}, "must be a datetime"),
        ({"at": "2026-01-05"}, "must be a datetime"),
        ({"role": 3}, "role must be a str"),
        ({"role": "narrator"}, "unknown role"),
        ({"scope": 5}, "scope must be"),
        ({"scope": {"tenant": "x"}}, "unknown scope field"),
        ({"meta": [1, 2]}, "meta must be a mapping"),
        ({"meta": {"nan": math.nan}}, "JSON"),
        ({"key": 7}, "key must be a str"),
        ({"key": ""}, "non-empty"),
        ({"speaker": 7}, "speaker must be a str"),
        ({"speaker": "M" * 101}, "speaker must be a name"),
        ({"said_by": 7}, "said_by must be a str"),
        ({"said_by": " "}, "said_by must be a name"),
    ],
)
def test_hand_picked_bad_turns_are_refused_when_built(values: dict[str, Any], error: str) -> None:
    with pytest.raises(InvalidInputError, match=error):
        Turn(**{**GOOD_TURN, **values})


def test_a_turn_is_normalised_as_write_normalises_it() -> None:
    turn = Turn(
        text="I live in Lisbon.",
        role="USER",  # type: ignore[arg-type]
        scope={"user": "ana", "thread": "t1"},  # type: ignore[arg-type]
        at=datetime(2026, 1, 5, 12, 0),  # naive: taken to be UTC
        meta={"n": (1, 2)},
        speaker="  Mia \n Rose ",
    )
    assert turn.role is Role.USER
    assert turn.scope == Scope(user="ana", thread="t1")
    assert turn.at == datetime(2026, 1, 5, 12, 0, tzinfo=timezone.utc)
    assert turn.meta == {"n": [1, 2]}
    assert turn.speaker == "Mia Rose"


def user_turn(text: str, *, key: str) -> Turn:
    return Turn(text, Role.USER, Scope(user="ana"), T0, key=key)


def test_a_batch_with_a_turn_over_the_length_limit_writes_nothing(
    template: dict[str, Any],
) -> None:
    # A Turn knows no Config: write_many checks every turn's length before it writes any.
    @given(texts=st.lists(TEXTS, min_size=1, max_size=5))
    @profile(SIZES.fuzz_examples)
    def run(texts: list[str]) -> None:
        built = [attempt(partial(user_turn, text, key=f"k{n}")) for n, text in enumerate(texts)]
        turns = [turn for turn in built if not refused(turn)]
        with fresh(template) as (path, memory):
            before = dump(path)
            limit = memory.config.max_turn_chars
            outcome = attempt(lambda: memory.write_many(turns))
            if any(len(t.text) > limit for t in turns):
                assert refused(outcome) and "over the limit" in outcome[1]
                assert dump(path) == before, "a refused batch changed the store"
                tally("constructors fuzzed: refused cleanly")
            else:
                assert not refused(outcome), outcome
                assert len(outcome) == len(turns)
                tally("constructors fuzzed: accepted")
            still_works(memory)

    run()


# -- embedders -------------------------------------------------------------------------------

DIMS = st.one_of(
    JUNK,
    st.integers(-5, 70_000),
    st.sampled_from([0, 1, 15, 16, 65_536, 65_537, 2**31, 2**40, 2**63, 10**400, 16.0]),
)
NAMES = st.one_of(
    JUNK,
    st.text(max_size=40),
    st.sampled_from(["", " ", "a\nb", "\ud800", "x" * 301, "my-model-v1", "tab\there"]),
)


def opens_again(model: Any) -> None:
    """A new store pinned to ``model`` takes a write, and opens again with that model."""
    with tempfile.TemporaryDirectory(prefix="cp-embedder-") as folder:
        url = url_of(Path(folder) / "m.db")
        with Memory(url, embedder=model) as memory:
            memory.write("My sister Mia plays chess.", scope="ana")
        with Memory(url, embedder=model) as memory:
            memory.recall("Mia", scope="ana")


def pins_nothing(make: Callable[[str], object]) -> None:
    """``make(url)`` was refused: the store it was given holds no pin, so it opens with
    another model as a new store would."""
    with tempfile.TemporaryDirectory(prefix="cp-embedder-") as folder:
        url = url_of(Path(folder) / "m.db")
        outcome = attempt(lambda: make(url))
        assert refused(outcome), outcome
        with Memory(url, embedder=HashingEmbedder(dim=32)) as memory:
            memory.write("My sister Mia plays chess.", scope="ana")


@given(dim=DIMS)
@profile(SIZES.fuzz_examples)
def test_hashing_embedder_dims_are_validated_when_built(dim: Any) -> None:
    model = attempt(lambda: HashingEmbedder(dim=dim))
    if not accepted(model):
        return
    assert type(model.dim) is int and 16 <= model.dim <= MAX_EMBEDDER_DIM
    opens_again(model)


def test_a_hashing_embedder_of_2_to_the_40_is_refused_and_pins_no_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The reported case: it was accepted, pinned a new store, and then could embed nothing.
    with pytest.raises(InvalidInputError, match=str(MAX_EMBEDDER_DIM)):
        HashingEmbedder(dim=2**40)
    url = url_of(tmp_path / "m.db")
    # the same model named where a store's model is chosen by name
    monkeypatch.setenv("COMMONPLACE_EMBEDDER", f"commonplace-hashing-v1-{2**40}")
    with pytest.raises(InvalidInputError, match=str(MAX_EMBEDDER_DIM)):
        Memory(url)
    monkeypatch.setenv("COMMONPLACE_EMBEDDER", "hashing")
    with Memory(url) as memory:
        memory.write("My sister Mia plays chess.", scope="ana")
        assert memory.embedder.dim == 256


@dataclass
class Model:
    """Any object with a name, a dim and embed(): what Memory takes as an embedder."""

    name: Any
    dim: Any

    def embed(self, texts: Sequence[str]) -> Any:
        # Asked to embed, it was accepted: a dim no store can hold must have been refused
        # (and must not take the machine's memory to find out).
        assert type(self.dim) is int and 1 <= self.dim <= MAX_EMBEDDER_DIM, self.dim
        return np.ones((len(texts), self.dim), np.float32)


@given(name=maybe(st.just("my-model-v1"), NAMES), dim=maybe(st.just(32), DIMS))
@profile(SIZES.fuzz_examples)
def test_a_new_store_is_pinned_only_to_an_embedder_it_can_hold(name: Any, dim: Any) -> None:
    model = Model(name, dim)
    probe = attempt(lambda: opens_again(model))
    if refused(probe):
        pins_nothing(lambda url: Memory(url, embedder=model))
        tally("constructors fuzzed: refused cleanly")
    else:
        assert isinstance(dim, int) and 1 <= dim <= MAX_EMBEDDER_DIM
        tally("constructors fuzzed: accepted")


def test_reembed_refuses_a_model_no_store_can_be_pinned_to(
    template: dict[str, Any],
) -> None:
    @given(name=maybe(st.just("my-model-v2"), NAMES), dim=maybe(st.just(48), DIMS))
    @profile(SIZES.fuzz_examples // 3)
    def run(name: Any, dim: Any) -> None:
        with fresh(template) as (path, memory):
            memory.close()
            before = dump(path)
            report = attempt(lambda: reembed(url_of(path), to=Model(name, dim), progress=False))
            if refused(report):
                assert dump(path) == before, "a refused re-embed changed the store"
                tally("constructors fuzzed: refused cleanly")
                return
            tally("constructors fuzzed: accepted")
            with Memory(url_of(path), embedder=Model(name, dim)) as reopened:
                still_works(reopened)

    run()


@given(
    fn=maybe(st.just("vectors"), JUNK),
    name=maybe(st.just("my-model-v1"), NAMES),
    dim=st.one_of(st.none(), maybe(st.just(24), DIMS)),
    width=st.sampled_from([24, 0, 65_537]),  # what fn returns when dim is measured
    afn=st.one_of(st.none(), JUNK),
)
@profile(SIZES.fuzz_examples)
def test_callable_embedders_are_validated_when_built(
    fn: Any, name: Any, dim: Any, width: int, afn: Any
) -> None:
    def vectors(texts: list[str]) -> Any:
        return np.ones((len(texts), dim if isinstance(dim, int) and dim > 0 else width))

    function = vectors if fn == "vectors" else fn
    try:
        model = attempt(lambda: CallableEmbedder(function, name=name, dim=dim, afn=afn))
    except PluginError:  # the function's own vectors have no length to measure
        assert dim is None and width == 0
        tally("constructors fuzzed: refused cleanly")
        return
    if not accepted(model):
        return
    # the model reports the length it was given, or the one it measured by calling fn,
    # and that is the length of the vectors it returns
    assert model.dim == (dim if dim is not None else width)
    assert model.embed(["a turn"]).shape == (1, model.dim)
    opens_again(model)


MINILM_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "batch_size": maybe(st.integers(1, 256)),
    "threads": st.one_of(
        st.none(), maybe(st.integers(1, 8)), st.sampled_from([0, 1_025, 2**31, 2**40])
    ),
    "sha256": st.one_of(st.none(), JUNK, st.text(max_size=70), st.just("ab" * 32)),
    "model_path": st.one_of(
        st.none(),
        JUNK,
        st.sampled_from(["", "a\x00b", "\ud800", b"model.onnx", "/nonexistent/model.onnx"]),
    ),
}


# the fields whose values name a weights file: a well-formed value may name one not here
_WEIGHTS_FIELDS = frozenset({"sha256", "model_path"})
# what each numeric field accepts, from the constructor's documented ranges
_MINILM_RANGES = {"batch_size": (1, None), "threads": (1, 1_024)}


def _in_range(field: str, value: Any) -> bool:
    if value is None:
        return field == "threads"  # unset: the usable cores
    low, high = _MINILM_RANGES[field]
    if isinstance(value, bool) or not isinstance(value, int):
        return False
    return low <= value and (high is None or value <= high)


_PROBE = "My sister Mia plays chess."


@functools.cache
def _probe_vector() -> Any:
    """The default model's vector for the probe: what every accepted setting must give."""
    return MiniLMEmbedder().embed([_PROBE])


@pytest.mark.parametrize("field", sorted(MINILM_FIELDS))
def test_the_semantic_embedder_is_validated_when_built(field: str) -> None:
    ran: set[Any] = set()  # each distinct accepted value runs the model once

    @given(value=MINILM_FIELDS[field])
    @profile(SIZES.fuzz_examples // 3)
    def run(value: Any) -> None:
        try:
            model = attempt(lambda: MiniLMEmbedder(**{field: value}))
        except EmbedderUnavailableError:
            # only a weights file named on purpose may be missing or unmatched: for any
            # other field the installed default weights must load, or nothing was tested
            assert field in _WEIGHTS_FIELDS, (field, value)
            tally("constructors fuzzed: refused cleanly")
            return
        if field in _MINILM_RANGES:
            assert accepted(model) == _in_range(field, value), (field, value, model)
        elif not accepted(model):
            return
        if refused(model):
            return
        assert model.dim == 384
        key = repr(value)
        if key not in ran:  # an accepted setting must also run
            ran.add(key)
            got = model.embed([_PROBE])
            assert got.shape == (1, 384)
            # threads and batches change how the model runs, never what it computes
            assert np.allclose(got, _probe_vector(), atol=1e-4), (field, value)

    run()


# -- clocks, fact keys, scopes and settings ---------------------------------------------------

STEPS = st.one_of(
    JUNK,
    st.floats(-1e6, 1e6),
    st.sampled_from([1e10, -1e10, 10**400, math.nan, math.inf, 3_000_000, -50_000]),
)


def test_a_manual_clock_holds_only_times_a_store_accepts(
    template: dict[str, Any],
) -> None:
    @given(
        start=maybe(st.just(T0), DATETIMES),
        step=st.sampled_from(["days", "hours", "minutes", "seconds"]),
        amount=STEPS,
        then=st.one_of(st.none(), DATETIMES),
    )
    @profile(SIZES.fuzz_examples)
    def run(start: Any, step: str, amount: Any, then: Any) -> None:
        clock = attempt(lambda: ManualClock(start))
        if refused(clock):
            tally("constructors fuzzed: refused cleanly")
            return
        for move in (lambda: clock.advance(**{step: amount}), lambda: clock.set(then)):
            was = clock.now()
            if refused(attempt(move)):
                assert clock.now() == was, "a refused move moved the clock"
                tally("constructors fuzzed: refused cleanly")
        tally("constructors fuzzed: accepted")
        with fresh(template) as (_, memory):
            memory.clock = clock  # every call that takes "now" from the clock must work
            memory.write("My sister Mia bakes bread again.", scope="ana")
            still_works(memory)

    run()


def test_put_note_refuses_a_fact_key_it_cannot_store(
    template: dict[str, Any],
) -> None:
    part = maybe(st.sampled_from(["user", "city"]), st.one_of(NAMES, JUNK))

    @given(subject=part, predicate=part)
    @profile(SIZES.fuzz_examples)
    def run(subject: Any, predicate: Any) -> None:
        with fresh(template) as (path, memory):
            before = dump(path)
            fact = FactKey(subject, predicate)
            note = attempt(
                lambda: memory.put_note("Lives in Porto.", scope="ana", key="k", fact=fact)
            )
            if refused(note):
                assert dump(path) == before, "a refused put_note changed the store"
                tally("constructors fuzzed: refused cleanly")
            else:
                assert isinstance(subject, str) and isinstance(predicate, str)
                tally("constructors fuzzed: accepted")
            still_works(memory)

    run()


# Values no field of a Scope or a settings class takes, whatever its type.
NEVER_VALID = st.sampled_from(
    [None, "x", b"x", [], {}, object(), math.nan, -math.inf, -1e308, 10**400, datetime.max]
)


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        (kind, f.name)
        for kind in (Config, Weights, TierRules, ConsolidationRules, DecayRules, ProfileRules)
        for f in fields(kind)
    ],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_every_setting_refuses_what_it_cannot_be(kind: type, name: str) -> None:
    @given(value=NEVER_VALID)
    @profile(SIZES.fuzz_examples // 10)
    def run(value: Any) -> None:
        outcome = attempt(lambda: kind(**{name: value}))
        assert refused(outcome), f"{kind.__name__}({name}={value!r}) was accepted"
        tally("constructors fuzzed: refused cleanly")

    run()


@given(field=st.sampled_from(["user", "agent", "thread"]), value=NEVER_VALID | JUNK)
@profile(SIZES.fuzz_examples)
def test_a_scope_refuses_what_no_field_can_be(field: str, value: Any) -> None:
    outcome = attempt(lambda: Scope(**{field: value}))
    if value is None or (isinstance(value, str) and value):
        return  # a name (or unset), which test_fuzz_inputs and test_isolation cover
    assert refused(outcome), f"Scope({field}={value!r}) was accepted"
    tally("constructors fuzzed: refused cleanly")


def test_a_clock_past_the_limits_is_refused_when_set() -> None:
    with pytest.raises(InvalidInputError, match="out of range"):
        ManualClock(datetime.max)
    clock = ManualClock(T0)
    with pytest.raises(InvalidInputError, match="advance it by less"):
        clock.advance(days=1e10)
    with pytest.raises(InvalidInputError, match="finite"):
        clock.advance(hours=math.nan)
    assert clock.now() == T0
    assert clock.advance(days=1) == T0 + timedelta(days=1)
