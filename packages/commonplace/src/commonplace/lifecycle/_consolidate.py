"""Consolidation ("sleep"): clusters of notes about one entity become a summary.

A summary is a transformation, not an archive: it says in a few sentences what
its source notes say, and keeps a coverage map from each sentence to the notes
that support it. Whatever wrote it (the extractive default or an LLM through
``commonplace_summarise``), every sentence is checked against its cited notes
and rejected when they do not support it. Source notes are never touched.

A run is idempotent: a cluster whose summary already exists with the same
sources is skipped. A cluster that changed gets a fresh summary and the old one
becomes invalid (decay soft-deletes it later). Each summary is written in its
own transaction, so a run killed halfway leaves a consistent store and the
next run finishes the job.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import pluggy

from .._config import ConsolidationRules
from .._records import Kind, Modality, Record, Status, Tags, Tier
from .._scope import Scope, owner_scope
from .._text import content_terms
from ..embedders._protocol import Embedder, embed_checked
from ..errors import CommonplaceError, PluginError
from ..stores import AuditEntry, RecordQuery, Store

SUPPORT_THRESHOLD = 0.8


@dataclass(frozen=True, slots=True)
class SummarySentence:
    """One sentence of a summary and the ids of the notes that support it."""

    text: str
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SummaryDraft:
    """What a summariser proposes for one cluster."""

    sentences: tuple[SummarySentence, ...]


def extractive_summary(entity: str, notes: Sequence[Record], *, max_sentences: int) -> SummaryDraft:
    """The default: the most important notes, each a sentence citing itself."""
    best = sorted(notes, key=lambda n: (-n.importance, -n.created_at.timestamp()))
    chosen = sorted(best[:max_sentences], key=lambda n: n.created_at)
    return SummaryDraft(tuple(SummarySentence(n.text, (n.id,)) for n in chosen))


def supported(sentence: SummarySentence, notes: dict[str, Record]) -> str | None:
    """None when the cited notes support the sentence, else why not."""
    cited = [notes[s] for s in sentence.sources if s in notes]
    if not cited or len(cited) != len(sentence.sources):
        return "cites notes outside its cluster"
    words = content_terms(sentence.text)
    if not words:
        return "says nothing"
    source_words = set().union(*(content_terms(n.text) for n in cited))
    share = len(words & source_words) / len(words)
    if share < SUPPORT_THRESHOLD:
        return f"only {share:.0%} of its words come from the notes it cites"
    return None


def clusters(
    backend: Store, *, scope: Scope, now: datetime, rules: ConsolidationRules
) -> dict[tuple[Scope, str], list[Record]]:
    """Statement notes old enough to consolidate, grouped by their owner (user and agent)
    and the entities they name. A run over a broad scope (every user of an agent) never
    writes one summary from two users' notes."""
    cutoff = now - timedelta(days=rules.min_age_days)
    groups: dict[tuple[Scope, str], list[Record]] = defaultdict(list)
    for note in backend.iter_records(
        RecordQuery(scope=scope, superseded=False, created_before=cutoff)
    ):
        if note.tags.modality is not Modality.STATEMENT:
            continue  # jokes, questions and hypotheticals never feed a summary
        for entity in {e.lower() for e in note.tags.entities}:
            groups[(owner_scope(note.scope), entity)].append(note)
    return {k: ns for k, ns in groups.items() if len(ns) >= rules.min_cluster_size}


def consolidate(
    backend: Store,
    *,
    embedder: Embedder,
    hooks: pluggy.HookRelay,
    rules: ConsolidationRules,
    scope: Scope,
    now: datetime,
    dry_run: bool,
) -> list[AuditEntry]:
    actions: list[AuditEntry] = []
    summaries = list(
        backend.iter_records(
            RecordQuery(scope=scope, kinds=(Kind.SUMMARY,), statuses=tuple(Status))
        )
    )
    known = {r.id: r.status for r in summaries}
    found = clusters(backend, scope=scope, now=now, rules=rules)
    for (owner, entity), notes in sorted(
        found.items(), key=lambda kv: (kv[0][0].parts(), kv[0][1])
    ):
        fingerprint = hashlib.sha256(",".join(sorted(n.id for n in notes)).encode()).hexdigest()
        one_scope = len({n.scope for n in notes}) == 1
        summary_scope = notes[0].scope if one_scope else owner
        sid = (
            "sm_"
            + hashlib.sha256(
                "\x00".join((*summary_scope.parts(), entity, fingerprint)).encode()
            ).hexdigest()[:24]
        )
        # what this summary replaces: the entity's summaries in its own scope or in the
        # consolidated one, never those another thread's run wrote for that thread
        olds = [
            r
            for r in summaries
            if r.status is Status.ACTIVE
            and r.id != sid
            and r.data.get("entity") == entity
            and r.scope in (summary_scope, scope)
        ]
        if sid in known:  # this cluster is already summarised: ids are never written twice,
            if known[sid] is Status.ACTIVE:  # but a run cut short may not have retired
                actions += _retire(olds, sid, now, backend, dry_run)  # what it replaced
            continue
        draft = hooks.commonplace_summarise(entity=entity, notes=list(notes))
        if draft is None:
            draft = extractive_summary(entity, notes, max_sentences=rules.max_sentences)
        if not isinstance(draft, SummaryDraft):
            raise PluginError("commonplace_summarise must return a SummaryDraft or None")
        by_id = {n.id: n for n in notes}
        kept: list[tuple[SummarySentence, str | None]] = []
        rejected: list[tuple[SummarySentence, str | None]] = []
        for sentence in draft.sentences:
            reason = supported(sentence, by_id)
            (rejected if reason else kept).append((sentence, reason))
        for sentence, reason in rejected:
            actions.append(
                AuditEntry(
                    now,
                    summary_scope,
                    "reject_sentence",
                    "hallucination_guard",
                    sid,
                    f"{sentence.text!r}: {reason}",
                )
            )
        if not kept:
            continue
        sources = sorted({s for sentence, _ in kept for s in sentence.sources})
        record = Record(
            id=sid,
            kind=Kind.SUMMARY,
            scope=summary_scope,
            text=f"About {entity}: " + " ".join(s.text for s, _ in kept),
            tags=Tags(entities=(entity,), importance=max(by_id[s].importance for s in sources)),
            provenance=tuple(sources),
            created_at=now,
            last_access=now,
            tier=Tier.WARM,
            data={
                "entity": entity,
                "fingerprint": fingerprint,
                "coverage": [[s.text, list(s.sources)] for s, _ in kept],
                "rejected": [[s.text, r] for s, r in rejected],
            },
        )
        actions.append(
            AuditEntry(
                now,
                summary_scope,
                "summarise",
                "consolidate",
                sid,
                f"{len(kept)} sentences from {len(sources)} notes",
            )
        )
        if not dry_run:
            try:
                backend.put_records([record], embed_checked(embedder, [record.text]))
            except CommonplaceError:
                if backend.get_record(sid, any_status=True) is None:
                    raise
                continue  # a concurrent run wrote this very summary (ids come from content)
        actions += _retire(olds, sid, now, backend, dry_run)
    return actions


def _retire(
    olds: list[Record], sid: str, now: datetime, backend: Store, dry_run: bool
) -> list[AuditEntry]:
    """Invalidate the summaries ``sid`` replaces."""
    if olds and not dry_run:
        backend.update_records([r.id for r in olds], at=now, status=Status.INVALID)
    return [
        AuditEntry(
            now,
            r.scope,
            "invalidate",
            "consolidate",
            r.id,
            f"its cluster changed; replaced by {sid}",
        )
        for r in olds
    ]
