"""Offline token counting with tiktoken's ``cl100k_base`` encoding.

tiktoken downloads its encodings on first use; commonplace ships the
``cl100k_base`` rank file (gzip-compressed, checked against tiktoken's published
SHA-256) inside the wheel and builds the encoding from it, so counting tokens
never touches the network.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
from importlib import resources

import tiktoken

_RANKS_FILE = "cl100k_base.tiktoken.gz"
_RANKS_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# The split pattern and special tokens of cl100k_base, as tiktoken defines them.
_PAT_STR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
    r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


@functools.cache
def cl100k_base() -> tiktoken.Encoding:
    """The ``cl100k_base`` encoding, built from the rank file shipped with commonplace."""
    packed = resources.files("commonplace").joinpath("_data").joinpath(_RANKS_FILE).read_bytes()
    raw = gzip.decompress(packed)
    if hashlib.sha256(raw).hexdigest() != _RANKS_SHA256:  # pragma: no cover - packaging bug
        raise RuntimeError(f"{_RANKS_FILE} is damaged; reinstall commonplace")
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in raw.splitlines() if line)
    }
    return tiktoken.Encoding(
        name="cl100k_base",
        pat_str=_PAT_STR,
        mergeable_ranks=ranks,
        special_tokens=_SPECIAL_TOKENS,
    )


def count_tokens(text: str) -> int:
    """Tokens of ``text`` in ``cl100k_base``; special-token text counts as plain text."""
    return len(cl100k_base().encode(text, disallowed_special=()))
