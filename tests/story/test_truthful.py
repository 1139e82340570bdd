"""Each class of wrong cause, pinned with real wordings.

Every case is a sequence of events as Kubernetes, cluster-autoscaler or Karpenter word them
(several releases where the wording differs), and what a person reads: the sentence of a
record, the diagnosis (what the failure page and ``explain --diagnose`` say), or the CLI
timeline. The sources of each wording are listed in tests/data/wording-corpus.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from richprogress.cli import main
from richprogress.story.diagnosis import diagnose
from richprogress.wording.formatter import EventFormatter

NOTEBOOK = "spec.containers{notebook}"


def ev(
    reason: str,
    message: str,
    second: int,
    *,
    type: str = "Normal",
    component: str = "kubelet",
    field_path: str | None = None,
    kind: str = "Pod",
    name: str = "jupyter-alice",
) -> dict[str, Any]:
    involved: dict[str, Any] = {"kind": kind, "namespace": "jhub", "name": name, "uid": f"uid-{name}"}
    if field_path:
        involved["fieldPath"] = field_path
    stamp = f"2026-11-29T21:{30 + second // 60:02d}:{second % 60:02d}Z"
    return {
        "kind": "Event",
        "metadata": {"name": f"{name}.{second}", "namespace": "jhub", "uid": f"e-{reason}-{second}"},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
        "type": type,
    }


def records(events: list[dict[str, Any]]) -> list[Any]:
    formatter = EventFormatter()
    return [formatter.format_event(event) for event in events]


def explain(events: list[dict[str, Any]], *args: str, capsys: Any, tmp_path: Path) -> str:
    path = tmp_path / "events.json"
    path.write_text(json.dumps({"items": events}), encoding="utf-8")
    assert main(["explain", str(path), "--color", "never", *args]) == 0
    return capsys.readouterr().out


# ---- whose event is it ----------------------------------------------------------------------

PLACEHOLDER = ev("Preempted", "Preempted by pod 7d0e6f5c-3a52-4a8e-9f3b-1c2d3e4f5a6b on node user-pool-1", 2,
                 component="default-scheduler", name="user-placeholder-0")


def test_a_placeholder_preempted_for_the_server_is_good_news() -> None:
    (record,) = records([PLACEHOLDER])
    assert "your server" not in record["message"].lower()
    assert record["message"].startswith("Room was made")
    assert record["severity"] == "info"


def test_another_users_preempted_pod_is_never_your_server() -> None:
    (record,) = records([ev("Preempted", "Preempted by jhub/jupyter-alice on node node-a1", 1,
                            component="default-scheduler", name="jupyter-bob")])
    assert "your server" not in record["message"].lower()
    assert "jupyter-bob" in record["message"]


def test_a_spawn_that_became_ready_never_ends_with_what_went_wrong(capsys: Any, tmp_path: Path) -> None:
    events = [
        ev("FailedScheduling", "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are "
           "available: 2 No preemption victims found for incoming pod.", 0, type="Warning",
           component="default-scheduler"),
        PLACEHOLDER,
        ev("Scheduled", "Successfully assigned jhub/jupyter-alice to user-pool-1", 3, component="default-scheduler"),
        ev("Pulled", 'Container image "quay.io/jupyter/base-notebook:2026-11" already present on machine', 4,
           field_path=NOTEBOOK),
        ev("Created", "Created container: notebook", 5, field_path=NOTEBOOK),
        ev("Started", "Started container notebook", 6, field_path=NOTEBOOK),
        # a readiness probe failing at first is a server still settling, not a failure
        ev("Unhealthy", "Readiness probe failed: Get \"http://10.0.0.7:8888/api\": dial tcp 10.0.0.7:8888: "
           "connect: connection refused", 7, type="Warning", field_path=NOTEBOOK),
    ]
    out = explain(events, capsys=capsys, tmp_path=tmp_path)
    assert "Room was made" in out
    assert "What went wrong" not in out


# ---- storage is not scheduling --------------------------------------------------------------

STORAGE_MESSAGES = [
    pytest.param("0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 "
                 "nodes are available: 3 Preemption is not helpful for scheduling.", id="unbound-pvc-1.27"),
    pytest.param("0/3 nodes are available: 3 pod has unbound immediate PersistentVolumeClaims.", id="unbound-pvc-1.22"),
    pytest.param("0/4 nodes are available: 4 node(s) didn't find available persistent volumes to bind.",
                 id="no-pv-to-bind"),
    pytest.param('running PreBind plugin "VolumeBinding": binding volumes: timed out waiting for the condition',
                 id="prebind-timeout-1.2x"),
    pytest.param('running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded',
                 id="prebind-deadline-1.3x"),
    pytest.param("0/2 nodes are available: 2 node(s) had volume node affinity conflict.", id="volume-affinity"),
]


@pytest.mark.parametrize("message", STORAGE_MESSAGES)
def test_storage_problems_are_worded_as_storage_in_the_storage_step(message: str) -> None:
    (record,) = records([ev("FailedScheduling", message, 0, type="Warning", component="default-scheduler")])
    assert record["phase"] == "volume"
    assert any(word in record["message"].lower() for word in ("storage", "disk"))
    # no invented cause: the zone is named only when the event names it
    assert "zone" not in record["message"].lower()


def test_a_zone_is_named_when_the_event_says_zone() -> None:
    (record,) = records([ev("FailedScheduling", "0/3 nodes are available: 3 node(s) had no available volume zone.",
                            0, type="Warning", component="default-scheduler")])
    assert "zone" in record["message"]


# ---- machine health is not "reserved" ------------------------------------------------------

@pytest.mark.parametrize(
    "taint",
    ["node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready", "node.kubernetes.io/disk-pressure",
     "node.kubernetes.io/memory-pressure", "node.kubernetes.io/unschedulable"],
)
@pytest.mark.parametrize(
    "template",
    ["0/2 nodes are available: 2 node(s) had untolerated taint {%s: }.",  # 1.25+
     "0/2 nodes are available: 2 node(s) had taint {%s: }, that the pod didn't tolerate."],  # up to 1.24
    ids=["untolerated-1.25+", "had-taint-1.24"],
)
def test_machine_health_taints_are_not_reserved_machines(taint: str, template: str) -> None:
    (record,) = records([ev("FailedScheduling", template % taint, 0, type="Warning", component="default-scheduler")])
    assert "reserved" not in record["message"]
    assert record["rule"] == "failed-scheduling"


def test_other_taints_are_reserved_for_other_work() -> None:
    message = "0/2 nodes are available: 2 node(s) had untolerated taint {hub.jupyter.org/dedicated: core}."
    (record,) = records([ev("FailedScheduling", message, 0, type="Warning", component="default-scheduler")])
    assert record["message"] == "All machines are reserved for other work"


# ---- affinity is not anti-affinity ----------------------------------------------------------

def test_affinity_is_not_anti_affinity() -> None:
    affinity, anti, existing = records([
        ev("FailedScheduling", "0/3 nodes are available: 3 node(s) didn't match pod affinity rules.", 0,
           type="Warning", component="default-scheduler"),
        ev("FailedScheduling", "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.", 1,
           type="Warning", component="default-scheduler"),
        ev("FailedScheduling", "0/3 nodes are available: 3 node(s) didn't satisfy existing pods anti-affinity "
           "rules.", 2, type="Warning", component="default-scheduler"),
    ])
    assert "next to" in affinity["message"] and "must not" not in affinity["message"]
    assert "must not share" in anti["message"]
    assert "must not share" in existing["message"]


# ---- no raw fragment, no doubled clause -----------------------------------------------------

def test_scale_up_summary_never_doubles_or_pastes() -> None:
    doubled, unknown = records([
        ev("NotTriggerScaleUp", "pod didn't trigger scale-up: 1 Insufficient cpu, 2 Insufficient cpu", 0,
           component="cluster-autoscaler"),
        ev("NotTriggerScaleUp", "pod didn't trigger scale-up: 3 node(s) had some brand new problem", 1,
           component="cluster-autoscaler"),
    ])
    assert doubled["message"].count("CPU") == 1
    assert "brand new problem" not in unknown["message"]
    assert unknown["raw_message"].endswith("brand new problem")


# ---- retry advice only when a retry can help -------------------------------------------------

@pytest.mark.parametrize(
    ("event", "who"),
    [
        pytest.param(ev("OutOfcpu", "Node didn't have enough resource: cpu, requested: 200000, used: 1200, "
                        "capacity: 3920", 0, type="Warning"), "smaller server option", id="bigger-than-machine"),
        pytest.param(ev("FailedCreatePodSandBox", "Failed to create pod sandbox: rpc error: code = Unknown desc = "
                        'failed to setup network for sandbox "0f1e": plugin type="calico" failed (add): error '
                        "getting ClusterInformation: connection is unauthorized: Unauthorized", 0, type="Warning"),
                     "administrator", id="network-plugin-refuses"),
        pytest.param(ev("InspectFailed", 'Failed to apply default image tag "None:None": couldn\'t parse image '
                        'reference "None:None": invalid reference format: repository name must be lowercase', 0,
                        type="Warning", field_path=NOTEBOOK), "administrator", id="unset-image"),
    ],
)
def test_no_retry_advice_where_a_retry_cannot_help(event: dict[str, Any], who: str) -> None:
    (record,) = records([event])
    hint = record["hint"] or ""
    assert who in hint
    assert "again" not in hint.lower().replace("check it", "")
    assert "temporary" not in hint.lower()
    assert diagnose([record])["hint"] == hint


# ---- the diagnosis prefers the definitive error ---------------------------------------------

def test_karpenter_no_instance_type_beats_later_generic_retries() -> None:
    events = [
        ev("FailedScheduling", 'Failed to schedule pod, incompatible with nodepool "default", daemonset '
           'overhead={"cpu":"210m","memory":"240Mi","pods":"5"}, no instance type satisfied resources '
           '{"cpu":"200210m","memory":"1264Mi","pods":"6"} and requirements karpenter.sh/capacity-type In '
           "[on-demand spot], karpenter.sh/nodepool In [default]", 0, type="Warning", component="karpenter"),
        ev("FailedScheduling", "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
           "3 No preemption victims found for incoming pod.", 30, type="Warning", component="default-scheduler"),
    ]
    found = diagnose(records(events))
    assert found["summary"].startswith("No type of machine the cluster can add is big enough")
    assert "200 CPUs" in found["summary"]


def test_multi_attach_naming_the_holder_beats_the_mount_timeout() -> None:
    events = [
        ev("FailedAttachVolume", 'Multi-Attach error for volume "pvc-0b2d" Volume is already used by pod(s) '
           "jupyter-alice-7f9c", 0, type="Warning", component="attachdetach-controller"),
        ev("FailedMount", "Unable to attach or mount volumes: unmounted volumes=[home], unattached volumes=[home "
           "kube-api-access-x1]: timed out waiting for the condition", 120, type="Warning"),
    ]
    found = diagnose(records(events))
    assert "jupyter-alice-7f9c" in found["summary"]


def test_a_liveness_kill_beats_the_health_check_warnings() -> None:
    events = [
        ev("Started", "Started container notebook", 0, field_path=NOTEBOOK),
        ev("Killing", "Container notebook failed liveness probe, will be restarted", 40, field_path=NOTEBOOK),
        ev("Unhealthy", "Liveness probe failed: Get \"http://10.0.0.7:8888/api\": context deadline exceeded", 41,
           type="Warning", field_path=NOTEBOOK),
    ]
    found = diagnose(records(events))
    assert "liveness" in found["summary"] and "restarted" in found["summary"]


# ---- image references ------------------------------------------------------------------------

@pytest.mark.parametrize(
    "image",
    ["registry.example.org:5000/team/notebook:2026-11",
     "quay.io/jupyter/base-notebook@sha256:0f0e0d0c0b0a09080706050403020100f0e0d0c0b0a090807060504030201000",
     '<iframe srcdoc=\\"<script>alert(1)</script>\\">'],
    ids=["port", "digest", "hostile-quotes"],
)
def test_image_references_are_read_whole(image: str) -> None:
    (record,) = records([ev("Pulling", f'Pulling image "{image}"', 0, field_path=NOTEBOOK)])
    assert record["rule"] == "image-pulling"
    assert image in record["message"]


def test_the_record_cache_never_gives_a_placeholder_wording_to_a_server() -> None:
    """The same preemption message for a placeholder, then for a server, in either order:
    the formatter's record cache must key these by the pod's name."""
    message = "Preempted by pod 7d0e6f5c-3a52-4a8e-9f3b-1c2d3e4f5a6b on node user-pool-1"
    formatter = EventFormatter()
    for names in (["user-placeholder-0", "jupyter-alice"], ["jupyter-bob", "user-placeholder-1"]):
        for n, name in enumerate(names * 2):
            event = ev("Preempted", message, n, component="default-scheduler", name=name)
            record = formatter.format_event(event)
            assert record["message"].startswith("Room was made") == name.startswith("user-placeholder")
