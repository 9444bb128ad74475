"""Shrinking compiled memory by whole lines, for ``Memory``'s block truncation.

commonplace compiles memory as one delimited block: an opening tag and a preamble,
then titled sections (``Title:``) of one-line entries, then a closing tag. The
sections come in priority order (profile, conversation summary, disagreements,
always-remembered, recent, relevant) and so, near enough, do the lines within them.
Re-running recall with a smaller budget would count every record as retrieved a
second time, so the block is shrunk from its text instead: body lines are dropped
from the bottom up, a title left with nothing under it goes with them, and a block
with nothing left under any title is dropped whole. No line is ever cut.
"""

from __future__ import annotations

from ._messages import Tokenizer

_HEAD_LINES = 2  # the opening tag and the preamble
_ENTRY_MARKS = ("- ", "! ")


def shrink_block(text: str, *, target: int, tokenizer: Tokenizer) -> str | None:
    """``text`` within ``target`` tokens by dropping whole lines, or None if it cannot fit."""
    if len(tokenizer(text)) <= target:
        return text
    lines = text.split("\n")
    head, body, tail = lines[:_HEAD_LINES], lines[_HEAD_LINES:-1], lines[-1:]
    while True:
        content = [i for i, line in enumerate(body) if not _is_title(line)]
        if not content:
            return None
        del body[content[-1]]
        body = _without_empty_titles(body)
        if not body:
            return None
        shrunk = "\n".join([*head, *body, *tail])
        if len(tokenizer(shrunk)) <= target:
            return shrunk


def _is_title(line: str) -> bool:
    return line.endswith(":") and not line.startswith(_ENTRY_MARKS)


def _without_empty_titles(body: list[str]) -> list[str]:
    return [
        line
        for i, line in enumerate(body)
        if not _is_title(line) or (i + 1 < len(body) and not _is_title(body[i + 1]))
    ]
