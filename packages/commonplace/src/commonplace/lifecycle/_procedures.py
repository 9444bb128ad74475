"""Procedure candidates: the same kind of request, made again and again.

A user turn that asks for something ("can you draft my weekly report",
"remind me how to rotate the API keys") is reduced to a signature of its
content words. Requests sharing a signature across different episodes become
a procedure candidate; each further match confirms it, and after
``procedure_confirmations`` confirmations it is promoted (tier warm, found by
recall). Unpromoted candidates that stop matching are forgotten by decay.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime

from .._config import ConsolidationRules
from .._records import Kind, Modality, Record, Tags, Tier
from .._scope import Scope
from .._text import content_terms
from ..embedders._protocol import Embedder, embed_checked
from ..stores import AuditEntry, RecordQuery, Store

_REQUEST = re.compile(
    r"\b(?:can you|could you|would you|please|help me|how do i|how can i|remind me|"
    r"show me|write me|draft|make me|give me)\b",
    re.IGNORECASE,
)
_SAME_REQUEST = 0.5
_BOILERPLATE = frozenset({"user", "ask", "again"})  # stemmed, as content_terms gives them


def request_terms(note: Record) -> frozenset[str] | None:
    """The content words of a request note, or None if the note asks for nothing."""
    if note.tags.modality not in (Modality.QUESTION, Modality.STATEMENT):
        return None
    if not _REQUEST.search(note.text):
        return None
    terms = frozenset(content_terms(_REQUEST.sub(" ", note.text)) - _BOILERPLATE)
    return terms if len(terms) >= 2 else None


def group_requests(notes: list[Record]) -> list[list[Record]]:
    """Requests whose words overlap enough (Jaccard) are the same kind of request."""
    groups: list[tuple[frozenset[str], list[Record]]] = []
    for note in notes:
        terms = request_terms(note)
        if terms is None:
            continue
        for seed, members in groups:
            if len(seed & terms) / len(seed | terms) >= _SAME_REQUEST:
                members.append(note)
                break
        else:
            groups.append((terms, [note]))
    return [members for _, members in groups]


def update_procedures(
    backend: Store,
    *,
    embedder: Embedder,
    rules: ConsolidationRules,
    scope: Scope,
    now: datetime,
    dry_run: bool,
) -> list[AuditEntry]:
    groups = group_requests(list(backend.iter_records(RecordQuery(scope=scope))))
    existing = {
        r.id: r for r in backend.iter_records(RecordQuery(scope=scope, kinds=(Kind.PROCEDURE,)))
    }
    actions: list[AuditEntry] = []
    changed: list[Record] = []
    for notes in groups:
        signature = notes[0].id  # the first request names the group, stably
        # a repeated request may have been merged into one note: count the turns
        episodes = sorted({e for n in notes for e in n.provenance})
        if len(episodes) < 2:
            continue
        record_scope = notes[0].scope if len({n.scope for n in notes}) == 1 else scope
        rid = (
            "pr_"
            + hashlib.sha256("\x00".join((*record_scope.parts(), signature)).encode()).hexdigest()[
                :24
            ]
        )
        old = existing.get(rid)  # by id: another scope's procedure is never this one
        if old is not None and old.data.get("episodes") == episodes:
            continue  # nothing new matched
        confirmations = len(episodes)
        promoted = confirmations >= rules.procedure_confirmations
        kept_hot = old is not None and (old.pinned or old.tier is Tier.HOT)
        record = Record(
            id=rid,
            kind=Kind.PROCEDURE,
            scope=record_scope,
            text=f"The user repeatedly asks for: {notes[-1].text}",
            tags=Tags(importance=min(1.0, 0.3 + 0.1 * confirmations)),
            provenance=tuple(sorted(n.id for n in notes)),
            created_at=old.created_at if old else now,
            last_access=now,
            # what recalls, feedback and the user gave it is kept, not reset
            access_count=old.access_count if old else 0,
            used_count=old.used_count if old else 0,
            ignored_count=old.ignored_count if old else 0,
            pinned=old.pinned if old else False,
            tier=Tier.HOT if kept_hot else Tier.WARM if promoted else Tier.COLD,
            data={
                "signature": signature,
                "confirmations": confirmations,
                "episodes": episodes,
                "promoted": promoted,
                "last_matched": max(n.created_at for n in notes).isoformat(),
            },
        )
        action = (
            "promote_procedure"
            if promoted and not (old and old.data.get("promoted"))
            else ("confirm_procedure" if old else "new_procedure")
        )
        actions.append(
            AuditEntry(
                now,
                record_scope,
                action,
                "procedures",
                record.id,
                f"{confirmations} matching requests: {signature}",
            )
        )
        changed.append(record)
    if changed and not dry_run:
        backend.put_records(
            changed, embed_checked(embedder, [r.text for r in changed]), replace=True
        )
    return actions
