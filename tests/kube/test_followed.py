"""Followed objects: events of custom resources and events naming our pod.

Real KubeSpawner code (through RichKubeSpawner) against the simulated cluster, which serves
the CRD-style ``JupyterServer`` and plays the ``operator`` and ``operator-error``
scenarios; plus the pieces alone: the option's checks, the related-event index, the
operator rules, and the simulated API's custom resource endpoints.

Helpers come from ``test_kubespawner`` (``rich_cluster``, ``make_spawner``, ``spawn``,
``check_stream``).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import aiohttp
import pytest
from traitlets import TraitError

from richprogress.demo.cluster.custom import API_VERSION, GROUP, KIND, PLURAL, VERSION
from richprogress.demo.cluster.events import build_event
from richprogress.kube.followed import FOLLOWED, RelatedEventIndex, check_spec, related_key
from richprogress.story.diagnosis import diagnose
from richprogress.story.hints import HINT_QUOTA
from richprogress.stream.inbox import Subscription
from richprogress.wording.formatter import EventFormatter
from tests.helpers.cluster import pod_body, running_cluster, wait_until
from tests.helpers.kubespawner import check_stream, make_spawner, rich_cluster, spawn
from tests.helpers.paths import REPO

FOLLOW = [{"kind": KIND, "api_version": API_VERSION, "name": "{pod_name}"}]
#: the operator-error scenario's quota refusal (8Gi asked, 28Gi of 32Gi used), in words
QUOTA_SENTENCE = (
    "The namespace's memory quota (user-quota) is full: 28 GiB of 32 GiB used, and your server asks for 8 GiB"
)


def kinds_in_order(records: list[dict[str, Any]]) -> list[str]:
    return [r["object"]["kind"] for r in records]


# -- with real KubeSpawner against the simulated cluster ----------------------------------------


async def test_operator_reports_on_its_custom_object_before_the_pod(tmp_path):
    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "operator", followed_objects=FOLLOW)
        events, error = await spawn(spawner)
        assert error is None
        records = check_stream(events)
        timeline = spawner.spawn_timeline.records()
        assert spawner.spawn_timeline.outcome == "ready"
        custom = [r for r in timeline if r["object"]["kind"] == KIND]
        assert [r["rule"] for r in custom] == [
            "operator-reconciling", "operator-created-child", "operator-created-child", "operator-reconciled",
        ]  # fmt: skip
        assert {r["object"]["name"] for r in custom} == {spawner.pod_name}
        assert custom[1]["message"] == f"The controller of {KIND} {spawner.pod_name} created Pod {spawner.pod_name}"
        # the controller spoke first, in the API server's order of writes. The timeline gets
        # the two kinds from two reflectors, each in its own order (above and below), but
        # which of the two delivers first is the machine's luck, not the cluster's order.
        written = sorted(cluster.store.list("events"), key=lambda e: int(e["metadata"]["resourceVersion"]))
        kinds = [e["involvedObject"]["kind"] for e in written if e["involvedObject"]["name"] == spawner.pod_name]
        assert kinds[:4] == [KIND] * 4 and kinds.index("Pod") == 4
        # the pod's own events follow, all of them
        reasons = [r["reason"] for r in timeline if r["object"]["kind"] == "Pod"]
        assert reasons == ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
        # custom records take part in the steps: the stream's progress starts at "requested"
        assert records[0]["phase"] == "requested"
        await spawner.stop(now=True)


async def test_without_the_option_the_custom_object_is_not_followed(tmp_path):
    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "operator")
        await spawn(spawner)
        assert spawner.spawn_timeline.outcome == "ready"
        assert KIND not in kinds_in_order(spawner.spawn_timeline.records())
        # the simulated controller did report: the option is what makes the difference
        assert any(e["involvedObject"]["kind"] == KIND for e in cluster.store.list("events"))
        assert not any(key[0].startswith("followed-events") for key in type(spawner).reflectors)
        await spawner.stop(now=True)


async def test_operator_error_is_the_diagnosis(tmp_path):
    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "operator-error", start_timeout=2, followed_objects=FOLLOW)
        _events, error = await spawn(spawner)
        assert error is not None
        timeline = spawner.spawn_timeline
        assert timeline.outcome == "failed"
        # the quota's refusal, worded from its numbers, on the controller's own object
        errors = [r for r in timeline.records() if r["rule"] == "quota-exceeded"]
        assert errors and errors[0]["severity"] == "error" and errors[0]["object"]["kind"] == KIND
        assert any(r["count"] > 1 for r in errors), "the controller retries: the same event repeats"
        found = diagnose(timeline.records(), timeline.failure_message)
        assert found["record_id"] == errors[0]["id"]
        assert found["summary"] == QUOTA_SENTENCE
        assert found["hint"] == HINT_QUOTA
        assert found["phase"] == "requested"
        await spawner.stop(now=True)


async def test_a_previous_spawns_custom_object_events_are_not_shown(tmp_path):
    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "operator-error", start_timeout=2, followed_objects=FOLLOW)
        await spawn(spawner)
        await spawner.stop(now=True)
        first = {r["id"] for r in spawner.spawn_timeline.records()}
        assert first
        # the next spawn has a new JupyterServer of the same name; the old one's events stay
        # in the cluster (Kubernetes keeps them for about an hour)
        await wait_until(lambda: cluster.store.find(PLURAL, "default", spawner.pod_name) is None)
        old_events = {e["metadata"]["uid"] for e in cluster.store.list("events")}
        assert first <= old_events
        spawner.extra_annotations = {"richprogress.demo/scenario": "operator"}
        spawner.start_timeout = 10
        await spawn(spawner)
        second = spawner.spawn_timeline.records()
        assert spawner.spawn_timeline.outcome == "ready"
        assert not first & {r["id"] for r in second}
        assert "operator-error" not in {r["rule"] for r in second}
        await spawner.stop(now=True)


async def test_an_event_naming_our_pod_as_related_is_shown_as_what_it_means(tmp_path):
    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "operator-error", start_timeout=2)
        start = asyncio.ensure_future(spawn(spawner))
        await wait_until(lambda: cluster.pod(spawner.pod_name) is not None)
        pod_uid = cluster.pod(spawner.pod_name)["metadata"]["uid"]

        def preempted(victim: str, related: str | None) -> None:
            event = build_event(
                namespace="default",
                involved={"kind": "Pod", "namespace": "default", "name": victim, "uid": f"uid-{victim}", "apiVersion": "v1"},
                reason="Preempted",
                message=f"Preempted by pod {pod_uid} on node sim-node-1",
                component="default-scheduler",
                api="events.k8s.io",
            )
            if related:
                event["related"] = {"kind": "Pod", "namespace": "default", "name": related, "uid": pod_uid, "apiVersion": "v1"}
            cluster.store.create("events", event)

        preempted("user-placeholder-0", spawner.pod_name)
        preempted("user-placeholder-1", None)  # about another pod, not naming ours: not ours
        preempted("user-placeholder-2", "jupyter-someone-else")
        events, _error = await start
        records = check_stream(events)
        related = [r for r in records if r["object"]["name"].startswith("user-placeholder")]
        assert [r["object"]["name"] for r in related] == ["user-placeholder-0"]
        assert related[0]["message"] == "Pod user-placeholder-0 was preempted to make room for your server"
        assert related[0]["severity"] == "info"
        # so it is not mistaken for the cause of the failure
        found = diagnose(spawner.spawn_timeline.records(), spawner.spawn_timeline.failure_message)
        assert found["record_id"] != related[0]["id"]
        await spawner.stop(now=True)


async def test_a_callable_names_the_followed_objects(tmp_path):
    seen: list[str] = []

    async def follow(spawner: Any) -> list[dict[str, str]]:
        seen.append(spawner.user.name)
        return [{"kind": KIND, "name": "jupyter-{username}"}]

    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "operator", followed_objects=follow)
        await spawn(spawner)
        assert seen == ["alice"]
        assert KIND in kinds_in_order(spawner.spawn_timeline.records())
        await spawner.stop(now=True)


# -- the option ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec,problem",
    [
        ("JupyterServer", "must be a dict"),
        ({"name": "x"}, "'kind' must be"),
        ({"kind": "Jupyter Server"}, "'kind' must be"),
        ({"kind": "X", "nmae": "x"}, "unknown key(s) ['nmae']"),
        ({"kind": "X", "name": "{pod_name"}, "not a valid template"),
        ({"kind": "X", "api_version": ""}, "'api_version' must be"),
    ],
    ids=["not-a-dict", "no-kind", "bad-kind", "typo", "bad-template", "empty-version"],
)
def test_bad_followed_objects_fail_at_start_naming_the_option(spec, problem):
    from richprogress.kube.spawner import RichKubeSpawner

    with pytest.raises(TraitError) as raised:
        RichKubeSpawner(_mock=True, followed_objects=[{"kind": "Fine"}, spec])
    assert "RichKubeSpawner.followed_objects[1]" in str(raised.value) and problem in str(raised.value)


def test_followed_object_defaults():
    assert check_spec({"kind": "JupyterServer"}, "x") == {"kind": "JupyterServer", "name": "{pod_name}"}


def _followed_event(ref: str, api_version: str, last: str | None, count: int = 1) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "ns", "name": ref, "resourceVersion": str(count)},
        "involvedObject": {"kind": KIND, "namespace": "ns", "name": "jupyter-a", "apiVersion": api_version},
        "lastTimestamp": last, "count": count,
    }  # fmt: skip


def test_followed_event_filter_by_version_baseline_and_time():
    from datetime import datetime, timezone

    from richprogress.kube.followed import FollowedEventFilter, FollowedObject

    follow = FollowedEventFilter(datetime(2026, 11, 30, 12, 0, 0, tzinfo=timezone.utc), skew=5)
    follow.follow([FollowedObject(KIND, "jupyter-a", "ns", API_VERSION)])
    known = _followed_event("e1", API_VERSION, "2026-11-30T12:00:01Z")
    follow.set_baseline([known])
    assert not follow.shows(known)  # there before the spawn subscribed, unchanged
    assert follow.shows(_followed_event("e1", API_VERSION, "2026-11-30T12:00:03Z", count=2))  # it repeated
    assert follow.shows(_followed_event("e2", API_VERSION, "2026-11-30T11:59:56Z"))  # within the skew
    assert not follow.shows(_followed_event("e3", API_VERSION, "2026-11-30T11:50:00Z"))  # an earlier spawn's
    assert not follow.shows(_followed_event("e4", "other.example.org/v1", "2026-11-30T12:00:03Z"))  # another kind of that name


# -- the related-event index -------------------------------------------------------------------


def _event(ref: str, involved: str, related: str | None = None, rv: str = "1") -> dict[str, Any]:
    event: dict[str, Any] = {
        "metadata": {"namespace": "ns", "name": ref, "resourceVersion": rv},
        "involvedObject": {"kind": "Pod", "namespace": "ns", "name": involved},
    }
    if related:
        event["related"] = {"kind": "Pod", "namespace": "ns", "name": related}
    return event


def test_related_index_keys_events_by_their_related_pod_too():
    index = RelatedEventIndex()
    index.put_now("ns/a", _event("a", "placeholder", related="jupyter-alice"))
    index.put_now("ns/b", _event("b", "jupyter-alice"))
    sub = index.subscribe([related_key("ns", "jupyter-alice")], Subscription())
    assert [(source, obj["metadata"]["name"]) for source, obj in sub.drain()] == [(FOLLOWED, "a")]
    # still indexed by its involved object as before
    assert [e["metadata"]["name"] for e in index.objects_for(("ns", "Pod", "placeholder"))] == ["a"]
    index.put_now("ns/c", _event("c", "other", related="jupyter-alice"))
    index.put_now("ns/d", _event("d", "other", related="jupyter-bob"))
    assert [obj["metadata"]["name"] for _s, obj in sub.drain()] == ["c"]
    # an update that drops the related object moves it out; a delete forgets it
    index.put_now("ns/c", _event("c", "other", rv="2"))
    index.remove("ns/a")
    assert index.related_to(related_key("ns", "jupyter-alice")) == []
    # a relist wakes only for what changed
    index.replace_all({"ns/e": _event("e", "x", related="jupyter-alice"), "ns/d": index.related_to(related_key("ns", "jupyter-bob"))[0]})
    assert [obj["metadata"]["name"] for _s, obj in sub.drain()] == ["e"]
    index.unsubscribe(sub)
    assert index.stats()["subscribed_keys"] == 0


# -- the rules for custom resources ------------------------------------------------------------

RULE_CASES = [
    # kind, reason, type, message, rule, sentence
    ("Workspace", "Reconciling", "Normal", "Reconciling", "operator-reconciling", "The controller is working on Workspace w1"),
    ("Workspace", "Synced", "Normal", "Workspace synced successfully", "operator-reconciled", "The controller processed Workspace w1"),
    ("Workspace", "SuccessfulCreate", "Normal", "Created pod: jupyter-x", "operator-created-child", "The controller of Workspace w1 created pod jupyter-x"),
    ("Workspace", "Updated", "Normal", 'Updated StatefulSet "nb"', "operator-updated-child", "The controller of Workspace w1 updated StatefulSet nb"),
    ("Workspace", "ReconcileError", "Warning", "secrets \"s3\" not found", "operator-error", 'The controller of Workspace w1 reported an error: secrets "s3" not found'),
    ("Workspace", "SyncFailed", "Warning", "Operation cannot be fulfilled on workspaces.x \"w1\": the object has been modified; please apply your changes to the latest version and try again", "operator-conflict", "The controller could not save Workspace w1 because it changed meanwhile"),
    # a reason we do not know stays the controller's own words
    ("Workspace", "Frobnicated", "Normal", "frobnicated the widget", None, "frobnicated the widget"),
    # core kinds keep their own rules
    ("Pod", "Created", "Normal", "Created pod: jupyter-x", None, "Created pod: jupyter-x"),
]  # fmt: skip


@pytest.mark.parametrize("kind,reason,type_,message,rule,sentence", RULE_CASES, ids=[f"{c[0]}-{c[1]}" for c in RULE_CASES])
def test_operator_rules(kind, reason, type_, message, rule, sentence):
    event = {
        "metadata": {"uid": "u", "namespace": "ns"},
        "involvedObject": {"kind": kind, "name": "w1", "namespace": "ns"},
        "reason": reason, "type": type_, "message": message, "lastTimestamp": None,
    }  # fmt: skip
    record = EventFormatter().format_event(event)
    assert (record["rule"], record["message"]) == (rule, sentence)
    assert record["object"]["kind"] == kind and record["object"]["name"] == "w1"
    assert record["raw_message"] == message


def test_every_operator_rule_has_a_case_and_problems_a_hint():
    from richprogress.wording.default_rules.operators import OPERATOR_RULES

    assert {rule["id"] for rule in OPERATOR_RULES} == {case[4] for case in RULE_CASES} - {None}
    for rule in OPERATOR_RULES:
        if rule.get("severity") in ("warning", "error"):
            assert len(rule["hint"]) > 20, rule["id"]


# -- the simulated API serves the custom resource ----------------------------------------------


async def test_simulated_api_lists_and_watches_the_custom_resource(tmp_path):
    from kubernetes_asyncio import client, config, watch

    async with rich_cluster(tmp_path, 50) as cluster:
        base = f"/apis/{GROUP}/{VERSION}/namespaces/default/{PLURAL}"
        await config.load_kube_config(config_file=str(tmp_path / "kubeconfig.json"))
        async with client.ApiClient() as api_client:
            api = client.CustomObjectsApi(api_client)
            listed = await api.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)
            assert listed["items"] == [] and listed["apiVersion"] == API_VERSION
            # a pod playing the operator scenario gets its JupyterServer
            spawner = make_spawner(cluster, "alice", "operator")
            start = asyncio.ensure_future(spawner.start())
            stream = watch.Watch().stream(
                api.list_namespaced_custom_object, GROUP, VERSION, "default", PLURAL,
                resource_version=listed["metadata"]["resourceVersion"], timeout_seconds=5,
            )  # fmt: skip
            async for change in stream:
                assert change["type"] == "ADDED"
                assert change["object"]["kind"] == KIND and change["object"]["metadata"]["name"] == spawner.pod_name
                break
            await start
            one = await api.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, spawner.pod_name)
            assert one["apiVersion"] == API_VERSION
            await spawner.stop(now=True)
        async with aiohttp.ClientSession() as http:
            # the custom plural is not a core resource, and another group does not have it
            for path in (f"/api/v1/namespaces/default/{PLURAL}", base.replace(GROUP, "other.example.org")):
                async with http.get(cluster.url + path) as response:
                    assert response.status == 404
                    assert json.loads(await response.text())["reason"] == "NotFound"


async def test_explain_diagnoses_the_operator_error_from_kubectl_events(tmp_path):
    """What an admin does: ``kubectl get events --field-selector involvedObject.name=<pod>``
    (the custom object is named like the pod, so its events come along) piped into
    ``richprogress explain --diagnose``."""
    async with running_cluster(tmp_path, speed=200) as cluster:
        async with aiohttp.ClientSession(cluster.url) as http:
            async with http.post("/api/v1/namespaces/default/pods", json=pod_body("jupyter-erin", scenario="operator-error")) as response:
                assert response.status == 201
            await wait_until(lambda: any((e.get("count") or 1) > 1 for e in cluster.store.list("events")))
            query = {"fieldSelector": "involvedObject.name=jupyter-erin"}
            async with http.get("/api/v1/namespaces/default/events", params=query) as response:
                listed = await response.text()
    root = REPO
    result = subprocess.run(
        [sys.executable, "-m", "richprogress.cli", "explain", "--diagnose"],
        input=listed, capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["summary"] == QUOTA_SENTENCE
    assert found["phase"] == "requested"
