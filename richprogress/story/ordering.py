"""Records in the order they happened: by first or by latest occurrence, to the second."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

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

