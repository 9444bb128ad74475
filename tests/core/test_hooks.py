"""One test per hook, plus the rule that every hook is documented and tested."""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from commonplace import (
    Config,
    Kind,
    ManualClock,
    Memory,
    MemoryEvent,
    NoteDraft,
    ProfileRules,
    Record,
    Scope,
    Score,
    Skip,
    Tags,
    Turn,
    UpdateCandidate,
    UpdateDecision,
    hookimpl,
    hookspecs,
)
from commonplace._plugins import make_plugin_manager
from commonplace.embedders import Vectors
from commonplace.errors import (
    EmbedderMismatchError,
    InvalidTypeError,
    InvalidURLError,
    PluginError,
)
from commonplace.lifecycle import DecayAction, DecayContext, SummaryDraft, SummarySentence
from commonplace.stores import Backend, Candidate, RecordQuery, SQLiteBackend
from commonplace.write import ProfileCard

SEARCH_ALWAYS = Config(search_min_notes=0)

ROOT = Path(__file__).resolve().parents[2]
HOOKS = sorted(
    n for n, f in vars(hookspecs).items() if n.startswith("commonplace_") and inspect.isfunction(f)
)


def test_every_hook_is_documented_with_its_exact_signature() -> None:
    docs = (ROOT / "docs" / "hooks.md").read_text()
    for name in HOOKS:
        spec = getattr(hookspecs, name)
        signature = f"def {name}{inspect.signature(spec)}".replace("'", "")
        assert f"## {name}" in docs, f"{name} has no section in docs/hooks.md"
        assert signature in docs, f"docs/hooks.md lacks the exact signature {signature}"
        assert spec.__doc__, f"{name} has no docstring"


def test_every_hook_has_a_test_of_its_own() -> None:
    tests = " ".join(re.findall(r"def (test_\w+)", Path(__file__).read_text()))
    for name in HOOKS:
        assert f"test_{name}" in tests, f"{name} has no test_{name}... in this file"


def test_hooks_are_prefixed_and_the_manager_is_built_per_call() -> None:
    assert HOOKS and all(n.startswith("commonplace_") for n in HOOKS)
    assert make_plugin_manager(entry_points=False) is not make_plugin_manager(entry_points=False)


# -- commonplace_write_note ---------------------------------------------------------


class ShoutingWriter:
    @hookimpl
    def commonplace_write_note(self, turn: Turn) -> NoteDraft | Skip | None:
        if "pass" in turn.text:
            return None  # let the built-in writer decide
        if "secret" in turn.text:
            return Skip("the plugin keeps secrets out of memory")
        return NoteDraft(text=turn.text.upper(), tags=Tags(importance=0.9))


def test_commonplace_write_note_overrides_skips_and_defers(db_url: str) -> None:
    with Memory(db_url, plugins=[ShoutingWriter()]) as memory:
        loud = memory.write("I like tea.", scope="ana")
        assert loud.note is not None and loud.note.text == "I LIKE TEA."
        assert loud.note.tags.importance == 0.9
        secret = memory.write("my secret is 42", scope="ana")
        assert secret.note is None and secret.skipped == "the plugin keeps secrets out of memory"
        deferred = memory.write("I pass the exam in May.", scope="ana")
        assert deferred.note is not None and deferred.note.text.startswith("The user")


class JunkWriter:
    @hookimpl
    def commonplace_write_note(self, turn: Turn) -> object:
        return {"text": "not a NoteDraft"}


def test_commonplace_write_note_junk_is_a_plugin_error_and_writes_nothing(db_url: str) -> None:
    with Memory(db_url, plugins=[JunkWriter()]) as memory:
        with pytest.raises(PluginError, match="NoteDraft"):
            memory.write("I like tea.", scope="ana")
        assert memory.count(Kind.EPISODE) == 0


# -- commonplace_decide_update ------------------------------------------------------


class TeamChanges:
    """Decides only about teams; everything else is left to the built-in rules."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, list[str]]] = []

    @hookimpl
    def commonplace_decide_update(
        self, note: Record, turn: Turn, candidates: Sequence[UpdateCandidate]
    ) -> Sequence[UpdateDecision] | None:
        self.asked.append((turn.text, [c.record.text for c in candidates]))
        if "team" not in turn.text:
            return None
        return [
            UpdateDecision(c.record.id, "replaces", "the same team, said anew")
            for c in candidates
            if "team" in c.record.text
        ]


def test_commonplace_decide_update_replaces_what_the_plugin_says_and_falls_back(
    db_url: str, clock: ManualClock
) -> None:
    plugin = TeamChanges()
    with Memory(db_url, clock=clock, config=SEARCH_ALWAYS, plugins=[plugin]) as m:
        old = m.write("I lead the payments team.", scope="ana").note
        clock.advance(days=2)
        new = m.write("Heading the search team from now on.", scope="ana")
        assert old is not None and new.note is not None
        assert new.superseded == (old.id,)
        assert m.explain(old.id).why == "the same team, said anew"
        # the plugin saw the older statement as a candidate, with the turn's own words
        assert ("Heading the search team from now on.", [old.text]) in plugin.asked
        # a turn the plugin does not decide goes to the built-in rules
        bike = m.write("I ride a Brompton.", scope="ana").note
        clock.advance(days=2)
        sold = m.write("sold the Brompton, I cycle a Cannondale now", scope="ana")
        assert bike is not None and sold.superseded == (bike.id,)
        assert m.explain(bike.id).why == "ended: brompton"


def test_commonplace_decide_update_answer_must_be_decisions(
    db_url: str, clock: ManualClock
) -> None:
    class Garbled:
        @hookimpl
        def commonplace_decide_update(
            self, note: Record, turn: Turn, candidates: Sequence[UpdateCandidate]
        ) -> object:
            return "replace them all"

    with Memory(db_url, clock=clock, plugins=[Garbled()]) as m:
        m.write("I lead the payments team.", scope="ana")
        with pytest.raises(PluginError, match="return a list of UpdateDecision"):
            m.write("moved to the search team now", scope="ana")
        assert m.count(scope="ana") == 1


# -- commonplace_embedder -----------------------------------------------------------


class ConstantEmbedder:
    name = "constant-test-v1"
    dim = 4

    def embed(self, texts: Sequence[str]) -> Vectors:
        return np.ones((len(texts), self.dim), np.float32)


class ProvidesConstant:
    def __init__(self) -> None:
        self.asked: list[str | None] = []

    @hookimpl
    def commonplace_embedder(self, name: str | None) -> ConstantEmbedder | None:
        self.asked.append(name)
        return ConstantEmbedder() if name in (None, "constant-test-v1") else None


def test_commonplace_embedder_provides_the_default_and_the_pinned_model(db_url: str) -> None:
    plugin = ProvidesConstant()
    Memory(db_url, plugins=[plugin]).close()  # a new store: asked for the default
    with Memory(db_url, plugins=[plugin]) as memory:  # reopened: asked for the pinned name
        assert memory.embedder.name == "constant-test-v1"
    assert plugin.asked == [None, "constant-test-v1"]


class BrokenShapeEmbedder(ConstantEmbedder):
    name = "broken-shape-v1"

    def embed(self, texts: Sequence[str]) -> Vectors:
        return np.ones((len(texts), 3), np.float32)


def test_commonplace_embedder_results_are_checked(db_url: str) -> None:
    with Memory(db_url, embedder=BrokenShapeEmbedder()) as memory:
        with pytest.raises(PluginError, match="shape"):
            memory.write("I like tea.", scope="ana")
        assert memory.count(Kind.EPISODE) == 0


# -- commonplace_backend ------------------------------------------------------------


class MemScheme:
    def __init__(self) -> None:
        self.opened: list[str] = []

    @hookimpl
    def commonplace_backend(self, url: str, scheme: str) -> Backend | None:
        if scheme != "mem":
            return None
        self.opened.append(url)
        return SQLiteBackend(":memory:")


def test_commonplace_backend_serves_a_new_scheme(tmp_path: Path) -> None:
    plugin = MemScheme()
    with Memory("mem://anything", plugins=[plugin]) as memory:
        memory.write("I like tea.", scope="ana")
        assert memory.count(Kind.NOTE) == 1
    assert plugin.opened == ["mem://anything"]
    with pytest.raises(InvalidURLError, match="commonplace-other"):
        Memory("other://x", plugins=[plugin])


# -- commonplace_score_signals ------------------------------------------------------


class Affect:
    name = "affect"
    weight = 0.3

    def score(self, candidate: Candidate, *, query: str, now: datetime) -> float:
        return 1.0 if candidate.record.tags.emotion else 0.0


class AffectPlugin:
    @hookimpl
    def commonplace_score_signals(self) -> Sequence[Affect]:
        return [Affect()]


def test_commonplace_score_signals_are_added_and_explained(db_url: str) -> None:
    # a plateau wide enough that neither note is gated: the totals are plain weighted sums
    config = Config(search_min_notes=0, relevance_plateau=0.2)
    with Memory(db_url, plugins=[AffectPlugin()], config=config) as memory:
        memory.write("I went to the concert with Rui.", scope="ana")
        memory.write("I was so happy at the concert with Rui!", scope="ana")
        items = memory.recall("the concert with Rui", scope="ana").items
        assert items[0].record.tags.emotion == "joy"
        happy = items[0].score
        assert happy.extra == {"affect": 1.0} and happy.breakdown()["affect"] == 1.0
        plain = items[1].score
        assert plain.extra == {"affect": 0.0}
        assert happy.gate == plain.gate == happy.importance_gate == plain.importance_gate == 1.0
        for score in (happy, plain):
            expected = (
                0.5 * score.semantic
                + 0.2 * score.recency
                + 0.2 * score.frequency
                + 0.1 * score.importance
                + 0.3 * score.extra["affect"]
            )
            assert score.total == pytest.approx(expected)


class ClashingPlugin:
    def __init__(self, name: str = "recency") -> None:
        self.name = name

    @hookimpl
    def commonplace_score_signals(self) -> Sequence[object]:
        class Clashing(Affect):
            name = self.name

        return [Clashing()]


# every name a breakdown shows is reserved, not only the four signals: a plugin signal named
# "cosine" once overwrote the real cosine in every breakdown
# every key a breakdown shows: a plugin signal named like one would overwrite it there
BREAKDOWN_KEYS = sorted(Score(0.0, 0.0, 0.0, 0.0, 0.0, 0.0).breakdown())


@pytest.mark.parametrize("name", BREAKDOWN_KEYS)
def test_commonplace_score_signals_may_not_shadow_builtins(db_url: str, name: str) -> None:
    with pytest.raises(PluginError, match=name):
        Memory(db_url, plugins=[ClashingPlugin(name)])


# -- commonplace_summarise ----------------------------------------------------------


class InventiveSummariser:
    """An LLM-like summariser: one faithful sentence and one invented one."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl
    def commonplace_summarise(self, entity: str, notes: Sequence[Record]) -> SummaryDraft:
        self.calls.append(entity)
        first = notes[0]
        return SummaryDraft(
            (
                SummarySentence(first.text, (first.id,)),
                SummarySentence("Joana secretly owns a yacht in Monaco.", (first.id,)),
            )
        )


def _joana_notes(memory: Memory, clock: ManualClock) -> None:
    for text in (
        "My partner Joana is a nurse.",
        "Joana loves climbing.",
        "Joana and I adopted a cat.",
    ):
        memory.write(text, scope="ana")
        clock.advance(days=1)
    clock.advance(days=2)


def test_commonplace_summarise_is_used_and_guarded(db_url: str, clock: ManualClock) -> None:
    plugin = InventiveSummariser()
    with Memory(db_url, clock=clock, plugins=[plugin]) as memory:
        _joana_notes(memory, clock)
        report = memory.consolidate(scope="ana")
        assert plugin.calls == ["joana"]
        (summary_id,) = [a.record_id for a in report.actions if a.action == "summarise"]
        summary = memory.explain(summary_id).record
        assert "yacht" not in summary.text
        assert summary.data["rejected"][0][0] == "Joana secretly owns a yacht in Monaco."
        assert [a.rule for a in report.actions if a.action == "reject_sentence"] == [
            "hallucination_guard"
        ]


class NotADraft:
    @hookimpl
    def commonplace_summarise(self, entity: str, notes: Sequence[Record]) -> str:
        return "a plain string"


def test_commonplace_summarise_junk_is_a_plugin_error(db_url: str, clock: ManualClock) -> None:
    with Memory(db_url, clock=clock, plugins=[NotADraft()]) as memory:
        _joana_notes(memory, clock)
        with pytest.raises(PluginError, match="SummaryDraft"):
            memory.consolidate(scope="ana")


# -- commonplace_decay_rules --------------------------------------------------------


class ForgetQuestions:
    name = "forget_questions"

    def plan(self, context: DecayContext) -> Sequence[DecayAction]:
        return [
            DecayAction(r.id, "delete", "questions are not kept", r.scope)
            for r in context.backend.iter_records(RecordQuery(scope=context.scope))
            if r.tags.modality.value == "question"
        ] + [
            DecayAction(e, "delete", "a rule may not remove evidence", Scope(user="ana"))
            for e in self.episodes
        ]

    episodes: ClassVar[list[str]] = []


class QuestionRulePlugin:
    @hookimpl
    def commonplace_decay_rules(self) -> Sequence[ForgetQuestions]:
        return [ForgetQuestions()]


def test_commonplace_decay_rules_run_with_dry_run_and_audit(
    db_url: str, clock: ManualClock
) -> None:
    with Memory(db_url, clock=clock, plugins=[QuestionRulePlugin()]) as memory:
        question = memory.write("What is a good pace for my first half marathon?", scope="ana")
        statement = memory.write("I run every morning.", scope="ana")
        assert question.note is not None and statement.note is not None
        ForgetQuestions.episodes = [question.episode_id]
        dry = memory.decay(scope="ana", dry_run=True)
        assert [a.record_id for a in dry.by_rule("forget_questions")] == [question.note.id]
        assert memory.count(Kind.NOTE, scope="ana") == 2 and memory.audit(scope="ana") == []
        real = memory.decay(scope="ana")
        assert [a.record_id for a in real.by_rule("forget_questions")] == [question.note.id]
        assert memory.count(Kind.NOTE, scope="ana") == 1
        assert memory.count(Kind.EPISODE, scope="ana") == 2  # the episode was refused
        assert [(e.rule, e.record_id) for e in memory.audit(scope="ana")] == [
            ("forget_questions", question.note.id)
        ]


# -- commonplace_rewrite_profile ----------------------------------------------------


class ForgetfulRewriter:
    """An LLM-like rewriter that drops everything it was told and invents a hobby."""

    @hookimpl
    def commonplace_rewrite_profile(
        self, card: ProfileCard, notes: Sequence[Record]
    ) -> ProfileCard:
        return ProfileCard(identity={"hobby": "sailing"}, voice=("terse",))


def test_commonplace_rewrite_profile_output_obeys_the_sticky_rules(
    db_url: str, clock: ManualClock
) -> None:
    config = Config(profile=ProfileRules(rewrite_every=1))
    with Memory(db_url, clock=clock, config=config) as memory:
        memory.write("My name is Ana.", scope="ana")  # built-in rewrite first
    with Memory(db_url, clock=clock, config=config, plugins=[ForgetfulRewriter()]) as memory:
        memory.write("I got laid off today.", scope="ana")
        card = memory.profile(scope="ana")
        assert card.identity == {"hobby": "sailing", "name": "Ana"}  # name restored
        assert card.voice == ("terse",)
        assert [e for _, e in card.events] == ["layoff"]  # dropped by the rewriter, put back
        memory.write("I moved to Porto with my sister Mia.", scope="ana")
        assert memory.profile(scope="ana").identity["name"] == "Ana"


# -- commonplace_adapt_embedder -----------------------------------------------------


class ForeignModel:
    """Another framework's embedding model: no name, no dim, its own method name."""

    def __init__(self, size: int) -> None:
        self.size = size

    def encode(self, texts: list[str]) -> list[list[float]]:
        return [[float(len(t)), 1.0] + [0.0] * (self.size - 2) for t in texts]


class AdaptsForeign:
    def __init__(self) -> None:
        self.seen: list[object] = []

    @hookimpl
    def commonplace_adapt_embedder(self, model: object) -> object:
        self.seen.append(model)
        if isinstance(model, ForeignModel):
            from commonplace.embedders import CallableEmbedder, identity_name

            return CallableEmbedder(
                model.encode,
                name=identity_name("foreign", model, dim=model.size, fields=("size",)),
                dim=model.size,
            )
        if model == "junk":
            return {"name": "not an embedder"}
        return None


def test_commonplace_adapt_embedder_wraps_foreign_models_and_pins_their_identity(
    tmp_path: Path,
) -> None:
    plugin = AdaptsForeign()
    url = "sqlite:///" + str(tmp_path / "m.db")
    # plugins given once (here as an iterator) serve the adapting and the Memory alike
    with Memory(url, embedder=ForeignModel(6), plugins=iter([plugin, ShoutingWriter()])) as memory:
        assert memory.embedder.name == "foreign:ForeignModel(size=6):6"
        note = memory.write("I like tea.", scope="ana").note
        assert note is not None and note.text == "I LIKE TEA."
    with Memory(url, embedder=ForeignModel(6), plugins=[plugin]) as memory:
        assert memory.count(Kind.NOTE) == 1
    with pytest.raises(EmbedderMismatchError, match=r"foreign:ForeignModel\(size=6\):6"):
        Memory(url, embedder=ForeignModel(8), plugins=[plugin])
    # an Embedder is used as it is: the hook is only asked for other objects
    assert all(isinstance(m, ForeignModel) for m in plugin.seen)


def test_commonplace_adapt_embedder_junk_or_no_answer_is_refused_before_opening(
    tmp_path: Path,
) -> None:
    path = tmp_path / "never.db"
    with pytest.raises(PluginError, match="not an Embedder"):
        Memory("sqlite:///" + str(path), embedder="junk", plugins=[AdaptsForeign()])
    with pytest.raises(InvalidTypeError, match="CallableEmbedder"):
        Memory("sqlite:///" + str(path), embedder=lambda texts: texts)
    assert not path.exists()


# -- commonplace_event --------------------------------------------------------------


class Listener:
    def __init__(self) -> None:
        self.events: list[MemoryEvent] = []

    @hookimpl
    def commonplace_event(self, event: MemoryEvent) -> None:
        self.events.append(event)


def test_commonplace_event_tells_every_listener_what_was_written_recalled_and_forgotten(
    db_url: str, clock: ManualClock
) -> None:
    first, second = Listener(), Listener()
    with Memory(db_url, clock=clock, plugins=[first, second], config=SEARCH_ALWAYS) as memory:
        porto = memory.write("I live in Porto.", scope="ana")
        lisbon = memory.write("I moved to Lisbon.", scope="ana")
        assert porto.note is not None and lisbon.note is not None
        assert lisbon.superseded == (porto.note.id,)
        memory.write("I moved to Lisbon.", scope="ana")  # the same turn: nothing happens
        recall = memory.recall("where do I live?", scope="ana")
        report = memory.forget(lisbon.note.id, scope="ana")
    assert first.events == second.events
    kinds = [(e.kind, e.record_ids, e.episode_ids) for e in first.events]
    assert kinds == [
        ("written", (porto.note.id,), (porto.episode_id,)),
        ("written", (lisbon.note.id,), (lisbon.episode_id,)),
        ("superseded", (porto.note.id,), ()),
        ("recalled", recall.included, ()),
        ("forgotten", report.records, report.episodes),
    ]
    assert first.events[2].detail == {"by": lisbon.note.id}
    assert first.events[3].detail == {"recall_id": recall.id, "query": "where do I live?"}
    assert all(e.scope == Scope(user="ana") for e in first.events)
    assert lisbon.episode_id in report.episodes
