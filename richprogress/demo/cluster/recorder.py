"""How real event recorders write events: throttled, merged, deduplicated, late, expiring.

On by default (``SimulatedCluster(real_event_rates=True)``; ``--every-event`` or
``real_event_rates=False`` turns it off): the simulated kubelet and scheduler hand each event
to one of these instead of writing every occurrence, so the pages meet the events a real
cluster writes.

``LegacyRecorder`` is client-go's ``tools/record`` (v0.31, ``tools/record/events_cache.go``,
``EventCorrelator``), used by the kubelet and most controllers for core/v1 events. In order:

1. aggregate: events of one source, object, type and reason with more than 10 different
   messages in 10 minutes become one event, "(combined from similar events): <message>"
   (``EventAggregator``, ``defaultAggregateMaxEvents``, ``defaultAggregateIntervalInSeconds``);
2. deduplicate: an event equal to one already written (source, object, fieldPath, type,
   reason, message) bumps that one's ``count`` and ``lastTimestamp`` (``eventLogger``);
3. throttle: each source and object gets a bucket of 25 writes refilled at one per 5
   minutes; an event with no token is not written at all, though step 2 counted it, so the
   next written count jumps (``EventSourceObjectSpamFilter``, ``defaultSpamBurst``,
   ``defaultSpamQPS``).

``SeriesRecorder`` is client-go's ``tools/events`` (v0.31, ``tools/events/event_broadcaster.go``),
used by the scheduler for events.k8s.io events: the first occurrence is written; the second
writes ``series.count`` 2 at once; later ones only count, written when the 30-minute refresh
comes or when the series has been quiet for 6 minutes (checked every 6 minutes), always
keeping the first occurrence's message. A single event is forgotten 6 minutes on, so a
later occurrence is a new event.

The API server deletes an event one hour after its last write (``--event-ttl``, default 1h):
``expire`` does that. The recorders count in simulated seconds (the kubelet's clock, which
runs ``speed`` times faster than the wall); timestamps are the wall clock's, as everywhere in
the simulated cluster.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .store import NotFound, Obj, ObjectStore, utc_now_micros, utc_now_seconds

SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL_SECONDS = 600.0
COMBINED_PREFIX = "(combined from similar events): "
SERIES_FINISH_SECONDS = 6 * 60.0
SERIES_REFRESH_SECONDS = 30 * 60.0
EVENT_TTL_SECONDS = 3600.0


def _source(event: Obj) -> list[str]:
    source = event.get("source") or {}
    involved = event.get("involvedObject") or {}
    return [
        str(source.get("component", "")),
        str(source.get("host", "")),
        *(str(involved.get(k, "")) for k in ("kind", "namespace", "name", "uid", "apiVersion")),
    ]


def spam_key(event: Obj) -> str:
    """``getSpamKey``: source and involved object."""
    return "\x00".join(_source(event))


def aggregate_key(event: Obj) -> str:
    """``EventAggregatorByReasonFunc``'s key: source, object, type, reason, reporter."""
    parts = _source(event) + [str(event.get(k, "")) for k in ("type", "reason", "reportingComponent", "reportingInstance")]
    return "\x00".join(parts)


def event_key(event: Obj) -> str:
    """``getEventKey``: source, object with fieldPath, type, reason and message."""
    involved = event.get("involvedObject") or {}
    parts = _source(event) + [str(involved.get("fieldPath", ""))]
    parts += [str(event.get(k, "")) for k in ("type", "reason", "message")]
    return "\x00".join(parts)


@dataclass
class _Bucket:
    tokens: float
    last: float


@dataclass
class _Aggregate:
    messages: set[str] = field(default_factory=set)
    last: float = 0.0


@dataclass
class _Seen:
    name: str
    count: int
    first_timestamp: str | None


class LegacyRecorder:
    """client-go ``tools/record``'s correlator, writing core/v1 events to the store."""

    def __init__(self, store: ObjectStore, written: dict[tuple[str, str], float]) -> None:
        self.store = store
        self._buckets: dict[str, _Bucket] = {}
        self._aggregates: dict[str, _Aggregate] = {}
        self._seen: dict[str, _Seen] = {}
        self._written = written  # (namespace, name) -> simulated time of the last write

    def _aggregate(self, event: Obj, now: float) -> tuple[Obj, str]:
        key = aggregate_key(event)
        record = self._aggregates.get(key)
        if record is None or now - record.last > AGGREGATE_INTERVAL_SECONDS:
            record = self._aggregates[key] = _Aggregate()
        record.last = now
        record.messages.add(str(event.get("message", "")))
        if len(record.messages) < AGGREGATE_MAX_EVENTS:
            return event, event_key(event)
        record.messages.pop()  # never grows past the maximum
        combined = copy.deepcopy(event)
        combined["message"] = COMBINED_PREFIX + str(event.get("message", ""))
        return combined, key

    def _allowed(self, event: Obj, now: float) -> bool:
        key = spam_key(event)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(float(SPAM_BURST), now)
        bucket.tokens = min(float(SPAM_BURST), bucket.tokens + (now - bucket.last) * SPAM_QPS)
        bucket.last = now
        if bucket.tokens < 1.0:
            return False
        bucket.tokens -= 1.0
        return True

    def record(self, event: Obj, now: float) -> Obj | None:
        """Write ``event`` (core/v1, as built) the way the kubelet's recorder would; the
        stored event, or None when it was throttled."""
        event, key = self._aggregate(event, now)
        seen = self._seen.get(key)
        stamp = utc_now_seconds()
        namespace = str(event["metadata"]["namespace"])
        if seen is not None:
            seen.count += 1
        else:
            seen = self._seen[key] = _Seen(str(event["metadata"]["name"]), 1, stamp)
        if not self._allowed(event, now):
            return None
        self._written[(namespace, seen.name)] = now
        message, count, first = event.get("message"), seen.count, seen.first_timestamp

        def bump(stored: Obj) -> None:
            stored.update({"count": count, "lastTimestamp": stamp, "message": message})

        if self.store.find("events", namespace, seen.name) is not None:
            return self.store.update("events", namespace, seen.name, bump)
        # first write, or the old one expired: the recorder creates it again, count kept
        new = copy.deepcopy(event)
        new["metadata"]["name"] = seen.name
        new.update({"count": count, "firstTimestamp": first, "lastTimestamp": stamp})
        return self.store.create("events", new)


@dataclass
class _Series:
    event: Obj  # the first occurrence, as written
    count: int = 1
    last_observed: str = ""
    last_seen: float = 0.0
    first_seen: float = 0.0
    dirty: bool = False


class SeriesRecorder:
    """client-go ``tools/events``' broadcaster, writing events.k8s.io-style events."""

    def __init__(self, store: ObjectStore, written: dict[tuple[str, str], float]) -> None:
        self.store = store
        self._cache: dict[tuple[Any, ...], _Series] = {}
        self._written = written

    @staticmethod
    def key(event: Obj) -> tuple[Any, ...]:
        """``getKey``: action, reason, reporting controller, regarding and related (not the message)."""
        def ref(value: Any) -> tuple[Any, ...]:
            return tuple(sorted((value or {}).items()))

        return (
            event.get("action"), event.get("reason"), event.get("reportingComponent"),
            ref(event.get("involvedObject")), ref(event.get("related")),
        )

    def record(self, event: Obj, now: float) -> Obj | None:
        key = self.key(event)
        series = self._cache.get(key)
        if series is None:
            created = self.store.create("events", event)
            self._written[(created["metadata"]["namespace"], created["metadata"]["name"])] = now
            self._cache[key] = _Series(created, first_seen=now, last_seen=now)
            return created
        series.count += 1
        series.last_seen = now
        series.last_observed = utc_now_micros()
        if series.count == 2:  # the second occurrence is written at once
            return self._write(series, now)
        series.dirty = True
        return None

    def _write(self, series: _Series, now: float) -> Obj | None:
        meta = series.event["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        self._written[(namespace, name)] = now
        value = {"count": series.count, "lastObservedTime": series.last_observed}
        series.dirty = False
        try:
            return self.store.update("events", namespace, name, lambda e: e.update({"series": value}))
        except NotFound:  # expired meanwhile: written anew, with its first message
            again = copy.deepcopy(series.event)
            again["series"] = value
            again["metadata"] = {"name": name, "namespace": namespace}
            return self.store.create("events", again)

    def finish(self, now: float) -> None:
        """Every 6 minutes: end quiet series (final count written) and forget old singles."""
        for key, series in list(self._cache.items()):
            if series.count > 1:
                if now - series.last_seen >= SERIES_FINISH_SECONDS:
                    if series.dirty:
                        self._write(series, now)
                    del self._cache[key]
            elif now - series.first_seen >= SERIES_FINISH_SECONDS:
                del self._cache[key]

    def refresh(self, now: float) -> None:
        """Every 30 minutes: write every running series' count."""
        for series in self._cache.values():
            if series.count > 1 and series.dirty:
                self._write(series, now)


def expire(store: ObjectStore, written: dict[tuple[str, str], float], now: float) -> int:
    """Delete events whose last write is an hour old (``--event-ttl``); how many went."""
    gone = 0
    for (namespace, name), at in list(written.items()):
        if now - at >= EVENT_TTL_SECONDS:
            del written[(namespace, name)]
            if store.find("events", namespace, name) is not None:
                store.delete("events", namespace, name)
                gone += 1
    return gone
