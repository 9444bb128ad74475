"""The hooks commonplace calls, each documented where it is declared.

Plugins implement them with :data:`hookimpl` and register through the
``commonplace`` entry-point group (``[project.entry-points.commonplace]``) or
by passing ``plugins=[...]`` to :class:`commonplace.Memory`. Pick-one hooks are
``firstresult``: the most recently registered plugin that returns something
other than ``None`` wins, and commonplace's built-in implementations run last.
Collecting hooks gather a contribution from every plugin.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from ._events import MemoryEvent
    from ._records import Record
    from .embedders import Embedder
    from .lifecycle import DecayRule, SummaryDraft
    from .read import ScoreSignal
    from .stores import Backend
    from .write import NoteDraft, ProfileCard, Skip, Turn, UpdateCandidate, UpdateDecision

PROJECT = "commonplace"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
"""Marks a plugin's method as the implementation of the hook of the same name."""


@hookspec(firstresult=True)
def commonplace_write_note(turn: Turn) -> NoteDraft | Skip | None:
    """Write at most one note about a user turn.

    Return a :class:`~commonplace.NoteDraft` (one sentence about the user, with
    tags), a :class:`~commonplace.Skip` saying why the turn is not worth a note,
    or ``None`` to let the next writer decide. Only ``role="user"`` turns ever
    reach this hook: the assistant's replies and tool output never become notes,
    whatever a plugin does. The built-in writer is rule-based and offline.
    """


@hookspec(firstresult=True)
def commonplace_decide_update(
    note: Record, turn: Turn, candidates: Sequence[UpdateCandidate]
) -> Sequence[UpdateDecision] | None:
    """Decide what a new statement changes among older ones of the same user.

    ``note`` is the new note (not stored yet), ``turn`` the turn it was written from,
    ``candidates`` the older statements it may be about: those with its fact key and
    the nearest by meaning and by words, each with its cosine similarity to the note.
    Return one :class:`~commonplace.UpdateDecision` per older statement the note
    changes (``replaces``: it held until now; ``disputes``: both may not hold, neither is
    sure, and every recall that shows either marks both), an empty sequence when it
    changes none, or ``None`` to let the next plugin decide. Each decision's reason is
    kept for ``explain`` and the audit log. A decision about a record that is not a
    candidate is refused. The built-in rules are offline and precise first: a statement
    about someone else, a plan or an addition never replaces anything.
    """


@hookspec(firstresult=True)
def commonplace_embedder(name: str | None) -> Embedder | None:
    """Provide the embedder called ``name``, or the default one when ``name`` is None.

    ``name`` is the pinned model name of an existing store (the embedder's
    ``name`` property). Return ``None`` when you do not provide that embedder.
    """


@hookspec(firstresult=True)
def commonplace_adapt_embedder(model: object) -> Embedder | None:
    """Wrap ``model``, another framework's embedding model, as an :class:`Embedder`.

    Called when ``Memory(embedder=model)`` (or ``reembed(to=model)``) gets an object
    that is not an Embedder already. Return ``None`` for objects you do not adapt.
    The wrapper's ``name`` must come from the model's identity (class, model name,
    dimension) so that two models never share a store silently. Adapters registered
    in the ``commonplace.embedder_adapters`` entry-point group, named after the
    framework's top-level package, are loaded only for objects of that framework.
    """


@hookspec(firstresult=True)
def commonplace_backend(url: str, scheme: str) -> Backend | None:
    """Open the store at ``url`` if ``scheme`` (``sqlite``, ``weaviate`` ...) is yours.

    Return an object implementing :class:`~commonplace.stores.Backend`, or
    ``None`` for a scheme you do not serve. Raise
    :class:`~commonplace.errors.InvalidURLError` for a malformed URL of your scheme.
    """


@hookspec
def commonplace_score_signals() -> Sequence[ScoreSignal]:
    """Contribute extra reranking signals (affect, use feedback ...).

    Called once when a Memory is built; return the signals (possibly none) this
    plugin adds. Each is weighted by its own ``weight`` and, like recency and
    frequency, only lifts candidates that are relevant to the query.
    """
    return ()


@hookspec(firstresult=True)
def commonplace_summarise(entity: str, notes: Sequence[Record]) -> SummaryDraft | None:
    """Summarise a cluster of notes about ``entity`` during consolidation.

    Return a :class:`~commonplace.lifecycle.SummaryDraft` whose sentences each
    cite the ids of the notes that support them, or ``None`` to leave it to the
    built-in extractive summariser. Every sentence is checked against the notes
    it cites; unsupported sentences are rejected and recorded, never stored.
    """


@hookspec
def commonplace_decay_rules() -> Sequence[DecayRule]:
    """Contribute forgetting rules, run by ``Memory.decay`` after the built-in ones.

    Each rule has a ``name`` and ``plan(context) -> [DecayAction]``. Whatever a
    rule asks, decay never removes an episode or a confirmed note, and in a dry
    run nothing changes.
    """
    return ()


@hookspec(firstresult=True)
def commonplace_rewrite_profile(card: ProfileCard, notes: Sequence[Record]) -> ProfileCard | None:
    """Rewrite the user's profile card from the notes written since the last rewrite.

    Return the new :class:`~commonplace.write.ProfileCard`, or ``None`` for the
    built-in rules. The sticky rules are enforced on whatever comes back:
    identity stays until contradicted, people stay until said to be gone, life
    events stay for good; the rendered card never exceeds its token cap.
    """


@hookspec
def commonplace_event(event: MemoryEvent) -> None:
    """Hear what a Memory did: a turn ``written``, records ``superseded`` by a newer
    note, a context ``recalled``, records ``forgotten`` (see :class:`~commonplace.MemoryEvent`).

    Collecting: every listener is told, after the change is committed; the return
    value is ignored. A listener that raises undoes nothing: the others are still
    told, then the caller gets a :class:`~commonplace.errors.PluginError` saying the
    change was kept. Listeners run in the caller's thread, so keep them quick (hand
    slow work to a queue).
    """
