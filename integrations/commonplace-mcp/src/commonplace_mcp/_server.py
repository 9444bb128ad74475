"""The MCP server: four tools and one resource over a Memory, for one user.

The user is fixed when the server is built. A client can name another user per call only
when the server was built with ``trust_client_scope=True``; otherwise a ``user`` argument
is refused. Ids from another user's memory are answered exactly as unknown ids are: the
same message, nothing changed.
"""

from __future__ import annotations

import importlib.metadata
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from commonplace import Episode, Kind, Memory, Provenance, Scope
from commonplace import said_by as said_by_rule
from commonplace.errors import CommonplaceError, InvalidTypeError, NotFoundError
from commonplace.stores import PROFILE_CARD
from commonplace.validation import checked_user_names

PROFILE_URI = "commonplace://profile"
"""The resource that holds the profile card of the server's user."""

MAX_TOP_K = 50
"""The most items one recall may ask for: more would flood the client model's context."""

_T = TypeVar("_T")

_INSTRUCTIONS = """\
Long-term memory of one user (commonplace). Call `recall` with the question at hand before \
answering anything that may depend on what the user told you before; put its `context` in \
your reasoning. Call `remember` with what was said that is worth keeping: the user's own \
words with said_by="user", your own statements with the default said_by="assistant". Only \
the user's own words become notes (facts about the user); what you say is kept as evidence \
only. `explain` shows where a memory came from; `forget` deletes one for good. The profile \
card is the resource commonplace://profile."""

_REMEMBER = """\
Store one turn of the conversation in the user's long-term memory.

`said_by` says whose words `text` is, and it decides what the memory may believe:
- "assistant" (the default): your own words (a summary, a guess, an answer, "the user \
seems to like X"). Stored as an episode with role assistant, as evidence only: it never \
becomes a note, so it is never recalled as a fact about the user.
- "user": the user's own words, quoted as they said them (a message of theirs, not your \
paraphrase). Stored as a user episode, from which at most one note (a fact about the user) \
is written.
Choose "user" only when you are passing on the user's message verbatim.

`name` is the sender's name when the message carries one (a multi-agent message names \
the agent, tool or model that sent it). A "user" message named as someone else (not the \
user's own name) is kept as evidence only, like your own words: it never becomes a note.

Returns the episode id, and the note's id and text when one was written (or why none was)."""

_RECALL = """\
Compile what the memory holds for a question or topic.

Returns `context` (a compiled memory block, ready to read: the profile card, what matters \
always, recent notes and the notes relevant to the query, within a token budget) and \
`items`: each record shown, with its id (for `explain` and `forget`), kind, text, section \
and score breakdown (semantic, recency, frequency, importance, total)."""

_FORGET = """\
Delete one memory for good: a note (or any record) by the id `recall` or `remember` gave, \
with everything derived from it. With include_evidence (the default) the turns it was \
written from are deleted too, so it cannot come back. Returns the ids removed."""

_EXPLAIN = """\
Show where a memory came from: the record with that id and its provenance, down to the \
episodes (the turns, with who said them, when, and their text) that justify it."""

# Hints for a client deciding what to confirm with its user: forget deletes for good; recall
# is not read-only (it counts what it shows), explain is.
_WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)
_DELETES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)
_READS = ToolAnnotations(read_only_hint=True)

_UNKNOWN_ID = (
    "no record or episode with id {record_id!r} in this user's memory; use an id that "
    "recall or remember returned"
)


def build_server(
    memory: Memory,
    *,
    user: str,
    trust_client_scope: bool = False,
    user_names: Sequence[str] = (),
    name: str = "commonplace",
) -> MCPServer[Any]:
    """An MCP server (the SDK's ``MCPServer``) over ``memory`` for the user ``user``.

    Tools: ``remember``, ``recall``, ``forget``, ``explain``; resource:
    ``commonplace://profile`` (the user's profile card, as JSON). Every call works in
    ``Scope(user=user)``. With ``trust_client_scope`` each tool takes an optional ``user``
    argument that picks another user per call; leave it off unless the client is trusted
    to speak for every user of the store. ``user_names``: names a ``remember``d user
    message may carry (its ``name`` argument) and still be the user's, besides the user
    id; a user message named as anyone else is kept as evidence only. Run it with
    ``server.run("stdio")`` or embed it: ``mcp.Client(server)`` connects in-process. The
    caller keeps ``memory`` open while the server runs and closes it after.
    """
    if not isinstance(memory, Memory):
        raise InvalidTypeError(f"memory must be a commonplace.Memory, not {type(memory).__name__}")
    if not isinstance(trust_client_scope, bool):
        raise InvalidTypeError("trust_client_scope must be True or False")
    scope = Scope(user=user)  # raises InvalidScopeError for an empty or malformed user
    names = checked_user_names(user_names)
    tools = _Tools(memory, scope=scope, trust_client_scope=trust_client_scope, user_names=names)
    server: MCPServer[Any] = MCPServer(
        name, instructions=_INSTRUCTIONS, version=_version(), log_level="WARNING"
    )
    if trust_client_scope:
        _add_trusting_tools(server, tools)
    else:
        _add_fixed_tools(server, tools)

    @server.resource(
        PROFILE_URI,
        name="profile",
        title="Profile card",
        description=f"The profile card of {user}: who they are, the people in their life, "
        "their preferences, as the memory keeps them (JSON: text and structured card).",
        mime_type="application/json",
    )
    def profile() -> str:
        return json.dumps(tools.profile(), ensure_ascii=False, indent=2)

    return server


# The argument types, shared by both tool sets: their constraints and descriptions are the
# input schema a client's model reads.
Text = Annotated[
    str,
    # the longest a turn may be is the Memory's own (Config.max_turn_chars): the core checks it
    Field(
        min_length=1,
        description="What was said, as one turn of text (at most 20000 "
        "characters unless the memory is configured otherwise).",
    ),
]
SaidBy = Annotated[
    Literal["assistant", "user"],
    Field(
        description='Whose words `text` is: "assistant" (default, kept as evidence only, '
        'never a fact about the user) or "user" (the user\'s own words, verbatim).'
    ),
]
Name = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=100,
        description="The sender's name, when the message carries one; a user message "
        "named as anyone but the user is kept as evidence only, never a note.",
    ),
]
Query = Annotated[
    str,
    Field(
        min_length=1,
        description="The question or topic to recall for (at most 4000 "
        "characters unless the memory is configured otherwise).",
    ),
]
TopK = Annotated[
    int,
    Field(ge=1, le=MAX_TOP_K, description=f"How many relevant notes at most (1 to {MAX_TOP_K})."),
]
Budget = Annotated[
    int | None,
    Field(
        ge=16,
        le=100_000,
        description="Token budget of the compiled context (16 to 100000; default: the "
        "memory's own, 1500 unless configured otherwise).",
    ),
]
RecordId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        description="A record or episode id, as recall or "
        "remember returned it (e.g. nt_..., ep_...).",
    ),
]
Evidence = Annotated[
    bool,
    Field(description="Also delete the turns the note was written from (default true)."),
]
User = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=256,
        description="Whose memory (a user id); default: the server's user.",
    ),
]


def _add_fixed_tools(server: MCPServer[Any], tools: _Tools) -> None:
    # A `ctx` parameter is the SDK's request context, not part of the input schema: it
    # lets the tool see the raw arguments and refuse a `user` this server does not take.

    @server.tool(name="remember", description=_REMEMBER, annotations=_WRITES)
    def remember(
        text: Text, ctx: Context[Any, Any], said_by: SaidBy = "assistant", name: Name = None
    ) -> dict[str, Any]:
        tools.check_arguments(ctx, {"text", "said_by", "name"})
        return tools.remember(text, said_by=said_by, name=name, user=None)

    @server.tool(name="recall", description=_RECALL)
    def recall(
        query: Query, ctx: Context[Any, Any], top_k: TopK = 10, budget_tokens: Budget = None
    ) -> dict[str, Any]:
        tools.check_arguments(ctx, {"query", "top_k", "budget_tokens"})
        return tools.recall(query, top_k=top_k, budget_tokens=budget_tokens, user=None)

    @server.tool(name="forget", description=_FORGET, annotations=_DELETES)
    def forget(
        record_id: RecordId, ctx: Context[Any, Any], include_evidence: Evidence = True
    ) -> dict[str, Any]:
        tools.check_arguments(ctx, {"record_id", "include_evidence"})
        return tools.forget(record_id, include_evidence=include_evidence, user=None)

    @server.tool(name="explain", description=_EXPLAIN, annotations=_READS)
    def explain(record_id: RecordId, ctx: Context[Any, Any]) -> dict[str, Any]:
        tools.check_arguments(ctx, {"record_id"})
        return tools.explain(record_id, user=None)


def _add_trusting_tools(server: MCPServer[Any], tools: _Tools) -> None:
    @server.tool(name="remember", description=_REMEMBER, annotations=_WRITES)
    def remember(
        text: Text,
        ctx: Context[Any, Any],
        said_by: SaidBy = "assistant",
        name: Name = None,
        user: User = None,
    ) -> dict[str, Any]:
        tools.check_arguments(ctx, {"text", "said_by", "name", "user"})
        return tools.remember(text, said_by=said_by, name=name, user=user)

    @server.tool(name="recall", description=_RECALL)
    def recall(
        query: Query,
        ctx: Context[Any, Any],
        top_k: TopK = 10,
        budget_tokens: Budget = None,
        user: User = None,
    ) -> dict[str, Any]:
        tools.check_arguments(ctx, {"query", "top_k", "budget_tokens", "user"})
        return tools.recall(query, top_k=top_k, budget_tokens=budget_tokens, user=user)

    @server.tool(name="forget", description=_FORGET, annotations=_DELETES)
    def forget(
        record_id: RecordId,
        ctx: Context[Any, Any],
        include_evidence: Evidence = True,
        user: User = None,
    ) -> dict[str, Any]:
        tools.check_arguments(ctx, {"record_id", "include_evidence", "user"})
        return tools.forget(record_id, include_evidence=include_evidence, user=user)

    @server.tool(name="explain", description=_EXPLAIN, annotations=_READS)
    def explain(record_id: RecordId, ctx: Context[Any, Any], user: User = None) -> dict[str, Any]:
        tools.check_arguments(ctx, {"record_id", "user"})
        return tools.explain(record_id, user=user)


class _Tools:
    """What the tools do, apart from the SDK: each call under one lock (the SDK runs
    synchronous tools in worker threads, and one Memory is one SQLite connection), each
    commonplace error turned into a tool error with its message."""

    def __init__(
        self,
        memory: Memory,
        *,
        scope: Scope,
        trust_client_scope: bool,
        user_names: tuple[str, ...] = (),
    ) -> None:
        self._memory = memory
        self._scope = scope
        self._trust = trust_client_scope
        self._user_names = user_names
        self._lock = threading.Lock()

    def check_arguments(self, ctx: Context[Any, Any], allowed: set[str]) -> None:
        """Refuse arguments the tool does not take (the SDK would drop them silently): a
        ``user`` sent to a server that does not trust the client gets its own message."""
        try:
            params = ctx.request_context.params
        except (AttributeError, ValueError, RuntimeError):
            return  # called outside a request (MCPServer.call_tool in-process): no raw args
        arguments = params.get("arguments") if isinstance(params, Mapping) else None
        unknown = sorted(set(arguments or {}) - allowed)
        if "user" in unknown and not self._trust:
            raise ToolError(
                f"this server serves one user's memory ({self._scope.user!r}), fixed when it "
                "started; it takes no `user` argument. Leave `user` out (a per-call user needs "
                "a server started with --trust-client-scope)."
            )
        if unknown:
            raise ToolError(
                f"unknown argument(s) {unknown}; this tool takes {sorted(allowed)}. Leave the "
                "others out."
            )

    def _scope_for(self, user: str | None) -> Scope:
        if user is None:
            return self._scope
        if not self._trust:  # unreachable through the tools; kept for the Python API
            raise ToolError("this server does not take a per-call user")
        return Scope(user=user)

    def _run(self, call: Callable[[], _T]) -> _T:
        with self._lock:
            try:
                return call()
            except CommonplaceError as exc:
                raise ToolError(str(exc)) from exc

    def remember(
        self, text: str, *, said_by: str, name: str | None, user: str | None
    ) -> dict[str, Any]:
        scope = self._run(lambda: self._scope_for(user))
        # Only the user's own words may speak for the user: the firewall of the core keeps
        # an assistant turn an episode, never a note, and a user message named as someone
        # else's (the core's one rule for names) evidence only.
        role = "user" if said_by == "user" else "assistant"
        sender = said_by_rule(name, user=scope.user, user_names=self._user_names)
        result = self._run(
            lambda: self._memory.write(
                text, role=role, scope=scope, said_by=sender if role == "user" else None
            )
        )
        note = result.note
        return {
            "episode_id": result.episode_id,
            "said_by": role,
            "sender": sender,
            "created": result.created,
            "note": None if note is None else {"id": note.id, "text": note.text},
            "skipped": result.skipped,
        }

    def recall(
        self, query: str, *, top_k: int, budget_tokens: int | None, user: str | None
    ) -> dict[str, Any]:
        scope = self._run(lambda: self._scope_for(user))
        recall = self._run(
            lambda: self._memory.recall(
                query, scope=scope, top_k=top_k, budget_tokens=budget_tokens
            )
        )
        return {
            "recall_id": recall.id,
            "context": recall.render(),
            "tokens": recall.tokens,
            "items": [
                {
                    "id": item.record.id,
                    "kind": item.record.kind.value,
                    "text": item.record.text,
                    "section": item.section,
                    "note": item.note,
                    "score": item.score.breakdown(),
                    "provenance": list(item.record.provenance),
                }
                for item in recall.items
            ],
        }

    def forget(self, record_id: str, *, include_evidence: bool, user: str | None) -> dict[str, Any]:
        scope = self._run(lambda: self._scope_for(user))
        try:
            report = self._run(
                lambda: self._memory.forget(
                    record_id, scope=scope, include_evidence=include_evidence
                )
            )
        except ToolError as exc:
            raise _as_unknown(exc, record_id) from exc.__cause__
        return {"removed_records": list(report.records), "removed_episodes": list(report.episodes)}

    def explain(self, record_id: str, *, user: str | None) -> dict[str, Any]:
        scope = self._run(lambda: self._scope_for(user))
        try:
            chain = self._run(lambda: self._memory.explain(record_id, scope=scope))
        except ToolError as exc:
            raise _as_unknown(exc, record_id) from exc.__cause__
        kept = _within(chain, scope)
        return {
            "record": kept.to_json(),
            "episodes": [_episode_json(e) for e in kept.episodes()],
        }

    def profile(self) -> dict[str, Any]:
        def read() -> dict[str, Any]:
            card = self._memory.store.books.get_card(self._scope, PROFILE_CARD)
            newest = self._memory.store.recent_records(self._scope, kinds=(Kind.NOTE,), limit=1)
            if newest and (card is None or card.updated_at < newest[0].created_at):
                # the card is rewritten every few notes; a client reading it right after a
                # remember must not be shown a card that does not know it yet
                self._memory.rewrite_profile(scope=self._scope)
                card = self._memory.store.books.get_card(self._scope, PROFILE_CARD)
            return {
                "user": self._scope.user,
                "text": "" if card is None else card.text,
                "updated_at": None if card is None else card.updated_at.isoformat(),
                "card": self._memory.profile(scope=self._scope).to_json(),
            }

        return self._run(read)


def _version() -> str:
    """The version the server tells clients: the installed distribution's."""
    return importlib.metadata.version("commonplace-mcp")


def _as_unknown(exc: ToolError, record_id: str) -> ToolError:
    """One message for an id that does not exist and for one in another user's memory, so
    an answer never tells which ids exist elsewhere."""
    if isinstance(exc.__cause__, NotFoundError):
        return ToolError(_UNKNOWN_ID.format(record_id=record_id))
    return exc


def _within(chain: Provenance, scope: Scope) -> Provenance:
    """The chain without any source outside ``scope``: a provenance step never leads into
    another user's memory, even if a derived record ever cited one."""
    sources = tuple(
        _within(source, scope) for source in chain.sources if scope.contains(source.record.scope)
    )
    return Provenance(chain.record, sources)


def _episode_json(episode: Episode) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "id": episode.id,
        "role": episode.role.value,
        "at": episode.at.isoformat(),
        "text": episode.text,
    }
    sender = episode.meta.get("said_by")
    if isinstance(sender, str):  # a user message named as someone else's: evidence only
        shown["said_by"] = sender
    return shown
