"""The simulated cluster's event recorders (``real_event_rates=True``) against client-go's:
what a real cluster writes is fewer, later and merged events than every occurrence. Times are
simulated seconds, given explicitly."""

from __future__ import annotations

import aiohttp

from richprogress.demo.cluster.events import build_event
from richprogress.demo.cluster.recorder import LegacyRecorder, SeriesRecorder, expire
from richprogress.demo.cluster.store import ObjectStore
from tests.helpers.cluster import pod_body, running_cluster, wait_until

POD = {"kind": "Pod", "namespace": "default", "name": "jupyter-r", "uid": "u-1", "apiVersion": "v1"}


def kubelet_event(reason="BackOff", message="Back-off pulling image \"x\"", **kw):
    return build_event(namespace="default", involved=dict(POD), reason=reason, message=message,
                       component="kubelet", instance="node-1", **kw)


def scheduler_event(message="0/3 nodes are available: 3 Insufficient memory."):
    return build_event(namespace="default", involved=dict(POD), reason="FailedScheduling", message=message,
                       event_type="Warning", component="default-scheduler", api="events.k8s.io", action="Scheduling")


def recorders():
    store, written = ObjectStore(), {}
    return store, written, LegacyRecorder(store, written), SeriesRecorder(store, written)


def test_a_source_and_object_get_25_writes_then_one_per_five_minutes():
    """client-go v0.31 tools/record/events_cache.go: EventSourceObjectSpamFilter, a token
    bucket per source and object (defaultSpamBurst 25, defaultSpamQPS 1/300)."""
    store, _, legacy, _ = recorders()
    written = [legacy.record(kubelet_event(reason=f"R{i}", message="m"), now=0.0) for i in range(30)]
    assert sum(w is not None for w in written) == 25 and len(store.list("events")) == 25
    assert legacy.record(kubelet_event(reason="Late", message="m"), now=299.0) is None
    assert legacy.record(kubelet_event(reason="Later", message="m"), now=301.0) is not None
    # another object has its own bucket
    other = kubelet_event(reason="R0", message="m")
    other["involvedObject"] = {**POD, "name": "jupyter-s", "uid": "u-2"}
    assert legacy.record(other, now=301.0) is not None


def test_repeats_bump_count_and_a_throttled_count_jumps_at_the_next_write():
    """client-go v0.31 tools/record/events_cache.go: eventLogger counts every repeat (count,
    lastTimestamp, same name) before the spam filter drops the write, so the next write
    carries every occurrence since."""
    store, _, legacy, _ = recorders()
    counts = [(legacy.record(kubelet_event(), now=float(i)) or {}).get("count") for i in range(30)]
    assert counts[:25] == list(range(1, 26)) and counts[25:] == [None] * 5
    [stored] = store.list("events")
    assert stored["count"] == 25
    later = legacy.record(kubelet_event(), now=330.0)
    assert later is not None and later["count"] == 31 and later["metadata"]["name"] == stored["metadata"]["name"]


def test_more_than_ten_similar_events_in_ten_minutes_are_combined():
    """client-go v0.31 tools/record/events_cache.go: EventAggregator (defaultAggregateMaxEvents
    10, defaultAggregateIntervalInSeconds 600): the 10th different message of one source,
    object, type and reason becomes "(combined from similar events): <message>", and later
    ones count into that event, which shows the newest message."""
    store, _, legacy, _ = recorders()
    for i in range(12):
        legacy.record(kubelet_event(reason="Failed", message=f"try {i}"), now=float(i))
    messages = sorted(e["message"] for e in store.list("events"))
    assert len(messages) == 10
    [combined] = [e for e in store.list("events") if e["message"].startswith("(combined")]
    assert combined["message"] == "(combined from similar events): try 11" and combined["count"] == 3
    # ten quiet minutes later the aggregation starts over
    fresh = legacy.record(kubelet_event(reason="Failed", message="try 99"), now=12.0 + 601)
    assert fresh is not None and fresh["message"] == "try 99"


def test_a_series_writes_its_second_occurrence_then_only_after_six_quiet_minutes():
    """client-go v0.31 tools/events/event_broadcaster.go: the first occurrence is created,
    the second writes series.count 2 at once, later ones only count until finishSeries (a
    series quiet for 6 minutes, checked every 6 minutes) or the 30-minute refresh writes
    them; the first occurrence's note is kept."""
    store, _, _, series = recorders()
    first = series.record(scheduler_event(), now=0.0)
    assert first is not None and "series" not in first
    second = series.record(scheduler_event("0/4 nodes are available"), now=60.0)
    assert second is not None and second["series"]["count"] == 2
    for t in (120.0, 180.0, 240.0):
        assert series.record(scheduler_event(), now=t) is None
    [stored] = store.list("events")
    assert stored["series"]["count"] == 2 and stored["message"] == "0/3 nodes are available: 3 Insufficient memory."
    series.finish(now=240.0 + 300)  # quiet 5 minutes: not yet
    assert store.list("events")[0]["series"]["count"] == 2
    series.finish(now=240.0 + 360)
    assert store.list("events")[0]["series"]["count"] == 5
    # the series ended: the next occurrence is a new event
    assert series.record(scheduler_event(), now=1000.0)["metadata"]["name"] != stored["metadata"]["name"]


def test_a_running_series_is_written_at_the_thirty_minute_refresh():
    store, _, _, series = recorders()
    for t in range(0, 1800, 60):
        series.record(scheduler_event(), now=float(t))
    assert store.list("events")[0]["series"]["count"] == 2
    series.refresh(now=1800.0)
    assert store.list("events")[0]["series"]["count"] == 30


def test_events_expire_an_hour_after_their_last_write():
    """The API server's --event-ttl (default 1h): an event is deleted an hour after it was
    last written; a repeat's write keeps it."""
    store, written, legacy, _ = recorders()
    legacy.record(kubelet_event(reason="Pulling", message="p"), now=0.0)
    legacy.record(kubelet_event(reason="BackOff", message="b"), now=0.0)
    legacy.record(kubelet_event(reason="BackOff", message="b"), now=1800.0)
    assert expire(store, written, now=3599.0) == 0
    assert expire(store, written, now=3600.0) == 1
    assert [e["reason"] for e in store.list("events")] == ["BackOff"]
    assert expire(store, written, now=5400.0) == 1 and store.list("events") == []


async def test_a_looping_failure_on_a_real_rate_cluster_writes_fewer_events(tmp_path):
    """End to end: the image-not-found scenario loops its kubelet events; with real event
    rates the kubelet's writes for that pod stop at the burst of 25 plus one per 5 minutes,
    however many occurrences there were."""
    async with running_cluster(tmp_path, speed=3000, real_event_rates=True) as cluster:
        writes, occurrences = [], []
        cluster.store.add_listener(
            lambda c: writes.append(c) if c.resource == "events" and c.type != "DELETED"
            and (c.obj.get("source") or {}).get("component") == "kubelet" else None
        )
        legacy = cluster.kubelet.legacy_recorder
        record = legacy.record

        def counted(event, now):
            occurrences.append(now)
            return record(event, now)

        legacy.record = counted  # type: ignore[method-assign]
        start = cluster.kubelet.now()
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.post("/api/v1/namespaces/default/pods", json=pod_body("jupyter-r", scenario="image-not-found")) as r:
                assert r.status == 201
        await wait_until(lambda: len(occurrences) >= 40, timeout=60)
        simulated = occurrences[-1] - start
        assert len(writes) <= 25 + simulated / 300 + 1 < len(occurrences)
