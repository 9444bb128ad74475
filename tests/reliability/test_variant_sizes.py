"""What the page and the noxfile say each variant runs is what it runs.

The long variant is run by hand (``nox -s reliability``), so nothing else would notice its
description drifting from ``reliability_support.LONG``: this test reads both descriptions
and compares them with the sizes, short and long.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from reliability_support import LONG, SHORT, Sizes

ROOT = Path(__file__).resolve().parents[2]


def _row(variant: str) -> list[str]:
    page = (ROOT / "docs" / "guarantees.md").read_text(encoding="utf-8")
    line = next(line for line in page.splitlines() if line.startswith(f"| {variant} "))
    return [cell.strip() for cell in line.strip("|").split("|")]


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _expected(sizes: Sizes) -> dict[str, str]:
    return {
        "kills": str(sizes.kills),
        "race": f"{2 * sizes.race_workers} x {sizes.race_ops}, 2 processes x {sizes.process_ops}",
        "fuzz": str(sizes.fuzz_examples),
        "isolation": str(sizes.isolation_examples),
        "soak": str(sizes.soak_ops),
    }


def test_the_guarantees_table_gives_each_variants_sizes() -> None:
    for variant, sizes in (("short", SHORT), ("long", LONG)):
        _, _, kills, race, fuzz, isolation, soak, _ = _row(variant)
        said = {
            "kills": kills,
            "race": race,
            "fuzz": fuzz,
            "isolation": isolation,
            "soak": str(_number(soak)),
        }
        assert said == _expected(sizes), variant


def test_the_noxfile_says_what_the_long_variant_runs() -> None:
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    session = next(
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name == "reliability"
    )
    doc = " ".join((ast.get_docstring(session) or "").split())
    found = {
        "kills": re.search(r"([\d,]+) SIGKILLs \(([\d,]+) in each of the two kill tests\)", doc),
        "soak": re.search(r"([\d,]+) soak operations", doc),
        "fuzz": re.search(r"([\d,]+) fuzz examples per fuzz test", doc),
        "isolation": re.search(r"([\d,]+) per isolation property", doc),
    }
    assert all(found.values()), doc
    kills = found["kills"]
    assert kills is not None and _number(kills.group(2)) == LONG.kills
    assert _number(kills.group(1)) == 2 * LONG.kills
    for name, size in (
        ("soak", LONG.soak_ops),
        ("fuzz", LONG.fuzz_examples),
        ("isolation", LONG.isolation_examples),
    ):
        match = found[name]
        assert match is not None and _number(match.group(1)) == size, name
