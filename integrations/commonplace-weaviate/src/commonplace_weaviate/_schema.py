"""The explicit schema: one collection per record kind, plus the bookkeeping collections.

Memory content lives in multi-tenant collections (``Episode``, ``Note``,
``Summary``, ``Procedure``), one tenant per exact scope, so a query can only
ever read the shards of the scopes it names. The rest is small, keyed
bookkeeping in single-tenant collections: where each id lives (``Locator``),
which tenants exist for which scope (``Tenant``), counter events (``Counter``),
provenance edges (``Source``), links, and the ledger (``Ledger``: the core's
audit log, recall logs, conflicts, cards, use log and forgotten turns, as keyed
entries). Every collection is created with every property declared, so the
server never has to guess a type (auto-schema is never relied on), and carries a
marker with the schema version in its description; the embedder pin is kept in
the ``Note`` collection's description.

Schema version 2 replaced version 1's ``Audit``, ``Recall``, ``Conflict`` and
``Card`` collections by the ledger; ``_upgrade`` moves a version 1 store on open.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from commonplace import Kind

SCHEMA_VERSION = 2
MARKER = "commonplace"

TEXT, TEXTS, INT, NUMBER, DATE, BOOL = "text", "text[]", "int", "number", "date", "boolean"


@dataclass(frozen=True, slots=True)
class Prop:
    """One declared property: its type and how it is indexed."""

    name: str
    type: str
    filterable: bool = True
    searchable: bool = False  # BM25 over word tokens (only record text)
    rangeable: bool = False  # indexed for range filters (a date or a number)


def _scope_props() -> tuple[Prop, ...]:
    return (Prop("scope_user", TEXT), Prop("scope_agent", TEXT), Prop("scope_thread", TEXT))


_RECORD = (
    Prop("record_id", TEXT),
    Prop("kind", TEXT),
    *_scope_props(),
    # what never changes after a write, in one JSON text: text, scope, times, base counters,
    # data, first provenance (one property decodes much faster than a dozen)
    Prop("state", TEXT, filterable=False),
    # what keyword search matches: the text plus the writer's normalised tags (as in SQLite)
    Prop("search", TEXT, filterable=False, searchable=True),
    # what changes, one property each so that concurrent partial updates never collide
    Prop("tags", TEXT, filterable=False),
    Prop("tier", TEXT),
    Prop("subject", TEXT),
    Prop("predicate", TEXT),
    Prop("entities", TEXTS),
    Prop("created_at", DATE),
    Prop("valid_to", DATE),
    Prop("superseded_by", TEXT),
    Prop("pinned", BOOL),
    Prop("status", TEXT),
    Prop("status_since", DATE),
    Prop("tier_since", DATE),
    Prop("merged", BOOL),  # provenance grew after the write (more Source edges to read)
    # the totals of the record's counter events up to a cutoff (see _counters)
    Prop("tally", TEXT, filterable=False),
    Prop("seq", INT),
    # the named vector a re-embed staged for this record (see WeaviateBackend.reembed_*)
    Prop("reembed", TEXT),
)
#: The properties a record is rebuilt from (what queries ask the server to return).
RECORD_RETURN = [
    "record_id",
    "state",
    "tags",
    "tier",
    "status",
    "pinned",
    "valid_to",
    "superseded_by",
    "tier_since",
    "status_since",
    "merged",
    "seq",
    "tally",
]


@dataclass(frozen=True, slots=True)
class Spec:
    """A collection: its name suffix, whether it is split by tenant, vectors, properties."""

    suffix: str
    props: tuple[Prop, ...]
    multi_tenant: bool = False
    vectors: bool = False


EPISODE = Spec(
    "Episode",
    (
        Prop("episode_id", TEXT),
        *_scope_props(),
        Prop("role", TEXT),
        Prop("text", TEXT, filterable=False),
        Prop("at", DATE),
        Prop("seq", INT),
        Prop("meta", TEXT, filterable=False),
    ),
    multi_tenant=True,
)
NOTE = Spec("Note", _RECORD, multi_tenant=True, vectors=True)
SUMMARY = Spec("Summary", _RECORD, multi_tenant=True, vectors=True)
PROCEDURE = Spec("Procedure", _RECORD, multi_tenant=True, vectors=True)
LOCATOR = Spec(
    "Locator",
    (
        Prop("object_id", TEXT),
        Prop("kind", TEXT),
        Prop("tenant", TEXT),
        *_scope_props(),
    ),
)
TENANT = Spec("Tenant", (Prop("tenant", TEXT), Prop("collection", TEXT), *_scope_props()))
#: When a counter event was stored, indexed for ranges (see _counters).
AFTER = "after"
COUNTER = Spec(
    "Counter",
    (
        Prop("key", TEXT),
        Prop("record_id", TEXT),
        Prop("field", TEXT),
        Prop("at", DATE),
        # set by schema 2 and later, whose uses the core logs in the ledger (the upgrade
        # from schema 1 copies the "used" events that lack it into the ledger)
        Prop("ledger", BOOL),
        # when the event was stored (the writer's wall clock), indexed for ranges: what a
        # read after a tally's cutoff asks for (events stored before it was declared lack
        # it; see _counters)
        Prop(AFTER, DATE, filterable=False, rangeable=True),
    ),
)
SOURCE = Spec("Source", (Prop("record_id", TEXT), Prop("source_id", TEXT)))
LINK = Spec(
    "Link",
    (
        Prop("a", TEXT),
        Prop("b", TEXT),
        Prop("kind", TEXT),
        Prop("weight", NUMBER),
        Prop("updated_at", DATE, filterable=False),
    ),
)
LEDGER = Spec(
    "Ledger",
    (
        Prop("kind", TEXT),
        Prop("key", TEXT),
        *_scope_props(),
        Prop("at", DATE),
        Prop("data", TEXT, filterable=False),  # a JSON object
        Prop("refs", TEXTS),
        Prop("seq", INT),  # the order of first writing (a replaced entry keeps its seq)
        Prop("writer", TEXT, filterable=False),  # which put wrote it (see Ledger.put)
    ),
)

SPECS: tuple[Spec, ...] = (
    EPISODE,
    NOTE,
    SUMMARY,
    PROCEDURE,
    LOCATOR,
    TENANT,
    COUNTER,
    SOURCE,
    LINK,
    LEDGER,
)
# -- schema version 1's bookkeeping, which the ledger replaced (read by ``_upgrade`` only) --
LEGACY_AUDIT = Spec(
    "Audit",
    (
        Prop("at", DATE),
        *_scope_props(),
        Prop("action", TEXT),
        Prop("rule", TEXT),
        Prop("record_id", TEXT),
        Prop("detail", TEXT, filterable=False),
        Prop("seq", INT),
    ),
)
LEGACY_RECALL = Spec(
    "Recall",
    (
        Prop("recall_id", TEXT),
        *_scope_props(),
        Prop("at", DATE),
        Prop("item_ids", TEXTS, filterable=False),
        Prop("feedback_at", DATE),
        Prop("shown_ids", TEXTS, filterable=False),
    ),
)
LEGACY_CONFLICT = Spec(
    "Conflict",
    (
        Prop("conflict_id", TEXT),
        *_scope_props(),
        Prop("entity", TEXT),
        Prop("reason", TEXT, filterable=False),
        Prop("record_ids", TEXTS, filterable=False),
        Prop("created_at", DATE),
        Prop("resolved_at", DATE),
        Prop("resolution", TEXT),
    ),
)
LEGACY_CARD = Spec(
    "Card",
    (
        *_scope_props(),
        Prop("kind", TEXT),
        Prop("text", TEXT, filterable=False),
        Prop("data", TEXT, filterable=False),
        Prop("updated_at", DATE, filterable=False),
    ),
)
LEGACY_SPECS: tuple[Spec, ...] = (LEGACY_AUDIT, LEGACY_RECALL, LEGACY_CONFLICT, LEGACY_CARD)
#: The tenant a version 1 store gave the locator of a forgotten episode (its id only).
LEGACY_FORGOTTEN_TENANT = "-"

RECORD_SPECS: Mapping[Kind, Spec] = {
    Kind.NOTE: NOTE,
    Kind.SUMMARY: SUMMARY,
    Kind.PROCEDURE: PROCEDURE,
}
KIND_SPECS: Mapping[Kind, Spec] = {Kind.EPISODE: EPISODE, **RECORD_SPECS}
SPEC_KINDS: Mapping[str, Kind] = {spec.suffix: kind for kind, spec in KIND_SPECS.items()}


def description(
    spec: Spec, *, pin: Mapping[str, Any] | None = None, version: int = SCHEMA_VERSION
) -> str:
    """The collection description: a marker with the schema version (and the pin)."""
    body: dict[str, Any] = {MARKER: version, "collection": spec.suffix.lower()}
    if pin is not None:
        body["embedder"] = dict(pin)
    return json.dumps(body, sort_keys=True)


def read_description(text: str | None) -> dict[str, Any] | None:
    """The parsed marker, or None for a collection commonplace did not create."""
    if not text:
        return None
    try:
        body = json.loads(text)
    except ValueError:
        return None
    if not isinstance(body, dict) or not isinstance(body.get(MARKER), int):
        return None
    return body


def weaviate_property(prop: Prop) -> Any:
    """The weaviate-client declaration of one property."""
    from weaviate.classes.config import DataType, Property, Tokenization

    types = {
        TEXT: DataType.TEXT,
        TEXTS: DataType.TEXT_ARRAY,
        INT: DataType.INT,
        NUMBER: DataType.NUMBER,
        DATE: DataType.DATE,
        BOOL: DataType.BOOL,
    }
    textual = prop.type in (TEXT, TEXTS)
    tokenization = None
    if textual:
        tokenization = Tokenization.WORD if prop.searchable else Tokenization.FIELD
    return Property(
        name=prop.name,
        data_type=types[prop.type],
        index_filterable=prop.filterable,
        index_searchable=prop.searchable if textual else None,
        index_range_filters=True if prop.rangeable else None,
        tokenization=tokenization,
        skip_vectorization=True,
    )


def create_kwargs(spec: Spec, name: str, *, replication: int) -> dict[str, Any]:
    """Arguments for ``client.collections.create`` declaring ``spec`` exactly."""
    from weaviate.classes.config import Configure, VectorDistances

    index = (
        Configure.VectorIndex.hnsw(distance_metric=VectorDistances.COSINE)
        if spec.vectors
        else Configure.VectorIndex.none()
    )
    kwargs: dict[str, Any] = {
        "name": name,
        "description": description(spec),
        "properties": [weaviate_property(prop) for prop in spec.props],
        "vector_config": Configure.Vectors.self_provided(vector_index_config=index),
        "inverted_index_config": Configure.inverted_index(index_null_state=True),
    }
    if spec.multi_tenant:
        kwargs["multi_tenancy_config"] = Configure.multi_tenancy(
            enabled=True, auto_tenant_creation=False, auto_tenant_activation=True
        )
    if replication > 1:
        kwargs["replication_config"] = Configure.replication(factor=replication)
    return kwargs


def missing_props(spec: Spec, config: Any) -> list[Prop]:
    """Properties of ``spec`` an existing collection lacks (added on open: a newer version
    of this package may declare more properties; older objects read them as unset)."""
    have = {p.name for p in config.properties}
    return [prop for prop in spec.props if prop.name not in have]


def schema_problems(spec: Spec, config: Any) -> list[str]:
    """What differs between an existing collection and ``spec`` (empty when it matches)."""
    problems = []
    if bool(config.multi_tenancy_config.enabled) != spec.multi_tenant:
        problems.append("multi-tenancy is " + ("off" if spec.multi_tenant else "on"))
    have = {p.name: str(getattr(p.data_type, "value", p.data_type)) for p in config.properties}
    for prop in spec.props:
        if prop.name in have and have[prop.name] != prop.type:
            problems.append(f"property {prop.name!r} is {have[prop.name]}, not {prop.type}")
    return problems


def names(specs: Sequence[Spec], prefix: str) -> list[str]:
    return [prefix + spec.suffix for spec in specs]
