"""Candidate generation, the required ``"search"`` capability.

Vector candidates nearest first with their cosine, keyword hits with their own cosine and
a normalised score, only active records of the asked kinds, and ``nearest``. Every backend
has it.
"""

from __future__ import annotations

import pytest

from ..._records import Kind, Status, Tags
from ..._scope import Scope
from ...stores import Store, TurnWrite
from .._fixtures import episode, later, note, rows, unit
from ._core import ANA, ANA_T1, ANA_T2, BOB, CapabilityGroup, _ids, _nid, _turn, _write

# -- candidates ---------------------------------------------------------------------------------


class TestSearch(CapabilityGroup):
    capability = "search"

    def test_nearest_first_with_the_cosine_similarity(self, store: Store) -> None:
        vectors = [unit(1.0), unit(1.0, 1.0), unit(0.0, 1.0), unit(-1.0, 0.2)]
        turns = [_turn(ANA, f"v{i}") for i in range(4)]
        _write(store, turns, *vectors)
        query = unit(1.0, 0.2)
        found = store.search(ANA, query, text=None, limit=10)
        expected = sorted(range(4), key=lambda i: -float(vectors[i] @ query))
        assert _ids([c.record for c in found]) == [_nid(turns[i]) for i in expected]
        for c, i in zip(found, expected):
            assert c.similarity == pytest.approx(float(vectors[i] @ query), abs=1e-4)
            assert c.keyword == 0.0

    def test_limit_applies_to_the_vector_candidates(self, store: Store) -> None:
        turns = [_turn(ANA, f"n{i}") for i in range(12)]
        _write(store, turns, *[unit(1.0, 0.1 * i) for i in range(12)])
        found = store.search(ANA, unit(1.0), text=None, limit=5)
        assert len(found) == 5
        assert _ids([c.record for c in found]) == [_nid(t) for t in turns[:5]]

    def test_keyword_hits_join_with_their_own_cosine(self, store: Store) -> None:
        near = _turn(ANA, "nothing in common")
        lexical = _turn(ANA, "kayaking zucchini")
        _write(store, [near, lexical], unit(1.0), unit(0.0, 1.0))
        query = unit(1.0)
        found = store.search(ANA, query, text="zucchini", limit=1)
        by_id = {c.record.id: c for c in found}
        assert set(by_id) == {_nid(near), _nid(lexical)}
        hit = by_id[_nid(lexical)]
        assert hit.keyword == pytest.approx(1.0)
        assert hit.similarity == pytest.approx(0.0, abs=1e-4)
        assert by_id[_nid(near)].keyword == 0.0
        assert by_id[_nid(near)].similarity == pytest.approx(1.0, abs=1e-4)
        assert found[0].record.id == _nid(near)

    def test_keyword_search_reads_the_words_the_note_left_out(self, store: Store) -> None:
        """The keyword index holds ``search_text``: the note's text and its turn's words
        the note dropped (``Tags.turn_terms``), so a word said but not noted finds it."""
        said = _turn(ANA, "kitchen done", tags=Tags(turn_terms="granite counters"))
        other = _turn(ANA, "nothing in common")
        _write(store, [said, other], unit(0.0, 1.0), unit(1.0))
        found = store.search(ANA, unit(1.0), text="granite", limit=1)
        hit = {c.record.id: c for c in found}[_nid(said)]
        assert hit.keyword and "granite" not in hit.record.text
        assert hit.record.tags.turn_terms == "granite counters"  # kept as written

    def test_keyword_search_follows_the_tags_a_merge_sets(self, store: Store) -> None:
        """A turn merged into a note (a reply kept as the note's evidence) may bring words
        in ``merged_tags.turn_terms``: keyword search finds the note by them from then on."""
        said = _turn(ANA, "ran a charity race", tags=Tags(turn_terms="saturday"))
        other = _turn(ANA, "nothing in common")
        _write(store, [said, other], unit(0.0, 1.0), unit(1.0))
        assert _nid(said) not in {
            c.record.id for c in store.search(ANA, unit(1.0), text="medal", limit=5) if c.keyword
        }
        reply = episode(ANA, "The purple medal is gorgeous", at=later(5))
        merged = Tags(turn_terms="saturday purple medal gorgeous")
        store.write_turns([TurnWrite(reply, None, merge_into=_nid(said), merged_tags=merged)], None)
        found = {c.record.id: c for c in store.search(ANA, unit(1.0), text="medal", limit=5)}
        assert _nid(said) in found and found[_nid(said)].keyword

    def test_keyword_hits_are_marked(self, store: Store) -> None:
        """A record holding the query's words is marked a keyword hit, fully or partly
        matching; one found by its vector alone is not (how well each matches is scored
        by the core, the same for every backend)."""
        turns = [
            _turn(ANA, "quince quince quince jam"),
            _turn(ANA, "quince and a lot of other words about the weather"),
            _turn(ANA, "no match here"),
        ]
        fillers = [_turn(ANA, f"filler number {i} about tea") for i in range(5)]
        _write(
            store,
            turns + fillers,
            unit(0.0, 1.0),
            unit(0.0, 0.0, 1.0),
            unit(1.0),
            *[unit(1.0, 0.5, 0.1 * i) for i in range(5)],
        )
        found = {
            c.record.id: c.keyword
            for c in store.search(ANA, unit(1.0), text="quince jam", limit=10)
        }
        assert [found[_nid(t)] for t in turns] == [True, True, False]

    def test_only_active_records_of_the_asked_kinds_are_candidates(self, store: Store) -> None:
        turns = [_turn(ANA, "active"), _turn(ANA, "invalid"), _turn(ANA, "deleted")]
        _write(store, turns)
        store.update_records([_nid(turns[1])], at=later(1), status=Status.INVALID)
        store.update_records([_nid(turns[2])], at=later(1), status=Status.DELETED)
        summary = note(turns[0].episode, "summary", kind=Kind.SUMMARY, record_id="su_k")
        store.put_records([summary], rows(unit(1.0)))
        every = store.search(ANA, unit(1.0), text="active invalid deleted summary", limit=10)
        assert {c.record.id for c in every} == {_nid(turns[0]), "su_k"}
        notes = store.search(ANA, unit(1.0), text="summary", limit=10, kinds=(Kind.NOTE,))
        assert {c.record.id for c in notes} == {_nid(turns[0])}
        assert {
            c.record.id
            for c in store.search(ANA, unit(1.0), text=None, limit=10, kinds=(Kind.SUMMARY,))
        } == {"su_k"}

    def test_an_empty_store_or_scope_has_no_candidates(self, store: Store) -> None:
        assert store.search(ANA, unit(1.0), text="anything", limit=10) == []
        _write(store, [_turn(BOB, "bob")])
        assert store.search(ANA, unit(1.0), text="bob", limit=10) == []

    def test_nearest_finds_the_closest_active_note_for_each_row(self, store: Store) -> None:
        turns = [_turn(ANA, "east"), _turn(ANA_T1, "north"), _turn(ANA, "gone"), _turn(BOB, "b")]
        _write(store, turns, unit(1.0), unit(0.0, 1.0), unit(1.0, 1.0), unit(0.0, 1.0))
        store.update_records([_nid(turns[2])], at=later(1), status=Status.DELETED)
        summary = note(turns[0].episode, "s", kind=Kind.SUMMARY, record_id="su_n")
        store.put_records([summary], rows(unit(1.0, 1.0)))
        got = store.nearest(ANA, rows(unit(1.0, 0.9), unit(0.1, 1.0)))
        assert [g[0] if g else None for g in got] == [_nid(turns[0]), _nid(turns[1])]
        assert got[0] is not None and got[0][1] == pytest.approx(
            float(unit(1.0) @ unit(1.0, 0.9)), abs=1e-4
        )
        assert store.nearest(ANA_T2, rows(unit(1.0))) == [None]
        assert store.nearest(Scope(user="carol"), rows(unit(1.0), unit(0.0, 1.0))) == [None, None]

    def test_nearest_leaves_out_a_best_less_similar_than_the_bound(self, store: Store) -> None:
        turns = [_turn(ANA, "east"), _turn(ANA, "north")]
        _write(store, turns, unit(1.0), unit(0.0, 1.0))
        queries = rows(unit(1.0, 0.05), unit(1.0, 1.0))  # close to east; between the two
        free = store.nearest(ANA, queries)
        assert free[0] is not None and free[1] is not None and free[1][1] < 0.9
        assert store.nearest(ANA, queries, min_similarity=0.9) == [free[0], None]
        assert store.nearest(ANA, queries, min_similarity=-1.0) == free

    def test_candidates_carry_counters_and_provenance(self, store: Store) -> None:
        turn = _turn(ANA, "counted")
        _write(store, [turn])
        rid = _nid(turn)
        store.books.touch([rid], at=later(2))
        (hit,) = store.search(ANA, unit(1.0), text=None, limit=3)
        assert hit.record.access_count == 1 and hit.record.last_access == later(2)
        assert hit.record.provenance == (turn.episode.id,)
