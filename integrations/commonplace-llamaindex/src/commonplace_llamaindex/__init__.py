"""commonplace for LlamaIndex: notes, not transcripts, as chat memory and retrieval.

- :class:`CommonplaceMemory`: a ``BaseMemory`` for chat engines and agents.
- :class:`CommonplaceMemoryBlock`: a long-term block for LlamaIndex's ``Memory``.
- :class:`CommonplaceRetriever`: four-signal recall as a ``BaseRetriever``.
- :func:`llm_note_writer`, :func:`llm_summariser`, :func:`llm_profile_rewriter`: any
  LlamaIndex ``LLM`` as the note writer, the summariser or the profile-card writer.
- :func:`llm_update_decider`: any LlamaIndex ``LLM`` as the judge of what a new statement
  replaces or disputes.
- :class:`LlamaIndexEmbedder`: any LlamaIndex ``BaseEmbedding`` as the embedder (also
  automatic: ``Memory(embedder=OpenAIEmbedding(...))``).

Importing this package opens nothing and sets nothing: stores are opened on first use
and the tokenizer is LlamaIndex's, looked up when tokens are counted.
"""

from ._block import CommonplaceMemoryBlock
from ._embeddings import LlamaIndexEmbedder
from ._memory import CommonplaceMemory
from ._retriever import CommonplaceRetriever, nodes_from_recall
from ._writer import llm_note_writer, llm_profile_rewriter, llm_summariser, llm_update_decider

__version__ = "0.1.0"

__all__ = [
    "CommonplaceMemory",
    "CommonplaceMemoryBlock",
    "CommonplaceRetriever",
    "LlamaIndexEmbedder",
    "__version__",
    "llm_note_writer",
    "llm_profile_rewriter",
    "llm_summariser",
    "llm_update_decider",
    "nodes_from_recall",
]
