"""The Memory facade: the one object users hold."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any

from ._clock import Clock, SystemClock, as_utc
from ._config import Config
from ._plugins import default_url, make_plugin_manager, url_scheme
from ._provenance import Provenance, trace
from ._records import Episode, Kind, Record, Role, Tags, Tier, episode_id, note_id, search_text
from ._scope import Scope, coerce_scope
from ._tokens import count_tokens
from .embedders import Embedder
from .embedders._protocol import embed_checked
from .errors import (
    EmbedderMismatchError,
    InvalidInputError,
    InvalidTypeError,
    InvalidURLError,
    NotFoundError,
    PluginError,
    StoreClosedError,
)
from .read import Recall, RecallItem, ScoreSignal
from .read._context import Section, compile_context
from .read._signals import score_candidates
from .stores import Backend, EmbedderPin, TurnWrite
from .write import NoteDraft, Skip, Turn, WriteResult

_MAX_META_CHARS = 65_536
_MAX_TOP_K = 1_000


class Memory:
    """Long-term memory for an agent: write turns, recall compiled context, explain.

    ``url`` picks the store: ``sqlite:///path.db`` (the default, a file in the
    user's data folder, or ``$COMMONPLACE_URL``), ``sqlite:///:memory:`` for
    tests, or any scheme a plugin serves (``weaviate://host:8080``). Without an
    ``embedder`` the store's pinned model (or, for a new store, the offline
    default) is used. ``clock`` supplies "now" wherever ``at=`` is not given.
    """

    def __init__(
        self,
        url: str | os.PathLike[str] | None = None,
        *,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        config: Config | None = None,
        plugins: Iterable[object] = (),
    ) -> None:
        if isinstance(url, os.PathLike):
            url = os.fspath(url)
        if url is not None and not isinstance(url, str):
            raise InvalidTypeError(f"url must be a str or a path, not {type(url).__name__}")
        if embedder is not None and not isinstance(embedder, Embedder):
            raise InvalidTypeError("embedder must have name, dim and embed(texts)")
        if clock is not None and not isinstance(clock, Clock):
            raise InvalidTypeError("clock must have a now() method returning a datetime")
        if config is not None and not isinstance(config, Config):
            raise InvalidTypeError("config must be a commonplace.Config")
        self.config = config or Config()
        self.clock: Clock = clock or SystemClock()
        self._pm = make_plugin_manager(plugins=plugins)
        self.url = url or default_url()
        self._backend = self._open_backend(self.url)
        try:
            self.embedder = self._resolve_embedder(embedder)
            self._signals = self._collect_signals()
        except BaseException:
            self._backend.close()
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
            self._backend.close()

    def __repr__(self) -> str:
        return f"Memory({self.url!r}, embedder={self.embedder.name!r})"

    @property
    def backend(self) -> Backend:
        """The store behind this Memory (for integrations and the conformance suite)."""
        return self._backend

    # -- write path -------------------------------------------------------------------

    def write(
        self,
        text: str,
        *,
        role: str | Role = "user",
        scope: Scope | str | Mapping[str, str],
        at: datetime | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> WriteResult:
        """Store one turn as an immutable episode and, for a user turn, at most one note."""
        return self.write_many([self.turn(text, role=role, scope=scope, at=at, meta=meta)])[0]

    def turn(
        self,
        text: str,
        *,
        role: str | Role = "user",
        scope: Scope | str | Mapping[str, str],
        at: datetime | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Turn:
        """Validate a turn for :meth:`write_many`; raises before anything is written."""
        return Turn(
            text=self._checked_text(text, limit=self.config.max_turn_chars, what="turn"),
            role=_checked_role(role),
            scope=coerce_scope(scope),
            at=self._now(at),
            meta=_checked_meta(meta),
        )

    def write_many(self, turns: Sequence[Turn]) -> list[WriteResult]:
        """Write a batch of turns in one transaction: all are stored, or none."""
        self._check_open()
        if not isinstance(turns, Sequence) or not all(isinstance(t, Turn) for t in turns):
            raise InvalidTypeError("write_many takes a sequence of Turn; build them with turn()")
        ids = [episode_id(t.scope, t.role, t.text) for t in turns]
        stored = self._backend.existing_episode_ids(set(ids))
        writes: list[TurnWrite] = []
        outcomes: list[tuple[Record | None, str | None]] = []
        seen: set[str] = set()
        for turn, eid in zip(turns, ids):
            note: Record | None = None
            skipped: str | None = None
            if eid in stored or eid in seen:
                skipped = "duplicate: this turn is already stored in this scope"
            elif turn.role is not Role.USER:
                skipped = f"{turn.role.value} turns never become notes"
            else:
                note, skipped = self._note_for(turn, eid)
            seen.add(eid)
            writes.append(_episode_write(turn, eid, note))
            outcomes.append((note, skipped))
        notes = [search_text(w.note.text, w.note.tags) for w in writes if w.note is not None]
        vectors = embed_checked(self.embedder, notes) if notes else None
        fresh = self._backend.write_turns(writes, vectors)
        results = []
        for eid, is_new, (note, skipped) in zip(ids, fresh, outcomes):
            if not is_new:
                note = self._backend.get_record(note_id(eid))
                skipped = skipped or "duplicate: this turn is already stored in this scope"
            results.append(WriteResult(eid, is_new, note, None if note else skipped))
        return results

    def _note_for(self, turn: Turn, eid: str) -> tuple[Record | None, str | None]:
        draft = self._pm.hook.commonplace_write_note(turn=turn)
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
        if not isinstance(importance, (int, float)) or not math.isfinite(importance):
            raise PluginError("a NoteDraft's importance must be a finite number in [0, 1]")
        return Record(
            id=note_id(eid),
            kind=Kind.NOTE,
            scope=turn.scope,
            text=text[: self.config.max_turn_chars],
            tags=draft.tags,
            provenance=(eid,),
            created_at=turn.at,
            last_access=turn.at,
            tier=Tier.WARM,
            valid_from=turn.at if draft.tags.key is not None else None,
        ), None

    # -- read path ----------------------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        scope: Scope | str | Mapping[str, str],
        top_k: int = 10,
        budget_tokens: int | None = None,
        at: datetime | None = None,
    ) -> Recall:
        """The memory an LLM should see for ``query``: ranked records and compiled context."""
        self._check_open()
        query = self._checked_text(query, limit=self.config.max_query_chars, what="query")
        scope = coerce_scope(scope)
        top_k = _checked_int("top_k", top_k, low=1, high=_MAX_TOP_K)
        budget = _checked_int(
            "budget_tokens",
            self.config.budget_tokens if budget_tokens is None else budget_tokens,
            low=16,
            high=1_000_000,
        )
        now = self._now(at)
        vector = embed_checked(self.embedder, [query])[0]
        candidates = self._backend.search(scope, vector, limit=self.config.pool_size(top_k))
        scores = score_candidates(
            candidates, query=query, now=now, config=self.config, signals=self._signals
        )
        ranked = sorted(zip(candidates, scores), key=lambda cs: -cs[1].total)[:top_k]
        items = tuple(RecallItem(c.record, s) for c, s in ranked)
        recent = tuple(
            self._backend.recent_records(scope, kinds=(Kind.NOTE,), limit=self.config.recent_notes)
        )
        # Only candidates that passed the relevance gate count as retrieved: they go
        # into the context and get the access that feeds recency and frequency.
        relevant = [i for i in items if i.score.gate > 0]
        relevant_ids = {i.record.id for i in relevant}
        fresh = [r for r in recent if r.id not in relevant_ids]
        sections = [
            Section("Recent notes", fresh, [2.0 + n / 100 for n in range(len(fresh), 0, -1)]),
            Section(
                "Relevant notes",
                [i.record for i in relevant],
                [1.0 + i.score.total / 100 for i in relevant],
            ),
        ]
        text, included = compile_context(sections, budget_tokens=budget)
        if self.config.touch_on_recall and relevant:
            self._backend.touch(list(relevant_ids), at=now)
        return Recall(
            query=query,
            scope=scope,
            at=now,
            items=items,
            recent=recent,
            text=text,
            tokens=count_tokens(text) if text else 0,
            included=tuple(included),
        )

    def explain(
        self, record_id: str, *, scope: Scope | str | Mapping[str, str] | None = None
    ) -> Provenance:
        """The provenance chain of a record, down to the episodes that justify it."""
        self._check_open()
        if not isinstance(record_id, str):
            raise InvalidTypeError(f"record_id must be a str, not {type(record_id).__name__}")
        chain = trace(
            record_id, get_record=self._backend.get_record, get_episode=self._backend.get_episode
        )
        if scope is not None and not coerce_scope(scope).contains(chain.record.scope):
            raise NotFoundError(f"no record with id {record_id!r} in scope {coerce_scope(scope)}")
        return chain

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
        return self._backend.count(None if scope is None else coerce_scope(scope), kind)

    # -- helpers ------------------------------------------------------------------------

    def _open_backend(self, url: str) -> Backend:
        scheme = url_scheme(url)
        backend = self._pm.hook.commonplace_backend(url=url, scheme=scheme)
        if backend is None:
            raise InvalidURLError(
                f"no installed backend serves {scheme}:// URLs (from {url!r}); install the "
                f"plugin for it (e.g. commonplace-{scheme}) or use sqlite:///path.db"
            )
        return backend  # type: ignore[no-any-return]

    def _resolve_embedder(self, given: Embedder | None) -> Embedder:
        pin = self._backend.read_pin()
        if given is None:
            given = self._pm.hook.commonplace_embedder(name=None if pin is None else pin.name)
            if given is None:
                assert pin is not None
                raise EmbedderMismatchError(
                    f"this store is pinned to the embedder {pin.name!r} (dim {pin.dim}), and no "
                    "installed plugin provides it; pass embedder=... with that model"
                )
        if not isinstance(given, Embedder):
            raise PluginError("commonplace_embedder returned an object that is not an Embedder")
        if pin is None:
            self._backend.write_pin(EmbedderPin(given.name, given.dim))
        elif (pin.name, pin.dim) != (given.name, given.dim):
            raise EmbedderMismatchError(
                f"this store is pinned to the embedder {pin.name!r} (dim {pin.dim}) but was "
                f"opened with {given.name!r} (dim {given.dim}); open it with the pinned "
                "embedder, or re-embed the store into a new one with the other model"
            )
        return given

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
        return as_utc(self.clock.now() if at is None else at)

    @staticmethod
    def _checked_text(text: object, *, limit: int, what: str) -> str:
        if not isinstance(text, str):
            raise InvalidTypeError(f"the {what} must be a str, not {type(text).__name__}")
        if not text.strip():
            raise InvalidInputError(f"the {what} is empty; skip the call for an empty {what}")
        if len(text) > limit:
            raise InvalidInputError(
                f"the {what} is {len(text)} characters, over the limit of {limit}; split it "
                f"or raise Config(max_{what}_chars=...)"
            )
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInputError(
                f"the {what} contains lone surrogates (invalid unicode); decode it properly"
            ) from None
        return text


_BUILTIN_SIGNALS = frozenset({"semantic", "recency", "frequency", "importance", "gate", "total"})


def _episode_write(turn: Turn, eid: str, note: Record | None) -> TurnWrite:
    episode = Episode(
        id=eid, scope=turn.scope, role=turn.role, text=turn.text, at=turn.at, meta=turn.meta
    )
    if note is not None and turn.role is not Role.USER:  # the firewall, checked once more
        raise AssertionError("a note may only be derived from a user turn")
    return TurnWrite(episode=episode, note=note)


def _checked_role(role: object) -> Role:
    if isinstance(role, Role):
        return role
    if not isinstance(role, str):
        raise InvalidTypeError(f"role must be a str, not {type(role).__name__}")
    try:
        return Role(role.lower())
    except ValueError:
        raise InvalidInputError(
            f"unknown role {role!r}; use one of {', '.join(r.value for r in Role)}"
        ) from None


def _checked_meta(meta: object) -> dict[str, Any]:
    if meta is None:
        return {}
    if not isinstance(meta, Mapping) or not all(isinstance(k, str) for k in meta):
        raise InvalidTypeError("meta must be a mapping with str keys")
    try:
        encoded = json.dumps(dict(meta), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"meta must be JSON-serialisable ({exc})") from None
    if len(encoded) > _MAX_META_CHARS:
        raise InvalidInputError(f"meta is over {_MAX_META_CHARS} characters as JSON; store less")
    return dict(json.loads(encoded))


def _checked_int(name: str, value: object, *, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"{name} must be an int, not {type(value).__name__}")
    if not low <= value <= high:
        raise InvalidInputError(f"{name}={value} is out of range [{low}, {high}]")
    return value
