"""The simulated Kubernetes API against the real server's answers: the resources, verbs and
discovery KubeSpawner's own tests and kubectl use, namespaces' lifecycle, pod logs, lists,
field selectors and watch semantics. Each test names the real source it follows."""

from __future__ import annotations

import base64
import json

import aiohttp
import pytest

from richprogress.demo.cluster.patch import PatchError, json_patch, merge_patch
from tests.helpers.cluster import pod_body, running_cluster, wait_until

NS = "/api/v1/namespaces/default"
CONFIGMAPS = f"{NS}/configmaps"
MERGE = {"Content-Type": "application/merge-patch+json"}


async def read_watch(session, url, params, until=None, limit=200):
    """A watch stream's lines until it ends, ``until(items)`` holds, or ``limit``."""
    items = []
    async with session.get(url, params={**params, "watch": "true"}) as response:
        assert response.status == 200
        while len(items) < limit:
            line = await response.content.readline()
            if not line:
                break
            items.append(json.loads(line))
            if until is not None and until(items):
                break
    return items


def configmap(name, **labels):
    return {"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}


async def status_of(response):
    body = await response.json()
    assert body["kind"] == "Status"
    return response.status, body["reason"], body["message"]


# -- resources KubeSpawner's conftest and internal-SSL test create -----------------------


async def test_configmaps_secrets_and_services_as_kubespawners_tests_create_them(tmp_path):
    """KubeSpawner 7.1.0's tests/conftest.py creates a ConfigMap (hub config), a Secret (its
    certificates) and a Service with kubernetes_asyncio; the server fills in a Secret's
    ``data`` from ``stringData`` and a Service's cluster IP and port defaults, as
    pkg/registry/core/secret and service strategies do (Kubernetes v1.31)."""
    from kubernetes_asyncio import client, config

    async with running_cluster(tmp_path) as cluster:
        await config.load_kube_config(config_file=str(tmp_path / "kubeconfig.json"))
        async with client.ApiClient() as api_client:
            core = client.CoreV1Api(api_client)
            await core.create_namespaced_config_map("default", client.V1ConfigMap(metadata={"name": "hub-config"}, data={"a.py": "x = 1"}))
            read = await core.read_namespaced_config_map("hub-config", "default")
            assert read.data == {"a.py": "x = 1"}
            await core.create_namespaced_secret("default", client.V1Secret(metadata={"name": "certs"}, string_data={"k": "secret"}))
            secret = await core.read_namespaced_secret("certs", "default")
            assert base64.b64decode(secret.data["k"]) == b"secret" and secret.type == "Opaque"
            await core.create_namespaced_service(
                "default",
                client.V1Service(metadata={"name": "hub-ssl"}, spec=client.V1ServiceSpec(ports=[client.V1ServicePort(port=8081)], selector={"hub-name": "hub-ssl"})),
            )
            service = (await core.list_namespaced_service("default")).items[0]
            assert service.spec.cluster_ip.startswith("10.96.")
            assert (service.spec.ports[0].protocol, service.spec.ports[0].target_port) == ("TCP", 8081)
            deleted = await core.delete_namespaced_config_map("hub-config", "default")
            assert deleted.status == "Success"
            with pytest.raises(client.ApiException) as gone:
                await core.read_namespaced_config_map("hub-config", "default")
            assert gone.value.status == 404
        assert cluster.store.find("configmaps", "default", "hub-config") is None


# -- namespaces ---------------------------------------------------------------------------


async def test_a_missing_namespace_is_404_and_a_terminating_one_refuses_new_objects(tmp_path):
    """k8s.io/apiserver v0.31, staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/
    lifecycle/admission.go: no object is created in a namespace that does not exist
    (NotFound) or is being deleted (Forbidden, "unable to create new content in namespace X
    because it is being terminated"); the namespace goes once its contents have gone."""
    async with running_cluster(tmp_path, speed=50) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.post("/api/v1/namespaces/nope/configmaps", json=configmap("x")) as r:
                assert await status_of(r) == (404, "NotFound", 'namespaces "nope" not found')
            assert cluster.store.find("namespaces", "", "nope") is None
            async with session.post("/api/v1/namespaces", json={"metadata": {"name": "doomed"}}) as r:
                assert r.status == 201
            async with session.post("/api/v1/namespaces/doomed/pods", json=pod_body("jupyter-d")) as r:
                assert r.status == 201
            await wait_until(lambda: cluster.kubelet.runs.get(("doomed", "jupyter-d")) and cluster.kubelet.runs[("doomed", "jupyter-d")].ip)
            async with session.delete("/api/v1/namespaces/doomed") as r:
                assert (await r.json())["status"]["phase"] == "Terminating"
            async with session.post("/api/v1/namespaces/doomed/configmaps", json=configmap("late")) as r:
                assert await status_of(r) == (
                    403,
                    "Forbidden",
                    'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated',
                )
            await wait_until(lambda: cluster.store.find("namespaces", "", "doomed") is None)
            assert cluster.pod("jupyter-d", namespace="doomed") is None
            async with session.get("/api/v1/namespaces/doomed") as r:
                assert r.status == 404


# -- pods/log -----------------------------------------------------------------------------


async def test_pod_log_follows_the_kubelets_answers(tmp_path):
    """Kubernetes v1.31 pkg/registry/core/pod/strategy.go (LogLocation, validateContainer):
    a container that has not started is "waiting to start"; an unknown container is named;
    ``previous`` needs a terminated container; ``tailLines`` and ``limitBytes`` cut the text."""
    async with running_cluster(tmp_path, speed=50) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.post(f"{NS}/pods", json=pod_body("jupyter-l", image="quay.io/jupyter/scipy-notebook:2099-01-01")) as r:
                assert r.status == 201
            async with session.get(f"{NS}/pods/jupyter-l/log") as r:
                code, _, message = await status_of(r)
            assert code == 400 and message.startswith('container "notebook" in pod "jupyter-l" is waiting to start: ')
            async with session.post(f"{NS}/pods", json=pod_body("jupyter-k")) as r:
                assert r.status == 201
            run = await wait_until(lambda: cluster.kubelet.runs.get(("default", "jupyter-k")))
            standin = await wait_until(lambda: run.standin)
            async with session.get(f"{standin.url}/user/jupyter-k/api") as r:
                assert r.status == 200
            async with session.get(f"{NS}/pods/jupyter-k/log") as r:
                assert r.status == 200 and r.content_type == "text/plain"
                text = await r.text()
            lines = text.splitlines()
            assert "simulated notebook server for jupyter-k is running at:" in lines[0]
            assert lines[-1].endswith("ms") and "200 GET /user/jupyter-k/api" in lines[-1]
            async with session.get(f"{NS}/pods/jupyter-k/log", params={"tailLines": "1"}) as r:
                assert (await r.text()) == lines[-1] + "\n"
            async with session.get(f"{NS}/pods/jupyter-k/log", params={"limitBytes": "5"}) as r:
                assert (await r.text()) == text[:5]
            async with session.get(f"{NS}/pods/jupyter-k/log", params={"previous": "true"}) as r:
                assert await status_of(r) == (400, "BadRequest", 'previous terminated container "notebook" in pod "jupyter-k" not found')
            async with session.get(f"{NS}/pods/jupyter-k/log", params={"container": "bogus"}) as r:
                assert await status_of(r) == (400, "BadRequest", "container bogus is not valid for pod jupyter-k")
            async with session.get(f"{NS}/pods/nobody/log") as r:
                assert (await status_of(r))[0] == 404
            # follow: what is there, then the next line as the container writes it
            async with session.get(f"{NS}/pods/jupyter-k/log", params={"follow": "true"}) as r:
                for _ in lines:
                    await r.content.readline()
                async with session.get(f"{standin.url}/user/jupyter-k/api/status") as served:
                    assert served.status == 200
                assert "200 GET /user/jupyter-k/api/status" in (await r.content.readline()).decode()


# -- PATCH and PUT --------------------------------------------------------------------------


async def test_patch_and_replace_follow_the_real_verbs(tmp_path):
    """Kubernetes v1.31 staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go and
    update.go: merge and JSON patches apply, other content types are 415, and a PUT (or a
    patch) carrying a resourceVersion that is no longer current is 409 Conflict."""
    async with running_cluster(tmp_path) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.post(CONFIGMAPS, json=configmap("c", team="red")) as r:
                created = await r.json()
            async with session.patch(f"{CONFIGMAPS}/c", data=json.dumps({"metadata": {"labels": {"team": None, "tier": "gold"}}}), headers=MERGE) as r:
                patched = await r.json()
            assert patched["metadata"]["labels"] == {"tier": "gold"}
            assert patched["metadata"]["uid"] == created["metadata"]["uid"]
            assert int(patched["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
            ops = [{"op": "add", "path": "/data/more", "value": "w"}, {"op": "remove", "path": "/data/k"}]
            async with session.patch(f"{CONFIGMAPS}/c", data=json.dumps(ops), headers={"Content-Type": "application/json-patch+json"}) as r:
                assert (await r.json())["data"] == {"more": "w"}
            async with session.patch(f"{CONFIGMAPS}/c", data="{}", headers={"Content-Type": "text/plain"}) as r:
                assert r.status == 415
            stale = {**created, "data": {"k": "old"}}
            async with session.put(f"{CONFIGMAPS}/c", json=stale) as r:
                code, reason, message = await status_of(r)
            assert (code, reason) == (409, "Conflict") and "the object has been modified" in message
            current = cluster.store.get("configmaps", "default", "c")
            async with session.put(f"{CONFIGMAPS}/c", json={**current, "data": {"k": "new"}}) as r:
                assert r.status == 200 and (await r.json())["data"] == {"k": "new"}


def test_merge_and_json_patch_semantics():
    """RFC 7386 (null deletes, objects merge, lists replace) and RFC 6902 (add, remove, test)."""
    assert merge_patch({"a": {"b": 1, "c": 2}, "l": [1]}, {"a": {"b": None, "d": 3}, "l": [2]}) == {"a": {"c": 2, "d": 3}, "l": [2]}
    assert json_patch({"l": [1, 3]}, [{"op": "add", "path": "/l/1", "value": 2}]) == {"l": [1, 2, 3]}
    with pytest.raises(PatchError):
        json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 2}])
    with pytest.raises(PatchError):
        json_patch({"a": 1}, [{"op": "remove", "path": "/b"}])


# -- discovery ------------------------------------------------------------------------------


async def test_discovery_names_what_is_served(tmp_path):
    """What kubectl v1.32 reads first (client-go discovery): /api's versions, /api/v1's
    resources with their short names and pods/log, /apis' groups; no OpenAPI (404)."""
    async with running_cluster(tmp_path) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.get("/api") as r:
                assert (await r.json())["versions"] == ["v1"]
            async with session.get("/api/v1") as r:
                resources = {e["name"]: e for e in (await r.json())["resources"]}
            assert {"pods", "pods/log", "events", "configmaps", "secrets", "services", "namespaces"} <= set(resources)
            assert resources["events"]["shortNames"] == ["ev"] and resources["namespaces"]["namespaced"] is False
            async with session.get("/apis") as r:
                groups = [g["preferredVersion"]["groupVersion"] for g in (await r.json())["groups"]]
            assert "events.k8s.io/v1" in groups
            async with session.get("/apis/events.k8s.io/v1") as r:
                assert [e["name"] for e in (await r.json())["resources"]] == ["events"]
            async with session.get("/version") as r:
                assert (await r.json())["gitVersion"].startswith("v1.31")
            async with session.get("/openapi/v2") as r:
                assert r.status == 404


# -- events.k8s.io/v1 -----------------------------------------------------------------------


async def test_events_are_served_as_events_k8s_io_v1_too(tmp_path):
    """One stored Event, two group versions (Kubernetes v1.31 pkg/apis/events/v1/
    conversion.go): ``note`` is ``message``, ``regarding`` is ``involvedObject``; its field
    selectors use the new names (``regarding.name``) and refuse the old ones."""
    async with running_cluster(tmp_path) as cluster:
        cluster.add_event("jupyter-e", "Pulling", 'Pulling image "x"')
        base = "/apis/events.k8s.io/v1/namespaces/default/events"
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.get(base, params={"fieldSelector": "regarding.name=jupyter-e"}) as r:
                listed = await r.json()
            assert listed["apiVersion"] == "events.k8s.io/v1"
            [event] = listed["items"]
            assert (event["note"], event["regarding"]["name"], event["deprecatedCount"]) == ('Pulling image "x"', "jupyter-e", 1)
            assert "message" not in event and "involvedObject" not in event
            async with session.get(base, params={"fieldSelector": "involvedObject.name=jupyter-e"}) as r:
                assert await status_of(r) == (400, "BadRequest", "field label not supported: involvedObject.name")
            new = {
                "metadata": {"name": "sched.1"},
                "eventTime": "2026-01-01T00:00:00.000000Z",
                "regarding": {"kind": "Pod", "name": "jupyter-e", "namespace": "default"},
                "note": "0/3 nodes are available",
                "reason": "FailedScheduling",
                "type": "Warning",
                "action": "Scheduling",
                "reportingController": "default-scheduler",
                "reportingInstance": "default-scheduler-1",
            }
            async with session.post(base, json=new) as r:
                assert r.status == 201 and (await r.json())["note"] == "0/3 nodes are available"
            async with session.get(f"{NS}/events/sched.1") as r:
                core = await r.json()
            assert (core["message"], core["involvedObject"]["name"], core["reportingComponent"]) == (
                "0/3 nodes are available", "jupyter-e", "default-scheduler"
            )


# -- lists ----------------------------------------------------------------------------------


async def test_lists_come_in_key_order_and_page_with_limit_and_continue(tmp_path):
    """etcd lists by key (/registry/configmaps/<namespace>/<name>); ``limit`` cuts a list,
    ``metadata.continue`` is an opaque token for the rest of the same snapshot, and
    ``remainingItemCount`` is given for unfiltered lists (k8s.io/apiserver v0.31,
    staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go, GetList)."""
    async with running_cluster(tmp_path) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            for name in ("b", "a", "d", "c", "e"):
                async with session.post(CONFIGMAPS, json=configmap(name)) as r:
                    assert r.status == 201
            async with session.get(CONFIGMAPS) as r:
                assert [i["metadata"]["name"] for i in (await r.json())["items"]] == ["a", "b", "c", "d", "e"]
            async with session.get(CONFIGMAPS, params={"limit": "2"}) as r:
                first = await r.json()
            assert [i["metadata"]["name"] for i in first["items"]] == ["a", "b"]
            assert first["metadata"]["remainingItemCount"] == 3
            # an object made after the first page is not in this list's later pages
            async with session.post(CONFIGMAPS, json=configmap("bb")) as r:
                assert r.status == 201
            names, token = [], first["metadata"]["continue"]
            while token:
                async with session.get(CONFIGMAPS, params={"limit": "2", "continue": token}) as r:
                    page = await r.json()
                assert page["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
                names += [i["metadata"]["name"] for i in page["items"]]
                token = page["metadata"].get("continue")
            assert names == ["c", "d", "e"]
            async with session.get(CONFIGMAPS, params={"limit": "2", "continue": "bogus"}) as r:
                assert r.status == 400
            # the snapshot expires with the watch window
            cluster.speed = 1e12
            async with session.get(CONFIGMAPS, params={"limit": "2", "continue": first["metadata"]["continue"]}) as r:
                assert (await status_of(r))[:2] == (410, "Expired")


@pytest.mark.parametrize(
    ("path", "selector", "field"),
    [
        pytest.param(f"{NS}/events", "involvedObject.bogus=x", "involvedObject.bogus", id="event"),
        pytest.param(f"{NS}/pods", "spec.containers=x", "spec.containers", id="pod"),
        pytest.param(CONFIGMAPS, "data.k=v", "data.k", id="configmap"),
    ],
)
async def test_an_unsupported_field_selector_is_a_400(tmp_path, path, selector, field):
    """Kubernetes v1.31 pkg/apis/core/v1/conversion.go: each kind accepts only its own field
    labels; any other is "field label not supported: <field>", not an empty list."""
    async with running_cluster(tmp_path) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.get(path, params={"fieldSelector": selector}) as r:
                assert await status_of(r) == (400, "BadRequest", f"field label not supported: {field}")
            async with session.get(path, params={"fieldSelector": selector, "watch": "true"}) as r:
                assert r.status == 400


async def test_supported_event_field_selectors_match(tmp_path):
    """``source`` selects on source.component, ``type`` and ``reason`` on themselves
    (Kubernetes v1.31 pkg/registry/core/event/strategy.go, ToSelectableFields)."""
    async with running_cluster(tmp_path) as cluster:
        cluster.add_event("jupyter-s", "Pulling", "p", component="kubelet")
        cluster.add_event("jupyter-s", "FailedScheduling", "f", component="default-scheduler", event_type="Warning")
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.get(f"{NS}/events", params={"fieldSelector": "source=default-scheduler"}) as r:
                assert [e["reason"] for e in (await r.json())["items"]] == ["FailedScheduling"]
            async with session.get(f"{NS}/events", params={"fieldSelector": "type=Normal,reason=Pulling"}) as r:
                assert [e["reason"] for e in (await r.json())["items"]] == ["Pulling"]


# -- watch semantics ------------------------------------------------------------------------


async def test_a_watch_from_before_the_window_is_410_gone(tmp_path):
    """k8s.io/apiserver v0.31 staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go:
    a resourceVersion older than what the cache keeps is "too old resource version" (an
    ERROR event with a 410 Status); the window is about five simulated minutes (etcd's
    compaction interval), so a faster cluster forgets sooner."""
    async with running_cluster(tmp_path, speed=1) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            rv = cluster.store.resource_version
            async with session.post(CONFIGMAPS, json=configmap("w")) as r:
                assert r.status == 201
            recent = await read_watch(session, CONFIGMAPS, {"resourceVersion": rv, "timeoutSeconds": "1"}, until=lambda i: i)
            assert recent[0]["type"] == "ADDED"  # five real minutes at speed 1: still there
            cluster.speed = 1e12  # five simulated minutes now pass at once
            async with session.post(CONFIGMAPS, json=configmap("x")) as r:
                assert r.status == 201
            gone = await read_watch(session, CONFIGMAPS, {"resourceVersion": rv, "timeoutSeconds": "5"})
        assert [g["type"] for g in gone] == ["ERROR"]
        assert (gone[0]["object"]["code"], gone[0]["object"]["reason"]) == (410, "Expired")
        assert gone[0]["object"]["message"] == f"too old resource version: {rv}"


async def test_bookmarks_come_only_when_asked(tmp_path):
    """k8s.io/apiserver v0.31 staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go and
    cache_watcher.go: with ``allowWatchBookmarks`` a watch gets BOOKMARK events about every
    minute, an object of the watched kind carrying only the current resourceVersion."""
    async with running_cluster(tmp_path, speed=600) as cluster:  # a bookmark each 0.1 s
        async with aiohttp.ClientSession(cluster.url) as session:
            marked = await read_watch(session, CONFIGMAPS, {"allowWatchBookmarks": "true", "timeoutSeconds": "5"}, until=lambda i: len(i) >= 2)
            assert [m["type"] for m in marked] == ["BOOKMARK", "BOOKMARK"]
            assert marked[0]["object"]["kind"] == "ConfigMap"
            assert marked[0]["object"]["metadata"]["resourceVersion"] == cluster.store.resource_version
            plain = await read_watch(session, CONFIGMAPS, {"timeoutSeconds": "1"})
            assert plain == []


async def test_an_object_leaving_or_entering_a_selector_is_deleted_or_added(tmp_path):
    """k8s.io/apiserver v0.31 staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go
    (convertToWatchEvent): an update that takes an object out of a watch's selector is sent
    as DELETED (its previous state, the update's resourceVersion), one that brings it in as
    ADDED, one outside it not at all."""
    async with running_cluster(tmp_path) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            rv = cluster.store.resource_version
            async with session.post(CONFIGMAPS, json=configmap("m", team="red")) as r:
                assert r.status == 201
            for team in ("blue", "green", "red"):
                async with session.patch(f"{CONFIGMAPS}/m", data=json.dumps({"metadata": {"labels": {"team": team}}}), headers=MERGE) as r:
                    assert r.status == 200
            seen = await read_watch(session, CONFIGMAPS, {"labelSelector": "team=red", "resourceVersion": rv, "timeoutSeconds": "1"})
        assert [(s["type"], s["object"]["metadata"]["labels"]["team"]) for s in seen] == [
            ("ADDED", "red"), ("DELETED", "red"), ("ADDED", "red")
        ]
        blue_rv = int(seen[0]["object"]["metadata"]["resourceVersion"]) + 1
        assert int(seen[1]["object"]["metadata"]["resourceVersion"]) == blue_rv


# -- pods/exec --------------------------------------------------------------------------------


async def exec_in(session, pod, command):
    """Run ``command`` through pods/exec's websocket; return {channel: bytes}."""
    params = [("command", part) for part in command] + [("stdout", "true"), ("stderr", "true")]
    received: dict[int, bytes] = {}
    async with session.ws_connect(f"{NS}/pods/{pod}/exec", params=params, protocols=("v4.channel.k8s.io",)) as ws:
        assert ws.protocol == "v4.channel.k8s.io"
        async for message in ws:
            if message.type == aiohttp.WSMsgType.BINARY:
                received[message.data[0]] = received.get(message.data[0], b"") + message.data[1:]
    return received


async def test_exec_runs_the_command_with_the_pods_env_only_when_the_cluster_allows_it(tmp_path):
    """The remote-command protocol (Kubernetes v1.31 staging/src/k8s.io/apimachinery/pkg/util/
    remotecommand/constants.go, v4.channel.k8s.io): channel 1 stdout, 2 stderr, 3 the final
    Status, ``NonZeroExitCode`` with the code as its cause; what the sync kubernetes client's
    ``stream`` reads as ``returncode``. The stand-in's root sends the user to the prefix, as
    jupyterhub-singleuser does (KubeSpawner's tests expect 302 there)."""
    async with running_cluster(tmp_path, speed=50, exec_commands=True) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.post(f"{NS}/pods", json=pod_body("jupyter-x")) as r:
                assert r.status == 201
            run = await wait_until(lambda: cluster.kubelet.runs.get(("default", "jupyter-x")))
            standin = await wait_until(lambda: run.standin)
            code = "import os, sys; print(os.environ['JUPYTERHUB_USER']); print('oops', file=sys.stderr); sys.exit(3)"
            got = await exec_in(session, "jupyter-x", ["python3", "-c", code])
            assert got[1] == b"jupyter-x\n" and got[2] == b"oops\n"
            status = json.loads(got[3])
            assert (status["status"], status["reason"], status["details"]["causes"][0]["message"]) == ("Failure", "NonZeroExitCode", "3")
            assert json.loads((await exec_in(session, "jupyter-x", ["true"]))[3]) == {"metadata": {}, "status": "Success"}
            async with session.get(standin.url + "/", allow_redirects=False) as r:
                assert (r.status, r.headers["Location"]) == (302, "/user/jupyter-x/")
    async with running_cluster(tmp_path) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.post(f"{NS}/pods", json=pod_body("jupyter-y")) as r:
                assert r.status == 201
            async with session.get(f"{NS}/pods/jupyter-y/exec", params={"command": "true"}) as r:
                code, reason, message = await status_of(r)
            assert (code, reason) == (403, "Forbidden") and "runs no commands" in message


def test_command_line_options_for_the_peer_suites():
    """What scripts/kubespawner_suite.py asks of ``python -m richprogress.demo.cluster``."""
    from richprogress.demo.cluster.__main__ import parse_args

    args = parse_args(["--extra-image", "python:3.12-slim", "--extra-image", "quay.io/jupyterhub/jupyterhub:latest", "--exec-commands", "--real-event-rates"])
    assert args.extra_image == ["python:3.12-slim", "quay.io/jupyterhub/jupyterhub:latest"]
    assert args.exec_commands and args.real_event_rates
    plain = parse_args([])
    # real event rates are the default; --every-event writes each occurrence instead
    assert (plain.extra_image, plain.exec_commands, plain.real_event_rates) == ([], False, True)
    assert parse_args(["--every-event"]).real_event_rates is False


def test_an_update_that_changes_nothing_is_not_written():
    """kube-apiserver's storage (GuaranteedUpdate) skips a no-op update: same
    resourceVersion, no watch event. The kubelet's repeated "unschedulable" status relies
    on it: the scheduler's event series key holds the pod's resourceVersion."""
    from richprogress.demo.cluster.store import ObjectStore

    store = ObjectStore()
    created = store.create("pods", {"metadata": {"name": "p", "namespace": "default"}, "status": {"phase": "Pending"}})
    changes = []
    store.add_listener(changes.append)
    same = store.update("pods", "default", "p", lambda o: o["status"].update(phase="Pending"))
    assert same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"] and changes == []
    moved = store.update("pods", "default", "p", lambda o: o["status"].update(phase="Running"))
    assert int(moved["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    assert [c.type for c in changes] == ["MODIFIED"]
