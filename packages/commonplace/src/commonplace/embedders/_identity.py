"""Pinned names for other frameworks' models, made from what identifies the model.

An adapter names the model it wraps ``prefix:Class(field=value,...):dim``: the
framework, the model's class, the fields that choose its weights (``model``,
``model_name`` ...) and its dimension, so two models never share a store silently,
while one model reopens its store after a restart. ``not_installed_message`` reads
the format back to tell the user which object to pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._callable import checked_name


def identity_name(prefix: str, model: object, *, dim: int, fields: Sequence[str]) -> str:
    """``prefix:Class(field=value,...):dim`` from those of ``fields`` that ``model`` sets."""
    parts = []
    for field in fields:
        try:
            value: Any = getattr(model, field, None)
        except Exception:  # a property that cannot be read is no part of the identity
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
            continue
        text = " ".join(str(value).split()).translate({ord(","): " ", ord(":"): "/"})
        parts.append(f"{field}={text}")
    listed = f"({','.join(parts)})" if parts else ""
    return checked_name(f"{prefix}:{type(model).__name__}{listed}:{dim}")


def declared_dim(model: object, fields: Sequence[str]) -> int | None:
    """The vector length ``model`` declares in the first of ``fields`` it sets, if any."""
    for field in fields:
        try:
            value: Any = getattr(model, field, None)
        except Exception:
            continue
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
