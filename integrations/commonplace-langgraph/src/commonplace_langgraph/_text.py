"""Small checks on text from outside: valid Unicode, and how to quote it in a message."""

from __future__ import annotations

_SHOWN_CHARS = 60

SURROGATE_FIX = "decode it properly, e.g. data.decode('utf-8', errors='replace')"


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate: text no UTF-8 store (SQLite) can hold."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def shown(value: object) -> str:
    """``repr(value)``, cut short: an error message never repeats a megabyte of input."""
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "..."
