"""Bookkeeping (required, ``"bookkeeping"``) and links (optional, ``"links"``).

``"bookkeeping"``: the audit log, recall logs and their feedback, conflicts and profile
cards. Every backend has it (the scope tests use it too).

``"links"``: links between records, undirected, capped, reinforced, decayed and pruned. A
backend without it may keep no links (``reinforce_links`` stores nothing, ``links_of``
returns ``[]``): recall then just does not follow links.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from ...stores import AuditEntry, Card, Conflict, RecallLog, Store
from .._fixtures import later
from ._core import ANA, ANA_T1, BOB, CapabilityGroup

# -- links --------------------------------------------------------------------------------------


class TestLinks(CapabilityGroup):
    capability = "links"

    def test_links_are_undirected_capped_and_reinforced(self, store: Store) -> None:
        store.links.reinforce_links(
            [("b", "a", "entity"), ("a", "a", "self")], delta=0.4, at=later(1)
        )
        store.links.reinforce_links([("a", "b", "entity")], delta=0.4, at=later(2))
        store.links.reinforce_links(
            [("a", "c", "session"), ("a", "c", "session")], delta=0.3, at=later(3)
        )
        links = {
            (link.a, link.b, link.kind): link
            for link in store.links.links_of(["a"], min_weight=0.0)
        }
        assert set(links) == {("a", "b", "entity"), ("a", "c", "session")}
        assert links[("a", "b", "entity")].weight == pytest.approx(0.8)
        assert links[("a", "b", "entity")].updated_at == later(2)
        assert links[("a", "c", "session")].weight == pytest.approx(0.6)
        store.links.reinforce_links([("a", "b", "entity")], delta=0.5, at=later(4))
        assert [link.weight for link in store.links.links_of(["b"], min_weight=0.0)] == [
            pytest.approx(1.0)
        ]
        assert [link.kind for link in store.links.links_of(["a"], min_weight=0.7)] == ["entity"]

    def test_links_decay_and_weak_ones_are_pruned(self, store: Store) -> None:
        store.links.reinforce_links([("a", "b", "entity")], delta=0.8, at=later(1))
        store.links.reinforce_links([("c", "d", "entity")], delta=0.2, at=later(1))
        store.links.decay_links(factor=0.5, at=later(2))
        weights = {link.a: link.weight for link in store.links.links_of(["a", "c"], min_weight=0.0)}
        assert weights == {"a": pytest.approx(0.4), "c": pytest.approx(0.1)}
        assert store.links.prune_links(min_weight=0.15) == 1
        assert [link.a for link in store.links.links_of(["a", "c"], min_weight=0.0)] == ["a"]


# -- bookkeeping --------------------------------------------------------------------------------


class TestBookkeeping(CapabilityGroup):
    capability = "bookkeeping"

    def test_the_audit_log_is_newest_first(self, store: Store) -> None:
        entries = [
            AuditEntry(later(i), ANA, "demote", "tier.demote", f"nt_{i}", f"detail {i}")
            for i in range(5)
        ]
        store.books.append_audit(entries[:2])
        store.books.append_audit(entries[2:])
        assert store.books.audit_log(ANA, limit=3) == list(reversed(entries))[:3]
        assert store.books.audit_log(BOB, limit=3) == []

    def test_recall_logs_take_feedback_once(self, store: Store) -> None:
        log = RecallLog("rc_1", ANA, later(1), ("nt_a", "nt_b"), shown_ids=("nt_a", "nt_b", "nt_c"))
        store.books.log_recall(log)
        assert store.books.get_recall("rc_1") == log
        assert store.books.mark_recall_feedback("rc_1", at=later(2)) is True
        assert store.books.mark_recall_feedback("rc_1", at=later(3)) is False
        assert store.books.get_recall("rc_1") == replace(log, feedback_at=later(2))
        assert store.books.mark_recall_feedback("rc_unknown", at=later(3)) is False
        assert store.books.get_recall("rc_unknown") is None

    def test_conflicts_are_added_once_listed_and_resolved(self, store: Store) -> None:
        first = Conflict("cf_1", ANA, "Tom", "two Toms", ("nt_a", "nt_b"), later(1))
        second = Conflict("cf_2", ANA_T1, "Rita", "two Ritas", ("nt_c",), later(2))
        store.books.add_conflict(first)
        store.books.add_conflict(replace(first, reason="changed"))  # already there: ignored
        store.books.add_conflict(second)
        assert store.books.conflicts(ANA, open_only=True) == [first, second]
        store.books.resolve_conflict("cf_1", resolution="separate", at=later(5))
        assert store.books.conflicts(ANA, open_only=True) == [second]
        assert store.books.conflicts(ANA, open_only=False) == [
            replace(first, resolved_at=later(5), resolution="separate"),
            second,
        ]

    def test_cards_are_replaced_and_bound_to_their_exact_scope(self, store: Store) -> None:
        card = Card(ANA, "profile", "Ana lives in Porto.", later(1), {"rules": ["city"]})
        store.books.put_card(card)
        assert store.books.get_card(ANA, "profile") == card
        newer = replace(card, text="Ana lives in Braga.", updated_at=later(2))
        store.books.put_card(newer)
        assert store.books.get_card(ANA, "profile") == newer
        assert store.books.get_card(ANA_T1, "profile") is None
        assert store.books.get_card(ANA, "summary") is None
