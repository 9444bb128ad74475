"""Which embedder a store is opened with: adapting framework models, reading the pin, matching.

``Memory(embedder=...)`` takes a commonplace :class:`Embedder`, or any object a plugin
adapts through the ``commonplace_adapt_embedder`` hook (a LangChain ``Embeddings`` with
commonplace-langgraph installed, a LlamaIndex ``BaseEmbedding`` with
commonplace-llamaindex). Adapter plugins register in the ``commonplace.embedder_adapters``
entry-point group under the name of the framework's top-level package; they are loaded
only for an object whose class comes from that package, so opening a store never
imports a framework the caller did not use.

The store's pin decides the rest: a store opens with the embedder it is pinned to,
another model is refused with the command that moves the store to it.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import shlex
from typing import TYPE_CHECKING, Any

from .._validate import checked_dim
from ..errors import EmbedderMismatchError, InvalidTypeError, InvalidURLError, PluginError
from ._callable import checked_name
from ._protocol import Embedder

if TYPE_CHECKING:
    import pluggy

    from ..stores import Backend, EmbedderPin, Store

ADAPTER_GROUP = "commonplace.embedder_adapters"

#: The frameworks whose embedding models an integration adapts: the framework's top-level
#: package -> (what the framework calls such a model, the distribution adapting it, the
#: prefix of the names that distribution pins).
FRAMEWORKS: dict[str, tuple[str, str, str]] = {
    "langchain_core": ("a LangChain Embeddings", "commonplace-langgraph", "langchain"),
    "llama_index": ("a LlamaIndex BaseEmbedding", "commonplace-llamaindex", "llamaindex"),
}


def adapt_embedder(model: object, manager: pluggy.PluginManager) -> Embedder:
    """``model`` as an :class:`Embedder`: itself, or what an adapter plugin makes of it."""
    if isinstance(model, Embedder):
        return model
    found = manager.hook.commonplace_adapt_embedder(model=model)
    if found is None and load_adapters(manager, model):
        found = manager.hook.commonplace_adapt_embedder(model=model)
    if found is None:
        raise InvalidTypeError(_unadaptable(model))
    if not isinstance(found, Embedder):
        raise PluginError(
            f"commonplace_adapt_embedder returned {type(found).__name__} for "
            f"{type(model).__name__}, not an Embedder (name, dim and embed(texts))"
        )
    return found


def load_adapters(manager: pluggy.PluginManager, model: object) -> int:
    """Register the adapter plugins for the frameworks ``model``'s class comes from.

    Returns how many were registered by this call.
    """
    packages = {cls.__module__.partition(".")[0] for cls in type(model).__mro__}
    count = 0
    for entry in importlib.metadata.entry_points(group=ADAPTER_GROUP):
        name = f"{ADAPTER_GROUP}:{entry.name}"
        if entry.name not in packages or manager.has_plugin(name):
            continue
        try:
            plugin = entry.load()
        except Exception as exc:
            raise PluginError(
                f"cannot load the embedder adapter {entry.value!r} ({entry.name}): {exc}; "
                "reinstall the package that provides it"
            ) from exc
        if not manager.is_registered(plugin):
            manager.register(plugin, name=name)
            count += 1
    return count


def open_backend(url: str, manager: pluggy.PluginManager) -> Backend:
    """The store at ``url``, opened by whichever installed backend serves its scheme."""
    from .._plugins import url_scheme

    scheme = url_scheme(url)
    backend = manager.hook.commonplace_backend(url=url, scheme=scheme)
    if backend is None:
        raise InvalidURLError(
            f"no installed backend serves {scheme}:// URLs (from {url!r}); install the "
            f"plugin for it (e.g. commonplace-{scheme}) or use sqlite:///path.db"
        )
    return backend  # type: ignore[no-any-return]


def resolve_embedder(given: Embedder | None, *, backend: Store, hooks: Any) -> Embedder:
    """The embedder to open ``backend`` with, pinning it when the store has no pin yet.

    Without ``given`` the ``commonplace_embedder`` hook provides the pinned model (or
    the default one for a new store). A model other than the pinned one is refused with
    :class:`EmbedderMismatchError`, whose message names the command that re-embeds.
    """
    pin = backend.read_pin()
    if given is None:
        given = hooks.commonplace_embedder(name=None if pin is None else pin.name)
        if given is None:
            assert pin is not None
            raise EmbedderMismatchError(not_installed_message(pin, backend.url))
    if not isinstance(given, Embedder):
        raise PluginError("commonplace_embedder returned an object that is not an Embedder")
    if pin is None:
        backend.write_pin(pin_of(given))
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
    from ..stores import EmbedderPin

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
    state = backend.reembed_state()
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


def _unadaptable(model: object) -> str:
    kind = type(model).__name__
    packages = {cls.__module__.partition(".")[0] for cls in type(model).__mro__}
    for top, (what, package, _) in FRAMEWORKS.items():
        if top in packages:
            return (
                f"embedder is {what} ({kind}) but no installed plugin adapts it; "
                f"pip install {package}, which does"
            )
    hint = (
        "; wrap a function with commonplace.embedders.CallableEmbedder(fn, name='my-model-v1')"
        if callable(model)
        else ""
    )
    return (
        f"embedder must have name, dim and embed(texts) (a commonplace Embedder), or be a "
        f"LangChain Embeddings or a LlamaIndex BaseEmbedding with commonplace-langgraph or "
        f"commonplace-llamaindex installed; got {kind}{hint}"
    )
