"""What a store value (or a filter) may hold: JSON, checked before anything runs.

A value is kept as JSON inside a memory record and decoded again at every read, so
whatever JSON cannot hold exactly is refused up front, with the path to the offending
part: a non-str key at any depth (JSON would turn ``1`` into ``"1"``), a lone surrogate
in any string (no UTF-8 store can hold it), NaN and infinities, objects JSON has no form
for, integers too long to read back, and nesting deeper than :data:`MAX_VALUE_DEPTH`.
The walk is a loop, not a recursion, so no value can exhaust the interpreter's stack
here, and the depth bound keeps every later encode, decode and text walk of a stored
value far from it too. Tuples are JSON arrays: they come back as lists, as from
LangGraph's SQL stores.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from commonplace.errors import InvalidInputError, InvalidTypeError

from ._text import SURROGATE_FIX, has_surrogates, shown

MAX_VALUE_DEPTH = 64
"""How many levels of dicts and lists a store value (or a filter) may nest."""

# Python reads back at most 4,300 digits of an integer written as JSON; 14,000 bits is
# about 4,215 digits, comfortably inside.
_MAX_INT_BITS = 14_000
_PATH_CHARS = 120


def check_json(value: object, *, what: str, max_chars: int | None = None) -> None:
    """Refuse anything in ``value`` that JSON cannot hold exactly (see the module doc).

    ``max_chars``: refuse early, before encoding, a value whose JSON is certainly longer.
    """
    stack: list[tuple[object, str, int]] = [(value, what, 0)]
    size = 0  # a lower bound of the length of the JSON, counted as the walk goes
    while stack:
        node, path, depth = stack.pop()
        size += 1
        if isinstance(node, str):
            size += len(node)
            if has_surrogates(node):
                raise InvalidInputError(
                    f"{_short(path)} holds lone surrogates (invalid Unicode); {SURROGATE_FIX}"
                )
        elif node is None or isinstance(node, bool):
            pass
        elif isinstance(node, int):
            if node.bit_length() > _MAX_INT_BITS:
                raise InvalidInputError(
                    f"{_short(path)} is an integer of over 4,000 digits, too long to read "
                    "back from JSON; store it as a str"
                )
        elif isinstance(node, float):
            if not math.isfinite(node):
                raise InvalidInputError(
                    f"{_short(path)} is {node!r}: numbers must be finite (JSON has no NaN "
                    "or infinity); use None or a str instead"
                )
        elif isinstance(node, (Mapping, list, tuple)):
            if depth >= MAX_VALUE_DEPTH:
                raise InvalidInputError(
                    f"{what} is nested more than {MAX_VALUE_DEPTH} levels deep (at "
                    f"{_short(path)}); flatten it, or store the deep part as a JSON str"
                )
            if isinstance(node, Mapping):
                size += sum(len(k) + 3 for k in node if isinstance(k, str))  # "k":
            stack.extend(_children(node, path, depth))
        else:
            raise InvalidTypeError(
                f"{_short(path)} is a {type(node).__name__}, which JSON cannot hold; use "
                "str, int, float, bool, None, lists and dicts with str keys (a datetime "
                "as .isoformat(), a set as a list)"
            )
        if max_chars is not None and size > max_chars:
            raise InvalidInputError(f"{what} is over {max_chars:,} characters as JSON; store less")


def _children(node: object, path: str, depth: int) -> list[tuple[object, str, int]]:
    if isinstance(node, Mapping):
        children: list[tuple[object, str, int]] = []
        for key, child in node.items():
            if not isinstance(key, str):
                raise InvalidTypeError(
                    f"{_short(path)} has the {type(key).__name__} key {shown(key)}; keys are "
                    "str at every depth (JSON would turn it into a str): write "
                    f"{shown(str(key))}"
                )
            if has_surrogates(key):
                raise InvalidInputError(
                    f"{_short(path)} has a key holding lone surrogates (invalid Unicode); "
                    + SURROGATE_FIX
                )
            children.append((child, _under(path, shown(key)), depth + 1))
        return children
    items: Any = node
    return [(child, _under(path, str(i)), depth + 1) for i, child in enumerate(items)]


def _under(path: str, step: str) -> str:
    # past the length a message shows, the path stops growing (a deep value would
    # otherwise carry a long path per node)
    return path if len(path) > _PATH_CHARS else f"{path}[{step}]"


def _short(path: str) -> str:
    return path if len(path) <= _PATH_CHARS else path[:_PATH_CHARS] + "..."
