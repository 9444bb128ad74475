"""Moving a store to another embedding model: ``commonplace reembed --to NAME [URL]``.

Every record that holds a vector (notes, summaries, procedures, whatever their status)
is embedded again with the new model, in batches. The new vectors are staged beside the
live ones, so until the very end the store keeps working with its old model; the staged
vectors are the progress, kept in the store, so a run killed at any moment is finished by
running the same command again. The last step, done by the store in one go, checks by
count that every record has its new vector, makes them live and re-pins the store.

It opens a store by URL through the plugins, so it sits above the stores and the
plugin manager; ``commonplace.embedders`` offers :func:`reembed` without importing it
(see that package's ``__getattr__``), since the stores below import the embedders.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ._plugins import default_url, make_plugin_manager, open_backend
from ._progress import ProgressBar, checked_progress
from .embedders._adapt import adapt_embedder
from .embedders._protocol import Embedder, embed_checked, embedding_text
from .errors import InvalidInputError, InvalidTypeError, StoreError
from .stores._embedder import own_evidence, pin_of
from .stores._protocol import EmbedderPin
from .stores._store import Store

DEFAULT_BATCH = 256


@dataclass(frozen=True, slots=True)
class ReembedReport:
    """What a re-embed did.

    ``records`` were verified to hold a vector of ``target`` when it finished;
    ``embedded`` of them were embedded by this run, ``resumed`` had been staged by an
    earlier run that did not finish. ``already`` is true when the store was pinned
    to ``target`` already and nothing was done.
    """

    url: str
    source: EmbedderPin | None
    target: EmbedderPin
    records: int
    embedded: int
    resumed: int
    seconds: float
    already: bool = False

    def to_json(self) -> dict[str, Any]:
        def pin(p: EmbedderPin | None) -> dict[str, Any] | None:
            return None if p is None else {"name": p.name, "dim": p.dim}

        return {
            "url": self.url,
            "from": pin(self.source),
            "to": pin(self.target),
            "records": self.records,
            "embedded": self.embedded,
            "resumed": self.resumed,
            "seconds": round(self.seconds, 3),
            "already": self.already,
        }

    def __str__(self) -> str:
        if self.already:
            return f"{self.url} is already pinned to {self.target.name!r}; nothing to do"
        source = "no model" if self.source is None else repr(self.source.name)
        resumed = f" ({self.resumed:,} done by an earlier run)" if self.resumed else ""
        return (
            f"re-embedded {self.records:,} record{'' if self.records == 1 else 's'}{resumed} "
            f"of {self.url} from {source} to "
            f"{self.target.name!r} (dim {self.target.dim}) in {self.seconds:.1f}s; every "
            "record holds a vector of the new model and the store is pinned to it"
        )


def reembed(
    url: str | os.PathLike[str] | None = None,
    *,
    to: str | Embedder | object,
    batch: int = DEFAULT_BATCH,
    progress: bool | None = None,
    plugins: Iterable[object] = (),
) -> ReembedReport:
    """Re-embed the store at ``url`` with the model ``to`` and pin it to that model.

    ``to`` is a model name the ``commonplace_embedder`` hook provides (e.g.
    ``"commonplace-hashing-v1-256"``), an :class:`Embedder`, or any model an adapter
    plugin wraps (a LangChain ``Embeddings``, a LlamaIndex ``BaseEmbedding``). The old
    model is not needed. Records are embedded ``batch`` at a time; ``progress`` shows a
    bar on stderr (by default only when stderr is a terminal). Killed at any moment, the
    store still opens with its old model, and calling this again finishes the job.
    """
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    if url is not None and not isinstance(url, str):
        raise InvalidTypeError(f"url must be a str or a path, not {type(url).__name__}")
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= 100_000:
        raise InvalidInputError(f"batch must be an int from 1 to 100000, not {batch!r}")
    checked_progress(progress)
    manager = make_plugin_manager(plugins=plugins)
    model = _target_model(to, manager)
    target = pin_of(model)  # before the store is opened: a pin it cannot hold is refused
    backend = Store(open_backend(url or default_url(), manager))
    try:
        return _run(backend, model, target, batch=batch, progress=progress)
    finally:
        backend.close()


def _target_model(to: object, manager: Any) -> Embedder:
    if not isinstance(to, str):
        return adapt_embedder(to, manager)
    if not to.strip():
        raise InvalidInputError("--to needs the name of the model to re-embed with")
    found = manager.hook.commonplace_embedder(name=to)
    if found is None:
        raise InvalidInputError(
            f"no installed plugin provides an embedder named {to!r}; the built-in ones are "
            "commonplace-hashing-v1-<dim> (e.g. commonplace-hashing-v1-256). For a model "
            "object (a LangChain or LlamaIndex model, a CallableEmbedder) call "
            "commonplace.embedders.reembed(url, to=model) from Python"
        )
    if not isinstance(found, Embedder) or found.name != to:
        raise InvalidInputError(
            f"the plugin asked for the embedder {to!r} returned "
            f"{getattr(found, 'name', type(found).__name__)!r}; fix that plugin"
        )
    return found


def _run(
    backend: Store, model: Embedder, target: EmbedderPin, *, batch: int, progress: bool | None
) -> ReembedReport:
    started = time.perf_counter()
    source = backend.embedding.read_pin()
    state = backend.embedding.reembed_state()
    if source == target and state is None:
        return ReembedReport(backend.url, source, target, 0, 0, 0, 0.0, already=True)
    records = backend.embedding.reembed_pending(target, limit=batch)
    state = backend.embedding.reembed_state()
    assert state is not None and state.target == target, "the store did not start the re-embed"
    resumed = state.staged
    embedded = 0
    idle = 0
    with ProgressBar(
        desc="re-embedding",
        unit="record",
        total=state.staged + state.pending,
        initial=resumed,
        progress=progress,
    ) as bar:
        while True:
            if not records:
                done = backend.embedding.reembed_finish(target)
                if done is not None:
                    break
                idle += 1  # records were written meanwhile; they are listed now
                if idle > 3:
                    raise StoreError(
                        f"{backend.url} counts records still to re-embed but lists none; "
                        "the store's re-embed state is inconsistent: run the command again"
                    )
            else:
                idle = 0
                texts = [embedding_text(r, evidence=own_evidence(backend, r)) for r in records]
                vectors = embed_checked(model, texts)
                backend.embedding.reembed_stage(target, [r.id for r in records], vectors)
                embedded += len(records)
                bar.update(len(records))
            records = backend.embedding.reembed_pending(target, limit=batch)
    _verify(backend, target, done)
    return ReembedReport(
        backend.url, source, target, done, embedded, resumed, time.perf_counter() - started
    )


def _verify(backend: Store, target: EmbedderPin, done: int) -> None:
    """The store says it is pinned to ``target``, with nothing left to re-embed."""
    pin, state = backend.embedding.read_pin(), backend.embedding.reembed_state()
    if pin != target or state is not None:
        raise StoreError(
            f"re-embedding {backend.url} finished {done:,} records but the store is pinned "
            f"to {pin!r} with the re-embed state {state!r}; run the command again"
        )
