"""A store batch, checked and sorted before any of it runs.

Every operation is validated first (namespaces, keys, queries, filters, TTLs, values,
paging), so a batch with one bad operation changes nothing, and every refusal is one of
commonplace's errors (a bad namespace is :class:`InvalidStoreNamespaceError`, which is
also LangGraph's ``InvalidNamespaceError``). Values and filters are checked by
``_values``. Puts to the same key are deduplicated, the last one winning, as in
LangGraph's stores.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from langgraph.store.base import (
    GetOp,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchOp,
    TTLConfig,
)

from commonplace.errors import InvalidInputError, InvalidTypeError
from commonplace.validation import checked_bool, checked_int

from ._filters import check_filter
from ._namespaces import check_labels, check_put_namespace
from ._text import SURROGATE_FIX, has_surrogates
from ._values import check_json

MAX_VALUE_CHARS = 1_000_000
# An expiry time must stay a datetime: 100 years past any time the memory accepts (up to
# the year 9000) is still one.
MAX_TTL_MINUTES = 100 * 365 * 24 * 60


class Plan:
    """A batch, validated and sorted by kind; puts deduplicated (last write wins)."""

    def __init__(self) -> None:
        self.size = 0
        self.gets: list[tuple[int, GetOp]] = []
        self.searches: list[tuple[int, SearchOp]] = []
        self.listings: list[tuple[int, ListNamespacesOp]] = []
        self.puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        self.encoded: dict[tuple[tuple[str, ...], str], str] = {}

    @classmethod
    def of(cls, ops: Iterable[Op]) -> Plan:
        plan = cls()
        for i, op in enumerate(ops):
            plan.size += 1
            if isinstance(op, GetOp):
                plan.gets.append(
                    (
                        i,
                        GetOp(
                            _namespace(op.namespace),
                            _key(op.key),
                            checked_bool("refresh_ttl", op.refresh_ttl),
                        ),
                    )
                )
            elif isinstance(op, SearchOp):
                plan.searches.append((i, _search_op(op)))
            elif isinstance(op, ListNamespacesOp):
                plan.listings.append((i, _listing_op(op)))
            elif isinstance(op, PutOp):
                if op.value is None:  # a delete: any namespace a get could name
                    namespace = _namespace(op.namespace)
                else:
                    namespace = check_put_namespace(op.namespace)
                key = _key(op.key)
                plan.encoded[(namespace, key)] = _encode_value(op.value)
                plan.puts[(namespace, key)] = op._replace(
                    namespace=namespace,
                    key=key,
                    ttl=check_ttl(op.ttl),
                    index=_check_index(op.index),
                )
            else:
                raise InvalidTypeError(f"unknown store operation {type(op).__name__}")
        return plan


def check_ttl_config(ttl: TTLConfig | None) -> TTLConfig | None:
    if ttl is None:
        return None
    if not isinstance(ttl, Mapping):
        raise InvalidTypeError(f"ttl must be a TTLConfig dict, not {type(ttl).__name__}")
    unknown = set(ttl) - {
        "refresh_on_read",
        "default_ttl",
        "sweep_interval_minutes",
        "omit_expired",
    }
    if unknown:
        raise InvalidInputError(f"unknown TTLConfig key(s) {sorted(unknown)}")
    for flag in ("refresh_on_read", "omit_expired"):
        if flag in ttl and not isinstance(ttl[flag], bool):
            raise InvalidTypeError(f"ttl[{flag!r}] must be a bool")
    check_ttl(ttl.get("default_ttl"), name="ttl['default_ttl']")
    check_ttl(ttl.get("sweep_interval_minutes"), name="ttl['sweep_interval_minutes']")
    return cast(TTLConfig, dict(ttl))


def check_ttl(ttl: object, *, name: str = "ttl") -> float | None:
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)):
        raise InvalidTypeError(f"{name} is in minutes and must be a number or None, not {ttl!r}")
    if not math.isfinite(ttl) or ttl <= 0:
        raise InvalidInputError(
            f"{name} must be a positive number of minutes (or None), not {ttl!r}"
        )
    if ttl > MAX_TTL_MINUTES:
        raise InvalidInputError(
            f"{name} is at most {MAX_TTL_MINUTES:,} minutes (100 years), not {ttl!r}; pass "
            "None for no expiry"
        )
    return float(ttl)


def _check_index(index: object) -> Any:
    if index is None or index is False:
        return index
    if not isinstance(index, list):
        raise InvalidTypeError(
            "index must be None, False or a list of field paths such as ['text']"
        )
    if not all(isinstance(p, str) and p for p in index):
        raise InvalidTypeError("index paths must be non-empty str such as 'text' or 'a.b[*]'")
    if any(has_surrogates(p) for p in index):
        raise InvalidInputError(
            "an index path holds lone surrogates (invalid Unicode); name the field as it is "
            "spelled in the value, such as 'text' or 'a.b[*]'"
        )
    return index


def _namespace(namespace: object) -> tuple[str, ...]:
    return check_labels(cast(Sequence[object], namespace), what="namespace")


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise InvalidTypeError(f"key must be a str, not {type(key).__name__}")
    if has_surrogates(key):
        raise InvalidInputError(f"the key holds lone surrogates (invalid Unicode); {SURROGATE_FIX}")
    return key


def _search_op(op: SearchOp) -> SearchOp:
    if op.query is not None and not isinstance(op.query, str):
        raise InvalidTypeError(f"query must be a str or None, not {type(op.query).__name__}")
    if op.query is not None and has_surrogates(op.query):
        # refused here, whatever the store holds: not only when a recall gets to run
        raise InvalidInputError(
            f"the query holds lone surrogates (invalid Unicode); {SURROGATE_FIX}"
        )
    return op._replace(
        namespace_prefix=_namespace(op.namespace_prefix),
        filter=check_filter(op.filter),
        limit=checked_int("limit", op.limit, low=0),
        offset=checked_int("offset", op.offset, low=0),
        query=op.query or None,
        refresh_ttl=checked_bool("refresh_ttl", op.refresh_ttl),
    )


def _listing_op(op: ListNamespacesOp) -> ListNamespacesOp:
    for condition in op.match_conditions or ():
        if not isinstance(condition, MatchCondition) or condition.match_type not in (
            "prefix",
            "suffix",
        ):
            raise InvalidInputError(f"unsupported match condition {condition!r}")
        check_labels(condition.path, what=f"{condition.match_type} path")
    if op.max_depth is not None:
        checked_int("max_depth", op.max_depth, low=1)
    return op._replace(
        limit=checked_int("limit", op.limit, low=0), offset=checked_int("offset", op.offset, low=0)
    )


def _encode_value(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, Mapping):
        raise InvalidTypeError(
            f"a store value must be a dict with str keys such as {{'text': ...}}, not "
            f"{type(value).__name__} (to delete an item, use store.delete(namespace, key))"
        )
    check_json(value, what="the store value", max_chars=MAX_VALUE_CHARS)
    # checked: only JSON types, finite numbers, str keys, bounded depth
    encoded = json.dumps(dict(value), ensure_ascii=False, allow_nan=False)
    if len(encoded) > MAX_VALUE_CHARS:
        raise InvalidInputError(
            f"the store value is over {MAX_VALUE_CHARS:,} characters as JSON; store less"
        )
    return encoded
