"""Counters: insert-only events, read through a tally kept on the record.

A record's access, used and ignored counts (and the "seen" events a merge writes, which
only move the last access) are events in the ``Counter`` collection, one per count, so
that concurrent writers never lose one. Read as they are, every event a record ever had
would be aggregated on every read of it, and a fact recalled on every turn would make
each recall slower than the last.

So a record also carries a *tally*: the totals and latest times of the events stored up
to a cutoff, and a read aggregates only the events stored after it. When an event was
stored is ``after``: the writer's wall clock at the write, indexed for ranges, and not
the event's own time (``at``, which a caller may set in the past, as a feedback for an
old recall does). A tally is a function of an immutable part of the log: events never
change, and none is deleted when it is tallied. That is what makes it safe without
transactions:

* two processes that tally the same record at once each write a correct tally, for
  their own cutoffs, and whichever is written last is read;
* a record written again in full (``put_records``) loses its tally and is read from all
  of its events again, which is still its count;
* a version of this package that knows no tallies reads every event, which is too.

A tally is made when a counter is written (``update_records``) for the records whose last
read found many events after their cutoff, a few at a time. Its cutoff is the last UTC
midnight at least a day before the wall clock: a write in flight, or a writer whose clock
is behind, must still store its events after it; and records tallied on the same day share
their cutoff, so a read asks for few ranges.

Events stored by an earlier version carry no ``after``, and no range finds them. A first
tally therefore counts a record's events as all of them less those stored after the cutoff,
which takes in the old ones too, and checks that no event was stored while it counted.
Clients of an older version must be stopped, as for any upgrade: their new events would
carry no ``after`` and be missed once a record is tallied.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta, timezone
from functools import partial
from typing import Any

from commonplace.errors import StoreError
from commonplace.stores import COUNTERS

from . import _schema as S
from ._connection import chunks
from ._mapping import Counts, as_utc, object_uuid, parse_date
from ._tenants import Tenants
from ._url import Settings

#: The event a merge writes: it moves the last access without counting one.
SEEN = "seen"
#: The event fields: the counters ``update_records`` writes, and ``SEEN``.
FIELDS = (*COUNTERS, SEEN)
#: The fields whose events move a record's last access.
_LAST_ACCESS = ("access", "used", SEEN)
#: A record read with at least this many events after its tally's cutoff gets a new tally.
TALLY_AFTER = 128
#: How far behind the wall clock a tally's cutoff stays, at least.
TALLY_MARGIN = timedelta(days=1)
_DUE_KEPT = 1_000  # records waiting for a tally, at most (the rest wait for their next read)
#: Tallies made by one counter write, at most (a long listing can find many records due:
#: the rest wait for the next writes, so that none of them waits long).
TALLIES_PER_WRITE = 16

Totals = dict[str, tuple[int, datetime | None]]  # field -> (count, latest time)


@dataclass(frozen=True)
class Tally:
    """A record's event totals (count and latest ``at`` per field) up to ``to``: every event
    stored at or before it."""

    to: datetime
    totals: Mapping[str, tuple[int, datetime | None]] = field(default_factory=dict)

    def to_json(self) -> str:
        body: dict[str, Any] = {"to": self.to.isoformat()}
        for name, (n, at) in self.totals.items():
            body[name] = [n, None if at is None else at.isoformat()]
        return json.dumps(body, sort_keys=True)

    @staticmethod
    def from_json(text: Any) -> Tally | None:
        """The tally stored on a record: None when there is none, or when it cannot be
        read (the record is then counted from all of its events, which is still right)."""
        if not text:
            return None
        try:
            body = json.loads(text)
            to = parse_date(body.pop("to"))
            totals = {f: (int(v[0]), parse_date(v[1])) for f, v in body.items() if f in FIELDS}
        except (ValueError, TypeError, KeyError, AttributeError, IndexError):
            return None
        return None if to is None else Tally(to, totals)


def tally_of(row: Mapping[str, Any] | None) -> Tally | None:
    return None if row is None else Tally.from_json(row.get("tally"))


def cutoff(now: datetime) -> datetime:
    """The cutoff of a tally made at ``now``: the last UTC midnight at least
    ``TALLY_MARGIN`` before it."""
    day = (as_utc(now) - TALLY_MARGIN).date()
    return datetime.combine(day, time.min, tzinfo=timezone.utc)


class Counters(Tenants):
    """Reading the counter events of records (with their tallies), and tallying them."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        # records whose last read found many events after their cutoff, with their tally
        # then (see _tally_due)
        self._due: dict[str, Tally | None] = {}
        self._due_lock = threading.Lock()

    def _counts(
        self, ids: Sequence[str], tallies: Mapping[str, Tally | None] | None = None
    ) -> dict[str, Counts]:
        """The counts of these records: each one's tally (from ``tallies``; none for an id
        not in it) plus its events after the tally's cutoff, one aggregate per 300 ids."""
        tallies = tallies or {}
        after: dict[str, Totals] = defaultdict(dict)
        for chunk in chunks(list(ids), 300):
            for rid, totals in self._aggregate(_after_cutoffs(chunk, tallies), 4 * len(chunk)):
                after[rid].update(totals)
        out: dict[str, Counts] = {}
        due: dict[str, Tally | None] = {}
        for rid in ids:
            tally = tallies.get(rid)
            events = after.get(rid, {})
            if sum(n for n, _ in events.values()) >= TALLY_AFTER:
                due[rid] = tally
            totals = _added(tally.totals if tally is not None else {}, events)
            if totals:
                out[rid] = _as_counts(totals)
        if due:
            with self._due_lock:
                if len(self._due) < _DUE_KEPT:
                    self._due.update(due)
        return out

    def _stored_at(self) -> datetime:
        """When an event written now is stored: this machine's wall clock, in UTC (not the
        caller's clock, which may be a test's or replay history)."""
        return datetime.now(timezone.utc)

    def _aggregate(self, where: Any, groups: int) -> list[tuple[str, Totals]]:
        """Per record, the count and latest time of each field among the events ``where``
        selects."""
        from weaviate.classes.aggregate import GroupByAggregate
        from weaviate.classes.query import Metrics

        result: Any = self._call(
            partial(
                self._col(S.COUNTER).aggregate.over_all,
                filters=where,
                group_by=GroupByAggregate(prop="key", limit=groups),
                total_count=True,
                return_metrics=Metrics("at").date_(maximum=True),
            ),
            "read counters",
        )
        out: list[tuple[str, Totals]] = []
        for group in result.groups:
            name, rid = str(group.grouped_by.value).split(":", 1)
            metric = group.properties.get("at")
            latest = parse_date(getattr(metric, "maximum", None))
            out.append((rid, {name: (int(group.total_count or 0), latest)}))
        return out

    def _tally_due(self) -> None:
        """A new tally for each record whose last read found many events after its cutoff:
        its old tally plus its events up to the new cutoff (see the module's docstring)."""
        with self._due_lock:
            due = [(rid, self._due.pop(rid)) for rid in list(self._due)[:TALLIES_PER_WRITE]]
        for rid, old in due:
            try:
                self._tally(rid, old)
            except StoreError:
                # the counts are right without a tally (it only bounds their reading), and
                # the counter write that called this has landed: failing it now would have
                # it sent again and counted twice. The next read finds the record due again.
                continue

    def _tally(self, rid: str, old: Tally | None) -> None:
        to = cutoff(self._stored_at())
        if old is not None and to <= old.to:
            return
        if old is None:
            events = self._first_totals(rid, to)
            if events is None:
                return  # an event was stored while it was counted: a later write tallies it
        else:
            events = self._events_between(rid, old.to, to)
        location = self._locate([rid]).get(rid)
        if location is None or location[0] not in S.RECORD_SPECS:
            return  # deleted since it was read
        kind, tenant = location
        tally = Tally(to, _added(old.totals if old is not None else {}, events))
        self._patch(
            S.RECORD_SPECS[kind],
            tenant,
            object_uuid("record", rid),
            {"tally": tally.to_json()},
            "write a record's counter tally",
        )

    def _first_totals(self, rid: str, to: datetime) -> Totals | None:
        """The totals a first tally of ``rid`` up to ``to`` holds: its events stored by then,
        and those stored by an earlier version, which carry no ``after``; None when an event
        was stored while they were counted.

        No filter selects an event without ``after``, so they are counted as every event
        less those stored after ``to``. An event stored now is stored after ``to``, so an
        unchanged count of those, before and after, shows that none came in between. An old
        event's time cannot be told apart from the others', so a record that has one takes
        the latest time of all its events: once the events after the cutoff are added at a
        read, that is the latest time all the same.
        """
        from weaviate.classes.query import Filter

        mine = Filter.by_property("record_id").equal(rid)
        later = mine & Filter.by_property(S.AFTER).greater_than(to)
        since = self._totals(later)
        every = self._totals(mine)
        stamped = self._events_between(rid, None, to)
        if _number(self._totals(later)) != _number(since):
            return None
        if _number(every) == _number(since) + _number(stamped):
            return stamped  # no event of an earlier version: exactly the events up to ``to``
        return {
            name: (n - since.get(name, (0, None))[0], at)
            for name, (n, at) in every.items()
            if n > since.get(name, (0, None))[0]
        }

    def _totals(self, where: Any) -> Totals:
        totals: Totals = {}
        for _, found in self._aggregate(where, len(FIELDS)):
            totals.update(found)
        return totals

    def _events_between(self, rid: str, start: datetime | None, to: datetime) -> Totals:
        """The totals of ``rid``'s events stored after ``start`` (or ever) up to ``to``."""
        from weaviate.classes.query import Filter

        stored = Filter.by_property(S.AFTER)
        where = Filter.by_property("record_id").equal(rid) & stored.less_or_equal(to)
        if start is not None:
            where = where & stored.greater_than(start)
        return self._totals(where)


def _number(totals: Totals) -> int:
    return sum(n for n, _ in totals.values())


def _after_cutoffs(ids: Sequence[str], tallies: Mapping[str, Tally | None]) -> Any:
    """The events of ``ids`` after each one's cutoff: one clause for the ids without a
    tally, and one per cutoff (a day each) for the others."""
    from weaviate.classes.query import Filter

    by_cutoff: dict[datetime | None, list[str]] = defaultdict(list)
    for rid in ids:
        tally = tallies.get(rid)
        by_cutoff[None if tally is None else tally.to].append(rid)
    clauses = []
    for to, group in by_cutoff.items():
        # a filter on the ids, not on their four keys each: a quarter of the values to
        # look up, and as many groups (every event has both)
        clause = Filter.by_property("record_id").contains_any(group)
        if to is not None:
            clause = clause & Filter.by_property(S.AFTER).greater_than(to)
        clauses.append(clause)
    return clauses[0] if len(clauses) == 1 else Filter.any_of(clauses)


def _added(base: Mapping[str, tuple[int, datetime | None]], more: Totals) -> Totals:
    out: Totals = dict(base)
    for name, (n, at) in more.items():
        have, last = out.get(name, (0, None))
        out[name] = (have + n, at if last is None or (at is not None and at > last) else last)
    return out


def _as_counts(totals: Totals) -> Counts:
    lasts = [at for f, (_, at) in totals.items() if f in _LAST_ACCESS and at is not None]
    return Counts(
        access=totals.get("access", (0, None))[0],
        used=totals.get("used", (0, None))[0],
        ignored=totals.get("ignored", (0, None))[0],
        last=max(lasts) if lasts else None,
    )
