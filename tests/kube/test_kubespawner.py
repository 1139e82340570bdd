"""RichKubeSpawner, standalone (``_mock=True``), against the simulated cluster.

Real KubeSpawner code (reflectors, watches, pod creation through kubernetes_asyncio) talks
to ``SimulatedCluster`` over HTTP; we read what ``progress()`` yields and what the spawn
timeline keeps, as a progress page and the failure page would.

Helpers (``tests.helpers.kubespawner``): ``rich_cluster(tmp_path, speed)``, the simulated
cluster with our reflectors stopped at the end; ``make_spawner(cluster, user, scenario,
**traits)``, a standalone RichKubeSpawner; ``spawn(spawner)``, ``start()`` with one progress
reader, like the hub does; ``check_stream(events)``, what every stream must satisfy.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from richprogress.demo.cluster import SCENARIO_ANNOTATION
from tests.helpers.kubespawner import (
    check_stream,
    make_spawner,
    read_progress,
    rich_cluster,
    spawn,
)

#: the component of records RichKubeSpawner makes from pod status (no Kubernetes Event)
STATUS = "richprogress"


def pod_event_uids(cluster: Any, spawner: Any) -> set[str]:
    return {e["metadata"]["uid"] for e in cluster.events_for(spawner.pod_name, spawner.namespace)}


SCENARIOS = [
    # scenario, speed, start_timeout, outcome, reasons that must appear (in this order)
    ("happy-path", 50, 10, "ready", ["Scheduled", "Pulling", "Pulled", "Created", "Started"]),
    ("scale-up", 100, 10, "ready", ["FailedScheduling", "TriggeredScaleUp", "Scheduled", "Started"]),
    ("volume-provisioning", 50, 10, "ready", ["WaitForFirstConsumer", "ProvisioningSucceeded", "Scheduled", "Started"]),
    ("image-not-found", 50, 2, "failed", ["Scheduled", "Pulling", "Failed", "BackOff"]),
    ("custom-image", 50, 2, "failed", ["Scheduled", "Pulling", "Failed"]),
    ("no-node-fits", 50, 2, "failed", ["FailedScheduling"]),
    ("out-of-memory", 50, 2, "failed", ["Scheduled", "Started", "OOMKilled", "BackOff"]),
]


@pytest.mark.parametrize(
    "scenario,speed,timeout,outcome,reasons", SCENARIOS, ids=[row[0] for row in SCENARIOS]
)
async def test_scenario_stream(tmp_path, scenario, speed, timeout, outcome, reasons):
    async with rich_cluster(tmp_path, speed) as cluster:
        traits: dict[str, Any] = {"start_timeout": timeout}
        if scenario == "custom-image":
            # no annotation: the simulated registry decides from the image name
            traits["image"] = "quay.io/someone/not-in-the-registry:1.0"
            spawner = make_spawner(cluster, "alice", None, **traits)
        else:
            spawner = make_spawner(cluster, "alice", scenario, **traits)
        events, error = await spawn(spawner)
        timeline = spawner.spawn_timeline
        records = check_stream(events)

        # the stream carries exactly the timeline, in the same order
        assert [r["id"] for r in timeline.records()] == list(dict.fromkeys(r["id"] for r in records))
        assert timeline.outcome == outcome
        if outcome == "ready":
            assert error is None
        else:
            assert error is not None and timeline.failure_message
        # every event of this pod is shown, nothing of any other object; records made from
        # the pod's container statuses come on top, and only for a container that failed
        pod_ids = {r["id"] for r in records if r["object"]["kind"] == "Pod" and r["component"] != STATUS}
        assert pod_ids == pod_event_uids(cluster, spawner)
        from_status = {r["reason"] for r in records if r["component"] == STATUS}
        assert from_status == ({"OOMKilled"} if scenario == "out-of-memory" else set())
        # (the "Stopped early" row of fail-fast is about no object)
        assert {r["object"]["name"] for r in records if r["reason"] != "StoppedEarly"} <= {
            spawner.pod_name, spawner.pvc_name}
        shown = [r["reason"] for r in timeline.records()]
        positions = [shown.index(reason) for reason in reasons]
        assert positions == sorted(positions), shown
        if scenario == "volume-provisioning":
            assert any(r["object"]["kind"] == "PersistentVolumeClaim" for r in records)
        if scenario in ("image-not-found", "custom-image"):
            # the pull keeps failing: the same events come back with a bigger count
            assert any(r["count"] > 1 for r in timeline.records())
            if scenario == "custom-image":
                assert any("not-in-the-registry" in r["message"] for r in records)
        await spawner.stop(now=True)


async def test_out_of_memory_is_said_from_the_pod_status(tmp_path):
    """Kubernetes emits no Event for an OOM kill: the reason is only in the container status.

    The page must say "ran out of memory" (not only "keeps crashing"), with the limit, once
    per container: each new kill updates the same record with a bigger count.
    """
    from richprogress.story.diagnosis import diagnose

    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "out-of-memory", start_timeout=2, mem_limit="512M")
        events, error = await spawn(spawner)
        assert error is not None
        check_stream(events)
        oom = [e["record"] for e in events if e["record"]["reason"] == "OOMKilled"]
        assert oom, [e["record"]["reason"] for e in events]
        pod_uids = {e["involvedObject"]["uid"] for e in cluster.events_for(spawner.pod_name, spawner.namespace)}
        assert len(pod_uids) == 1
        assert {r["id"] for r in oom} == {f"{pod_uids.pop()}.notebook.terminated.OOMKilled"}
        first = oom[0]
        assert first["message"] == (
            "Your server ran out of memory and was stopped: the notebook container used more than its 512 MiB limit"
        )
        assert first["severity"] == "error" and first["phase"] == "starting" and first["type"] == "Warning"
        assert first["object"] == {
            "kind": "Pod", "name": spawner.pod_name, "container": "notebook", "field_path": "spec.containers{notebook}",
        }  # fmt: skip
        assert "bigger server size" in first["hint"]
        # KubeSpawner writes mem_limit="512M" as bytes; the raw message keeps them
        assert "(exit code 137, memory limit 536870912)" in first["raw_message"]
        # the kubelet restarted it and it was killed again: same record, growing count
        assert [r["count"] for r in oom] == list(range(1, len(oom) + 1))
        assert len(oom) >= 2
        timeline = spawner.spawn_timeline
        stored = [r for r in timeline.records() if r["reason"] == "OOMKilled"]
        assert len(stored) == 1 and stored[0]["count"] == oom[-1]["count"]
        assert stored[0]["first_timestamp"] <= stored[0]["timestamp"]
        # the failure page's one sentence: memory, not the crash back-off that followed
        diagnosis = diagnose(timeline.records(), timeline.failure_message)
        assert "memory" in diagnosis["summary"]
        assert diagnosis["record_id"] == stored[0]["id"]
        assert diagnosis["hint"] == first["hint"]
        await spawner.stop(now=True)


TERMINATION_CASES = [
    # id, container status, (reason, count, raw message) or None
    ("oom-now", {"restartCount": 0, "state": {"terminated": {"reason": "OOMKilled", "exitCode": 137}}},
     ("OOMKilled", 1, "Container notebook was killed because it ran out of memory (exit code 137, memory limit 1Gi)")),
    ("oom-last-state", {"restartCount": 3, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                        "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}}},
     ("OOMKilled", 3, "Container notebook was killed because it ran out of memory (exit code 137, memory limit 1Gi)")),
    ("error-exit-code", {"restartCount": 1, "state": {"terminated": {"reason": "Error", "exitCode": 2}}},
     ("Error", 2, "Container notebook terminated: Error (exit code 2, 2 times)")),
    ("cannot-run", {"restartCount": 0, "state": {"terminated": {
        "reason": "ContainerCannotRun", "exitCode": 128, "message": "exec: \"x\": not found\n"}}},
     ("ContainerCannotRun", 1, 'Container notebook terminated: ContainerCannotRun (exit code 128): exec: "x": not found')),
    ("completed-is-no-failure", {"restartCount": 0, "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}, None),
    ("running", {"restartCount": 0, "state": {"running": {}}}, None),
    ("waiting-no-history", {"restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}, None),
]  # fmt: skip


@pytest.mark.parametrize("status,expected", [c[1:] for c in TERMINATION_CASES], ids=[c[0] for c in TERMINATION_CASES])
def test_container_terminations_from_pod_status(status, expected):
    from richprogress.kube.spawner import container_terminations

    pod = {
        "metadata": {"uid": "pod-1", "name": "jupyter-alice", "namespace": "jhub"},
        "spec": {"containers": [{"name": "notebook", "resources": {"limits": {"memory": "1Gi"}}}]},
        "status": {"containerStatuses": [{"name": "notebook", **status}]},
    }
    events = container_terminations(pod)
    if expected is None:
        assert events == []
        return
    (event,) = events
    assert (event["reason"], event["count"], event["message"]) == expected
    assert event["type"] == "Warning"
    assert event["involvedObject"]["fieldPath"] == "spec.containers{notebook}"
    assert event["metadata"]["uid"] == f"pod-1.notebook.terminated.{expected[0]}"
    # a pod being deleted: its containers were stopped on purpose
    pod["metadata"]["deletionTimestamp"] = "2026-11-29T22:00:00Z"
    assert container_terminations(pod) == []


async def test_failed_spawn_keeps_its_timeline_until_the_next_start(tmp_path):
    async with rich_cluster(tmp_path, 50) as cluster:
        # the timeout path (fail-fast, on by default, would end it sooner)
        spawner = make_spawner(cluster, "alice", "image-not-found", start_timeout=2, fail_fast=False)
        _events, error = await spawn(spawner)
        assert error is not None
        await spawner.stop(now=True)  # what the hub does after a failed start
        failed = spawner.spawn_timeline
        assert failed.outcome == "failed"
        assert "did not start" in failed.failure_message
        assert any(r["severity"] == "error" for r in failed.records())
        # a page opened after the failure reads the same records, then the stream ends
        replay: list[dict[str, Any]] = []
        await asyncio.wait_for(read_progress(spawner, replay), 5)
        assert [e["record"]["id"] for e in replay] == [r["id"] for r in failed.records()]

        spawner.extra_annotations = {SCENARIO_ANNOTATION: "happy-path"}
        spawner.start_timeout = 10
        await spawn(spawner)
        assert spawner.spawn_timeline is not failed
        assert spawner.spawn_timeline.outcome == "ready"
        assert not {r["id"] for r in failed.records()} & {r["id"] for r in spawner.spawn_timeline.records()}
        await spawner.stop(now=True)


async def test_hub_timeout_cancelling_start_marks_the_timeline_failed(tmp_path):
    # JupyterHub wraps start() in asyncio.wait_for(start_timeout); its TimeoutError has no
    # message, and start() sees only a cancellation
    async with rich_cluster(tmp_path, 50) as cluster:
        # fail-fast off: this is about the hub's own timeout (fail-fast would end it sooner)
        spawner = make_spawner(cluster, "alice", "no-node-fits", start_timeout=30, fail_fast=False)
        start = asyncio.ensure_future(spawner.start())
        await asyncio.sleep(0)
        events: list[dict[str, Any]] = []
        reader = asyncio.ensure_future(read_progress(spawner, events))
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(start, 1.5)
        await asyncio.wait_for(reader, 5)
        timeline = spawner.spawn_timeline
        assert timeline.outcome == "failed"
        assert timeline.failure_message  # never the hub's empty message
        assert any(r["reason"] == "FailedScheduling" for r in timeline.records())
        await spawner.stop(now=True)


async def test_a_hook_that_raises_never_breaks_a_spawn(tmp_path):
    from traitlets.config import Config

    calls: list[str] = []

    def hook(spawner: Any, event: Any, record: Any) -> Any:
        # a function, not a callable object: traitlets deep-copies config values
        calls.append(event["reason"])
        raise RuntimeError("a bug in the admin's hook")

    config = Config()
    config.EventFormatter.format_hook = hook
    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "happy-path", config=config)
        events, error = await spawn(spawner)
        assert error is None and spawner.spawn_timeline.outcome == "ready"
        assert calls == ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
        # the records are the default ones
        messages = [r["message"] for r in check_stream(events)]
        assert any("Started the notebook container" in m or "started" in m.lower() for m in messages)
        await spawner.stop(now=True)


async def test_an_async_hook_receives_the_spawner_and_edits_records(tmp_path):
    from traitlets.config import Config

    seen: list[Any] = []

    async def hook(spawner: Any, event: Any, record: Any) -> Any:
        seen.append(spawner)
        record["hint"] = f"Ask the admins of {spawner.user.name}'s course"
        return record

    config = Config()
    config.EventFormatter.format_hook = hook
    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "happy-path", config=config)
        events, _error = await spawn(spawner)
        assert seen and all(s is spawner for s in seen)
        assert all(e["record"]["hint"] == "Ask the admins of alice's course" for e in events)
        await spawner.stop(now=True)


async def test_reconnect_mid_spawn_replays_the_same_ids_then_goes_on(tmp_path):
    async with rich_cluster(tmp_path, 3) as cluster:  # happy-path takes ~1.2 s here
        spawner = make_spawner(cluster, "alice", "happy-path")
        start = asyncio.ensure_future(spawner.start())
        await asyncio.sleep(0)
        first: list[dict[str, Any]] = []
        reader = asyncio.ensure_future(read_progress(spawner, first))
        while len(first) < 2 and not start.done():
            await asyncio.sleep(0.01)
        # the page reconnects (EventSource retry): a new progress() call
        before = [r["id"] for r in spawner.spawn_timeline.records()]
        assert spawner.spawn_timeline.outcome == "pending"
        second: list[dict[str, Any]] = []
        again = asyncio.ensure_future(read_progress(spawner, second))
        await start
        await asyncio.wait_for(asyncio.gather(reader, again), 10)
        second_ids = [e["record"]["id"] for e in second]
        assert second_ids[: len(before)] == before  # the replay: same ids, same order
        check_stream(first)
        check_stream(second)
        assert [e["record"]["id"] for e in first] == second_ids
        await spawner.stop(now=True)


async def test_two_users_at_once_see_only_their_own_events(tmp_path):
    async with rich_cluster(tmp_path, 20) as cluster:
        alice = make_spawner(cluster, "alice", "happy-path", user_id=1)
        bob = make_spawner(cluster, "bob", "volume-provisioning", user_id=2)
        named = make_spawner(cluster, "alice", "happy-path", user_id=1, server_name="gpu")
        (a_events, a_err), (b_events, b_err), (n_events, n_err) = await asyncio.gather(
            spawn(alice), spawn(bob), spawn(named)
        )
        assert a_err is None and b_err is None and n_err is None
        assert named.pod_name != alice.pod_name
        for spawner, events in ((alice, a_events), (bob, b_events), (named, n_events)):
            records = check_stream(events)
            assert {r["object"]["name"] for r in records} <= {spawner.pod_name, spawner.pvc_name}
            assert {r["id"] for r in records if r["object"]["kind"] == "Pod"} == pod_event_uids(cluster, spawner)
        for spawner in (alice, bob, named):
            await spawner.stop(now=True)


@pytest.mark.parametrize("stop_first", [True, False], ids=["pod-stopped", "pod-left-running"])
async def test_previous_pod_events_are_not_shown_even_with_cold_reflectors(tmp_path, stop_first):
    """The stock bug: on the first spawn after a hub start, the previous pod's events.

    The cluster keeps the old pod's events (as real clusters do for an hour). Between the
    spawns we drop every reflector, as a hub restart does. With ``pod-left-running`` the old
    pod is still there: KubeSpawner gets a 409, deletes it (a Killing event of the *old*
    pod, after the spawn request) and creates the new one.
    """
    from richprogress.kube.spawner import RichKubeSpawner

    async with rich_cluster(tmp_path, 50) as cluster:
        first = make_spawner(cluster, "alice", "happy-path")
        await spawn(first)
        if stop_first:
            await first.stop(now=True)
        old_uids = pod_event_uids(cluster, first)
        old_pod_uid = first.pod_id
        await RichKubeSpawner._stop_all_reflectors()  # the hub restarts

        second = make_spawner(cluster, "alice", "happy-path")
        events, error = await spawn(second)
        assert error is None
        records = check_stream(events)
        shown = {r["id"] for r in records}
        assert not shown & old_uids
        new_uids = {
            e["metadata"]["uid"]
            for e in cluster.events_for(second.pod_name)
            if e["involvedObject"]["uid"] == second.pod_id
        }
        assert second.pod_id != old_pod_uid
        assert shown == new_uids
        assert [r["reason"] for r in records] == ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
        await second.stop(now=True)


async def test_patience_messages_count_from_the_request_and_grow_apart(tmp_path):
    async with rich_cluster(tmp_path, 50) as cluster:
        # a slow spawn that can still succeed: with fail-fast a hopeless one (no-node-fits)
        # gets no patience rows, as the page already says what is wrong
        spawner = make_spawner(
            cluster, "alice", "scale-up", start_timeout=3, patience_after=0.3, patience_growth=2
        )
        events, _error = await spawn(spawner)
        patience = [e["record"] for e in events if e["record"]["id"].startswith("patience-")]
        # +0.3, +0.6, +1.2, +2.4 within ~3 s: growing intervals, not a fixed tick. How many
        # is checked on an injected clock (tests/stream/test_patience_clock.py): on the wall clock
        # of a loaded machine an upper bound was flaky, so here only that they came and grew.
        assert len(patience) >= 2
        dues = [0.3 * 2**n for n in range(len(patience))]
        assert all(r["since_spawn"] >= due for r, due in zip(patience, dues, strict=True))
        # TriggeredScaleUp (the "scaling" step): a new machine is coming. On a loaded machine
        # the first message may come before the scheduler's first event ("requested"); each
        # step's record counts its own messages.
        waiting_for = {
            "patience-requested": "a machine to run your server",
            "patience-scheduling": "a machine to run your server",
            "patience-scaling": "a new machine to join the cluster",
        }
        assert {r["id"] for r in patience} <= set(waiting_for)
        counts: dict[str, list[int]] = {}
        for r in patience:
            counts.setdefault(r["id"], []).append(r["count"])
        assert all(c == list(range(1, len(c) + 1)) for c in counts.values())
        # the clock column already says when: the text does not repeat it
        assert all(r["message"] == f"Still waiting for {waiting_for[r['id']]}" for r in patience)
        await spawner.stop(now=True)


async def test_user_namespaces_index_by_namespace(tmp_path):
    async with rich_cluster(tmp_path, 50) as cluster:
        traits = {"enable_user_namespaces": True, "user_namespace_template": "ns-{username}"}
        alice = make_spawner(cluster, "alice", "happy-path", user_id=1, **traits)
        bob = make_spawner(cluster, "bob", "happy-path", user_id=2, **traits)
        assert alice.namespace == "ns-alice"
        # a same-named pod's events in another namespace must not leak in
        cluster.add_event(alice.pod_name, "Pulling", 'Pulling image "elsewhere"', namespace="ns-bob")
        (a_events, a_err), (b_events, b_err) = await asyncio.gather(spawn(alice), spawn(bob))
        assert a_err is None and b_err is None
        for spawner, events in ((alice, a_events), (bob, b_events)):
            records = check_stream(events)
            assert {r["id"] for r in records} == pod_event_uids(cluster, spawner)
        reflector = alice.event_reflector
        assert reflector.index.stats()["subscribed_keys"] == 0  # finished spawns unsubscribed
        for spawner in (alice, bob):
            await spawner.stop(now=True)


# -- the index and the stale-event filter on their own (no cluster) ----------------------------


def _ev(ns: str, kind: str, name: str, uid: str = "e1", rv: str = "1", **extra: Any) -> dict[str, Any]:
    event = {
        "metadata": {"namespace": ns, "name": f"{name}.{uid}", "uid": uid, "resourceVersion": rv},
        "involvedObject": {"kind": kind, "namespace": ns, "name": name, "uid": extra.pop("pod_uid", "p1")},
        "firstTimestamp": extra.pop("first", "2026-11-29T22:00:00Z"),
        "lastTimestamp": extra.pop("last", "2026-11-29T22:00:00Z"),
        "eventTime": None,
    }
    event.update(extra)
    return event


def _ref(event: dict[str, Any]) -> str:
    return f"{event['metadata']['namespace']}/{event['metadata']['name']}"


def test_index_wakes_only_the_subscribers_of_the_event_object():
    from richprogress.kube.event_index import EventIndex, IndexedResources

    index = EventIndex()
    resources = IndexedResources(index)
    mine = index.subscribe([("ns-alice", "Pod", "jupyter-x")])
    for event in (
        _ev("ns-bob", "Pod", "jupyter-x", "e1"),  # same pod name, other namespace
        _ev("ns-alice", "PersistentVolumeClaim", "jupyter-x", "e2"),  # same name, other kind
        _ev("ns-alice", "Pod", "jupyter-y", "e3"),
    ):
        resources[_ref(event)] = event
    assert len(mine) == 0
    event = _ev("ns-alice", "Pod", "jupyter-x", "e4")
    resources[_ref(event)] = event
    assert [obj["metadata"]["uid"] for _source, obj in mine.drain()] == ["e4"]
    resources.pop(_ref(event), None)
    assert index.objects_for(("ns-alice", "Pod", "jupyter-x")) == []
    assert index.stats()["keys"] == 3  # the emptied key is dropped
    index.unsubscribe(mine)
    assert index.stats()["subscribed_keys"] == 0


def test_relist_wakes_subscribers_only_for_what_the_watch_missed():
    from richprogress.kube.event_index import EventIndex

    index = EventIndex()
    seen = _ev("ns", "Pod", "jupyter-x", "e1", rv="5")
    index.put(_ref(seen), seen)
    sub = index.subscribe([("ns", "Pod", "jupyter-x")])
    sub.drain()  # the snapshot
    changed = _ev("ns", "Pod", "jupyter-x", "e1", rv="6", count=2)
    missed = _ev("ns", "Pod", "jupyter-x", "e2", rv="7")
    index.replace_all({_ref(seen): seen})
    assert len(sub) == 0  # nothing new
    index.replace_all({_ref(changed): changed, _ref(missed): missed})
    assert sorted(obj["metadata"]["resourceVersion"] for _s, obj in sub.drain()) == ["6", "7"]


def test_a_relist_hands_over_what_the_watch_missed_oldest_first():
    # a list comes sorted by name; the events' names are random: the page reads by time
    from richprogress.kube.event_index import EventIndex

    index = EventIndex()
    sub = index.subscribe([("ns", "Pod", "jupyter-x")])
    pulling = _ev("ns", "Pod", "jupyter-x", "a-pulling", rv="9", first="2026-11-29T22:00:05Z", last="2026-11-29T22:00:05Z")
    scheduled = _ev("ns", "Pod", "jupyter-x", "z-scheduled", rv="8", first="2026-11-29T22:00:04Z", last="2026-11-29T22:00:04Z")
    index.replace_all({_ref(pulling): pulling, _ref(scheduled): scheduled})
    assert [obj["metadata"]["uid"] for _s, obj in sub.drain()] == ["z-scheduled", "a-pulling"]


def _same_second_start() -> list[dict[str, Any]]:
    """A happy start within one second, as a real cluster writes it: the scheduler's
    Scheduled with microseconds, the kubelet's steps at the whole second (names random,
    so a list by name puts the kubelet's first)."""
    scheduled = _ev(
        "ns", "Pod", "jupyter-x", "z-scheduled", rv="8", pod_uid="new", first=None, last=None,
        eventTime="2026-11-29T22:00:11.843441Z", reason="Scheduled",
    )
    kubelet = [
        _ev("ns", "Pod", "jupyter-x", f"{letter}-{reason.lower()}", rv=str(rv), pod_uid="new",
            first="2026-11-29T22:00:11Z", last="2026-11-29T22:00:11Z", reason=reason)
        for letter, rv, reason in (("c", 9, "Pulling"), ("b", 10, "Pulled"), ("a", 11, "Started"))
    ]
    return [scheduled, *kubelet]


def _by_name(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {_ref(event): event for event in sorted(events, key=_ref)}


def test_events_of_one_second_reach_a_spawn_in_the_order_they_were_written():
    # "…:11Z" is not earlier than "…:11.843441Z": within a second the API server's
    # write order (resourceVersion) decides, on a relist and on a subscription's snapshot
    from richprogress.kube.event_index import EventIndex

    expected = ["Scheduled", "Pulling", "Pulled", "Started"]
    index = EventIndex()
    sub = index.subscribe([("ns", "Pod", "jupyter-x")])
    index.replace_all(_by_name(_same_second_start()))
    assert [obj["reason"] for _s, obj in sub.drain()] == expected
    later = index.subscribe([("ns", "Pod", "jupyter-x")])
    assert [obj["reason"] for _s, obj in later.drain()] == expected


def test_event_order_keeps_arrival_order_without_a_plain_resource_version():
    from richprogress.model.event_order import last_seen_order, resource_version_number

    odd = [
        _ev("ns", "Pod", "p", "e1", rv="opaque-b"),
        _ev("ns", "Pod", "p", "e2", rv="opaque-a"),
        {"metadata": "not a mapping", "lastTimestamp": "2026-11-29T22:00:00Z"},
        _ev("ns", "Pod", "p", "e3", rv="\u00b2"),  # a digit to isdigit(), not to int()
    ]
    assert [resource_version_number(e) for e in odd] == [0, 0, 0, 0]
    assert sorted(odd, key=last_seen_order) == odd
    earlier = _ev("ns", "Pod", "p", "e4", rv="99", last="2026-11-29T21:59:59Z")
    assert sorted([*odd, earlier], key=last_seen_order)[0] is earlier


START = "2026-11-29T22:00:10Z"

FILTER_CASES = [
    # id, new pod uid known, old uids, event, verdict
    ("new-pod-event", "new", set(), _ev("ns", "Pod", "p", pod_uid="new", first="2026-11-29T22:00:11Z"), "show"),
    ("old-pod-recent-killing", "new", {"old"}, _ev("ns", "Pod", "p", pod_uid="old", first="2026-11-29T22:00:11Z"), "hide"),
    ("other-uid-once-known", "new", set(), _ev("ns", "Pod", "p", pod_uid="x", first="2026-11-29T22:00:11Z"), "hide"),
    ("unknown-uid-recent", None, set(), _ev("ns", "Pod", "p", pod_uid="x", first="2026-11-29T22:00:11Z"), "hold"),
    ("unknown-uid-old", None, set(), _ev("ns", "Pod", "p", pod_uid="x", first="2026-11-29T21:00:00Z"), "hide"),
    ("pvc-event-now", None, set(), _ev("ns", "PersistentVolumeClaim", "claim-p", last="2026-11-29T22:00:12Z"), "show"),
    ("pvc-event-last-week", None, set(), _ev("ns", "PersistentVolumeClaim", "claim-p", last="2026-11-22T10:00:00Z"), "hide"),
]


@pytest.mark.parametrize("new_uid,old_uids,event,verdict", [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_stale_event_filter(new_uid, old_uids, event, verdict):
    from richprogress.kube.spawner import StaleEventFilter
    from richprogress.model.times import parse_timestamp

    spawn_filter = StaleEventFilter(parse_timestamp(START), skew=5)
    spawn_filter.new_uid = new_uid
    spawn_filter.old_uids = set(old_uids)
    assert spawn_filter.classify(event) == verdict


def test_stale_event_filter_learns_old_pods_and_releases_held_events():
    from richprogress.kube.spawner import StaleEventFilter
    from richprogress.model.times import parse_timestamp

    spawn_filter = StaleEventFilter(parse_timestamp(START), skew=5)
    old_pod = {"metadata": {"uid": "old", "creationTimestamp": "2026-11-29T22:00:09Z"}}
    spawn_filter.saw_pod(old_pod)  # seen before KubeSpawner creates ours: not ours
    assert "old" in spawn_filter.old_uids and spawn_filter.new_uid is None
    held = _ev("ns", "Pod", "p", "e9", pod_uid="new", first="2026-11-29T22:00:11Z")
    spawn_filter.hold(held)
    spawn_filter.creating_pod(None)
    spawn_filter.saw_pod({"metadata": {"uid": "new", "creationTimestamp": "2026-11-29T22:00:11Z"}})
    assert spawn_filter.new_uid == "new"
    assert [e["metadata"]["uid"] for e in spawn_filter.release()] == ["e9"]


def test_held_events_of_one_second_are_released_in_the_order_they_were_written():
    # held until the new pod was seen: the scheduler's "11.84" must not go after the
    # kubelet's whole-second "11" (the hub test saw Scheduled last, 2 runs in 40)
    from richprogress.kube.spawner import StaleEventFilter
    from richprogress.model.times import parse_timestamp

    spawn_filter = StaleEventFilter(parse_timestamp(START), skew=5)
    for event in _by_name(_same_second_start()).values():
        assert spawn_filter.classify(event) == "hold"
        spawn_filter.hold(event)
    spawn_filter.creating_pod(None)
    spawn_filter.saw_pod({"metadata": {"uid": "new", "creationTimestamp": "2026-11-29T22:00:11Z"}})
    assert [e["reason"] for e in spawn_filter.release()] == ["Scheduled", "Pulling", "Pulled", "Started"]


async def test_subscription_hands_objects_to_an_idle_reader_and_queues_the_rest():
    """An idle reader (waiting, nothing queued) takes a pushed object at once through its
    handler; while it is busy, or when the handler declines, objects queue in order."""
    from richprogress.stream.inbox import Subscription

    sub = Subscription()
    handled: list[str] = []
    sub.handler = lambda source, obj: obj["name"] != "declined" and not handled.append(obj["name"])
    sub.push("event", "a", {"name": "a"})  # nobody waits yet: queued
    assert handled == [] and len(sub) == 1
    assert await sub.wait(0.1) is True
    assert [obj["name"] for _s, obj in sub.drain()] == ["a"]

    reader = asyncio.ensure_future(sub.wait(5))
    await asyncio.sleep(0)  # the reader now waits
    sub.push("event", "b", {"name": "b"})
    assert handled == ["b"] and len(sub) == 0 and not reader.done()
    sub.push("event", "c", {"name": "declined"})  # declined: queued, the reader wakes
    sub.push("event", "d", {"name": "d"})  # something is queued: d must come after it
    assert await reader is True
    assert handled == ["b"]
    assert [obj["name"] for _s, obj in sub.drain()] == ["declined", "d"]
    sub.close()


class FakeClock:
    """A monotonic clock the test moves by hand (the coalescer's notion of "busy")."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def install(monkeypatch: Any, coalescer: Any) -> None:
    """Make ``coalescer`` the running loop's, for this test."""
    from richprogress.stream import batching as coalesce

    monkeypatch.setitem(coalesce._coalescers, asyncio.get_running_loop(), coalescer)


async def test_busy_updates_are_handled_in_one_batch_in_arrival_order(monkeypatch):
    """A lone update is handled inside its put (the reflector's call); updates that follow
    it closely wait for one batch of the loop, handed over by the first update that finds
    it old enough, in arrival order across reflectors (a pod's status before the event
    that followed it). Reading an index, or ending a subscription, hands it over first."""
    from richprogress.kube.event_index import EventIndex, ObjectWatchers
    from richprogress.stream.batching import Coalescer
    from richprogress.stream.inbox import Subscription

    clock = FakeClock()
    coalescer = Coalescer(asyncio.get_running_loop(), age=0.03, deadline=10, clock=clock)
    events, pods = EventIndex(), ObjectWatchers("Pod")
    install(monkeypatch, coalescer)
    key = ("ns", "Pod", "p")
    handled: list[str] = []
    sub = Subscription()
    events.subscribe([key], sub)
    pods.subscribe([key], sub)
    sub.handler = lambda source, obj: not handled.append(obj["reason"])
    reader = asyncio.ensure_future(sub.wait(30))
    await asyncio.sleep(0)

    def pod(state: str) -> dict[str, Any]:
        return {"metadata": {"namespace": "ns", "name": "p", "uid": "u"}, "reason": state}

    events.put("ns/e1", _ev("ns", "Pod", "p", "e1", reason="Scheduled"))
    assert handled == ["Scheduled"]  # lone: at once
    clock.now += 0.01  # busy from here: each update 10 ms after the last
    pods.put("ns/p", pod("pod: OOMKilled"))
    clock.now += 0.01
    events.put("ns/e2", _ev("ns", "Pod", "p", "e2", reason="BackOff"))
    events.put("ns/other", _ev("ns", "Pod", "someone-else", "e9", reason="not ours"))
    assert handled == ["Scheduled"] and coalescer.batches == 0
    clock.now += 0.025  # the batch is now 35 ms old: the next update hands it over
    pods.put("ns/p", pod("pod: CrashLoopBackOff"))
    assert handled == ["Scheduled", "pod: OOMKilled", "BackOff", "pod: CrashLoopBackOff"]
    assert coalescer.batches == 1 and not reader.done()  # all handled: the reader never woke

    clock.now += 0.01
    events.put("ns/e3", _ev("ns", "Pod", "p", "e3", reason="Pulled"))
    assert handled[-1] == "pod: CrashLoopBackOff"  # kept for the next batch
    assert len(events.objects_for(key)) == 3  # a read hands the batch over first
    assert handled[-1] == "Pulled"
    clock.now += 0.01
    events.put("ns/e4", _ev("ns", "Pod", "p", "e4", reason="Started"))
    assert handled[-1] == "Pulled"
    sub.close()  # the spawn ends: the batch is handed over first, nothing is lost
    assert handled[-1] == "Started"
    assert await reader is True


async def test_pod_status_then_event_keep_their_order_through_a_batch(monkeypatch):
    from richprogress.kube.event_index import EventIndex, ObjectWatchers
    from richprogress.stream.batching import Coalescer
    from richprogress.stream.inbox import Subscription

    clock = FakeClock()
    coalescer = Coalescer(asyncio.get_running_loop(), age=0.03, deadline=10, clock=clock)
    events, pods = EventIndex(), ObjectWatchers("Pod")
    install(monkeypatch, coalescer)
    key = ("ns", "Pod", "p")
    handled: list[str] = []
    sub = Subscription()
    events.subscribe([key], sub)
    pods.subscribe([key], sub)
    sub.handler = lambda source, obj: not handled.append(obj["reason"])
    reader = asyncio.ensure_future(sub.wait(30))
    await asyncio.sleep(0)
    pod = {"metadata": {"namespace": "ns", "name": "p", "uid": "u"}}
    events.put("ns/e1", _ev("ns", "Pod", "p", "e1", reason="Started"))
    clock.now += 0.01
    pods.put("ns/p", {**pod, "reason": "OOMKilled (pod status)"})
    clock.now += 0.01
    events.put("ns/e2", _ev("ns", "Pod", "p", "e2", reason="BackOff"))
    clock.now += 0.01
    pods.put("ns/p", {**pod, "reason": "CrashLoopBackOff (pod status)"})
    assert handled == ["Started"]
    await asyncio.sleep(0)
    coalescer.flush()
    assert handled == ["Started", "OOMKilled (pod status)", "BackOff", "CrashLoopBackOff (pod status)"]
    assert coalescer.batches == 1
    sub.close()
    assert await reader is True


async def test_a_batch_is_handed_over_by_its_deadline_when_no_update_follows(monkeypatch):
    from richprogress.kube.event_index import EventIndex
    from richprogress.stream.batching import Coalescer

    clock = FakeClock()
    coalescer = Coalescer(asyncio.get_running_loop(), age=0.03, deadline=0.05, clock=clock)
    index = EventIndex()
    install(monkeypatch, coalescer)
    sub = index.subscribe([("ns", "Pod", "p")])
    index.put("ns/e1", _ev("ns", "Pod", "p", "e1"))
    assert len(sub) == 1  # lone: at once (no handler: queued for the reader)
    index.put("ns/e2", _ev("ns", "Pod", "p", "e2"))  # right after it: kept
    assert len(sub) == 1
    assert await sub.wait(2) is True
    await asyncio.sleep(0.1)  # the deadline's timer (real time) hands the batch over
    assert [o["metadata"]["uid"] for _s, o in sub.drain()] == ["e1", "e2"]
    assert coalescer.batches == 1
    sub.close()


async def test_subscription_wait_times_out_and_keeps_one_timer():
    from richprogress.stream.inbox import Subscription

    sub = Subscription()
    assert await sub.wait(0.01) is False  # timed out, nothing pushed
    assert await sub.wait(0) is False
    reader = asyncio.ensure_future(sub.wait(30))
    await asyncio.sleep(0)
    timer = sub._timer
    sub.push("event", "a", {})
    assert await reader is True
    sub.drain()
    reader = asyncio.ensure_future(sub.wait(30))  # the same far deadline: the timer is kept
    await asyncio.sleep(0)
    assert sub._timer is timer
    sub.close()
    assert await reader is True and sub._timer is None


async def test_waiting_subscriptions_share_one_loop_timer_and_each_times_out_on_its_own():
    from richprogress.stream.inbox import Subscription

    loop = asyncio.get_running_loop()
    before = len(loop._scheduled)  # CPython's heap of timers: every sleep in the hub pays per entry
    many = [Subscription() for _ in range(50)]
    waiting = [asyncio.ensure_future(sub.wait(30 + n)) for n, sub in enumerate(many)]
    await asyncio.sleep(0)
    assert len(loop._scheduled) - before == 1
    soon, later = Subscription(), Subscription()
    first = asyncio.ensure_future(soon.wait(0.02))
    second = asyncio.ensure_future(later.wait(0.2))
    assert await first is False  # timed out, nothing pushed
    assert not second.done()  # its own, later deadline
    assert await second is False
    for sub in many:
        sub.close()
    assert await asyncio.gather(*waiting) == [True] * len(many)
