"""Store filters with the semantics of LangGraph's ``InMemoryStore``, checked up front.

``{"field": value}`` is equality; a dict value without ``$`` keys matches nested values
field by field; ``{"field": {"$gt": 3}}`` applies operators (``$eq $ne $gt $gte $lt
$lte``). Unlike ``InMemoryStore``, a malformed filter is refused before anything runs
(an unknown operator, ``$``-keys mixed with plain keys, an ordering operator given a
non-scalar), and comparing values of different kinds (a missing field, a string with a
number) is simply no match instead of an exception from inside the search. A filter
holds JSON values only, as stored values do (see ``_values``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from commonplace.errors import InvalidInputError, InvalidTypeError

from ._values import check_json

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
_ORDERING = ("$gt", "$gte", "$lt", "$lte")


def check_filter(filter: object) -> dict[str, Any] | None:
    """A validated copy of ``filter``, or None for no filter."""
    if filter is None:
        return None
    if not isinstance(filter, Mapping):
        raise InvalidTypeError(f"filter must be a dict, not {type(filter).__name__}")
    # JSON values only, as stored values are (which also bounds the depth the walks
    # below and the matching recurse to)
    check_json(filter, what="filter")
    _check_level(filter, path="filter")
    return dict(filter)


def _check_level(filter: Mapping[Any, Any], *, path: str) -> None:
    for key, expected in filter.items():
        if not isinstance(key, str):
            raise InvalidTypeError(f"{path} keys must be str, not {type(key).__name__} ({key!r})")
        where = f"{path}[{key!r}]"
        if isinstance(expected, Mapping):
            operators = [k for k in expected if isinstance(k, str) and k.startswith("$")]
            if operators and len(operators) != len(expected):
                raise InvalidInputError(
                    f"{where} mixes operators with plain fields; write either "
                    "{'$gt': 1, '$lt': 5} or {'nested_field': value}, not both"
                )
            if operators:
                for op, operand in expected.items():
                    _check_operator(op, operand, where=where)
            else:
                _check_level(expected, path=where)
        elif isinstance(expected, float) and not math.isfinite(expected):
            raise InvalidInputError(f"{where} is {expected!r}; filter values must be finite")


def _check_operator(op: str, operand: object, *, where: str) -> None:
    if op not in OPERATORS:
        raise InvalidInputError(
            f"unsupported filter operator {op!r} in {where}; use one of {', '.join(OPERATORS)}"
        )
    if op in _ORDERING and not _orderable(operand):
        raise InvalidTypeError(
            f"{where}: {op} compares numbers or strings, not {type(operand).__name__}"
        )


def _orderable(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return math.isfinite(value)
    return isinstance(value, str)


def matches(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Whether a stored value passes a (checked) filter."""
    if not filter:
        return True
    return all(_compare(value.get(key), expected) for key, expected in filter.items())


def _compare(actual: Any, expected: Any) -> bool:
    if isinstance(expected, Mapping):
        if any(k.startswith("$") for k in expected):
            return all(_apply(actual, op, operand) for op, operand in expected.items())
        if not isinstance(actual, Mapping):
            return False
        return all(_compare(actual.get(k), v) for k, v in expected.items())
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(expected)
            and all(_compare(a, e) for a, e in zip(actual, expected))
        )
    return bool(actual == expected)


def _apply(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    if not (_orderable(actual) and _orderable(operand)):
        return False
    if isinstance(actual, str) != isinstance(operand, str):
        return False  # a string is never greater or smaller than a number
    if op == "$gt":
        return bool(actual > operand)
    if op == "$gte":
        return bool(actual >= operand)
    if op == "$lt":
        return bool(actual < operand)
    return bool(actual <= operand)
