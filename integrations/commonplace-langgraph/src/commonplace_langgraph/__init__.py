"""commonplace-langgraph: long-term memory for LangGraph graphs, by changing one line.

- :class:`CommonplaceSaver` — a checkpointer that also writes the user's messages to memory;
- :class:`CommonplaceMiddleware` — memory for LangChain's prebuilt ``create_agent``;
- :class:`CommonplaceStore` — a ``BaseStore`` that is a view over the memory (values nest
  at most :data:`MAX_VALUE_DEPTH` levels; a bad namespace is
  :class:`InvalidStoreNamespaceError`);
- :func:`add_memory_nodes` and the :class:`RecallNode`, :class:`NoteNode` and
  :class:`ConsolidationNode` it adds around a model node (of a graph, or a compiled one);
- :func:`memory_tools` — ``remember``, ``recall`` and ``forget`` for a ``ToolNode``;
- :func:`chat_model_note_writer` — any chat model as the note writer.
- :func:`chat_model_update_decider` — any chat model as the judge of what a new statement
  replaces or disputes.
- :class:`LangChainEmbedder` — any LangChain ``Embeddings`` as the embedder (also
  automatic: ``Memory(embedder=OpenAIEmbeddings(...))``).

Importing this package builds nothing and opens nothing.
"""

from ._checkpointer import CommonplaceSaver, SaverOpening, SetupDone
from ._embeddings import LangChainEmbedder
from ._graph import add_memory_nodes
from ._llm import (
    chat_model_complete,
    chat_model_note_writer,
    chat_model_profile_rewriter,
    chat_model_summariser,
    chat_model_update_decider,
)
from ._middleware import CommonplaceMiddleware
from ._namespaces import InvalidStoreNamespaceError
from ._nodes import MEMORY_MESSAGE_ID, ConsolidationNode, NoteNode, RecallNode
from ._scope import NoUserWarning
from ._store import CommonplaceStore
from ._tools import memory_tools
from ._values import MAX_VALUE_DEPTH

__version__ = "0.1.0"

__all__ = [
    "CommonplaceMiddleware",
    "CommonplaceSaver",
    "CommonplaceStore",
    "ConsolidationNode",
    "InvalidStoreNamespaceError",
    "LangChainEmbedder",
    "MAX_VALUE_DEPTH",
    "MEMORY_MESSAGE_ID",
    "NoUserWarning",
    "NoteNode",
    "RecallNode",
    "SaverOpening",
    "SetupDone",
    "__version__",
    "add_memory_nodes",
    "chat_model_complete",
    "chat_model_note_writer",
    "chat_model_profile_rewriter",
    "chat_model_summariser",
    "chat_model_update_decider",
    "memory_tools",
]
