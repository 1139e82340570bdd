"""Records in the order they happened: by first or by latest occurrence, to the second."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from itertools import groupby
from typing import Any

from richprogress.model.event_order import resource_version_number, whole_second
from richprogress.model.records import EventRecord
from richprogress.model.times import parse_timestamp


def time_order(records: Sequence[EventRecord], *, first: bool = False) -> list[EventRecord]:
    """Records sorted by time, stably (equal or missing times keep their input order).

    ``first=True`` sorts by first occurrence (a timeline's reading order); otherwise by the
    latest occurrence (what happened last). A record with no timestamp takes the time of the
    record before it, so it stays where the input put it.

    Times are compared to the whole second: Kubernetes stamps ``firstTimestamp`` and
    ``lastTimestamp`` to the second but ``eventTime`` (events.k8s.io) to the microsecond, so
    an image pull stamped ``12:00:01`` would otherwise sort before a scheduling stamped
    ``12:00:01.8`` although it came after it. Within one second the input (arrival) order
    decides.
    """
    keyed: list[tuple[datetime | None, int, EventRecord]] = []
    previous: datetime | None = None
    for index, record in enumerate(records):
        stamps = (
            (record.get("first_timestamp"), record.get("timestamp"))
            if first
            else (record.get("timestamp"), record.get("first_timestamp"))
        )
        moment = next((m for m in map(parse_timestamp, stamps) if m is not None), None)
        if moment is not None:
            moment = moment.replace(microsecond=0)
        if moment is None:
            moment = previous
        previous = moment
        keyed.append((moment, index, record))
    # Records before any timestamp sort first, as they came.
    known = [k for k in keyed if k[0] is not None]
    unknown = [k for k in keyed if k[0] is None]
    known.sort(key=lambda k: (k[0], k[1]))
    return [k[2] for k in unknown] + [k[2] for k in known]



_HEX = re.compile(r"[0-9a-f]{1,16}\Z")


def _name_nanos(event: Mapping[str, Any], record: EventRecord) -> int | None:
    """When an event first happened, to the nanosecond, from its name: Kubernetes' event
    recorders (client-go's record and events packages) name an event
    ``<object>.<hex of UnixNano>`` of its first occurrence. None when the name carries no
    time within the event's own first second (a name made another way)."""
    metadata = event.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    suffix = name.rpartition(".")[2] if isinstance(name, str) else ""
    first = parse_timestamp(record.get("first_timestamp") or record.get("timestamp"))
    if not _HEX.match(suffix) or first is None:
        return None
    nanos, second = int(suffix, 16), int(first.replace(microsecond=0).timestamp())
    return nanos if second * 10**9 <= nanos < (second + 1) * 10**9 else None


def _repeated(record: EventRecord) -> bool:
    count = record.get("count")
    return isinstance(count, int) and count > 1


def arrival_order(events: Sequence[Mapping[str, Any]], records: Sequence[EventRecord]) -> list[int]:
    """The indices of ``records`` (one per event of ``events``, e.g. a kubectl list) in
    the order a spawn's page shows them: the order they arrived in, that of their first
    occurrence, not of their latest (which is what a repeated event's ``lastTimestamp``
    and ``resourceVersion`` tell).

    By first time to the second (``time_order``), then by the API server's order of
    writes, the order of arrival as long as no event of that second was written again
    later. A repeat's ``resourceVersion`` is that of its last write, so a second holding
    one is ordered by the first-occurrence times the events' names carry, when all of
    them carry one; else it keeps the write order.
    """
    by_write = sorted(range(len(events)), key=lambda i: resource_version_number(events[i]))
    # time_order returns the records themselves: map them back to their events
    places: dict[int, list[int]] = {}
    for index in reversed(by_write):
        places.setdefault(id(records[index]), []).append(index)
    ordered = [places[id(record)].pop() for record in time_order([records[i] for i in by_write], first=True)]
    result: list[int] = []
    for _, run in groupby(ordered, key=lambda i: whole_second(records[i].get("first_timestamp") or records[i].get("timestamp"))):
        second = list(run)
        if len(second) > 1 and any(_repeated(records[i]) for i in second):
            nanos = [_name_nanos(events[i], records[i]) for i in second]
            if all(n is not None for n in nanos):
                second = [i for _, _, i in sorted(zip(nanos, range(len(second)), second, strict=True))]
        result += second
    return result
