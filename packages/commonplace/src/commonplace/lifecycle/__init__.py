"""The lifecycle: tiers, consolidation, procedures, decay and forgetting.

Offline and scheduled (``Memory.sleep``), idempotent and resumable; every
change is written to the audit log with the rule that made it.
"""

from ._consolidate import SummaryDraft, SummarySentence, extractive_summary
from ._decay import DecayAction, DecayContext, DecayRule, ForgetSmart
from ._every_scope import every_scope, sleep_every_scope
from ._forget import ForgetReport
from ._llm import LLMSummariser
from ._report import LifecycleReport

__all__ = [
    "DecayAction",
    "DecayContext",
    "DecayRule",
    "ForgetReport",
    "ForgetSmart",
    "LLMSummariser",
    "LifecycleReport",
    "SummaryDraft",
    "SummarySentence",
    "every_scope",
    "extractive_summary",
    "sleep_every_scope",
]
