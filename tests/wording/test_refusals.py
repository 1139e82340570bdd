"""The API server's refusals in plain words: a full namespace quota worded from its numbers,
an admission webhook's "no" with its reason, on any object that reports them and in
KubeSpawner's own failure message.

The quota text is the ResourceQuota admission plugin's ("exceeded quota: %s, requested: %s,
used: %s, limited: %s", see richprogress/wording/default_rules/refusals.py). The operator
case is the demo's ``operator-error`` scenario as the simulated cluster plays it; the
others are wordings the rule was not tuned to: the Kubernetes docs' own example (with the
docs' hand-wrapped "...=700Mi,used:"), a ReplicaSet's and a StatefulSet's ``FailedCreate``,
CPU in millicores, pods counted as ``count/pods``, GPUs, a storage class, the early
releases' capital "Exceeded quota".
"""

from __future__ import annotations

from typing import Any

import pytest

from richprogress.model.timeline import SpawnTimeline
from richprogress.story.diagnosis import decisive_record, diagnose, got_past
from richprogress.story.hints import HINT_QUOTA, HINT_WEBHOOK
from richprogress.story.known_failures import classify
from richprogress.story.steps import step_durations
from richprogress.wording.default_rules.refusals import HINT_QUOTA_NEVER, quantity, refusal_summary
from richprogress.wording.formatter import EventFormatter
from tests.helpers.replay import START, timed_events

OPERATOR_SENTENCE = (
    "The namespace's memory quota (user-quota) is full: 28 GiB of 32 GiB used, and your server asks for 8 GiB"
)


def ev(reason: str, message: str, *, kind: str = "ReplicaSet", name: str = "nb-7d9f8b6c5",
       component: str = "replicaset-controller", uid: str = "e1", at: str = "00:01",
       type: str = "Warning") -> dict[str, Any]:
    stamp = f"2026-11-29T10:{at}Z"
    return {
        "metadata": {"uid": uid, "name": f"{name}.{uid}", "namespace": "jhub"},
        "involvedObject": {"kind": kind, "namespace": "jhub", "name": name},
        "reason": reason, "message": message, "type": type, "count": 1,
        "firstTimestamp": stamp, "lastTimestamp": stamp,
        "source": {"component": component}, "reportingComponent": component,
    }


@pytest.fixture(scope="module")
def formatter() -> EventFormatter:
    return EventFormatter()


def test_the_operator_error_scenario_reads_as_a_full_quota(formatter: EventFormatter) -> None:
    """The demo's operator-error at real timing: every retry of the controller says the
    same sentence, never "reported an error", and the failure names it with a hint that
    needs no "if it does not start"."""
    timeline = SpawnTimeline(started_at=START)
    for _at, event in timed_events("operator-error", until=120):
        timeline.add(formatter.format_event(event))
    records = list(timeline.records())
    refusals = [r for r in records if r["reason"] == "ReconcileError"]
    assert len(refusals) == 1 and refusals[0]["count"] > 3  # one row, its count grows
    [refusal] = refusals
    assert refusal["rule"] == "quota-exceeded"
    assert (refusal["message"], refusal["hint"]) == (OPERATOR_SENTENCE, HINT_QUOTA)
    assert (refusal["severity"], refusal["phase"]) == ("error", "requested")
    assert "fatal" not in refusal  # 8 GiB fits in 32 GiB once others stop
    assert "if it does not start" not in HINT_QUOTA.lower()
    found = diagnose(records, "")  # the hub's timeout
    assert found == {"summary": OPERATOR_SENTENCE, "hint": HINT_QUOTA, "phase": "requested",
                     "record_id": refusal["id"]}
    assert [step["phase"] for step in step_durations(records, START)] == ["requested"]


QUOTA_CASES = [
    pytest.param(
        'pods "quota-mem-cpu-demo-2" is forbidden: exceeded quota: mem-cpu-demo,\nrequested: '
        "requests.memory=700Mi,used: requests.memory=600Mi, limited: requests.memory=1Gi",
        "The namespace's memory quota (mem-cpu-demo) is full: 600 MiB of 1 GiB used, and your server asks for "
        "700 MiB", False, id="kubernetes-docs-example",
    ),
    pytest.param(
        'Error creating: pods "web-6d4cf56db6-xq2vz" is forbidden: exceeded quota: compute-quota, requested: '
        "requests.cpu=500m, used: requests.cpu=2, limited: requests.cpu=2",
        "The namespace's CPU quota (compute-quota) is full: 2 of 2 CPUs used, and your server asks for 0.5 CPU",
        False, id="cpu-millicores",
    ),
    pytest.param(
        'create Pod nb-0 in StatefulSet nb failed error: pods "nb-0" is forbidden: exceeded quota: '
        "object-counts, requested: count/pods=1, used: count/pods=10, limited: count/pods=10",
        "The namespace's pod quota (object-counts) is full: 10 of 10 pods used, and your server asks for 1 pod",
        False, id="statefulset-count-pods",
    ),
    pytest.param(
        'Error creating: pods "gpu-nb-1" is forbidden: exceeded quota: gpu-quota, requested: '
        "requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4",
        "The namespace's GPU quota (gpu-quota) is full: 4 of 4 GPUs used, and your server asks for 1 GPU",
        False, id="gpu",
    ),
    pytest.param(
        'persistentvolumeclaims "claim-alice" is forbidden: exceeded quota: storage, requested: '
        "gold.storageclass.storage.k8s.io/requests.storage=10Gi, used: "
        "gold.storageclass.storage.k8s.io/requests.storage=45Gi, limited: "
        "gold.storageclass.storage.k8s.io/requests.storage=50Gi",
        "The namespace's gold storage quota (storage) is full: 45 GiB of 50 GiB used, and your server asks for "
        "10 GiB", False, id="storage-class",
    ),
    pytest.param(
        'Error creating: pods "nb-x" is forbidden: exceeded quota: scratch, requested: '
        "requests.ephemeral-storage=10Gi, used: requests.ephemeral-storage=95Gi, limited: "
        "requests.ephemeral-storage=100Gi",
        "The namespace's disk space quota (scratch) is full: 95 GiB of 100 GiB used, and your server asks for "
        "10 GiB", False, id="ephemeral-storage",
    ),
    pytest.param(
        'pods "nb-x" is forbidden: exceeded quota: both, requested: limits.memory=8Gi,requests.memory=8Gi, '
        "used: limits.memory=28Gi,requests.memory=30Gi, limited: limits.memory=32Gi,requests.memory=32Gi",
        "The namespace's memory quota (both) is full: 28 GiB of 32 GiB used, and your server asks for 8 GiB",
        False, id="requests-and-limits-read-once",
    ),
    pytest.param(
        'Error creating: pods "nb-x" is forbidden: Exceeded quota: compute-resources, requested: pods=1, '
        "used: pods=4, limited: pods=4",
        "The namespace's pod quota (compute-resources) is full: 4 of 4 pods used, and your server asks for 1 pod",
        False, id="early-releases-capital-e",
    ),
    pytest.param(
        'failed to create pod jhub/jupyter-alice: pods "jupyter-alice" is forbidden: exceeded quota: user-quota, '
        "requested: limits.memory=64Gi, used: limits.memory=0, limited: limits.memory=32Gi",
        "Your server asks for 64 GiB, more than the namespace's memory quota (user-quota) allows in all (32 GiB)",
        True, id="asks-more-than-the-whole-quota",
    ),
    pytest.param(
        'Error creating: pods "nb-x" is forbidden: exceeded quota: gpu-quota, requested: '
        "limits.cpu=2,requests.nvidia.com/gpu=2, used: limits.cpu=0,requests.nvidia.com/gpu=0, limited: "
        "limits.cpu=8,requests.nvidia.com/gpu=1",
        "Your server asks for 2 GPUs, more than the namespace's GPU quota (gpu-quota) allows in all (1 GPU)",
        True, id="one-resource-beyond-the-limit",
    ),
]


@pytest.mark.parametrize(("message", "sentence", "fatal"), QUOTA_CASES)
def test_quota_refusals_on_any_object(formatter: EventFormatter, message: str, sentence: str, fatal: bool) -> None:
    record = formatter.format_event(ev("FailedCreate", message))
    assert (record["rule"], record["message"], record["severity"], record["phase"]) == (
        "quota-exceeded", sentence, "error", "requested")
    assert record["hint"] == (HINT_QUOTA_NEVER if fatal else HINT_QUOTA)
    assert record.get("fatal", False) is fatal
    # the same on an operator's custom resource, before its own error rule
    operator = formatter.format_event(ev("ReconcileError", message, kind="JupyterServer", name="jupyter-alice"))
    assert (operator["rule"], operator["message"]) == ("quota-exceeded", sentence)
    assert classify(record).name == "quota"  # type: ignore[union-attr]


def test_numbers_it_cannot_read_still_say_what_is_known(formatter: EventFormatter) -> None:
    record = formatter.format_event(ev("FailedCreate", 'pods "x" is forbidden: exceeded quota: q, requested: '
                                       "pods=lots, used: pods=many, limited: pods=few"))
    assert record["message"] == "The namespace's quota (q) has no room left for your server"
    assert record["hint"] == HINT_QUOTA and "fatal" not in record


def test_the_autoscalers_own_quota_is_not_a_namespace_quota(formatter: EventFormatter) -> None:
    # cluster-autoscaler 1.35+: "exceeded quota: %q, resources: %s" about machine groups
    record = formatter.format_event(ev(
        "NotTriggerScaleUp", 'pod didn\'t trigger scale-up: 3 exceeded quota: "cluster-wide", resources: cpu',
        kind="Pod", name="jupyter-alice", component="cluster-autoscaler", type="Normal"))
    assert record["rule"] == "not-triggered-scale-up"


@pytest.mark.parametrize(("quantity_text", "number"), [
    ("8Gi", 8 * 2**30), ("500m", 0.5), ("2", 2.0), ("1.5", 1.5), ("1e3", 1000.0), ("2k", 2000.0),
    ("100M", 1e8), ("1E", 1e18), ("3Ti", 3 * 2**40), ("lots", None), ("", None), ("Gi", None),
])
def test_kubernetes_quantities(quantity_text: str, number: float | None) -> None:
    assert quantity(quantity_text) == number


# -- KubeSpawner's own failure: the API server's JSON answer inside the exception's text ------

def api_exception(message: str, *, as_bytes: bool) -> str:
    """str() of the kubernetes client's ApiException for a 403, as JupyterHub keeps it."""
    body = ('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"'
            + message.replace('"', '\\"') + '","reason":"Forbidden","details":{"name":"jupyter-alice",'
            '"kind":"pods"},"code":403}')
    shown = repr(body.encode()) if as_bytes else body
    return ("(403)\nReason: Forbidden\nHTTP response headers: HTTPHeaderDict({'Audit-Id': 'a1', "
            f"'Content-Type': 'application/json'}})\nHTTP response body: {shown}\n")


@pytest.mark.parametrize("as_bytes", [False, True], ids=["decoded-body", "bytes-body"])
def test_kubespawners_own_failure_names_the_quota(as_bytes: bool) -> None:
    text = api_exception('pods "jupyter-alice" is forbidden: exceeded quota: user-quota, requested: '
                         "limits.memory=8Gi, used: limits.memory=28Gi, limited: limits.memory=32Gi", as_bytes=as_bytes)
    found = diagnose([], "Spawn failed: " + text)
    assert found == {"summary": OPERATOR_SENTENCE, "hint": HINT_QUOTA, "phase": "requested", "record_id": None}


@pytest.mark.parametrize("as_bytes", [False, True], ids=["decoded-body", "bytes-body"])
def test_kubespawners_own_failure_names_the_webhook_and_its_reason(as_bytes: bool) -> None:
    text = api_exception('admission webhook "policy.example.org" denied the request: image "docker.io/x:1" '
                         "is not from an allowed registry", as_bytes=as_bytes)
    refusal = refusal_summary(text)
    assert refusal is not None and refusal.sentence == (
        'The cluster\'s admission check policy.example.org refused your server: image "docker.io/x:1" is not '
        "from an allowed registry")
    assert diagnose([], text)["hint"] == HINT_WEBHOOK


def test_other_failures_keep_their_own_words() -> None:
    assert refusal_summary("pod jupyter-alice did not start in 300 seconds!") is None
    assert diagnose([], "Spawn failed: quota exceeded for alice")["summary"] == "Quota exceeded for alice"


# -- admission webhooks -----------------------------------------------------------------------

def test_a_webhook_without_explanation(formatter: EventFormatter) -> None:
    record = formatter.format_event(ev("FailedCreate", 'Error creating: admission webhook "x.example.org" '
                                       "denied the request without explanation"))
    assert record["rule"] == "admission-webhook-denied"
    assert record["message"] == "The cluster's admission check x.example.org refused your server without saying why"
    assert (record["severity"], record["phase"], record["hint"]) == ("error", "requested", HINT_WEBHOOK)
    assert classify(record).name == "admission-refused"  # type: ignore[union-attr]


# -- over once the controller created the pod ------------------------------------------------

def test_a_refusal_is_over_once_the_same_controller_created_the_pod(formatter: EventFormatter) -> None:
    refused = formatter.format_event(ev(
        "FailedCreate", 'Error creating: pods "nb-7d9f8b6c5-q2x8m" is forbidden: exceeded quota: team-a, requested: '
        "limits.memory=8Gi, used: limits.memory=28Gi, limited: limits.memory=32Gi"))
    created = formatter.format_event(ev("SuccessfulCreate", "Created pod: nb-7d9f8b6c5-q2x8m", uid="e2",
                                        at="00:40", type="Normal"))
    other = formatter.format_event(ev("SuccessfulCreate", "Created pod: other-5c-abcde", uid="e3", at="00:40",
                                      type="Normal", name="other-5c"))
    assert decisive_record([refused]) is refused
    assert decisive_record([refused, other]) is refused  # another ReplicaSet's pod is not ours
    assert got_past([refused, created]) == {refused["id"]}
    assert decisive_record([refused, created]) is None
