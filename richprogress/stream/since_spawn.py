"""The since-spawn clock: when a spawn was requested, and each record's time from then.

The timeline's clock column (``+M:SS``) reads ``since_spawn``, seconds since the spawn
request. ``spawn_requested_at`` says when that was; ``SinceSpawnClock`` gives each record
its reading so that the column never runs back. No JupyterHub or Kubernetes import here.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from typing import Any

from richprogress.model.records import EventRecord
from richprogress.model.times import parse_timestamp


def spawn_requested_at(started: Any, start_timeout: float, now: datetime) -> datetime:
    """When a spawn was requested: ``started`` (JupyterHub's ``orm_spawner.started``, set
    before the pre-spawn hooks run) when it can be this spawn's, else ``now``.

    A ``started`` older than the start timeout plus a minute belongs to an earlier spawn.
    """
    if isinstance(started, datetime):
        if started.tzinfo is None:
            started = started.replace(tzinfo=timezone.utc)
        limit = (start_timeout or 60) + 60
        if timedelta(0) <= now - started <= timedelta(seconds=limit):
            return started
    return now


class SinceSpawnClock:
    """The ``since_spawn`` readings of one timeline's records, never running back.

    Plain float seconds, not datetimes: this runs once per event shown.
    """

    __slots__ = ("last", "_stamp")

    def __init__(self) -> None:
        #: the largest reading given so far
        self.last = 0.0
        #: the last timestamp parsed: (text, POSIX seconds or None, whole-second resolution)
        self._stamp: tuple[Any, float | None, bool] = (None, None, False)

    def stamp(self, record: EventRecord, started: float) -> None:
        """Set ``record["since_spawn"]`` (``started``: the request, POSIX seconds).

        Kubernetes ``lastTimestamp`` has one-second resolution, so an event stamped
        ``12:00:01`` happened in ``[12:00:01, 12:00:02)``: we take the time it reached us,
        kept inside that window (a late arrival or a skewed cluster clock moves it at most
        to the window's edge). Sub-second timestamps (``eventTime``) are taken as they are.
        A reading the record already has is kept, unless it would run the clock back.
        """
        since = record.get("since_spawn")
        last = self.last
        if since is None:
            value = record.get("timestamp")
            # a spawn's events mostly share a few one-second stamps: parse each once
            cached = self._stamp
            if value is not None and value == cached[0]:
                _value, stamp, whole = cached
            else:
                parsed = parse_timestamp(value)
                stamp = parsed.timestamp() if parsed is not None else None
                whole = parsed is not None and parsed.microsecond == 0
                self._stamp = (value, stamp, whole)
            if stamp is None:
                since = time.time() - started
            else:
                since = stamp - started
                if whole:
                    # inside the stamp's second, as close to when it reached us as that allows
                    since = min(max(time.time() - started, since), since + 1.0)
            if since < last:
                since = last
            # milliseconds are enough for a clock shown as +M:SS (and cheaper than round())
            since = int(since * 1000.0 + 0.5) / 1000.0 if since > 0.0 else 0.0
        else:
            since = float(since or 0.0)
            if since < last:
                since = last
        record["since_spawn"] = since

    def passed(self, since: float) -> None:
        """A record with reading ``since`` is in the timeline: later ones start from it."""
        if since > self.last:
            self.last = since
