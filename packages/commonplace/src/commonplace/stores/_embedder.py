"""A store and its embedding model: the pin a model gives it, which model it opens with,
and the text a stored record's vector is made from.

A pin is forever: a store opens with the embedder it is pinned to, another model is
refused with the command that moves the store to it (``commonplace reembed``, run by
``commonplace/_reembed.py`` above this layer). Whatever plugins provide comes in as
``hooks``, passed by the caller, so this layer never imports the plugin manager.
"""

from __future__ import annotations

import contextlib
import shlex
from typing import Any

from .._records import Kind, Record, note_id
from .._validate import checked_dim
from ..embedders._adapt import FRAMEWORKS
from ..embedders._callable import checked_name
from ..embedders._protocol import Embedder
from ..errors import EmbedderMismatchError, PluginError
from ._protocol import EmbedderPin
from ._store import Store


def resolve_embedder(given: Embedder | None, *, backend: Store, hooks: Any) -> Embedder:
    """The embedder to open ``backend`` with, pinning it when the store has no pin yet.

    Without ``given`` the ``commonplace_embedder`` hook provides the pinned model (or
    the default one for a new store). A model other than the pinned one is refused with
    :class:`EmbedderMismatchError`, whose message names the command that re-embeds.
    """
    pin = backend.embedding.read_pin()
    if given is None:
        given = hooks.commonplace_embedder(name=None if pin is None else pin.name)
        if given is None:
            assert pin is not None
            raise EmbedderMismatchError(not_installed_message(pin, backend.url))
    if not isinstance(given, Embedder):
        raise PluginError("commonplace_embedder returned an object that is not an Embedder")
    if pin is None:
        backend.embedding.write_pin(pin_of(given))
    elif (pin.name, pin.dim) != (given.name, given.dim):
        raise EmbedderMismatchError(mismatch_message(pin, given, backend=backend, hooks=hooks))
    return given


def pin_of(model: Embedder) -> EmbedderPin:
    """The pin a store gets for ``model``, refused unless a store can hold it for good.

    A pin is forever: a name that cannot be stored or read back as given, or a dim no
    process can embed with (``HashingEmbedder(dim=2**40)``), would leave a store that can
    never be opened again. Only new pins are checked, so a store pinned before these
    limits existed still opens with its model.
    """
    name = checked_name(model.name)
    return EmbedderPin(name, checked_dim(f"the dim of the embedder {name!r}", model.dim))


def not_installed_message(pin: EmbedderPin, url: str) -> str:
    """What to install or pass to open a store whose pinned model no plugin provides."""
    prefix, _, rest = pin.name.partition(":")
    for what, package, pinned_prefix in FRAMEWORKS.values():
        if prefix == pinned_prefix and rest:
            cls, _, params = rest.partition(":")[0].partition("(")
            args = ", ".join(
                f"{key}={value!r}"
                for key, _, value in (p.partition("=") for p in params.rstrip(")").split(","))
                if key
            )
            return (
                f"this store is pinned to {what} model, {pin.name!r} (dim {pin.dim}), which "
                f"cannot be built from its name: pip install {package} and pass the same model, "
                f"Memory({url!r}, embedder={cls}({args or '...'})), making {pin.dim}-dimensional "
                "vectors"
            )
    return (
        f"this store is pinned to the embedder {pin.name!r} (dim {pin.dim}), and no installed "
        "plugin provides it; install the package whose commonplace_embedder hook provides "
        f"{pin.name!r}, or pass embedder=... with that model: Memory({url!r}, embedder=...)"
    )


def mismatch_message(pin: EmbedderPin, given: Embedder, *, backend: Store, hooks: Any) -> str:
    """Why a store refuses ``given``, and the command that moves it to ``given``."""
    command = reembed_command(given, backend.url, hooks)
    state = backend.embedding.reembed_state()
    if state is not None and (state.target.name, state.target.dim) == (given.name, given.dim):
        total = state.staged + state.pending
        return (
            f"this store is pinned to the embedder {pin.name!r} (dim {pin.dim}); a re-embed to "
            f"{given.name!r} (dim {given.dim}) was started and is not finished ({state.staged:,} "
            f"of {total:,} records done): run {command} to finish it (until then the store "
            f"opens with {pin.name!r})"
        )
    return (
        f"this store is pinned to the embedder {pin.name!r} (dim {pin.dim}) but was opened "
        f"with {given.name!r} (dim {given.dim}); open it with the pinned embedder, or "
        f"re-embed the store with the new model: {command}"
    )


def reembed_command(model: Embedder, url: str, hooks: Any) -> str:
    """The command that re-embeds the store at ``url`` with ``model``."""
    by_name = None
    with contextlib.suppress(Exception):  # only picks the wording of a message
        by_name = hooks.commonplace_embedder(name=model.name)
    if isinstance(by_name, Embedder) and (by_name.name, by_name.dim) == (model.name, model.dim):
        return f"`commonplace reembed --to {shlex.quote(model.name)} {shlex.quote(url)}`"
    return (
        f"`commonplace.embedders.reembed({url!r}, to=model)` in Python, where model is this "
        "embedder (`commonplace reembed --to NAME` takes only models an installed plugin "
        "provides by name)"
    )


def own_evidence(backend: Store, record: Record) -> str | None:
    """The text of the episode a note was written from (its id derives the note's)."""
    if record.kind in (Kind.SUMMARY, Kind.PROCEDURE):
        return None
    own = next((p for p in record.provenance if note_id(p) == record.id), None)
    episode = None if own is None else backend.get_episode(own)
    return None if episode is None else episode.text
