"""Which causes are fatal (waiting cannot fix them), on real event text, and the rule key.

The table pins fail-fast's list of causes waiting cannot fix (docs/fail-fast.md): image
missing, invalid or refused, a request no machine can ever offer (as cluster-autoscaler or
Karpenter say it), a missing secret or config map, a container that keeps exiting at
start-up. And, as firmly, what is never fatal: a scale-up, a slow pull, storage being
provisioned, a quota or a size limit that may free up, a registry rate limit or 5xx, a
transient pull error.
"""

from __future__ import annotations

from typing import Any

import pytest

from richprogress.wording.default_rules import DEFAULT_RULES, FATAL_RULES
from richprogress.wording.formatter import EventFormatter
from richprogress.wording.rules import RuleError, load_rules

NOTEBOOK = "spec.containers{notebook}"
IMAGE = "quay.io/jupyter/no-such-notebook:2026-11"


def ev(reason: str, message: str, *, field_path: str | None = NOTEBOOK, type: str = "Warning",
       component: str = "kubelet", kind: str = "Pod") -> dict[str, Any]:
    involved: dict[str, Any] = {"kind": kind, "namespace": "jhub", "name": "jupyter-alice", "uid": "u-1"}
    if field_path:
        involved["fieldPath"] = field_path
    return {
        "metadata": {"name": "jupyter-alice.1", "namespace": "jhub", "uid": f"uid-{reason}"},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": "2026-11-29T21:33:30Z",
        "lastTimestamp": "2026-11-29T21:33:30Z",
        "count": 1,
        "type": type,
    }


FATAL = [
    pytest.param(ev("Failed", f'Failed to pull image "{IMAGE}": rpc error: code = NotFound desc = failed to '
                    f'pull and unpack image "{IMAGE}": failed to resolve reference "{IMAGE}": {IMAGE}: not found'),
                 "image-not-found", id="image-not-found"),
    pytest.param(ev("Failed", f'Failed to pull image "{IMAGE}": rpc error: code = Unknown desc = failed to pull '
                    f'and unpack image "{IMAGE}": failed to resolve reference "{IMAGE}": pull access denied, '
                    "repository does not exist or may require authorization: server message: "
                    "insufficient_scope: authorization failed"),
                 "image-access-denied", id="image-access-denied"),
    pytest.param(ev("InspectFailed", 'Failed to apply default image tag "Quay.io/x y": couldn\'t parse image '
                    "reference \"Quay.io/x y\": invalid reference format"),
                 "image-invalid-name", id="image-invalid-name"),
    pytest.param(ev("Failed", "Error: InvalidImageName"), "image-invalid-name-error", id="invalid-name-error"),
    pytest.param(ev("ErrImageNeverPull", f'Container image "{IMAGE}" is not present with pull policy of Never'),
                 "image-never-pull", id="never-pull"),
    pytest.param(ev("NotTriggerScaleUp", "pod didn't trigger scale-up (it wouldn't fit if a new node is added): "
                    "3 Insufficient nvidia.com/gpu", field_path=None, type="Normal",
                    component="cluster-autoscaler"),
                 "not-triggered-scale-up", id="autoscaler-too-big"),
    pytest.param(ev("NotTriggerScaleUp", "pod didn't trigger scale-up: 2 node(s) didn't match Pod's node "
                    "affinity/selector, 1 Insufficient memory", field_path=None, type="Normal",
                    component="cluster-autoscaler"),
                 "not-triggered-scale-up", id="autoscaler-no-group-matches"),
    pytest.param(ev("FailedScheduling", 'Failed to schedule pod, incompatible with nodepool "default", '
                    "daemonset overhead={\"cpu\":\"180m\"}, no instance type satisfied resources "
                    '{"cpu":"180m","memory":"300Gi","pods":"6"} and requirements', field_path=None,
                    component="karpenter"),
                 "karpenter-failed-scheduling", id="karpenter-no-instance-type"),
    # Karpenter v1.5+ (scheduling/nodeclaim.go InstanceTypeFilterError): no nodepool prefix any more
    pytest.param(ev("FailedScheduling", "Failed to schedule pod, no instance type has enough resources, "
                    "requirements=karpenter.sh/nodepool In [default], resources={\"cpu\":\"200\",\"pods\":\"6\"}",
                    field_path=None, component="karpenter"),
                 "karpenter-failed-scheduling", id="karpenter-no-instance-type-v1.5"),
    pytest.param(ev("FailedMount", 'MountVolume.SetUp failed for volume "creds" : secret "course-creds" not found',
                    field_path=None),
                 "volume-mount-missing", id="secret-missing"),
    pytest.param(ev("FailedMount", 'MountVolume.SetUp failed for volume "cfg" : configmap "course-config" not found',
                    field_path=None),
                 "volume-mount-missing", id="configmap-missing"),
    pytest.param(ev("BackOff", "Back-off restarting failed container notebook in pod jupyter-alice_jhub(u-1)"),
                 "container-crash-backoff", id="crash-loop"),
    pytest.param(ev("OOMKilled", "Container notebook was killed because it ran out of memory (exit code 137, "
                    "memory limit 1073741824)", component="richprogress"),
                 "container-oom-killed", id="oom-killed"),
    pytest.param(ev("Error", "Container notebook terminated: Error (exit code 1)", component="richprogress"),
                 "container-terminated", id="exits-at-start"),
    # the server alone asks for more than the quota allows: no other server stopping helps
    pytest.param(ev("FailedCreate", 'Error creating: pods "nb-x" is forbidden: exceeded quota: gpu-quota, '
                    "requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=0, limited: "
                    "requests.nvidia.com/gpu=1", field_path=None, kind="ReplicaSet",
                    component="replicaset-controller"),
                 "quota-exceeded", id="quota-request-beyond-the-limit"),
]

NOT_FATAL = [
    pytest.param(ev("FailedScheduling", "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes "
                    "are available: 3 No preemption victims found for incoming pod.", field_path=None,
                    component="default-scheduler"), id="scheduler-insufficient"),
    pytest.param(ev("TriggeredScaleUp", "pod triggered scale-up: [{eks-user-pool 3->4 (max: 10)}]",
                    field_path=None, type="Normal", component="cluster-autoscaler"), id="scale-up"),
    pytest.param(ev("NotTriggerScaleUp", "pod didn't trigger scale-up: 2 Insufficient cpu, 1 max node group "
                    "size reached", field_path=None, type="Normal", component="cluster-autoscaler"),
                 id="autoscaler-one-group-at-max"),
    pytest.param(ev("NotTriggerScaleUp", "pod didn't trigger scale-up: 1 in backoff after failed scale-up",
                    field_path=None, type="Normal", component="cluster-autoscaler"), id="autoscaler-backoff"),
    pytest.param(ev("NotTriggerScaleUp", "pod didn't trigger scale-up: 1 max cluster cpu, memory limit reached",
                    field_path=None, type="Normal", component="cluster-autoscaler"), id="autoscaler-cluster-limit"),
    pytest.param(ev("FailedScheduling", 'Failed to schedule pod, all available instance types exceed limits '
                    'for nodepool: "default"', field_path=None, component="karpenter"), id="karpenter-limits"),
    pytest.param(ev("Pulling", f'Pulling image "{IMAGE}"', type="Normal"), id="slow-pull"),
    pytest.param(ev("Failed", f'Failed to pull image "{IMAGE}": rpc error: code = Unknown desc = failed to pull '
                    "and unpack image: toomanyrequests: You have reached your pull rate limit."), id="rate-limit"),
    pytest.param(ev("Failed", f'Failed to pull image "{IMAGE}": rpc error: code = Unknown desc = failed to copy: '
                    "httpReadSeeker: failed open: unexpected status code https://quay.io/v2/x/blobs/sha256:ab: "
                    "503 Service Unavailable"), id="registry-5xx"),
    pytest.param(ev("Failed", "Error: ErrImagePull"), id="err-image-pull-follow-up"),
    pytest.param(ev("Failed", "Error: ImagePullBackOff"), id="pull-backoff-follow-up"),
    pytest.param(ev("ProvisioningFailed", "failed to provision volume with StorageClass \"gp3\": rpc error: "
                    "code = Internal desc = Could not create volume", field_path=None, kind="PersistentVolumeClaim"),
                 id="storage-provisioning-retry"),
    pytest.param(ev("FailedMount", 'MountVolume.SetUp failed for volume "home" : persistentvolumeclaim '
                    '"claim-alice" not found', field_path=None), id="pvc-on-its-way"),
    pytest.param(ev("FailedMount", "Unable to attach or mount volumes: unmounted volumes=[home], unattached "
                    "volumes=[home]: timed out waiting for the condition", field_path=None), id="mount-timeout"),
    pytest.param(ev("Unhealthy", "Readiness probe failed: connection refused"), id="probe-not-ready-yet"),
    pytest.param(ev("FailedCreatePodSandBox", "Failed to create pod sandbox: rpc error", field_path=None),
                 id="sandbox-retry"),
    # Karpenter v1.5+ wraps the limits error with operatorpkg serrors (appended: the hook test indexes this list)
    pytest.param(ev("FailedScheduling", "Failed to schedule pod, all available instance types exceed limits "
                    "for nodepool (NodePool=default)", field_path=None, component="karpenter"), id="karpenter-limits-v1.5"),
    # a full quota frees up when other servers stop; so does one the server just fills
    pytest.param(ev("ReconcileError", 'failed to create pod jhub/jupyter-alice: pods "jupyter-alice" is forbidden: '
                    "exceeded quota: user-quota, requested: limits.memory=8Gi, used: limits.memory=28Gi, limited: "
                    "limits.memory=32Gi", field_path=None, kind="JupyterServer",
                    component="jupyterserver-controller"), id="quota-full"),
    pytest.param(ev("FailedCreate", 'Error creating: pods "nb-x" is forbidden: exceeded quota: q, requested: '
                    "requests.cpu=4, used: requests.cpu=1, limited: requests.cpu=4", field_path=None,
                    kind="ReplicaSet", component="replicaset-controller"), id="quota-request-equals-the-limit"),
    pytest.param(ev("FailedCreate", 'Error creating: admission webhook "policy.example.org" denied the request: '
                    "no GPU servers after 18:00", field_path=None, kind="ReplicaSet",
                    component="replicaset-controller"), id="admission-webhook"),
]


@pytest.mark.parametrize(("event", "rule"), FATAL)
def test_fatal_causes(event: dict[str, Any], rule: str) -> None:
    record = EventFormatter().format_event(event)
    assert record["rule"] == rule
    assert record.get("fatal") is True


@pytest.mark.parametrize("event", NOT_FATAL)
def test_causes_that_waiting_can_fix_are_never_fatal(event: dict[str, Any]) -> None:
    record = EventFormatter().format_event(event)
    assert "fatal" not in record, record["rule"]


def test_the_fatal_table_names_default_rules() -> None:
    ids = {rule["id"] for rule in DEFAULT_RULES}
    assert set(FATAL_RULES) <= ids, set(FATAL_RULES) - ids


def test_pr910_style_rules_are_not_fatal_and_still_work() -> None:
    formatter = EventFormatter(rules=[{"match": {"reason": "Failed"}, "template": "pull failed"}])
    record = formatter.format_event(FATAL[0].values[0])
    assert record["message"] == "pull failed"
    assert "fatal" not in record


def test_extra_rules_can_mark_and_unmark_fatal() -> None:
    formatter = EventFormatter(extra_rules=[
        {"id": "our-mirror-lags", "match": {"reason": "Failed", "message": ".*not found"},
         "template": "Our mirror does not have this image yet", "fatal": False},
        {"id": "quota", "match": {"reason": "FailedCreate", "message": ".*exceeded quota"},
         "template": "Your course has used all of its servers", "fatal": True},
    ])
    assert "fatal" not in formatter.format_event(FATAL[0].values[0])
    assert formatter.format_event(ev("FailedCreate", "pods is forbidden: exceeded quota"))["fatal"] is True


def test_format_hook_can_mark_and_unmark_fatal() -> None:
    def hook(spawner: Any, event: Any, record: dict[str, Any]) -> dict[str, Any]:
        record["fatal"] = record["rule"] == "image-pull-failed"
        return record

    formatter = EventFormatter(format_hook=hook)
    assert formatter.format_event(FATAL[0].values[0])["fatal"] is False
    flaky = NOT_FATAL[8].values[0]
    assert formatter.format_event(flaky)["fatal"] is True


def test_a_hook_cannot_set_fatal_to_a_non_bool() -> None:
    formatter = EventFormatter(format_hook=lambda s, e, r: {**r, "fatal": "yes"})
    assert formatter.format_event(FATAL[0].values[0])["fatal"] is True  # the rule's value stays


def test_callable_fatal_gets_the_groups_and_a_failing_one_is_not_fatal() -> None:
    def explode(**groups: str) -> bool:
        raise RuntimeError("boom")

    formatter = EventFormatter(extra_rules=[
        {"id": "by-group", "match": {"reason": "Failed", "message": "(?P<what>\\w+)"},
         "template": "{what}", "fatal": lambda what="", **_: what == "Error"},
        {"id": "broken", "match": {"reason": "BackOff"}, "template": "x", "fatal": explode},
    ])
    assert formatter.format_event(ev("Failed", "Error: InvalidImageName"))["fatal"] is True
    assert "fatal" not in formatter.format_event(ev("Failed", "Failed to pull"))
    assert "fatal" not in formatter.format_event(ev("BackOff", "Back-off"))


@pytest.mark.parametrize(("value", "problem"), [
    pytest.param("yes", "fatal must be true, false or a callable", id="string"),
    pytest.param(1, "fatal must be true, false or a callable", id="int"),
    pytest.param(lambda image: True, "callable fatal requires argument 'image'", id="unknown-group"),
])
def test_bad_fatal_fails_at_start_naming_the_rule(value: Any, problem: str) -> None:
    with pytest.raises(RuleError, match=problem) as info:
        load_rules([{"id": "mine", "match": {"reason": "x"}, "template": "t", "fatal": value}])
    assert "mine" in str(info.value)
