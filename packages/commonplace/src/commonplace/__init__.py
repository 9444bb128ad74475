"""commonplace: memory for LLM agents that writes notes instead of indexing transcripts.

The public API is what this module exports; everything in a module whose name
starts with an underscore is private. Hooks are in :mod:`commonplace.hookspecs`,
errors in :mod:`commonplace.errors`, the backend protocol in
:mod:`commonplace.stores`.
"""

from ._clock import Clock, ManualClock, SystemClock
from ._config import Config, ConsolidationRules, DecayRules, ProfileRules, TierRules, Weights
from ._events import MemoryEvent
from ._firewall import said_by, speaks_for_user
from ._listing import RecordPage
from ._memory import Memory
from ._provenance import Provenance
from ._records import Episode, FactKey, Kind, Modality, Record, Role, Status, Tags, Tier
from ._scope import Scope
from ._tokens import count_tokens
from .embedders import Embedder, HashingEmbedder
from .hookspecs import hookimpl
from .read import Recall, RecallItem, Score, ScoreSignal
from .write import (
    ImportReport,
    NoteDraft,
    RuleNoteWriter,
    Skip,
    Turn,
    UpdateCandidate,
    UpdateDecision,
    WriteResult,
)

__version__ = "0.1.0"

__all__ = [
    "Clock",
    "Config",
    "ConsolidationRules",
    "DecayRules",
    "Embedder",
    "Episode",
    "FactKey",
    "HashingEmbedder",
    "ImportReport",
    "Kind",
    "ManualClock",
    "Memory",
    "MemoryEvent",
    "Modality",
    "NoteDraft",
    "ProfileRules",
    "Provenance",
    "Recall",
    "RecallItem",
    "Record",
    "RecordPage",
    "Role",
    "RuleNoteWriter",
    "Scope",
    "Score",
    "ScoreSignal",
    "Skip",
    "Status",
    "SystemClock",
    "Tags",
    "Tier",
    "TierRules",
    "Turn",
    "UpdateCandidate",
    "UpdateDecision",
    "Weights",
    "WriteResult",
    "__version__",
    "count_tokens",
    "hookimpl",
    "said_by",
    "speaks_for_user",
]
