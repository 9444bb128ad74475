"""The write pipeline: turns in, episodes, notes, merges and supersessions out.

For each new user turn the note-writer hook proposes a note. Before it is
stored, the pipeline asks two questions of the user's existing notes:
is it a near-duplicate (then it strengthens the existing note instead), and
does it restate a fact with a new value (then it supersedes the old one).
Everything a turn changes is applied in the backend's one transaction.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

import pluggy

from .._config import Config
from .._records import (
    Episode,
    FactKey,
    Kind,
    Modality,
    Record,
    Role,
    Tags,
    Tier,
    index_text,
    note_id,
)
from .._scope import Scope, owner_scope
from .._text import missing_words
from ..embedders._protocol import Embedder, Vectors, embed_checked
from ..errors import PluginError
from ..read._flags import negated
from ..stores import (
    AuditEntry,
    Conflict,
    Dispute,
    LedgerEntry,
    RecordQuery,
    Store,
    TurnWrite,
    WriteBatch,
)
from ..stores._entries import audit_entries, conflict_entry, dispute_entry
from ._cards import CardKeeper
from ._clauses import split_speaker
from ._decide import may_change, shorter_slot
from ._profile import relations
from ._types import VERDICTS, NoteDraft, Skip, Turn, UpdateCandidate, UpdateDecision, WriteResult
from ._updates import about, retracted, takes_back

DUPLICATE = "duplicate: this turn is already stored in this scope"
_LINK_ENTITY = 0.5
_LINK_SESSION = 0.3
_SESSION_GAP_SECONDS = 30 * 60
_LINK_LOOKBACK = 20
_ENTITY_LINKS = 3
_UPDATE_REACH = 10
_MAX_TURN_TERMS = 40
# how far a near copy that differs only in case, punctuation or spacing may embed from its
# note (MiniLM puts "I work at Ikea." and "i work at ikea!!" at 0.93); the store's narrow
# near-copy search serves any bound from 0.9
_COPY_REACH = 0.9
# how many of the nearest notes a write looks through for one of its own scope when the
# nearest is a narrower scope's (the same words said in several threads of one user)
_OWN_REACH = 32
# a skipped turn with fewer words that its note lacks is not worth keeping as its evidence
_EVIDENCE_MIN_TERMS = 3


def _replaces(
    new: Record, key: FactKey | None, retraction: frozenset[str] | None, old: Record
) -> bool:
    """Whether the statement ``new`` replaces ``old``, which has no key it shares: ``old``
    is about the subject ``new``'s key names, or says no more than ``new`` takes back."""
    if old.tags.modality is not Modality.STATEMENT or negated(old.text):
        return False
    if key is not None and old.tags.key is None and about(key.predicate, old.text):
        return True
    if shorter_slot(new, old):
        return True  # one slot named two ways ("public api", "public api version")
    return retraction is not None and takes_back(retraction, old.text)


def _decision_data(decisions: Sequence[UpdateDecision]) -> dict[str, dict[str, str]]:
    """What a note keeps of the decisions it made: by verdict, the record and the reason."""
    out: dict[str, dict[str, str]] = {}
    for d in decisions:
        out.setdefault(d.verdict, {})[d.record_id] = d.reason
    return out


def _checked_decisions(
    decided: object, candidates: Sequence[UpdateCandidate]
) -> list[UpdateDecision]:
    """The hook's answer, checked: decisions about candidates only, one per record."""
    if decided is None:
        return []
    if isinstance(decided, (str, bytes)) or not isinstance(decided, Sequence):
        raise PluginError(
            f"commonplace_decide_update returned {type(decided).__name__}; return a list "
            "of UpdateDecision (empty when the note changes nothing) or None"
        )
    allowed = {c.record.id for c in candidates}
    out: dict[str, UpdateDecision] = {}
    for d in decided:
        if not isinstance(d, UpdateDecision):
            raise PluginError(
                f"commonplace_decide_update gave {d!r}; each decision is an UpdateDecision"
            )
        if d.verdict not in VERDICTS:
            raise PluginError(
                f"commonplace_decide_update gave the verdict {d.verdict!r}; use one of "
                f"{', '.join(VERDICTS)}"
            )
        if d.record_id not in allowed:
            raise PluginError(
                f"commonplace_decide_update decided about {d.record_id!r}, which is not one "
                "of the candidates it was given"
            )
        if not isinstance(d.reason, str) or not d.reason.strip():
            raise PluginError("each UpdateDecision needs a reason (it is shown by explain)")
        out.setdefault(d.record_id, d)
    return list(out.values())


def _same_statement(twin: Record, note: Record) -> bool:
    """Whether a very similar stored note says the same thing, so merging loses nothing."""
    return (
        twin.superseded_by is None
        and twin.tags.modality is note.tags.modality
        # same words, different fact: that is supersession, not a merge
        and twin.tags.key == note.tags.key
        and _plain(twin.tags.value or "") == _plain(note.tags.value or "")
        # "eats meat" and "doesn't eat meat" are not duplicates
        and negated(twin.text) == negated(note.text)
        # nor "standup moved to 9:00" and "standup moved to 10:00": a value changed
        and _values(twin.text) == _values(note.text)
    )


def _values(text: str) -> frozenset[str]:
    """The numbers a statement holds: what two near copies must share (names differ in
    case between copies: "Ikea" and "ikea" are one)."""
    return frozenset(w for w in _WORDS.findall(text) if w[:1].isdigit())


def _plain(text: str) -> str:
    """``text`` as a near copy compares it: case, punctuation and spacing left out
    ("I work at Ikea." and "i work at ikea!!" are one)."""
    return " ".join(_WORDS.findall(text.casefold()))


_WORDS = re.compile(r"[^\W_]+")


class WritePipeline:
    """Turns a batch of validated turns into one backend transaction."""

    def __init__(
        self,
        *,
        store: Store,
        embedder: Embedder,
        config: Config,
        hooks: pluggy.HookRelay,
        cards: CardKeeper,
    ) -> None:
        self._store = store
        self._cards = cards
        self._embedder = embedder
        self._config = config
        self._hooks = hooks

    def write_many(
        self,
        turns: Sequence[Turn],
        ids: Sequence[str],
        *,
        drafted: Sequence[NoteDraft | Skip | None] | None = None,
    ) -> list[WriteResult]:
        """``drafted``: what the note writer already gave for each turn (a bulk import
        drafts the next batch in a worker process), checked as the hook's answer is."""
        stored = self._store.existing_episode_ids(set(ids))
        drafts: list[Record | None] = []
        skipped: list[str | None] = []
        seen: set[str] = set()
        for n, (turn, eid) in enumerate(zip(turns, ids)):
            note, reason = None, None
            if eid in stored or eid in seen:
                reason = DUPLICATE
            elif turn.role is not Role.USER:
                reason = f"{turn.role.value} turns never become notes"
            elif turn.said_by is not None:
                reason = (
                    f"a message from {turn.said_by!r} is not the user's and never becomes a note"
                )
            else:
                draft = (
                    self._hooks.commonplace_write_note(turn=turn) if drafted is None else drafted[n]
                )
                note, reason = self._draft(turn, eid, draft)
            seen.add(eid)
            drafts.append(note)
            skipped.append(reason)
        # what each note was written from: the first turn of its id (a message sent again
        # under its key with other words is a copy, and its words are not the note's)
        texts: dict[str, str] = {}
        for turn, eid in zip(turns, ids):
            texts.setdefault(eid, turn.text)
        vectors = self._embed([n for n in drafts if n is not None], texts)
        writes, kept_rows, decided = self._plan(turns, ids, drafts, vectors)
        evidence = self._as_evidence(turns, writes, drafts, skipped)
        writes = [evidence.get(n, w) for n, w in enumerate(writes)]
        kept = vectors[kept_rows] if vectors is not None and kept_rows else None
        # what the new notes bring (links, conflicts, the audit of their decisions) and the
        # cards they rewrite are decided now and committed with the turns, all or nothing
        new = [reason != DUPLICATE for reason in skipped]
        writes = self._with_consequences(writes, new, decided)
        cards = self._planned_cards(turns, writes, new, evidence, decided)
        fresh = self._store.apply(WriteBatch(writes, kept, cards))
        results = []
        for n, (eid, write, is_new, reason) in enumerate(zip(ids, writes, fresh, skipped)):
            result_note = write.note
            if n in evidence:
                reason = f"{reason}; kept as evidence of {write.merge_into}"
            elif write.merge_into is not None:
                result_note = self._store.get_record(write.merge_into)
                reason = None
            if not is_new:
                result_note = self._store.get_record(note_id(eid))
                reason = reason or DUPLICATE
            replaced = write.supersedes if is_new else ()
            disputed: tuple[str, ...] = ()
            if is_new and write.note is not None:
                disputed = tuple(
                    d.record_id for d in decided.get(write.note.id, ()) if d.verdict == "disputes"
                )
            skip = None if result_note else reason
            results.append(
                WriteResult(eid, is_new, result_note, skip, superseded=replaced, disputed=disputed)
            )
        return results

    def _with_consequences(
        self, writes: list[TurnWrite], new: list[bool], decided: dict[str, list[UpdateDecision]]
    ) -> list[TurnWrite]:
        """Each new note's turn with its links, conflicts and the audit of its decisions."""
        notes = [w.note for w, is_new in zip(writes, new) if is_new and w.note is not None]
        if not notes:
            return writes
        links = self._links(notes)
        entries = self._conflicts(notes)
        for nid, decisions in self._decision_entries(notes, decided).items():
            entries.setdefault(nid, []).extend(decisions)
        out = []
        for write, is_new in zip(writes, new):
            made = write.note.id if is_new and write.note is not None else None
            if made is not None and (made in links or made in entries):
                write = replace(
                    write, links=tuple(links.get(made, ())), entries=tuple(entries.get(made, ()))
                )
            out.append(write)
        return out

    def _planned_cards(
        self,
        turns: Sequence[Turn],
        writes: list[TurnWrite],
        new: list[bool],
        evidence: dict[int, TurnWrite],
        decided: dict[str, list[UpdateDecision]],
    ) -> list[LedgerEntry]:
        """The profile cards and rolling summaries the batch's notes rewrite: those enough
        new notes reached, and those showing a value an update replaced or disputed (a card
        holding it would show it as current until the next few notes)."""
        scopes: list[Scope] = []
        changed: list[Scope] = []
        for n, (turn, write, is_new) in enumerate(zip(turns, writes, new)):
            if not is_new or n in evidence or (write.note is None and write.merge_into is None):
                continue
            scopes.append(turn.scope)
            made = decided.get(write.note.id, ()) if write.note is not None else ()
            if write.supersedes or any(d.verdict == "disputes" for d in made):
                changed.append(turn.scope)
        if not scopes:
            return []
        new_writes = [w for w, is_new in zip(writes, new) if is_new]
        return self._cards.planned(
            scopes, now=max(t.at for t in turns), changed=changed, writes=new_writes
        )

    def _decision_entries(
        self, notes: Sequence[Record], decided: dict[str, list[UpdateDecision]]
    ) -> dict[str, list[LedgerEntry]]:
        """By note, the ledger entries of its decisions: the audit log says which turn
        replaced or disputed which note, and why; a dispute is kept beside the records, so
        that a recall showing either marks both."""
        out: dict[str, list[LedgerEntry]] = {}
        for note in notes:
            audit: list[AuditEntry] = []
            disputes: list[LedgerEntry] = []
            for d in decided.get(note.id, ()):
                action = "superseded" if d.verdict == "replaces" else "disputed"
                detail = f"by {note.id} (turn {note.provenance[0]}): {d.reason}"
                audit.append(
                    AuditEntry(note.created_at, note.scope, action, "update", d.record_id, detail)
                )
                if d.verdict == "disputes":
                    owner = owner_scope(note.scope)
                    dispute = Dispute(note.id, d.record_id, owner, note.created_at, d.reason)
                    disputes.append(dispute_entry(dispute))
            if audit:
                out[note.id] = audit_entries(audit, keyed=True) + disputes
        return out

    # -- drafting ------------------------------------------------------------------------

    def _draft(self, turn: Turn, eid: str, draft: object) -> tuple[Record | None, str | None]:
        if isinstance(draft, Skip):
            return None, draft.reason
        if draft is None:
            return None, "no note writer produced a note"
        if not isinstance(draft, NoteDraft) or not isinstance(draft.tags, Tags):
            raise PluginError(
                f"commonplace_write_note returned {type(draft).__name__}; "
                "return a NoteDraft, a Skip or None"
            )
        text = " ".join(str(draft.text).split())
        if not text:
            return None, "the note writer returned an empty note"
        importance = draft.tags.importance
        if (
            isinstance(importance, bool)
            or not isinstance(importance, (int, float))
            or not math.isfinite(importance)
        ):
            raise PluginError("a NoteDraft's importance must be a finite number in [0, 1]")
        tags = replace(
            draft.tags,
            importance=min(1.0, max(0.0, float(importance))),
            # what was said and the note dropped: keyword search still finds it by that
            turn_terms=missing_words(turn.text, text, limit=_MAX_TURN_TERMS),
        )
        if tags.modality is not Modality.STATEMENT and tags.key is not None:
            tags = replace(tags, key=None, value=None)  # only statements are facts
        return Record(
            id=note_id(eid),
            kind=Kind.NOTE,
            scope=turn.scope,
            text=text[: self._config.max_turn_chars],
            tags=tags,
            provenance=(eid,),
            created_at=turn.at,
            last_access=turn.at,
            tier=Tier.WARM,
            valid_from=turn.at if tags.key is not None else None,
        ), None

    def _embed(self, notes: list[Record], texts: dict[str, str]) -> Vectors | None:
        if not notes:
            return None
        # a note is found by what was said (its evidence), and shown as the note
        return embed_checked(
            self._embedder,
            [index_text(n.text, n.tags, evidence=texts[n.provenance[0]]) for n in notes],
        )

    # -- merge and supersede -------------------------------------------------------------

    def _plan(
        self,
        turns: Sequence[Turn],
        ids: Sequence[str],
        drafts: list[Record | None],
        vectors: Vectors | None,
    ) -> tuple[list[TurnWrite], list[int], dict[str, list[UpdateDecision]]]:
        """One TurnWrite per turn, the vector rows of the notes that are kept, and what
        each new note changes (by note id): the decisions behind its ``supersedes``,
        and its disputes."""
        twins = self._near_duplicates([n for n in drafts if n is not None], vectors)
        writes: list[TurnWrite] = []
        kept: list[int] = []
        decided: dict[str, list[UpdateDecision]] = {}
        newest: dict[Scope, datetime | None] = {}
        # the notes of this batch an update later in it may change, per owner
        earlier: dict[Scope, list[tuple[Record, Vectors]]] = {}
        # the notes this batch keeps, by their exact scope, with their vector rows, and the
        # ones a later note of the batch replaced: what a repeat in the batch may merge into
        mine: dict[Scope, list[tuple[int, Record]]] = {}
        gone: set[str] = set()
        row = 0
        for turn, eid, note in zip(turns, ids, drafts):
            meta = turn.meta if turn.said_by is None else {**turn.meta, "said_by": turn.said_by}
            episode = Episode(
                id=eid, scope=turn.scope, role=turn.role, text=turn.text, at=turn.at, meta=meta
            )
            if note is None:
                writes.append(TurnWrite(episode))
                continue
            if turn.role is not Role.USER or turn.said_by is not None:  # the firewall, again
                raise AssertionError("a note may only be derived from a user turn")
            twin = twins[row]
            row += 1
            if twin is None and vectors is not None and note.scope in mine:
                # the same words said again in this very batch (another day of an import)
                twin = self._batch_twin(note, vectors, row - 1, mine[note.scope], gone)
            if twin is not None:
                merged = replace(
                    twin.tags,
                    importance=min(1.0, max(twin.tags.importance, note.tags.importance) + 0.05),
                )
                writes.append(TurnWrite(episode, merge_into=twin.id, merged_tags=merged))
                continue
            assert vectors is not None  # a note was drafted, so it was embedded
            scope = owner_scope(note.scope)
            if scope not in newest:  # one read per scope and batch, not per note
                found = self._store.recent_records(scope, kinds=(Kind.NOTE,), limit=1)
                owned = [r for r in found if scope.owns(r.scope)]
                newest[scope] = owned[0].created_at if owned else None
            batch = earlier.setdefault(scope, [])
            decisions, late = self._updates(
                note, turn, vectors[row - 1], newest=newest[scope], earlier=batch
            )
            supersedes = tuple(d.record_id for d in decisions if d.verdict == "replaces")
            if decisions:
                decided[note.id] = decisions
                note = replace(note, data={**note.data, **_decision_data(decisions)})
            batch[:] = [(r, v) for r, v in batch if r.id not in supersedes]
            batch.append((note, vectors[row - 1]))
            gone.update(supersedes)
            mine.setdefault(note.scope, []).append((row - 1, note))
            writes.append(TurnWrite(episode, note, supersedes=supersedes, superseded_at=late))
            kept.append(row - 1)
        return writes, kept, decided

    def _near_duplicates(self, notes: list[Record], vectors: Vectors | None) -> list[Record | None]:
        """For each new note, the stored note it merely repeats (or None); one index pass
        per scope for the whole batch."""
        out: list[Record | None] = [None] * len(notes)
        if vectors is None:
            return out
        by_scope: dict[Scope, list[int]] = {}
        for i, note in enumerate(notes):
            by_scope.setdefault(note.scope, []).append(i)
        bound = self._config.merge_similarity
        for scope, rows in by_scope.items():
            # near copies by meaning, and by words: a copy that differs in case or
            # punctuation only may embed a little further off ("Ikea." and "ikea!!")
            hits = self._store.nearest(scope, vectors[rows], min_similarity=_COPY_REACH)
            for i, hit in zip(rows, hits):
                if hit is None:
                    continue
                twin, similarity = self._store.get_record(hit[0]), hit[1]
                if twin is not None and twin.scope != scope:
                    # merged evidence stays in the writer's own scope, never a narrower
                    # one's that it sees: the nearest note of exactly this scope, if any
                    twin, similarity = self._own_nearest(scope, vectors[i])
                if (
                    twin is not None
                    and (similarity >= bound or _plain(twin.text) == _plain(notes[i].text))
                    and _same_statement(twin, notes[i])
                ):
                    out[i] = twin
        return out

    def _own_nearest(self, scope: Scope, vector: Vectors) -> tuple[Record | None, float]:
        """The nearest note of exactly ``scope`` within a near copy's reach (the few a
        search ranks first; a broader scope also sees its narrower scopes' notes)."""
        own = [
            hit
            for hit in self._store.search(
                scope, vector, text=None, limit=_OWN_REACH, kinds=(Kind.NOTE,)
            )
            if hit.record.scope == scope and hit.similarity >= _COPY_REACH
        ]
        best = max(own, key=lambda hit: hit.similarity, default=None)
        return (None, 0.0) if best is None else (best.record, best.similarity)

    def _batch_twin(
        self,
        note: Record,
        vectors: Vectors,
        row: int,
        earlier: Sequence[tuple[int, Record]],
        gone: set[str],
    ) -> Record | None:
        """The note this batch already keeps in ``note``'s own scope that ``note`` (at
        ``row`` of ``vectors``) merely repeats, the latest first, as :meth:`_near_duplicates`
        finds one among the stored notes; or None. One product for all of them."""
        kept = [(r, record) for r, record in earlier if record.id not in gone]
        if not kept:
            return None
        similarities = (vectors[[r for r, _ in kept]] @ vectors[row]).tolist()
        for (_, record), similarity in zip(reversed(kept), reversed(similarities)):
            if (
                similarity >= _COPY_REACH
                and (
                    similarity >= self._config.merge_similarity
                    or _plain(record.text) == _plain(note.text)
                )
                and _same_statement(record, note)
            ):
                return record
        return None

    def _updates(
        self,
        note: Record,
        turn: Turn,
        vector: Vectors,
        *,
        newest: datetime | None,
        earlier: Sequence[tuple[Record, Vectors]],
    ) -> tuple[list[UpdateDecision], tuple[str, datetime] | None]:
        """What ``note`` changes among the statements already stored (and the notes of
        this batch before it), as the ``commonplace_decide_update`` hook decides, and the
        newer note that already replaced it when it arrives late (an old chat imported
        after a newer one; only possible when it is older than ``newest``, the newest
        note of its scope). The candidates are the same-key records and the few nearest
        notes, each read once; none are looked for when nothing in the note could change
        anything (no key, no cue of change, not late)."""
        if not self._config.supersede or note.tags.modality is not Modality.STATEMENT:
            return [], None
        owner = owner_scope(note.scope)
        key, value = note.tags.key, note.tags.value
        older: dict[str, Record] = {}
        newer: list[Record] = []
        if key is not None and value is not None:
            for r in self._store.iter_records(
                RecordQuery(
                    scope=owner,
                    subject=key.subject,
                    predicate=key.predicate,
                    superseded=False,
                )
            ):
                if not owner.owns(r.scope) or (r.tags.value or "").lower() == value.lower():
                    continue
                if r.created_at <= note.created_at:
                    older[r.id] = r
                else:
                    newer.append(r)
        retraction = retracted(note.text)
        late = newest is not None and newest > note.created_at and not negated(note.text)
        similarity: dict[str, float] = {}
        if retraction is not None or key is not None or late or may_change(turn.text):
            # the few nearest statements, by meaning and by words: all an update can reach
            for candidate in self._store.search(
                owner,
                vector,
                text=note.text,
                limit=_UPDATE_REACH,
                kinds=(Kind.NOTE,),
            ):
                other = candidate.record
                if other.superseded_by is not None or not owner.owns(other.scope):
                    continue
                if other.created_at <= note.created_at:
                    older.setdefault(other.id, other)
                    similarity[other.id] = candidate.similarity
                elif late and _replaces(other, other.tags.key, retracted(other.text), note):
                    newer.append(other)
            for record, row in earlier:
                older.setdefault(record.id, record)
                similarity[record.id] = float(row @ vector)
        first = min(newer, key=lambda r: r.created_at, default=None)
        late_by = None if first is None else (first.id, first.created_at)
        if not older:
            return [], late_by
        unscored = [rid for rid in older if rid not in similarity]
        if unscored:
            similarity.update(zip(unscored, (self._store.get_vectors(unscored) @ vector).tolist()))
        candidates = [UpdateCandidate(r, float(similarity[r.id])) for r in older.values()]
        decided = self._hooks.commonplace_decide_update(note=note, turn=turn, candidates=candidates)
        return _checked_decisions(decided, candidates), late_by

    # -- turns kept as evidence -----------------------------------------------------------

    def _as_evidence(
        self,
        turns: Sequence[Turn],
        writes: Sequence[TurnWrite],
        drafts: Sequence[Record | None],
        skipped: Sequence[str | None],
    ) -> dict[int, TurnWrite]:
        """The turns of a conversation between people that are not worth a note of their
        own ("That charity race sounds great, Mel!", "What got you into running?", "I'm
        not giving up") but say something, by index, each as evidence of the latest note
        of its scope and session: the turn joins that note's provenance and its words the
        note's keyword text, so a question that needs them finds the note and sees them
        quoted beside it (an excerpt). The turn itself is not a note."""
        out: dict[int, TurnWrite] = {}
        latest: dict[Scope, Record | None] = {}
        for n, (turn, write, draft, reason) in enumerate(zip(turns, writes, drafts, skipped)):
            scope = turn.scope
            if write.note is not None:
                latest[scope] = write.note
                continue
            if write.merge_into is not None:
                latest[scope] = self._store.get_record(write.merge_into)
                continue
            if (
                draft is not None
                or turn.role is not Role.USER
                or turn.said_by is not None
                or reason is None
                or reason == DUPLICATE
                or (turn.speaker or split_speaker(turn.text)[0]) is None
            ):
                continue
            if scope not in latest:
                found = self._store.recent_records(scope, kinds=(Kind.NOTE,), limit=4)
                latest[scope] = next((r for r in found if r.scope == scope), None)
            note = latest[scope]
            if (
                note is None
                or not 0 <= (turn.at - note.created_at).total_seconds() <= _SESSION_GAP_SECONDS
            ):
                continue
            said = missing_words(
                turn.text, f"{note.text} {note.tags.turn_terms}", limit=_MAX_TURN_TERMS
            )
            if len(said.split()) < _EVIDENCE_MIN_TERMS:
                continue  # "Thanks, Mel!" answers nothing worth quoting
            terms = f"{note.tags.turn_terms} {said}".split()[-2 * _MAX_TURN_TERMS :]
            note = replace(note, tags=replace(note.tags, turn_terms=" ".join(terms)))
            latest[scope] = note
            out[n] = replace(write, merge_into=note.id, merged_tags=note.tags)
        return out

    # -- entity conflicts -----------------------------------------------------------------

    def _conflicts(self, notes: list[Record]) -> dict[str, list[LedgerEntry]]:
        """Two people with one name ("my sister Mia", "my coworker Mia") are never merged:
        the pair goes to the conflict queue until someone (or decay) decides. By note, the
        conflicts it opens, against stored notes and the batch's earlier ones."""
        out: dict[str, list[LedgerEntry]] = {}
        for note in notes:
            owner = owner_scope(note.scope)
            for relation, name in relations(note.text):
                stored = self._store.iter_records(RecordQuery(scope=owner, entity=name))
                named = name.casefold()
                batch = [
                    r
                    for r in notes
                    if owner.contains(r.scope) and named in {e.casefold() for e in r.tags.entities}
                ]
                for other in [*stored, *batch]:
                    theirs = {r for r, n in relations(other.text) if n.lower() == name.lower()}
                    if (
                        other.id == note.id
                        or not owner.owns(other.scope)
                        or not theirs
                        or relation in theirs
                    ):
                        continue
                    ids = tuple(sorted((note.id, other.id)))
                    conflict = Conflict(
                        id="cf_" + hashlib.sha256("\x00".join(ids).encode()).hexdigest()[:24],
                        scope=owner,
                        entity=name.lower(),
                        reason=f"{name} is named as {relation} and as " + ", ".join(sorted(theirs)),
                        record_ids=ids,
                        created_at=note.created_at,
                    )
                    out.setdefault(note.id, []).append(conflict_entry(conflict))
        return out

    # -- links ---------------------------------------------------------------------------

    def _links(self, notes: list[Record]) -> dict[str, list[tuple[str, str, str, float]]]:
        """Link each new note to the previous note of its thread (same session) and to the
        latest few notes that name the same entity; one read per scope. By note, the links
        it brings (the batch's earlier notes count as stored before it)."""
        out: dict[str, list[tuple[str, str, str, float]]] = {}
        by_scope: dict[Scope, list[Record]] = {}
        for note in notes:
            by_scope.setdefault(owner_scope(note.scope), []).append(note)
        for scope, batch in by_scope.items():
            stored = self._store.recent_records(scope, kinds=(Kind.NOTE,), limit=_LINK_LOOKBACK)
            # newest first, as the store will hold them: the batch's notes are its newest
            recent = [r for r in [*reversed(batch), *stored] if scope.owns(r.scope)]
            order = {r.id: n for n, r in enumerate(recent)}
            # each record's names once: a note is compared with up to twenty earlier ones
            names_of = [{e.lower() for e in r.tags.entities} for r in recent]
            for note in batch:
                start = order.get(note.id, -1) + 1
                window = range(start, min(start + _LINK_LOOKBACK, len(recent)))
                earlier = [n for n in window if recent[n].created_at <= note.created_at]
                names = {e.lower() for e in note.tags.entities}
                sharing = [recent[n] for n in earlier if names & names_of[n]]
                mine = out.setdefault(note.id, [])
                mine += [(note.id, r.id, "entity", _LINK_ENTITY) for r in sharing[:_ENTITY_LINKS]]
                previous = next((recent[n] for n in earlier if recent[n].scope == note.scope), None)
                if (
                    previous is not None
                    and (note.created_at - previous.created_at).total_seconds()
                    <= _SESSION_GAP_SECONDS
                ):
                    mine.append((note.id, previous.id, "session", _LINK_SESSION))
        return {nid: pairs for nid, pairs in out.items() if pairs}
