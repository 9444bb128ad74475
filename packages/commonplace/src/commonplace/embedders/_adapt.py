"""Adapting a framework's embedding model into a commonplace :class:`Embedder`.

``Memory(embedder=...)`` takes a commonplace :class:`Embedder`, or any object a plugin
adapts through the ``commonplace_adapt_embedder`` hook (a LangChain ``Embeddings`` with
commonplace-langgraph installed, a LlamaIndex ``BaseEmbedding`` with
commonplace-llamaindex). Adapter plugins register in the ``commonplace.embedder_adapters``
entry-point group under the name of the framework's top-level package; they are loaded
only for an object whose class comes from that package, so opening a store never
imports a framework the caller did not use.

Which model a store then opens with (its pin) is the store's business:
``stores/_embedder.py``. The plugin manager is passed in, built by the layer above.
"""

from __future__ import annotations

import importlib.metadata
from typing import TYPE_CHECKING

from ..errors import InvalidTypeError, PluginError
from ._protocol import Embedder

if TYPE_CHECKING:
    import pluggy

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
