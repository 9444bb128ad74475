"""The embedder pin (required, ``"records"``) and re-embedding (optional, ``"reembed"``).

``"records"`` covers the pin: it round-trips, survives reopening and refuses another model
unless replaced. ``"reembed"``: moving every vector to another model with
``reembed_pending`` / ``reembed_stage`` / ``reembed_finish``, resumable, the old model live
until the end. A backend without it cannot serve ``commonplace reembed``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from ..._records import Kind, Status
from ...errors import EmbedderMismatchError, InvalidInputError, StoreError
from ...stores import Backend, EmbedderPin, ReembedState, Store, WriteBatch
from .._fixtures import DIM, PIN, later, note, rows, unit
from ._core import ANA, ANA_T1, BOB, CapabilityGroup, _nid, _turn, _write

# -- the embedder pin ---------------------------------------------------------------------------


class TestPin(CapabilityGroup):
    capability = "records"

    def test_a_new_store_has_no_pin(self, backend: Backend) -> None:
        assert backend.read_pin() is None

    def test_the_pin_round_trips_and_survives_reopening(
        self, backend: Backend, backend_reopen: Callable[[Backend | Store], Store]
    ) -> None:
        backend.apply(WriteBatch(pin=PIN))
        assert backend.read_pin() == PIN
        assert backend_reopen(backend).embedding.read_pin() == PIN

    def test_writing_the_same_pin_again_changes_nothing(self, backend: Backend) -> None:
        backend.apply(WriteBatch(pin=PIN))
        backend.apply(WriteBatch(pin=PIN))
        assert backend.read_pin() == PIN

    def test_another_model_is_refused_unless_replacing(self, backend: Backend) -> None:
        backend.apply(WriteBatch(pin=PIN))
        other = EmbedderPin("another-model-v2", DIM * 2)
        with pytest.raises(EmbedderMismatchError):
            backend.apply(WriteBatch(pin=other))
        assert backend.read_pin() == PIN
        backend.apply(WriteBatch(pin=other, replace_pin=True))
        assert backend.read_pin() == other


# -- re-embedding -------------------------------------------------------------------------------

NEW = EmbedderPin("commonplace-conformance-v2", DIM * 2)  # another model, another dimension


def _new_vector(i: int) -> np.ndarray:
    """Record ``i``'s vector under the new model: one axis each, beyond the old ones."""
    return unit(*([0.0] * ((DIM + i) % NEW.dim) + [1.0]), dim=NEW.dim)


def _mixed_store(store: Store) -> list[str]:
    """Three notes in two scopes (one soft-deleted), a summary and a procedure."""
    turns = [_turn(ANA, "tea"), _turn(ANA_T1, "coffee"), _turn(BOB, "juice")]
    _write(store, turns)
    summary = note(turns[0].episode, "About tea.", kind=Kind.SUMMARY, record_id="su_tea")
    procedure = note(turns[1].episode, "Asks for coffee.", kind=Kind.PROCEDURE, record_id="pr_c")
    store.put_records([summary, procedure], rows(unit(0.0, 1.0), unit(0.0, 0.0, 1.0)))
    store.update_records([_nid(turns[2])], at=later(1), status=Status.DELETED)
    return sorted([*map(_nid, turns), "su_tea", "pr_c"])


def _stage_all(store: Store, target: EmbedderPin, order: dict[str, int]) -> list[str]:
    staged: list[str] = []
    while records := store.embedding.reembed_pending(target, limit=2):
        ids = [r.id for r in records]
        store.embedding.reembed_stage(target, ids, rows(*(_new_vector(order[i]) for i in ids)))
        staged += ids
    return staged


class TestReembed(CapabilityGroup):
    capability = "reembed"

    def test_pending_lists_every_record_with_a_vector_whatever_its_kind_and_status(
        self, store: Store
    ) -> None:
        ids = _mixed_store(store)
        assert store.embedding.reembed_state() is None
        assert sorted(r.id for r in store.embedding.reembed_pending(NEW, limit=100)) == ids
        assert store.embedding.reembed_state() == ReembedState(NEW, staged=0, pending=len(ids))
        assert len(store.embedding.reembed_pending(NEW, limit=2)) == 2

    def test_staged_vectors_wait_for_finish_then_replace_the_live_ones(
        self, store: Store, backend_reopen: Callable[[Backend | Store], Store]
    ) -> None:
        ids = _mixed_store(store)
        order = {rid: i for i, rid in enumerate(ids)}
        first = store.embedding.reembed_pending(NEW, limit=1)[0]
        store.embedding.reembed_stage(NEW, [first.id], rows(_new_vector(order[first.id])))
        assert store.embedding.reembed_state() == ReembedState(NEW, staged=1, pending=len(ids) - 1)
        # the progress is in the store, and until the end the store keeps its old model
        assert backend_reopen(store).embedding.reembed_state() == ReembedState(NEW, 1, len(ids) - 1)
        assert store.embedding.read_pin() == PIN
        found = store.search(ANA, unit(0.0, 1.0), text=None, limit=1)
        assert [c.record.id for c in found] == ["su_tea"]
        assert store.embedding.reembed_finish(NEW) is None  # not everything is staged
        assert store.embedding.read_pin() == PIN
        assert sorted([first.id, *_stage_all(store, NEW, order)]) == ids
        assert store.embedding.reembed_finish(NEW) == len(ids)
        assert store.embedding.read_pin() == NEW and store.embedding.reembed_state() is None
        assert backend_reopen(store).embedding.read_pin() == NEW
        # the new vectors are live: searched, returned, and new writes take the new dimension
        for rid in ("su_tea", "pr_c"):
            hit = store.search(ANA, _new_vector(order[rid]), text=None, limit=1)
            assert [c.record.id for c in hit] == [rid] and hit[0].similarity > 0.99
        np.testing.assert_allclose(
            store.get_vectors(ids), rows(*(_new_vector(i) for i in range(len(ids)))), atol=1e-6
        )
        later_turn = _turn(ANA, "water")
        _write(store, [later_turn], _new_vector(9))
        hit = store.search(ANA, _new_vector(9), text=None, limit=1)
        assert [c.record.id for c in hit] == [_nid(later_turn)]

    def test_records_written_replaced_or_deleted_meanwhile_are_accounted_for(
        self, store: Store
    ) -> None:
        ids = _mixed_store(store)
        order = {rid: i for i, rid in enumerate(ids)}
        _stage_all(store, NEW, order)
        late = _turn(ANA, "lemonade")  # written with the old model while re-embedding
        _write(store, [late], unit(0.5, 0.5))
        order[_nid(late)] = len(order)
        summary = store.get_record("su_tea")
        assert summary is not None
        store.put_records(
            [replace(summary, text="About tea, again.")], rows(unit(0.0, 1.0)), replace=True
        )
        store.erasure.delete_records(["pr_c"])
        assert store.embedding.reembed_finish(NEW) is None
        assert sorted(r.id for r in store.embedding.reembed_pending(NEW, limit=100)) == sorted(
            [_nid(late), "su_tea"]
        )
        _stage_all(store, NEW, order)
        assert store.embedding.reembed_finish(NEW) == len(ids)  # one more note, one procedure less
        assert store.embedding.reembed_state() is None

    def test_another_target_abandons_the_unfinished_one(self, store: Store) -> None:
        ids = _mixed_store(store)
        _stage_all(store, NEW, {rid: i for i, rid in enumerate(ids)})
        other = EmbedderPin("commonplace-conformance-v3", DIM)
        assert len(store.embedding.reembed_pending(other, limit=100)) == len(ids)
        assert store.embedding.reembed_state() == ReembedState(other, staged=0, pending=len(ids))
        with pytest.raises(StoreError, match="in progress"):
            store.embedding.reembed_stage(NEW, ids[:1], rows(_new_vector(0)))
        with pytest.raises(StoreError, match="in progress"):
            store.embedding.reembed_finish(NEW)
        assert store.embedding.read_pin() == PIN

    def test_vectors_of_the_wrong_shape_are_refused(self, store: Store) -> None:
        ids = _mixed_store(store)
        store.embedding.reembed_pending(NEW, limit=1)
        with pytest.raises(InvalidInputError):
            store.embedding.reembed_stage(NEW, ids[:1], rows(unit(1.0)))  # the old dimension
        with pytest.raises(InvalidInputError):
            store.embedding.reembed_stage(NEW, ids[:2], rows(_new_vector(0)))  # one row for two ids
        assert store.embedding.reembed_state() == ReembedState(NEW, staged=0, pending=len(ids))

    def test_a_store_without_vectors_is_just_pinned(self, backend: Backend) -> None:
        empty = Store(backend)
        assert empty.embedding.reembed_pending(NEW, limit=10) == []
        assert empty.embedding.reembed_finish(NEW) == 0
        assert empty.embedding.read_pin() == NEW and empty.embedding.reembed_state() is None
