"""What a reader takes text to say: a skeleton for finding memory tags in disguise.

The compiled memory is one block between ``<memory>`` and ``</memory>``, and a user's
words inside it must never read as either tag. A list of bad spellings can never be
complete, so a tag is looked for in the text's *skeleton*, each character replaced by
what a reader sees:

- nothing, for what shows nothing: whitespace, format and control characters (the
  default-ignorable ones among them), combining marks, private-use, unassigned and
  surrogate code points, and the letters that render blank (Hangul fillers, U+2800);
- else its compatibility decomposition (NFKD: full-width, small, circled, mathematical
  and modifier forms, accented letters) less its marks, case folded;
- and then, for the seven characters a tag is made of (``<``, ``>``, ``/``, ``m``, ``e``,
  ``o``, ``r``, ``y``), any look-alike from :func:`look_alikes`.

The look-alikes are derived from ``unicodedata`` names, by rules kept small on purpose:

- a letter of the Latin, Cyrillic or Greek script (any case, small capitals, with any
  hook or stroke: ``LATIN LETTER SMALL CAPITAL M``, ``CYRILLIC SMALL LETTER IE``) whose
  letter is one of ``_LETTERS``: the Latin letter it looks like (Cyrillic ``о``, ``е``,
  ``м``, ``у``, ``г``; Greek ``ο``, ``ε``, ``μ``, ``υ``, ``γ``);
- a bracket or slash by its name: ``LESS-THAN``, ``LEFT-POINTING ANGLE BRACKET``,
  ``LEFT ANGLE BRACKET``, ``LEFT-POINTING ANGLE QUOTATION MARK``, ``LEFT ARROWHEAD`` (and
  their right-hand and greater-than twins), ``SOLIDUS`` (not ``REVERSE SOLIDUS``),
  ``FRACTION SLASH``, ``DIVISION SLASH``, a rising diagonal;
- plus the entries of Unicode's confusables (UTS #39 ``confusables.txt``) for these
  characters that no name rule finds (``_CONFUSABLES``: the digit zero, Armenian ``օ``,
  Canadian syllabics ``ᐸ``, CJK ``丿``...).

A two-letter look-alike of ``m`` ("rn") is matched by the tag pattern itself.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# the characters a memory tag is made of, and what each skeleton character is read as
TAG_CHARS = frozenset("<>/memory")
_SHOWS_NOTHING = frozenset({"Cf", "Cc", "Mn", "Me", "Co", "Cn", "Cs", "Zs", "Zl", "Zp"})
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u180e\u2800")

# The letter names, per script, that look like a tag's letters (lower case, as the
# skeleton is case folded: a capital maps with its small letter).
_LETTERS = {
    "LATIN": {"M": "m", "E": "e", "O": "o", "R": "r", "Y": "y"},
    "CYRILLIC": {"EM": "m", "IE": "e", "O": "o", "GHE": "r", "U": "y", "STRAIGHT U": "y"},
    "GREEK": {"MU": "m", "EPSILON": "e", "OMICRON": "o", "UPSILON": "y", "GAMMA": "y"},
}
_LETTER_NAME = re.compile(
    r"^(LATIN|CYRILLIC|GREEK)(?: SMALL| CAPITAL)? LETTER (?:SMALL CAPITAL )?(.+?)"
    r"(?: WITH .+)?$"
)
_BRACKET_NAMES = (
    (re.compile(r"^(?:(?:NOT|MUCH|VERY MUCH|SMALL|FULLWIDTH) )?LESS-THAN(?: SIGN| WITH DOT)?$|"
                r"^(?:[A-Z]+ )?LEFT(?:-POINTING)? (?:CURVED )?ANGLE (?:BRACKET|QUOTATION MARK)"
                r"(?: ORNAMENT| WITH DOT)?$|^MODIFIER LETTER (?:LOW )?LEFT ARROWHEAD$"), "<"),
    (re.compile(r"^(?:(?:NOT|MUCH|VERY MUCH|SMALL|FULLWIDTH) )?GREATER-THAN(?: SIGN| WITH DOT)?$|"
                r"^(?:[A-Z]+ )?RIGHT(?:-POINTING)? (?:CURVED )?ANGLE (?:BRACKET|QUOTATION MARK)"
                r"(?: ORNAMENT| WITH DOT)?$|^MODIFIER LETTER (?:LOW )?RIGHT ARROWHEAD$"), ">"),
    (re.compile(r"^(?:(?:BIG|FULLWIDTH|DOTTED|VERY HEAVY) )?SOLIDUS$|^(?:FRACTION|DIVISION) SLASH$"
                r"|^MATHEMATICAL RISING DIAGONAL$|^BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO "
                r"LOWER LEFT$"), "/"),
)  # fmt: skip
# Unicode's confusables for the tag's characters that no rule above finds by name.
_CONFUSABLES = {
    "0": "o",  # DIGIT ZERO
    "\u0585": "o",  # ARMENIAN SMALL LETTER OH
    "\u2c9f": "o",  # COPTIC SMALL LETTER O
    "\u101d": "o",  # MYANMAR LETTER WA
    "\u212e": "e",  # ESTIMATED SYMBOL
    "\u04bd": "e",  # CYRILLIC SMALL LETTER ABKHASIAN CHE
    "\uab32": "e",  # LATIN SMALL LETTER BLACKLETTER E
    "\u13ac": "e",  # CHEROKEE LETTER GV
    "\u13b7": "m",  # CHEROKEE LETTER LU
    "\u2c85": "r",  # COPTIC SMALL LETTER GAMMA
    "\u1d26": "r",  # GREEK LETTER SMALL CAPITAL GAMMA
    "\uab47": "r",  # LATIN SMALL LETTER R WITHOUT HANDLE
    "\u10e7": "y",  # GEORGIAN LETTER QAR
    "\u1438": "<",  # CANADIAN SYLLABICS PA
    "\u16b2": "<",  # RUNIC LETTER KAUNA
    "\u1433": ">",  # CANADIAN SYLLABICS PO
    "\u1735": "/",  # PHILIPPINE SINGLE PUNCTUATION
    "\u2cc6": "/",  # COPTIC CAPITAL LETTER OLD COPTIC ESH
    "\u3033": "/",  # VERTICAL KANA REPEAT MARK UPPER HALF
    "\u31d3": "/",  # CJK STROKE SP
    "\u4e3f": "/",  # CJK UNIFIED IDEOGRAPH-4E3F
    "\u30ce": "/",  # KATAKANA LETTER NO
}
# the code points the table is derived from: every plane with letters or symbols in use
_SCANNED = range(0x80, 0x20000)


def shows_nothing(ch: str) -> bool:
    """Whether a character shows nothing by itself (see the module doc)."""
    return unicodedata.category(ch) in _SHOWS_NOTHING or ch in _BLANK_LETTERS or ch.isspace()


@functools.cache
def look_alikes() -> dict[str, list[str]]:
    """Each of a tag's characters (``<``, ``>``, ``/``, ``m``, ``e``, ``o``, ``r``,
    ``y``) with the characters the rules above read as it (a few hundred in all; built
    on first use, in about a quarter of a second)."""
    found: dict[str, list[str]] = {t: [] for t in sorted(TAG_CHARS)}
    for cp in _SCANNED:
        ch = chr(cp)
        reads = None if ch in _CONFUSABLES else _named_look_alike(ch)
        if reads is not None:
            found[reads].append(ch)
    for ch, reads in _CONFUSABLES.items():
        found[reads].append(ch)
    return found


@functools.lru_cache(maxsize=8_192)
def skeleton_char(ch: str) -> str:
    """What a reader sees of one character: ``""`` for nothing, else the text it reads
    as (usually one character, case folded; a ligature or a compatibility form may be
    several)."""
    if ch.isascii():
        if ch == "0" or ch.isspace() or not ch.isprintable():
            return "o" if ch == "0" else ""
        return ch.lower()
    if shows_nothing(ch):
        return ""
    table = _table()
    if ch in table:
        return table[ch]
    base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not shows_nothing(c)).casefold()
    return "".join(table.get(c, c) for c in base)


@functools.cache
def _table() -> dict[str, str]:
    return {ch: reads for reads, chars in look_alikes().items() for ch in chars}


def _named_look_alike(ch: str) -> str | None:
    if shows_nothing(ch):
        return None
    name = unicodedata.name(ch, "")
    letter = _LETTER_NAME.match(name)
    if letter is not None:
        return _LETTERS[letter.group(1)].get(letter.group(2))
    if unicodedata.category(ch)[0] not in "SP" and "ARROWHEAD" not in name:
        return None  # a bracket or slash is a symbol or punctuation (or a modifier arrow)
    for pattern, reads in _BRACKET_NAMES:
        if pattern.search(name):
            return reads
    return None
