"""``commonplace import`` refuses every bad line cleanly and stores nothing.

A JSON Lines file of good turns with one bad line at a random place: a scope field that is
a number, a float, a boolean, null, "", a list or an object; a meta nested deeper than
Python's parser goes; a line that is JSON but not an object, or not JSON at all; bytes that
are not UTF-8; an unknown field; a time that is not ISO 8601; a text that is not a string.
Each must end the command with exit code 2 and one line on stderr that names the bad
line's number, and leave the store byte for byte as it was (every line is checked before
anything is stored). And a scope field that is a string, whatever it spells ("0",
"false", "null"), is that scope, never the --user default's.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from reliability_support import SIZES, dump, profile, tally, url_of

from commonplace import Memory
from commonplace._cli import main

GOOD = st.lists(
    st.fixed_dictionaries(
        {"text": st.sampled_from(["I adopted a cat named Miso.", "ok", "I live in Porto."])},
        optional={
            "user": st.sampled_from(["ana", "bob"]),
            "at": st.sampled_from(["2026-02-01T10:00:00", "2026-02-02T10:00:00+01:00"]),
        },
    ).map(lambda d: json.dumps(d).encode()),
    min_size=0,
    max_size=6,
)
NOT_A_STRING = st.one_of(
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.lists(st.text(max_size=3), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _deep(depth: int, shape: str) -> bytes:
    """A line whose meta nests ``depth`` levels: past any recursion limit in use (hypothesis
    runs with 2,048), so that Python's JSON parser cannot read it."""
    opened, closed = ('{"a":', "}") if shape == "object" else ("[", "]")
    return ('{"text": "hi", "meta": ' + opened * depth + "1" + closed * depth + "}").encode()


def _not_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


BAD = st.one_of(
    st.tuples(st.sampled_from(["user", "agent", "thread"]), NOT_A_STRING).map(
        lambda p: json.dumps({"text": "hi", p[0]: p[1]}).encode()
    ),
    st.just(json.dumps({"text": "hi", "user": ""}).encode()),
    st.builds(_deep, st.integers(3_000, 100_000), st.sampled_from(["object", "list"])),
    st.one_of(st.integers(), st.text(), st.lists(st.integers()), st.none(), st.booleans()).map(
        lambda v: json.dumps(v).encode()
    ),
    st.text(min_size=1)
    .filter(lambda t: t.strip() and "\n" not in t and _not_json(t))
    .map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"]).map(
        lambda junk: b'{"text": "caf' + junk + b'"}'
    ),
    st.just(json.dumps({"text": "hi", "colour": "red"}).encode()),
    st.one_of(st.integers(), st.just("yesterday"), st.lists(st.integers(), max_size=2)).map(
        lambda at: json.dumps({"text": "hi", "at": at}).encode()
    ),
    NOT_A_STRING.map(lambda text: json.dumps({"text": text}).encode()),
)


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


@given(before=GOOD, bad=BAD, after=GOOD)
@profile(SIZES.fuzz_examples)
def test_a_bad_line_is_one_clean_error_that_names_it_and_stores_nothing(
    before: list[bytes], bad: bytes, after: list[bytes]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "import.db"
        with Memory(url_of(store)) as memory:
            memory.write("I work at a bakery.", scope="ana")
        state = dump(store)
        path = Path(folder) / "turns.jsonl"
        path.write_bytes(b"\n".join([*before, bad, *after]) + b"\n")
        code, out, err = _run(["import", str(path), "--user", "ana", "--url", url_of(store)])
        assert code == 2, (bad[:80], out, err[:300])
        assert out == "" and err.count("\n") == 1, (bad[:80], err[:300])
        assert err.startswith(f"commonplace: error: line {len(before) + 1}"), (bad[:80], err)
        assert "nothing was stored" in err
        assert dump(store) == state
        tally("import: bad lines refused")


@given(
    value=st.sampled_from(["0", "false", "null", "[]", "None", " ", "ana "]),
    field=st.sampled_from(["user", "agent", "thread"]),
)
@profile(max(5, SIZES.isolation_examples // 3))
def test_a_scope_field_that_is_a_string_is_that_scope(value: str, field: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "import.db"
        path = Path(folder) / "turns.jsonl"
        path.write_text(json.dumps({"text": "I adopted a cat named Miso.", field: value}) + "\n")
        code, _, err = _run(["import", str(path), "--user", "ana", "--url", url_of(store)])
        assert code == 0, err
        rows = dump(store)["episodes"]
        columns = {"user": 2, "agent": 3, "thread": 4}  # after seq and id
        assert [row[columns[field]] for row in rows] == [value]
        tally("import: string scope fields kept")
