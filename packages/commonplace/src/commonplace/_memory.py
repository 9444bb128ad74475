"""The Memory facade: the one object users hold."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from types import TracebackType
from typing import Any

from ._async import in_worker_thread
from ._clock import Clock, SystemClock
from ._config import Config
from ._events import (
    EventBus,
    MemoryEvent,
    decayed_events,
    forgotten_event,
    recalled_event,
    written_events,
)
from ._listing import DERIVED_KINDS, RecordPage, export_scope, list_records
from ._plugins import BuiltinPlugin, default_url, make_plugin_manager, open_backend
from ._provenance import Provenance, trace
from ._records import Episode, FactKey, Kind, Record, Role
from ._scope import Scope, coerce_scope, owner_scope
from ._validate import (
    MAX_DAYS,
    checked_bool,
    checked_float,
    checked_id,
    checked_int,
    checked_length,
    checked_role,
    checked_text,
    checked_time,
)
from .embedders import Embedder
from .embedders._adapt import adapt_embedder
from .errors import (
    InvalidInputError,
    InvalidTypeError,
    NotFoundError,
    PluginError,
    StoreClosedError,
)
from .lifecycle import ForgetReport, LifecycleReport
from .lifecycle._forget import forget, forget_scope
from .lifecycle._runner import Lifecycle
from .lifecycle._tiers import pin
from .read import Recall, Score, ScoreSignal
from .read._compiler import RecallCompiler
from .read._feedback import Feedback, apply_feedback, infer_used
from .stores import (
    PROFILE_CARD,
    ROLLING_SUMMARY,
    AuditEntry,
    Backend,
    Conflict,
    Store,
    refuse_missing_store,
)
from .stores._embedder import resolve_embedder
from .write import Turn, WriteResult
from .write._bulk import DEFAULT_BATCH, MAX_WORKERS, Drafts, ImportReport, import_in_batches
from .write._cards import CardKeeper
from .write._clauses import split_speaker
from .write._ids import episode_ids
from .write._pipeline import WritePipeline
from .write._profile import ProfileCard

_MAX_TOP_K = 1_000


class Memory:
    """Long-term memory for an agent: write turns, recall compiled context, explain.

    ``url`` picks the store: ``sqlite:///path.db`` (the default, a file in the
    user's data folder, or ``$COMMONPLACE_URL``), ``sqlite:///:memory:`` for
    tests, or any scheme a plugin serves (``weaviate://host:8080``). Without an
    ``embedder`` the store's pinned model (or, for a new store, the offline
    default) is used; ``embedder`` is a commonplace Embedder, or a LangChain
    ``Embeddings`` / LlamaIndex ``BaseEmbedding`` (with commonplace-langgraph /
    commonplace-llamaindex installed), or ``CallableEmbedder(fn, name=...)``.
    ``clock`` supplies "now" wherever ``at=`` is not given. With ``create=False`` an
    SQLite URL naming no file is a :class:`~commonplace.errors.NotFoundError` instead of
    a new, empty store (what a tool that only reads wants: a mistyped path is refused).
    """

    def __init__(
        self,
        url: str | os.PathLike[str] | None = None,
        *,
        embedder: Embedder | object | None = None,
        clock: Clock | None = None,
        config: Config | None = None,
        plugins: Iterable[object] = (),
        create: bool = True,
    ) -> None:
        if isinstance(url, os.PathLike):
            url = os.fspath(url)
        if url is not None and not isinstance(url, str):
            raise InvalidTypeError(f"url must be a str or a path, not {type(url).__name__}")
        manager = None
        if embedder is not None and not isinstance(embedder, Embedder):
            # a framework's model (LangChain, LlamaIndex ...), through an adapter plugin
            manager = make_plugin_manager(plugins=plugins)
            embedder = adapt_embedder(embedder, manager)
        if clock is not None and not isinstance(clock, Clock):
            raise InvalidTypeError("clock must have a now() method returning a datetime")
        if config is not None and not isinstance(config, Config):
            raise InvalidTypeError("config must be a commonplace.Config")
        self.config = config or Config()
        self.clock: Clock = clock or SystemClock()
        self._pm = manager or make_plugin_manager(plugins=plugins)
        self.url = url or default_url()
        if not checked_bool("create", create):
            refuse_missing_store(self.url)
        self._store = Store(open_backend(self.url, self._pm))
        try:
            self.embedder = self._resolve_embedder(embedder)
            self._signals = self._collect_signals()
            self._cards = CardKeeper(
                store=self._store, rules=self.config.profile, hooks=self._pm.hook
            )
            self._writer = WritePipeline(
                store=self._store,
                embedder=self.embedder,
                config=self.config,
                hooks=self._pm.hook,
                cards=self._cards,
            )
            self._lifecycle = Lifecycle(
                store=self._store,
                embedder=self.embedder,
                config=self.config,
                hooks=self._pm.hook,
            )
            self._events = EventBus(self._pm.hook.commonplace_event)
            self._reader = RecallCompiler(
                store=self._store,
                embedder=self.embedder,
                config=self.config,
                signals=self._signals,
                card_as_of=self._cards.as_of,
            )
        except BaseException:
            self._store.close()
            raise
        self._closed = False

    # -- lifecycle of the object ----------------------------------------------------

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the store. Safe to call twice."""
        if not getattr(self, "_closed", True):
            self._closed = True
            self._store.close()

    def __repr__(self) -> str:
        return f"Memory({self.url!r}, embedder={self.embedder.name!r})"

    @property
    def backend(self) -> Backend:
        """The backend behind this Memory (for integrations and the conformance suite)."""
        return self._store.backend

    @property
    def store(self) -> Store:
        """The core's view of the backend: its records plus the ledger's audit log, recall
        logs, conflicts and cards (for integrations, tools and tests)."""
        return self._store

    # -- write path -------------------------------------------------------------------

    def write(
        self,
        text: str,
        *,
        role: str | Role = "user",
        scope: Scope | str | Mapping[str, str],
        at: datetime | None = None,
        meta: Mapping[str, Any] | None = None,
        key: str | None = None,
        speaker: str | None = None,
        said_by: str | None = None,
    ) -> WriteResult:
        """Store one turn as an immutable episode and, for a user turn, at most one note.

        The same turn sent twice is stored once: a turn is its scope, role, time and
        words, so a retry with its ``at`` is one episode and the same words said at
        another time are another; with ``key`` (a message id) the key stands for the time
        and words, so two messages with the same words stay two and a message sent again
        later is still one.
        ``speaker`` names who said it in a conversation between several people (a
        leading "Name: " in ``text`` does the same); the note names them. ``said_by``
        names who sent a message that is not the user's (see :class:`Turn`): it is kept
        as an episode, never a note.
        """
        turn = self.turn(
            text,
            role=role,
            scope=scope,
            at=at,
            meta=meta,
            key=key,
            speaker=speaker,
            said_by=said_by,
        )
        return self.write_many([turn])[0]

    def turn(
        self,
        text: str,
        *,
        role: str | Role = "user",
        scope: Scope | str | Mapping[str, str],
        at: datetime | None = None,
        meta: Mapping[str, Any] | None = None,
        key: str | None = None,
        speaker: str | None = None,
        said_by: str | None = None,
    ) -> Turn:
        """Validate a turn for :meth:`write_many`; raises before anything is written.

        The checks are the :class:`Turn`'s own, plus this Memory's ``max_turn_chars``;
        ``at`` defaults to the clock's time, ``speaker`` to a leading "Name: " in the text.
        """
        self._check_open()
        built = Turn(
            text=text,
            # a Turn coerces a role or scope given as text and a missing meta, as write() does
            role=role,  # type: ignore[arg-type]
            scope=scope,  # type: ignore[arg-type]
            at=self._now(None) if at is None else at,
            meta=meta,  # type: ignore[arg-type]
            key=key,
            speaker=speaker,
            said_by=said_by,
        )
        self._check_fits(built)
        named = None if built.speaker is not None else split_speaker(built.text)[0]
        return built if named is None else dataclasses.replace(built, speaker=named)

    def write_many(self, turns: Sequence[Turn]) -> list[WriteResult]:
        """Write a batch of turns in one transaction: all are stored, or none.

        Every turn is checked before anything is written: a :class:`Turn` checked itself
        when it was built, and each must fit this Memory's ``Config.max_turn_chars``.
        """
        self._check_open()
        if not isinstance(turns, Sequence) or not all(isinstance(t, Turn) for t in turns):
            raise InvalidTypeError("write_many takes a sequence of Turn; build them with turn()")
        for turn in turns:
            self._check_fits(turn)
        return self._write_batch(turns, None)

    def _write_batch(self, turns: Sequence[Turn], drafted: Drafts | None) -> list[WriteResult]:
        """Write checked turns, with their notes' drafts when a bulk import's worker made
        them (else the note-writer hook drafts them here)."""
        ids = episode_ids(self._store, turns)
        results = self._writer.write_many(turns, ids, drafted=drafted)
        self._after_write(turns, results)
        return results

    def import_turns(
        self,
        turns: Iterable[Turn],
        *,
        batch: int = DEFAULT_BATCH,
        progress: bool | None = None,
        workers: int = 0,
    ) -> ImportReport:
        """Write a long history (a chat export, another memory's turns), ``batch`` turns
        per :meth:`write_many`, with a progress bar on stderr (``progress``: True, False,
        or None for one only when stderr is a terminal).

        Every turn is checked before the first batch is written. Each batch is stored
        whole or not at all: an import stopped part way keeps the batches it finished, and
        the same import run again stores only what is missing.

        ``workers`` processes (0: none) draft each batch's notes while the one before it is
        stored: 1.2 to 1.4 times as fast at 100k turns on a 2-core machine with the hashing
        embedder (docs/performance.md), and the notes are the ones this process would
        draft. Only the built-in rule writer can be moved to a worker (another note writer
        is refused), and the processes are spawned, so a script needs the usual
        ``if __name__ == "__main__":`` guard.
        """
        self._check_open()
        if checked_int("workers", workers, low=0, high=MAX_WORKERS):
            others = self._other_note_writers()
            if others:
                raise InvalidInputError(
                    f"import_turns(workers={workers}) drafts notes with the built-in rule "
                    f"writer, and this Memory's notes are written by {', '.join(others)}: "
                    "import with workers=0 (nothing was written)"
                )
        return import_in_batches(
            self._write_checked,
            turns,
            check=self._check_fits,
            batch=batch,
            progress=progress,
            workers=workers,
        )

    def _write_checked(self, turns: Sequence[Turn], drafted: Drafts | None) -> list[WriteResult]:
        self._check_open()
        return self._write_batch(turns, drafted)

    def _other_note_writers(self) -> list[str]:
        """The plugins other than the built-in one that implement the note-writer hook."""
        hook = self._pm.hook.commonplace_write_note
        return [
            self._pm.get_name(impl.plugin) or repr(impl.plugin)
            for impl in hook.get_hookimpls()
            if not isinstance(impl.plugin, BuiltinPlugin)
        ]

    def _check_fits(self, turn: Turn) -> None:
        checked_length(turn.text, limit=self.config.max_turn_chars, what="turn")

    def _after_write(self, turns: Sequence[Turn], results: Sequence[WriteResult]) -> None:
        """Tell the listeners what was written (the cards it rewrote were committed with
        it)."""
        self._events.emit(written_events(turns, results))

    def profile(self, *, scope: Scope | str | Mapping[str, str]) -> ProfileCard:
        """The user's profile card, as last rewritten (empty before the first rewrite)."""
        self._check_open()
        return self._cards.profile(coerce_scope(scope))

    def rewrite_profile(
        self, *, scope: Scope | str | Mapping[str, str], at: datetime | None = None
    ) -> str:
        """Rewrite the profile card (and the thread's rolling summary) now; returns the card."""
        self._check_open()
        scope = coerce_scope(scope)
        now = self._now(at)
        if scope.thread is not None:
            self._cards.rewrite(scope, ROLLING_SUMMARY, now=now)
        return self._cards.rewrite(owner_scope(scope), PROFILE_CARD, now=now).text

    # -- read path ----------------------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        scope: Scope | str | Mapping[str, str],
        top_k: int | None = None,
        budget_tokens: int | None = None,
        at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> Recall:
        """The memory an LLM should see for ``query``: ranked records and compiled context.

        The context is packed by value for the question: relevant notes fill the
        ``budget_tokens`` (``Config.budget_tokens`` by default) before recent ones;
        ``top_k`` caps how many relevant notes may be shown (no cap by default).

        ``as_of`` answers "what was true on that date": only records written by
        then and not yet superseded at that time are considered, and nothing is
        counted as accessed.
        """
        self._check_open()
        query = checked_text(query, limit=self.config.max_query_chars, what="query")
        scope = coerce_scope(scope)
        if top_k is not None:
            top_k = checked_int("top_k", top_k, low=1, high=_MAX_TOP_K)
        budget = checked_int(
            "budget_tokens",
            self.config.budget_tokens if budget_tokens is None else budget_tokens,
            low=16,
            high=1_000_000,
        )
        now = self._now(at)
        when = None if as_of is None else checked_time("as_of", as_of)
        recall = self._reader.recall(
            query, scope=scope, top_k=top_k, budget=budget, now=now, as_of=when
        )
        self._events.emit([recalled_event(recall)])
        return recall

    def feedback(
        self,
        recall_id: str,
        *,
        used: Iterable[str] | None = None,
        reply: str | None = None,
        at: datetime | None = None,
    ) -> Feedback:
        """Say which records of a recall the answer used; the others count as ignored.

        Give ``used`` (record ids), or ``reply`` (the assistant's answer) to let
        commonplace infer use from what the answer repeats. Used records get
        stronger (frequency, recency, promotion to hot) and are linked to each
        other; records retrieved and ignored again and again sink. Feedback is
        taken once per recall.
        """
        self._check_open()
        log = self._store.books.get_recall(checked_id("recall_id", recall_id))
        if log is None:
            raise NotFoundError(f"no recall with id {recall_id!r}; use Recall.id")
        shown = list(log.shown_ids or log.item_ids)
        if used is None and reply is None:
            raise InvalidInputError("give used=[record ids] or reply='the answer text'")
        if used is not None:
            if not isinstance(used, (str, Iterable)) or isinstance(used, Mapping):
                raise InvalidTypeError("used must be a list of the record ids the answer used")
            used_ids = [used] if isinstance(used, str) else list(used)
            unknown = [u for u in used_ids if u not in shown]
            if unknown:
                raise InvalidInputError(
                    f"{unknown} were not part of recall {recall_id}; used must name records "
                    "that recall showed"
                )
        else:
            if not isinstance(reply, str):
                raise InvalidTypeError("reply must be the assistant's answer as a str")
            used_ids = infer_used(reply, self._store.get_records(shown))
        return apply_feedback(self._store, log, used_ids, now=self._now(at))

    # -- lifecycle ------------------------------------------------------------------------

    def sleep(
        self,
        *,
        scope: Scope | str | Mapping[str, str],
        at: datetime | None = None,
        dry_run: bool = False,
    ) -> LifecycleReport:
        """The scheduled job: tiers, consolidation and decay, in that order, in one report."""
        reports = [
            self.apply_tiers(scope=scope, at=at, dry_run=dry_run),
            self.consolidate(scope=scope, at=at, dry_run=dry_run),
            self.decay(scope=scope, at=at, dry_run=dry_run),
        ]
        return LifecycleReport(
            tuple(a for r in reports for a in r.actions), dry_run, sum(r.seconds for r in reports)
        )

    def apply_tiers(
        self,
        *,
        scope: Scope | str | Mapping[str, str],
        at: datetime | None = None,
        dry_run: bool = False,
    ) -> LifecycleReport:
        """Promote records earned by use to hot, enforce the hot budget, demote the unused."""
        self._check_open()
        return self._lifecycle.tiers(
            scope=coerce_scope(scope), now=self._now(at), dry_run=checked_bool("dry_run", dry_run)
        )

    def consolidate(
        self,
        *,
        scope: Scope | str | Mapping[str, str],
        at: datetime | None = None,
        dry_run: bool = False,
    ) -> LifecycleReport:
        """Distil clusters of notes about one entity into summaries with coverage maps,
        and repeated requests into procedure candidates. Idempotent."""
        self._check_open()
        return self._lifecycle.consolidate(
            scope=coerce_scope(scope), now=self._now(at), dry_run=checked_bool("dry_run", dry_run)
        )

    def decay(
        self,
        *,
        scope: Scope | str | Mapping[str, str] | None = None,
        at: datetime | None = None,
        dry_run: bool = False,
    ) -> LifecycleReport:
        """Run every decay rule (built-in and contributed); never touches episodes."""
        self._check_open()
        report = self._lifecycle.decay(
            scope=None if scope is None else coerce_scope(scope),
            now=self._now(at),
            dry_run=checked_bool("dry_run", dry_run),
        )
        self._events.emit(decayed_events(report))
        return report

    def forget_smart(
        self,
        *,
        scope: Scope | str | Mapping[str, str],
        days: float | None = None,
        max_frequency: int | None = None,
        max_importance: float | None = None,
        at: datetime | None = None,
        dry_run: bool = False,
    ) -> LifecycleReport:
        """Forget unconfirmed notes older than ``days``, retrieved at most ``max_frequency``
        times, with importance at most ``max_importance`` (defaults from Config.decay)."""
        self._check_open()
        rules = self.config.decay
        report = self._lifecycle.forget_smart(
            scope=coerce_scope(scope),
            now=self._now(at),
            days=checked_float(
                "days", rules.forget_after_days if days is None else days, high=MAX_DAYS
            ),
            max_frequency=checked_int(
                "max_frequency",
                rules.forget_max_frequency if max_frequency is None else max_frequency,
                low=0,
                high=2**31,
            ),
            max_importance=checked_float(
                "max_importance",
                rules.forget_max_importance if max_importance is None else max_importance,
            ),
            dry_run=checked_bool("dry_run", dry_run),
        )
        self._events.emit(decayed_events(report))
        return report

    def forget(
        self,
        record_id: str,
        *,
        scope: Scope | str | Mapping[str, str],
        include_evidence: bool = True,
    ) -> ForgetReport:
        """Remove a record (or episode) and everything derived from it, for good.

        With ``include_evidence`` (the default) the episodes a note was written
        from go too; without it they stay, as they were said. Nothing of what goes stays
        in the store: not in its files (full-text index, freed pages and log included),
        not in its recall and audit logs (they keep ids, not words), not in a card (those
        written from a removed note are rewritten from what remains). The report lists
        every id removed.
        """
        self._check_open()
        scope = coerce_scope(scope)
        report = forget(
            self._store,
            checked_id("record_id", record_id),
            scope=scope,
            include_evidence=checked_bool("include_evidence", include_evidence),
            rewrite_card=lambda card, kind: self._cards.rewrite(card, kind, now=self._now(None)),
        )
        self._events.emit([forgotten_event(report, scope=scope, at=self._now(None))])
        return report

    def forget_scope(self, scope: Scope | str | Mapping[str, str]) -> dict[str, int]:
        """Remove every episode, record, link, card and log entry visible in ``scope``, and
        everything derived from them elsewhere: summaries and procedures built on its notes,
        the conflicts and audit entries naming them. Profile cards of broader scopes (the
        user's card, when one thread is forgotten) are rewritten from what remains."""
        self._check_open()
        scope = coerce_scope(scope)
        counts = forget_scope(
            self._store,
            scope,
            rewrite_card=lambda card, kind: self._cards.rewrite(card, kind, now=self._now(None)),
        )
        self._events.emit(
            [MemoryEvent("forgotten", scope, self._now(None), detail={"counts": dict(counts)})]
        )
        return counts

    def pin(
        self,
        record_id: str,
        *,
        scope: Scope | str | Mapping[str, str],
        pinned: bool = True,
        at: datetime | None = None,
    ) -> Record:
        """Pin a record (always injected, never demoted or decayed) or unpin it."""
        self._check_open()
        record = self._store.get_record(checked_id("record_id", record_id))
        if record is None or not coerce_scope(scope).contains(record.scope):
            raise NotFoundError(f"no active record with id {record_id!r} in this scope")
        return pin(self._store, record, pinned=checked_bool("pinned", pinned), now=self._now(at))

    def conflicts(
        self, *, scope: Scope | str | Mapping[str, str] | None = None, open_only: bool = True
    ) -> list[Conflict]:
        """Entity-resolution conflicts (two people with one name, say), oldest first."""
        self._check_open()
        return self._store.books.conflicts(
            None if scope is None else coerce_scope(scope),
            open_only=checked_bool("open_only", open_only),
        )

    def audit(
        self, *, scope: Scope | str | Mapping[str, str] | None = None, limit: int = 100
    ) -> list[AuditEntry]:
        """The newest lifecycle actions, most recent first."""
        self._check_open()
        return self._store.books.audit_log(
            None if scope is None else coerce_scope(scope),
            limit=checked_int("limit", limit, low=1, high=100_000),
        )

    def explain(
        self, record_id: str, *, scope: Scope | str | Mapping[str, str] | None = None
    ) -> Provenance:
        """The provenance chain of a record, down to the episodes that justify it."""
        self._check_open()
        chain = trace(
            checked_id("record_id", record_id),
            get_record=lambda rid: self._store.get_record(rid, any_status=True),
            get_episode=self._store.get_episode,
        )
        if scope is not None and not coerce_scope(scope).contains(chain.record.scope):
            raise NotFoundError(f"no record with id {record_id!r} in scope {coerce_scope(scope)}")
        record = chain.record
        if isinstance(record, Episode):
            return chain
        why = None
        if record.superseded_by is not None:
            successor = self._store.get_record(record.superseded_by, any_status=True)
            if successor is not None:
                why = str(successor.data.get("replaces", {}).get(record.id, "")) or None
        disputes = tuple(
            (d.older if d.newer == record.id else d.newer, d.reason)
            for d in self._store.books.disputes_of([record.id])
        )
        return replace(chain, replaced_by=record.superseded_by, why=why, disputes=disputes)

    def count(
        self, kind: Kind | str = Kind.NOTE, *, scope: Scope | str | Mapping[str, str] | None = None
    ) -> int:
        """How many active records of ``kind`` there are, in ``scope`` or in the whole store."""
        self._check_open()
        try:
            kind = Kind(kind)
        except ValueError:
            raise InvalidInputError(
                f"unknown kind {kind!r}; use one of {[k.value for k in Kind]}"
            ) from None
        return self._store.count(None if scope is None else coerce_scope(scope), kind)

    def records(
        self,
        *,
        scope: Scope | str | Mapping[str, str],
        kinds: Iterable[Kind | str] = DERIVED_KINDS,
        limit: int = 100,
        offset: int = 0,
    ) -> RecordPage:
        """A page of what ``scope`` remembers, oldest first: notes, summaries and
        procedures (``kinds``) as JSON-ready dicts with their provenance, superseded ones
        included (``superseded_by`` says by what). ``next_offset`` gives the next page."""
        self._check_open()
        return list_records(
            self._store, coerce_scope(scope), kinds=kinds, limit=limit, offset=offset
        )

    def export(
        self, *, scope: Scope | str | Mapping[str, str], episodes: bool = True
    ) -> Iterator[dict[str, Any]]:
        """Everything ``scope`` remembers as JSON-ready dicts, one per record (oldest
        first), then, with ``episodes``, one per turn kept as evidence. Read as it is
        iterated: keep the Memory open until the export is consumed."""
        self._check_open()
        return export_scope(
            self._store, coerce_scope(scope), episodes=checked_bool("episodes", episodes)
        )

    # -- helpers ------------------------------------------------------------------------

    def _resolve_embedder(self, given: Embedder | None) -> Embedder:
        return resolve_embedder(given, backend=self._store, hooks=self._pm.hook)

    def _collect_signals(self) -> tuple[ScoreSignal, ...]:
        signals: list[ScoreSignal] = []
        for contributed in self._pm.hook.commonplace_score_signals():
            for signal in contributed or ():
                if not isinstance(signal, ScoreSignal):
                    raise PluginError(
                        f"commonplace_score_signals contributed {signal!r}; a signal needs "
                        "name, weight and score(candidate, *, query, now)"
                    )
                signals.append(signal)
        names = [s.name for s in signals]
        clash = {n for n in names if names.count(n) > 1} | (set(names) & _BUILTIN_SIGNALS)
        if clash:
            raise PluginError(f"score signal names must be unique; clash on {sorted(clash)}")
        return tuple(signals)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError("this Memory is closed; open a new one to use the store")

    def _now(self, at: datetime | None) -> datetime:
        return checked_time(
            "at" if at is not None else "clock.now()", self.clock.now() if at is None else at
        )

    # -- stated memories and the async API (integrations) -------------------------------
    # One block, kept apart from the rest of the class: ``put_note`` keeps a memory the
    # caller states directly (commonplace/_direct.py); every ``a``-method is its sync
    # twin run in a worker thread (commonplace/_async.py), never a second implementation.

    def put_note(
        self,
        text: str,
        *,
        scope: Scope | str | Mapping[str, str],
        key: str,
        data: Mapping[str, Any] | None = None,
        importance: float | None = None,
        fact: FactKey | None = None,
        replaces: Iterable[str] = (),
        role: str | Role = "system",
        at: datetime | None = None,
    ) -> Record:
        """Keep ``text`` as a note exactly as given, with an episode of its own as evidence.

        For memories the caller states on purpose (a LangGraph store item, a fact a tool
        was asked to keep), which skip the note writer and are never merged into another
        note. ``key`` names this put (the same key again is a no-op); ``data`` is kept on
        the note (``Record.data``). With ``fact``, the note supersedes the current notes
        with that subject and predicate in the owner's scope; ``replaces`` names other
        records it supersedes. ``role`` is who stated it: ``system`` (the application) or
        ``tool`` (an agent, through a tool), or ``user``; never ``assistant``. From then
        on it is recalled, touched, tiered, consolidated, decayed and forgotten like any
        note.
        """
        from ._direct import checked_note_options, put_note

        self._check_open()
        stated_by = checked_role(role)
        key, data_, importance_, fact_, replaced = checked_note_options(
            key=key, data=data, importance=importance, role=stated_by, fact=fact, replaces=replaces
        )
        turn = Turn(
            text=checked_text(text, limit=self.config.max_turn_chars, what="note"),
            role=stated_by,
            scope=coerce_scope(scope),
            at=self._now(at),
            key=key,
        )
        result = put_note(
            self._store,
            self.embedder,
            cards=self._cards,
            text=turn.text,
            scope=turn.scope,
            key=key,
            data=data_,
            importance=importance_,
            role=turn.role,
            fact=fact_,
            replaces=replaced,
            at=turn.at,
        )
        self._after_write([turn], [result])
        assert result.note is not None  # a put always has its note
        return result.note

    awrite = in_worker_thread(write)
    awrite_many = in_worker_thread(write_many)
    arecall = in_worker_thread(recall)
    afeedback = in_worker_thread(feedback)
    asleep = in_worker_thread(sleep)
    aconsolidate = in_worker_thread(consolidate)
    aforget = in_worker_thread(forget)
    aforget_scope = in_worker_thread(forget_scope)
    aexplain = in_worker_thread(explain)
    aput_note = in_worker_thread(put_note)
    arecords = in_worker_thread(records)


# every name a breakdown already uses: a plugin signal named like one would overwrite it
_BUILTIN_SIGNALS = frozenset(f.name for f in dataclasses.fields(Score)) - {"extra"}
