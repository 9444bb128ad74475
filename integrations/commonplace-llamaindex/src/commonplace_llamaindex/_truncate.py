"""Shrinking compiled memory by whole lines, for ``Memory``'s block truncation.

commonplace compiles memory as one delimited block: an opening tag and a preamble,
then titled sections (``Title:``) of one-line entries, then a closing tag (a memory
block returns it without the tags, which LlamaIndex's template provides). The
sections come in priority order (profile, conversation summary, disagreements,
always-remembered, recent, relevant) and so, near enough, do the lines within them.
Re-running recall with a smaller budget would count every record as retrieved a
second time, so the block is shrunk from its text instead: body lines are dropped
from the bottom up, a title left with nothing under it goes with them, and a block
with nothing left under any title is dropped whole. No line is ever cut.
"""

from __future__ import annotations

import re

from ._messages import Tokenizer

_OPEN, _CLOSE = "<memory>", "</memory>"
_ENTRY_MARKS = ("- ", "! ")
_DAY_HEADING = re.compile(r"^\d{1,2} [^\W\d_]+ \d{4}:$")


def unwrapped(text: str) -> str:
    """Compiled memory without its ``<memory>`` tags (for a template that has its own)."""
    lines = text.split("\n")
    if len(lines) >= 2 and lines[0] == _OPEN and lines[-1] == _CLOSE:
        return "\n".join(lines[1:-1])
    return text


def shrink_block(text: str, *, target: int, tokenizer: Tokenizer) -> str | None:
    """``text`` within ``target`` tokens by dropping whole lines, or None if it cannot fit.

    ``text`` is compiled memory with its tags or without them (as a block returns it):
    the tags and the preamble always stay.
    """
    if len(tokenizer(text)) <= target:
        return text
    lines = text.split("\n")
    wrapped = len(lines) >= 2 and lines[0] == _OPEN and lines[-1] == _CLOSE
    start = 2 if wrapped else 1  # the opening tag and the preamble
    head, body = lines[:start], lines[start : len(lines) - 1 if wrapped else len(lines)]
    tail = lines[-1:] if wrapped else []
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
    """Drop the titles nothing is left under: a section title ("Recent notes:") is kept
    while an entry follows it before the next section title, a day heading ("8 May
    2023:") while an entry follows it before the next heading of any kind."""
    out = []
    for i, line in enumerate(body):
        if not _is_title(line):
            out.append(line)
            continue
        level = _level(line)
        for following in body[i + 1 :]:
            if not _is_title(following):
                out.append(line)
                break
            if _level(following) <= level:
                break
    return out


def _level(title: str) -> int:
    return 2 if _DAY_HEADING.match(title) else 1
