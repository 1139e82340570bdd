"""The simulated Kubernetes cluster: its API protocol, its scenarios, and the real
KubeSpawner running against it unchanged."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import re
import signal
import subprocess
import sys
from urllib.parse import urlparse

import aiohttp
import pytest

from richprogress.demo.cluster import SCENARIO_ANNOTATION, ScenarioError, scenario_names
from richprogress.demo.cluster.scenarios import (
    builtin_scenarios,
    choose_scenario,
    load_registry,
    normalize_image,
    validate,
)
from richprogress.demo.cluster.selectors import parse_field_selector, parse_label_selector
from tests.helpers.cluster import make_kubespawner, pod_body, running_cluster, wait_until

MISSING_IMAGE = "quay.io/jupyter/scipy-notebook:2099-01-01"
PODS = "/api/v1/namespaces/default/pods"
EVENTS = "/api/v1/namespaces/default/events"


async def read_watch(session, url, params, until=None, limit=200):
    """Read a watch stream's JSON lines until it ends, ``until(items)`` is true, or limit."""
    items = []
    async with session.get(url, params={**params, "watch": "True"}) as response:
        assert response.status == 200
        while len(items) < limit:
            line = await response.content.readline()
            if not line:
                break
            assert line.endswith(b"\n")
            items.append(json.loads(line))
            if until is not None and until(items):
                break
    return items


# -- the real KubeSpawner against the simulated cluster ---------------------------------


async def test_happy_path_start_returns_url_and_standin_answers(tmp_path):
    async with running_cluster(tmp_path, speed=20) as cluster:
        spawner = make_kubespawner(cluster, "hazel")
        url = await spawner.start()
        parsed = urlparse(url)
        assert ipaddress.ip_address(parsed.hostname) in ipaddress.ip_network("127.0.0.0/8")
        assert parsed.hostname != "127.0.0.1"  # each pod gets its own loopback address
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{url}/user/hazel/") as response:
                assert response.status == 200
                text = await response.text()
                assert "simulated notebook server for hazel" in text
                # a way back to the hub: its home page
                assert re.search(r'<a id="hub-home" href="[^"]*/hub/home">', text), text
            async with session.get(f"{url}/user/hazel/api") as response:
                assert response.status < 500  # what JupyterHub's readiness check needs
        reasons = [e["reason"] for e in cluster.events_for("jupyter-hazel")]
        assert reasons == ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
        assert await spawner.poll() is None
        await spawner.stop()
        assert cluster.pod("jupyter-hazel") is None
        assert cluster.events_for("jupyter-hazel")[-1]["reason"] == "Killing"
        assert await spawner.poll() == 1
        # The stand-in is gone. (Another test process may listen on that address by now,
        # so "gone" means: no answer from hazel's server.)
        async with aiohttp.ClientSession() as session:
            try:
                async with session.get(f"{url}/user/hazel/") as response:
                    assert "for hazel" not in await response.text()
            except aiohttp.ClientConnectionError:
                pass


async def test_image_not_found_times_out_and_progress_names_the_image(tmp_path):
    async with running_cluster(tmp_path, speed=20) as cluster:
        spawner = make_kubespawner(
            cluster,
            "bob",
            image=MISSING_IMAGE,
            start_timeout=3,
            extra_annotations={SCENARIO_ANNOTATION: "image-not-found"},
        )
        messages: list[str] = []

        async def follow() -> None:
            async for item in spawner.progress():
                messages.append(item["message"])

        follower = asyncio.create_task(follow())
        with pytest.raises(asyncio.TimeoutError, match="did not start"):
            await spawner.start()
        await asyncio.wait_for(follower, 10)
        failed = [m for m in messages if "Failed to pull image" in m]
        assert failed, messages
        assert f'"{MISSING_IMAGE}"' in failed[0]
        assert f"{MISSING_IMAGE}: not found" in failed[0]
        assert any("Error: ImagePullBackOff" in m for m in messages)
        await spawner.stop()


async def test_volume_provisioning_emits_pvc_events_then_starts(tmp_path):
    async with running_cluster(tmp_path, speed=20) as cluster:
        spawner = make_kubespawner(
            cluster,
            "carol",
            storage_pvc_ensure=True,
            pvc_name_template="claim-{username}",
            extra_annotations={SCENARIO_ANNOTATION: "volume-provisioning"},
        )
        await spawner.start()
        pvc_events = cluster.events_for("claim-carol")
        assert [e["reason"] for e in pvc_events] == [
            "WaitForFirstConsumer",
            "ExternalProvisioning",
            "Provisioning",
            "ProvisioningSucceeded",
        ]
        assert {e["involvedObject"]["kind"] for e in pvc_events} == {"PersistentVolumeClaim"}
        claim = cluster.store.get("persistentvolumeclaims", "default", "claim-carol")
        assert pvc_events[0]["involvedObject"]["uid"] == claim["metadata"]["uid"]
        assert claim["status"]["phase"] == "Bound"
        pod_reasons = [e["reason"] for e in cluster.events_for("jupyter-carol")]
        assert pod_reasons[:2] == ["Scheduled", "SuccessfulAttachVolume"]
        assert pod_reasons[-1] == "Started"
        await spawner.stop()


async def test_user_namespaces_use_cluster_wide_lists(tmp_path):
    async with running_cluster(tmp_path, speed=20) as cluster:
        spawner = make_kubespawner(cluster, "dave", enable_user_namespaces=True)
        url = await spawner.start()
        assert spawner.namespace == "user-dave"
        assert cluster.pod("jupyter-dave", namespace="user-dave") is not None
        paths = {path.split("?")[0] for _, path, _ in cluster.api.request_log}
        assert {"/api/v1/pods", "/api/v1/events", "/api/v1/namespaces"} <= paths
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{url}/user/dave/") as response:
                assert response.status == 200
        await spawner.stop()


# -- scenarios, played through the raw API ----------------------------------------------

# scenario -> the reasons of its first pass (in order), and whether the pod becomes ready
SCENARIO_TABLE = {
    "happy-path": (["Scheduled", "Pulling", "Pulled", "Created", "Started"], True),
    # Real event rates (the default): the scheduler's series key (client-go tools/events
    # getKey) holds the pod's reference with its resourceVersion, and the unschedulable
    # condition moves that, so the first retry starts a second FailedScheduling event; the
    # key has no message, so the first "not-ready taint" failure only counts into that
    # series, and the taint's retry (after the next status change) is the third event.
    "scale-up": (
        ["FailedScheduling", "TriggeredScaleUp", "FailedScheduling", "FailedScheduling", "Scheduled",
         "TaintManagerEviction", "Pulling", "Pulled", "Created", "Started"],
        True,
    ),
    "volume-provisioning": (
        ["WaitForFirstConsumer", "ExternalProvisioning", "Provisioning", "ProvisioningSucceeded",
         "Scheduled", "SuccessfulAttachVolume", "Pulling", "Pulled", "Created", "Started"],
        True,
    ),
    "image-not-found": (["Scheduled", "Pulling", "Failed", "Failed", "BackOff", "Failed"], False),
    "custom-image": (["Scheduled", "Pulling", "Failed", "Failed", "BackOff", "Failed"], False),
    "no-node-fits": (["FailedScheduling", "NotTriggerScaleUp"], False),
    "out-of-memory": (["Scheduled", "Pulled", "Created", "Started", "BackOff"], False),
    "flaky-pull": (
        # the second "Pulling" repeats the first (same event, count 2)
        ["Scheduled", "Pulling", "Failed", "Failed", "BackOff", "Failed", "Pulled", "Created", "Started"],
        True,
    ),
    # events of the pod's JupyterServer custom resource first (followed objects)
    "operator": (["Reconciling", "Created", "Created", "Reconciled", "Scheduled", "Pulling", "Pulled",
                  "Created", "Started"], True),
    "operator-error": (["Reconciling", "ReconcileError"], False),
    "crash-on-start": (["Scheduled", "Pulled", "Created", "Started", "BackOff"], False),
    "missing-singleuser": (["Scheduled", "Pulled", "Created", "Failed", "BackOff"], False),
    # ready as far as Kubernetes knows: only the hub's HTTP check finds nobody answering
    "never-answers": (["Scheduled", "Pulled", "Created", "Started"], True),
    "slow-pull-timeout": (["Scheduled", "Pulling"], False),
}


def test_every_shipped_scenario_is_in_the_table():
    assert sorted(SCENARIO_TABLE) == scenario_names()


def _ready(pod):
    status = (pod or {}).get("status", {})
    statuses = status.get("containerStatuses")
    return (
        status.get("phase") == "Running"
        and status.get("podIP")
        and statuses
        and all(s["ready"] for s in statuses)
    )


def _check_event_shape(event, namespace="default"):
    meta = event["metadata"]
    assert meta["uid"] and meta["resourceVersion"] and meta["namespace"] == namespace
    assert "lastTimestamp" in event and "eventTime" in event
    stamp = event["lastTimestamp"] or event["eventTime"]
    assert stamp and stamp.endswith("Z")
    involved = event["involvedObject"]
    assert involved["kind"] in ("Pod", "PersistentVolumeClaim", "JupyterServer")
    if involved["kind"] == "JupyterServer":  # the custom resource, which the API serves
        assert involved["apiVersion"] == "demo.richprogress.org/v1alpha1"
    assert {"namespace", "name", "uid", "apiVersion"} <= set(involved)
    assert event["reportingComponent"]
    assert isinstance(event["source"], dict)
    assert event["type"] in ("Normal", "Warning")


@pytest.mark.parametrize("scenario", sorted(SCENARIO_TABLE))
async def test_scenario_plays_real_events_and_status(tmp_path, scenario):
    reasons, becomes_ready = SCENARIO_TABLE[scenario]
    async with running_cluster(tmp_path, speed=200) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            body = pod_body("jupyter-erin", scenario=scenario)
            async with session.post(PODS, json=body) as response:
                assert response.status == 201
        if becomes_ready:
            await wait_until(lambda: _ready(cluster.pod("jupyter-erin")))
        elif builtin_scenarios()[scenario].loop is None:
            # never ready and no retries (a pull that takes longer than anyone waits)
            await wait_until(lambda: len(cluster.store.list("events")) >= len(reasons))
            assert not _ready(cluster.pod("jupyter-erin"))
        else:
            # never ready: wait until the kubelet repeats itself (an event's count grows)
            await wait_until(
                lambda: any(
                    (e.get("count") or e.get("series", {}).get("count", 1)) > 1
                    for e in cluster.store.list("events")
                )
            )
            assert not _ready(cluster.pod("jupyter-erin"))
        events = cluster.store.list("events")
        assert [e["reason"] for e in events][: len(reasons)] == reasons
        for event in events:
            _check_event_shape(event)


async def test_out_of_memory_container_is_oom_killed_then_backs_off(tmp_path):
    async with running_cluster(tmp_path, speed=100) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            await session.post(PODS, json=pod_body("jupyter-fay", scenario="out-of-memory"))
            rv = cluster.store.resource_version
            seen = await read_watch(
                session,
                PODS,
                {"resourceVersion": str(int(rv) - 5), "timeoutSeconds": "20"},
                until=lambda items: "waiting" in items[-1]["object"]["status"]
                .get("containerStatuses", [{}])[0]
                .get("state", {})
                and items[-1]["object"]["status"]["containerStatuses"][0]["restartCount"] > 0,
            )
        statuses = [i["object"]["status"].get("containerStatuses", [{}])[0] for i in seen]
        terminated = [s["state"]["terminated"] for s in statuses if "terminated" in s.get("state", {})]
        assert terminated and terminated[0]["reason"] == "OOMKilled"
        assert terminated[0]["exitCode"] == 137
        last = statuses[-1]
        assert last["state"]["waiting"]["reason"] == "CrashLoopBackOff"
        assert last["state"]["waiting"]["message"] == (
            "back-off 10s restarting failed container=notebook pod=jupyter-fay_default("
            f"{seen[0]['object']['metadata']['uid']})"
        )
        assert last["lastState"]["terminated"]["reason"] == "OOMKilled"
        assert last["ready"] is False
        backoff = [e for e in cluster.events_for("jupyter-fay") if e["reason"] == "BackOff"]
        assert backoff[0]["type"] == "Warning"
        assert backoff[0]["message"].startswith("Back-off restarting failed container notebook in pod jupyter-fay_default(")


def _notebook_status(cluster, name):
    pod = cluster.pod(name) or {}
    return (pod.get("status", {}).get("containerStatuses") or [{}])[0]


def _waiting_after_restarts(cluster, name, restarts):
    """The notebook container's status once it restarted ``restarts`` times and waits again; else None."""
    status = _notebook_status(cluster, name)
    return status if status.get("restartCount", 0) >= restarts and "waiting" in status.get("state", {}) else None


async def test_crash_on_start_exits_restarts_and_leaves_its_traceback(tmp_path):
    from richprogress.kube.pod_status import container_terminations
    from richprogress.wording.formatter import EventFormatter

    async with running_cluster(tmp_path, speed=100) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            await session.post(PODS, json=pod_body("jupyter-cora", scenario="crash-on-start"))
            # as the kubelet shows a crash loop: waiting in CrashLoopBackOff, the last run in lastState
            status = await wait_until(lambda: _waiting_after_restarts(cluster, "jupyter-cora", 2))
            async with session.get(f"{PODS}/jupyter-cora/log", params={"previous": "true"}) as response:
                previous_log = await response.text()
        assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
        last = status["lastState"]["terminated"]
        assert (last["reason"], last["exitCode"]) == ("Error", 1)
        # it ran from when it started to when it exited: startedAt is that run's start
        assert "1970" not in last["startedAt"] and last["startedAt"] <= last["finishedAt"]
        assert previous_log.rstrip().endswith("ModuleNotFoundError: No module named 'jupyterlab_git'")
        assert "Traceback (most recent call last):" in previous_log
        (event,) = container_terminations(cluster.pod("jupyter-cora"))
        record = EventFormatter().format_event(event)
        assert record["message"].startswith("The server's program exited with code 1 right after it started, ")


async def test_missing_singleuser_is_a_start_error_as_containerd_reports_it(tmp_path):
    from richprogress.kube.pod_status import container_terminations
    from richprogress.wording.formatter import EventFormatter

    async with running_cluster(tmp_path, speed=100) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            await session.post(PODS, json=pod_body("jupyter-milo", scenario="missing-singleuser"))
        status = await wait_until(lambda: _waiting_after_restarts(cluster, "jupyter-milo", 1))
        last = status["lastState"]["terminated"]
        assert (last["reason"], last["exitCode"]) == ("StartError", 128)
        assert last["startedAt"] == "1970-01-01T00:00:00Z"  # it never ran
        assert 'exec: "jupyterhub-singleuser": executable file not found in $PATH' in last["message"]
        failed = [e for e in cluster.events_for("jupyter-milo") if e["reason"] == "Failed"]
        assert failed[0]["message"].startswith("Error: failed to create containerd task: ")
        (event,) = container_terminations(cluster.pod("jupyter-milo"))
        record = EventFormatter().format_event(event)
        assert record["message"].startswith(
            "The command jupyterhub-singleuser is not in the server's image, so it could not start")


async def test_never_answers_listens_on_another_port(tmp_path):
    async with running_cluster(tmp_path, speed=100) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            await session.post(PODS, json=pod_body("jupyter-nell", scenario="never-answers"))
        await wait_until(lambda: _ready(cluster.pod("jupyter-nell")))
        ip = cluster.pod("jupyter-nell")["status"]["podIP"]
        # the pod's own stand-in listens on the scenario's port, not the pod's notebook port
        # (what else listens on 127.0.0.x:8888 on a shared machine is not the pod's)
        standin = cluster.kubelet.runs[("default", "jupyter-nell")].standin
        assert standin is not None and (standin.ip, standin.port) == (ip, 18888)
        async with aiohttp.ClientSession() as client:
            async with client.get(f"http://{ip}:18888/user/jupyter-nell/api") as response:
                assert response.status == 200
                assert (await response.json())["pod"] == "jupyter-nell"
        assert standin.requests == ["/user/jupyter-nell/api"]


@pytest.mark.parametrize(
    ("annotation", "image", "expected"),
    [
        pytest.param("scale-up", "quay.io/jupyterhub/singleuser:latest", "scale-up", id="annotation-wins"),
        pytest.param(None, "quay.io/jupyterhub/singleuser:latest", "happy-path", id="registry-image"),
        pytest.param(None, "jupyter/base-notebook", "happy-path", id="docker-hub-short-name"),
        pytest.param(None, "docker.io/jupyter/base-notebook:latest", "happy-path", id="docker-hub-full-name"),
        pytest.param(None, "quay.io/jupyter/scipy-notebook:2099-01-01", "custom-image", id="unknown-tag"),
        pytest.param(None, "example.org/someone/own-image:v1", "custom-image", id="unknown-image"),
        pytest.param("no-such-scenario", "ghcr.io/x/y:z", "custom-image", id="unknown-annotation-uses-image"),
    ],
)
def test_scenario_choice(annotation, image, expected):
    from richprogress.demo.cluster.scenarios import builtin_scenarios

    body = pod_body("jupyter-x", image=image, scenario=annotation)
    assert choose_scenario(body, builtin_scenarios(), load_registry()) == expected


async def test_custom_image_failure_names_the_users_image(tmp_path):
    image = "example.org/someone/own-image:v1"
    async with running_cluster(tmp_path, speed=100) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            await session.post(PODS, json=pod_body("jupyter-gus", image=image))
        failed = await wait_until(
            lambda: [e for e in cluster.events_for("jupyter-gus") if e["message"].startswith("Failed to pull")]
        )
        assert failed[0]["message"] == (
            f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and '
            f'unpack image "{image}": failed to resolve reference "{image}": {image}: not found'
        )
        assert failed[0]["involvedObject"]["fieldPath"] == "spec.containers{notebook}"
        waiting = await wait_until(
            lambda: cluster.pod("jupyter-gus")["status"].get("containerStatuses", [{}])[0]
            .get("state", {}).get("waiting", {}).get("reason") == "ImagePullBackOff"
        )
        assert waiting


@pytest.mark.parametrize(
    ("seconds", "printed"),
    [(10, "10s"), (20, "20s"), (80, "1m20s"), (300, "5m0s")],
    ids=["10s", "20s", "1m20s", "5m0s"],
)
def test_backoff_is_printed_like_go_durations(seconds, printed):
    from richprogress.demo.cluster.kubelet import go_duration

    assert go_duration(seconds) == printed


def test_docker_hub_names_are_normalized_like_containerd():
    assert normalize_image("python") == "docker.io/library/python:latest"
    assert normalize_image("jupyter/base-notebook") == "docker.io/jupyter/base-notebook:latest"
    assert normalize_image("quay.io/a/b:1") == "quay.io/a/b:1"
    assert normalize_image("localhost:5000/a") == "localhost:5000/a:latest"


@pytest.mark.parametrize(
    ("data", "complaint"),
    [
        pytest.param({"name": "x", "outcome": "ready"}, "missing key(s) ['steps']", id="no-steps"),
        pytest.param({"name": "x", "outcome": "maybe", "steps": [{"delay": 1}]}, "outcome", id="bad-outcome"),
        pytest.param({"name": "x", "outcome": "ready", "steps": [{"delay": -1}]}, "steps[0].delay", id="negative-delay"),
        pytest.param(
            {"name": "x", "outcome": "ready", "steps": [{"delay": 1, "events": [{"reason": "R", "component": "kubelet", "message": "{imgae}"}]}]},
            "unknown placeholder {imgae}",
            id="typo-in-placeholder",
        ),
        pytest.param(
            {"name": "x", "outcome": "ready", "steps": [{"delay": 1, "pod": {"phase": "Runing"}}]},
            "steps[0].pod.phase",
            id="bad-phase",
        ),
        pytest.param({"name": "x", "outcome": "ready", "steps": [{"delay": 1, "sleep": 2}]}, "unknown key(s) ['sleep']", id="unknown-step-key"),
        pytest.param({"name": "x", "outcome": "ready", "steps": [{"delay": 1}], "loop": {"from": 3}}, "loop.from", id="loop-out-of-range"),
        pytest.param({"name": "x", "outcome": "ready", "steps": [{"delay": 1, "pod": {"container": {
            "state": "terminated", "log": ["Traceback in {imgae}"]}}}]},
            "steps[0].pod.container.log[0]: unknown placeholder {imgae}", id="typo-in-log-line"),
        pytest.param({"name": "x", "outcome": "ready", "steps": [{"delay": 1, "pod": {"container": {
            "state": "running", "listen_port": 70000}}}]}, "steps[0].pod.container.listen_port", id="bad-port"),
        pytest.param({"name": "x", "outcome": "ready", "steps": [{"delay": 1, "pod": {"container": {
            "state": "running", "never_ran": True}}}]}, "steps[0].pod.container.never_ran", id="never-ran-while-running"),
    ],
)
def test_bad_scenarios_are_rejected_with_the_place(data, complaint):
    with pytest.raises(ScenarioError) as info:
        validate(data, "x.json")
    assert complaint in str(info.value)
    assert str(info.value).startswith("x.json")


# -- the list and watch protocol --------------------------------------------------------


async def test_list_has_resource_version_and_watch_needs_capital_true_or_true(tmp_path):
    async with running_cluster(tmp_path) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.get(PODS, params={"labelSelector": "", "fieldSelector": ""}) as r:
                listing = await r.json()
            assert listing["kind"] == "PodList"
            assert isinstance(listing["metadata"]["resourceVersion"], str)
            assert listing["items"] == []
            for flag in ("True", "true", "1"):
                params = {"resourceVersion": listing["metadata"]["resourceVersion"],
                          "timeoutSeconds": "1", "watch": flag}
                async with session.get(PODS, params=params) as r:
                    assert r.headers.get("Transfer-Encoding") == "chunked"
                    assert await r.read() == b""  # nothing happened: an empty stream, closed


async def test_watch_replays_history_newer_than_rv_then_streams_live(tmp_path):
    async with running_cluster(tmp_path, speed=1) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.get(PODS) as r:
                rv = (await r.json())["metadata"]["resourceVersion"]
            async with session.post(PODS, json=pod_body("jupyter-early")) as r:
                assert r.status == 201
            watch = asyncio.create_task(
                read_watch(session, PODS, {"resourceVersion": rv, "timeoutSeconds": "10"},
                           until=lambda items: len(items) >= 2)
            )
            await asyncio.sleep(0.2)
            async with session.post(PODS, json=pod_body("jupyter-late")) as r:
                assert r.status == 201
            items = await asyncio.wait_for(watch, 15)
        assert [(i["type"], i["object"]["metadata"]["name"]) for i in items[:2]] == [
            ("ADDED", "jupyter-early"),
            ("ADDED", "jupyter-late"),
        ]
        rvs = [int(i["object"]["metadata"]["resourceVersion"]) for i in items]
        assert rvs == sorted(rvs) and rvs[0] > int(rv)


async def test_watch_closes_after_timeout_seconds(tmp_path):
    async with running_cluster(tmp_path) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            params = {"resourceVersion": cluster.store.resource_version, "timeoutSeconds": "1"}
            items = await asyncio.wait_for(read_watch(session, EVENTS, params), 10)
        assert items == []


async def test_resource_version_starts_from_wall_clock_milliseconds(tmp_path):
    import time

    async with running_cluster(tmp_path) as cluster:
        assert int(cluster.store.resource_version) >= int(time.time() * 1000) - 60_000


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param("", ["a", "b", "c"], id="empty-matches-all"),
        pytest.param("component=singleuser-server", ["a", "b"], id="equals"),
        pytest.param("component==singleuser-server,team=red", ["a"], id="double-equals-and"),
        pytest.param("team!=red", ["b", "c"], id="not-equals"),
        pytest.param("team in (red,blue)", ["a", "b"], id="in-set"),
        pytest.param("team notin (red)", ["b", "c"], id="notin-set"),
        pytest.param("team", ["a", "b"], id="exists"),
        pytest.param("!team", ["c"], id="not-exists"),
    ],
)
def test_label_selectors(selector, expected):
    objects = {
        "a": {"metadata": {"labels": {"component": "singleuser-server", "team": "red"}}},
        "b": {"metadata": {"labels": {"component": "singleuser-server", "team": "blue"}}},
        "c": {"metadata": {"labels": {"component": "hub"}}},
    }
    matches = parse_label_selector(selector)
    assert [name for name, obj in objects.items() if matches(obj)] == expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param("involvedObject.kind=Pod", ["pod-a", "pod-b"], id="kind"),
        pytest.param("involvedObject.kind%3DPod".replace("%3D", "="), ["pod-a", "pod-b"], id="decoded"),
        pytest.param("involvedObject.kind=Pod,involvedObject.name=jupyter-a", ["pod-a"], id="kind-and-name"),
        pytest.param("involvedObject.kind!=Pod", ["pvc"], id="not-equals"),
        pytest.param("involvedObject.fieldPath=", ["pod-b", "pvc"], id="missing-field-is-empty"),
    ],
)
def test_field_selectors(selector, expected):
    events = {
        "pod-a": {"involvedObject": {"kind": "Pod", "name": "jupyter-a", "fieldPath": "spec.containers{notebook}"}},
        "pod-b": {"involvedObject": {"kind": "Pod", "name": "jupyter-b"}},
        "pvc": {"involvedObject": {"kind": "PersistentVolumeClaim", "name": "claim-a"}},
    }
    matches = parse_field_selector(selector)
    assert [name for name, obj in events.items() if matches(obj)] == expected


async def test_selectors_apply_to_lists_and_watches_over_http(tmp_path):
    async with running_cluster(tmp_path, speed=200) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            rv = cluster.store.resource_version
            await session.post(PODS, json=pod_body("jupyter-h", scenario="volume-provisioning"))
            other = pod_body("not-a-user-pod")
            other["metadata"]["labels"] = {"component": "hub"}
            await session.post(PODS, json=other)
            await wait_until(lambda: _ready(cluster.pod("jupyter-h")))
            async with session.get(PODS, params={"labelSelector": "component=singleuser-server"}) as r:
                names = [p["metadata"]["name"] for p in (await r.json())["items"]]
            assert names == ["jupyter-h"]
            params = {"fieldSelector": "involvedObject.kind=PersistentVolumeClaim", "labelSelector": ""}
            async with session.get(EVENTS, params=params) as r:
                pvc_names = {e["involvedObject"]["name"] for e in (await r.json())["items"]}
            assert pvc_names == {"claim-h"}
            params = {"fieldSelector": "involvedObject.kind=Pod,involvedObject.name=jupyter-h",
                      "resourceVersion": rv, "timeoutSeconds": "1"}
            watched = await read_watch(session, EVENTS, params)
        assert [w["object"]["reason"] for w in watched] == [
            "Scheduled", "SuccessfulAttachVolume", "Pulling", "Pulled", "Created", "Started"
        ]


async def test_repeated_event_keeps_uid_and_grows_count_as_modified(tmp_path):
    async with running_cluster(tmp_path, speed=200) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            rv = cluster.store.resource_version
            await session.post(PODS, json=pod_body("jupyter-i", scenario="image-not-found"))
            params = {"fieldSelector": "involvedObject.name=jupyter-i", "resourceVersion": rv,
                      "timeoutSeconds": "20"}
            watched = await read_watch(session, EVENTS, params,
                                       until=lambda items: items[-1]["type"] == "MODIFIED")
        repeat = watched[-1]["object"]
        first = next(w["object"] for w in watched if w["object"]["metadata"]["uid"] == repeat["metadata"]["uid"])
        assert first["count"] == 1 and repeat["count"] == 2
        assert repeat["metadata"]["name"] == first["metadata"]["name"]
        assert int(repeat["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
        assert repeat["firstTimestamp"] == first["firstTimestamp"]
        assert repeat["lastTimestamp"] >= first["lastTimestamp"]


async def test_duplicate_pod_is_409_and_missing_delete_is_404_as_single_line_status(tmp_path):
    async with running_cluster(tmp_path) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.post(PODS, json=pod_body("jupyter-j")) as r:
                assert r.status == 201
            async with session.post(PODS, json=pod_body("jupyter-j")) as r:
                assert r.status == 409
                text = await r.text()
            assert "\n" not in text.strip()
            status = json.loads(text)
            assert (status["kind"], status["reason"], status["code"]) == ("Status", "AlreadyExists", 409)
            assert status["message"] == 'pods "jupyter-j" already exists'
            async with session.delete(f"{PODS}/nobody", params={"gracePeriodSeconds": "1"}) as r:
                assert r.status == 404
                status = json.loads(await r.text())
            assert (status["reason"], status["message"]) == ("NotFound", 'pods "nobody" not found')
            async with session.post("/api/v1/namespaces/default/persistentvolumeclaims",
                                    json={"metadata": {"name": "claim-j"}, "spec": {}}) as r:
                assert r.status == 201
            async with session.post("/api/v1/namespaces/default/persistentvolumeclaims",
                                    json={"metadata": {"name": "claim-j"}, "spec": {}}) as r:
                assert r.status == 409


async def test_deleted_pod_sends_killing_then_deleted_and_frees_its_address(tmp_path):
    # out-of-memory pods run without ever being ready: they get an address but no stand-in,
    # so the address they get does not depend on what other processes listen on.
    def address(name):
        pod = cluster.pod(name)
        return pod and pod["status"].get("podIP")

    async with running_cluster(tmp_path, speed=200) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            await session.post(PODS, json=pod_body("jupyter-k", scenario="out-of-memory"))
            await session.post(PODS, json=pod_body("jupyter-l", scenario="out-of-memory"))
            ip_k = await wait_until(lambda: address("jupyter-k"))
            assert ip_k != await wait_until(lambda: address("jupyter-l"))
            rv = cluster.store.resource_version
            async with session.delete(f"{PODS}/jupyter-k", params={"gracePeriodSeconds": "1"}) as r:
                assert r.status == 200
                assert "deletionTimestamp" in (await r.json())["metadata"]
            before = [e["metadata"]["uid"] for e in cluster.events_for("jupyter-k")]
            watched = await read_watch(session, PODS, {"resourceVersion": rv, "timeoutSeconds": "10",
                                                       "fieldSelector": "metadata.name=jupyter-k"},
                                       until=lambda items: items[-1]["type"] == "DELETED")
            assert [w["type"] for w in watched][-1] == "DELETED"
            # real clusters keep a deleted pod's events for about an hour
            after = cluster.events_for("jupyter-k")
            assert [e["metadata"]["uid"] for e in after] == before
            assert after[-1]["reason"] == "Killing"
            await session.post(PODS, json=pod_body("jupyter-m", scenario="out-of-memory"))
            assert await wait_until(lambda: address("jupyter-m")) == ip_k


async def test_forget_events_on_delete_drops_them(tmp_path):
    async with running_cluster(tmp_path, speed=200, forget_events_on_delete=True) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            await session.post(PODS, json=pod_body("jupyter-n"))
            await wait_until(lambda: _ready(cluster.pod("jupyter-n")))
            await session.delete(f"{PODS}/jupyter-n", params={"gracePeriodSeconds": "0"})
            await wait_until(lambda: cluster.pod("jupyter-n") is None)
        assert cluster.events_for("jupyter-n") == []


def test_command_line_prints_url_writes_kubeconfig_and_stops_on_sigterm(tmp_path):
    kubeconfig = tmp_path / "kc.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "richprogress.demo.cluster", "--port", "0", "--speed", "10",
         "--kubeconfig", str(kubeconfig)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = process.stdout.readline().strip()
        assert line.startswith("richprogress-cluster listening on http://127.0.0.1:")
        url = line.rsplit(" ", 1)[1]
        config = json.loads(kubeconfig.read_text())
        assert config["clusters"][0]["cluster"]["server"] == url
        import urllib.request

        with urllib.request.urlopen(f"{url}{PODS}", timeout=10) as response:
            assert json.load(response)["kind"] == "PodList"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


async def test_services_and_secrets_owned_by_a_pod_go_with_it(tmp_path):
    async with running_cluster(tmp_path, speed=200) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.post(PODS, json=pod_body("jupyter-o")) as r:
                uid = (await r.json())["metadata"]["uid"]
            owner = [{"apiVersion": "v1", "kind": "Pod", "name": "jupyter-o", "uid": uid}]
            for resource in ("services", "secrets"):
                url = f"/api/v1/namespaces/default/{resource}"
                body = {"metadata": {"name": "jupyter-o", "ownerReferences": owner}}
                async with session.post(url, json=body) as r:
                    assert r.status == 201
                async with session.get(f"{url}/jupyter-o") as r:
                    assert r.status == 200
            await session.delete(f"{PODS}/jupyter-o", params={"gracePeriodSeconds": "0"})
            await wait_until(lambda: cluster.pod("jupyter-o") is None)
            for resource in ("services", "secrets"):
                async with session.get(f"/api/v1/namespaces/default/{resource}/jupyter-o") as r:
                    assert r.status == 404


@pytest.mark.parametrize(
    ("method", "path", "code"),
    [
        pytest.param("GET", "/apis/apps/v1/deployments", 404, id="unknown-api"),
        pytest.param("GET", "/api/v1/namespaces/default/deployments", 404, id="unknown-resource"),
        pytest.param("OPTIONS", f"{PODS}/x", 405, id="unsupported-method"),
        pytest.param("PATCH", f"{PODS}/x", 415, id="patch-without-a-patch-type"),
        pytest.param("GET", f"{PODS}?labelSelector=a%20in%20(b", 400, id="bad-selector"),
    ],
)
async def test_errors_are_single_line_status_objects(tmp_path, method, path, code):
    async with running_cluster(tmp_path) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.request(method, path) as r:
                assert r.status == code
                assert r.content_type == "application/json"
                text = await r.text()
        assert "\n" not in text
        status = json.loads(text)
        assert (status["kind"], status["status"], status["code"]) == ("Status", "Failure", code)


def test_watch_from_a_version_older_than_the_kept_history_is_gone():
    from richprogress.demo.cluster.store import ObjectStore, TooOld

    store = ObjectStore(history_size=3)
    start = int(store.resource_version)
    for i in range(5):
        store.create("pods", {"metadata": {"name": f"p{i}", "namespace": "default"}})
    with pytest.raises(TooOld):
        list(store.replay("pods", start))
    recent = list(store.replay("pods", start + 3))
    assert [c.obj["metadata"]["name"] for c in recent] == ["p3", "p4"]


async def test_watch_without_resource_version_starts_with_current_objects(tmp_path):
    async with running_cluster(tmp_path) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            await session.post(PODS, json=pod_body("jupyter-p"))
            items = await read_watch(session, PODS, {"timeoutSeconds": "5"},
                                     until=lambda items: len(items) >= 1)
        assert [(i["type"], i["object"]["metadata"]["name"]) for i in items] == [("ADDED", "jupyter-p")]


async def test_loop_back_off_grows_only_the_retry_waits(tmp_path, monkeypatch):
    from richprogress.demo.cluster.kubelet import SimulatedKubelet

    waits: list[float] = []

    async def record(self, simulated_seconds):
        waits.append(simulated_seconds)
        await asyncio.sleep(0)

    monkeypatch.setattr(SimulatedKubelet, "sleep", record)
    # every event written: the count below shows each retry's pull. With real rates the
    # pod's 25-write burst runs out first and, the clock standing still here, never refills
    # (tests/demo/test_event_recorder.py pins that).
    async with running_cluster(tmp_path, real_event_rates=False) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            await session.post(PODS, json=pod_body("jupyter-q", image=MISSING_IMAGE))
        await wait_until(lambda: len(waits) >= 4 + 3 * 7)
        pulls = [e for e in cluster.events_for("jupyter-q") if e["reason"] == "Pulling"]
    # first pass, then (back-off wait, pull failure, back-off message) per retry
    assert waits[:4] == [0.3, 0.5, 1.2, 1.0]
    retries = [tuple(waits[i : i + 3]) for i in range(4, 4 + 3 * 7, 3)]
    assert [r[0] for r in retries] == [10, 20, 40, 80, 160, 300, 300]  # kubelet: x2, at most 5 min
    assert {r[1:] for r in retries} == {(1.2, 1.0)}
    assert pulls[0]["count"] >= 7


async def test_extra_scenario_files_are_played_by_annotation(tmp_path):
    scenario = {
        "name": "evicted",
        "outcome": "never-ready",
        "steps": [
            {"delay": 0.1, "events": [{"reason": "Evicted", "type": "Warning", "component": "kubelet",
                                       "message": "The node was low on resource: ephemeral-storage."}]},
        ],
    }
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "evicted.json").write_text(json.dumps(scenario))
    async with running_cluster(tmp_path, speed=100, scenario_dir=tmp_path / "extra") as cluster:
        assert "evicted" in cluster.scenario_names() and "happy-path" in cluster.scenario_names()
        async with aiohttp.ClientSession(cluster.url) as session:
            await session.post(PODS, json=pod_body("jupyter-r", scenario="evicted"))
        events = await wait_until(lambda: cluster.events_for("jupyter-r"))
        assert events[0]["message"] == "The node was low on resource: ephemeral-storage."


def test_command_line_on_a_busy_port_says_so_in_one_line():
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "richprogress.demo.cluster", "--port", str(port)],
            capture_output=True, text=True, timeout=30,
        )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"richprogress-cluster: cannot listen on 127.0.0.1:{port}: [Errno 98] Address already in use"
    ]
