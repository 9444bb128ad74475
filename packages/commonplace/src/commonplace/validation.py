"""The argument checks commonplace's own entry points use, for integrations to share.

Each returns the value it accepted, or raises :class:`~commonplace.errors.InvalidTypeError`
(the wrong type) or :class:`~commonplace.errors.InvalidInputError` (the right type, out of
range or malformed) with a message naming the argument and how to fix the call. An
adapter that validates with these refuses bad input exactly as ``Memory`` does.
"""

from ._firewall import checked_user_names
from ._validate import (
    checked_bool,
    checked_float,
    checked_id,
    checked_int,
    checked_number,
    checked_path,
    checked_text,
    checked_time,
)

__all__ = [
    "checked_bool",
    "checked_float",
    "checked_id",
    "checked_int",
    "checked_number",
    "checked_path",
    "checked_text",
    "checked_time",
    "checked_user_names",
]
