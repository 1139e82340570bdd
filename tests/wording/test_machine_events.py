"""Events about the machine, not the pod: what happened to the user's server when its machine
goes away, and a new machine's start-up as quiet progress of the step that adds it.

Wordings from karpenter's interruption and disruption events and kubelet's node shutdown
manager and node status (see ``wording/default_rules/machines.py``).
"""

from __future__ import annotations

from typing import Any

from richprogress.story.diagnosis import diagnose
from richprogress.story.verdict import decide
from richprogress.wording.formatter import EventFormatter


def ev(reason: str, message: str, second: int, *, kind: str = "Pod", name: str = "jupyter-alice",
       type: str = "Normal", component: str = "kubelet") -> dict[str, Any]:
    stamp = f"2026-11-29T21:40:{second:02d}Z"
    return {"metadata": {"uid": f"e{second}"}, "involvedObject": {"kind": kind, "namespace": "jhub", "name": name},
            "reason": reason, "message": message, "type": type, "source": {"component": component},
            "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1}


def test_a_spot_interruption_is_the_cause_of_the_failed_spawn() -> None:
    formatter = EventFormatter()
    records = [formatter.format_event(event) for event in [
        ev("Scheduled", "Successfully assigned jhub/jupyter-alice to ip-10-0-1-5.ec2.internal", 1,
           component="default-scheduler"),
        ev("Pulling", 'Pulling image "quay.io/jupyter/scipy-notebook:2024-01-15"', 2),
        ev("SpotInterrupted", "Spot interruption warning was triggered", 3, kind="NodeClaim", name="default-x7k2p",
           type="Warning", component="karpenter"),
        ev("Terminated", "Pod was terminated in response to imminent node shutdown.", 30, type="Warning"),
    ]]
    found = diagnose(records, "Spawn failed: ")
    assert "spot interruption" in found["summary"] or "shutting down" in found["summary"]
    assert "another machine" in (found["hint"] or "")
    verdict = decide(records, outcome="failed", failure_message="Spawn failed: ")
    assert verdict.cause is not None and verdict.cause.summary == found["summary"]


def test_a_new_machine_starting_is_quiet_progress_of_adding_a_machine() -> None:
    formatter = EventFormatter()
    node = {"kind": "Node", "name": "ip-10-0-1-5.ec2.internal"}
    records = [formatter.format_event(ev(reason, message, second, **node, type=type_)) for second, (reason, message, type_)
               in enumerate([("Starting", "Starting kubelet.", "Normal"),
                             ("InvalidDiskCapacity", "invalid capacity 0 on image filesystem", "Warning"),
                             ("NodeAllocatableEnforced", "Updated Node Allocatable limit across pods", "Normal"),
                             ("NodeReady", "Node ip-10-0-1-5.ec2.internal status is now: NodeReady", "Normal")])]
    assert [(r["severity"], r["phase"]) for r in records] == [("info", "scaling")] * 4
    # nothing there is a cause: a spawn that then times out says it was slow, not broken
    assert diagnose(records, "")["record_id"] is None


def test_volume_expansion_belongs_to_the_storage_step() -> None:
    formatter = EventFormatter()
    pvc = {"kind": "PersistentVolumeClaim", "name": "claim-alice", "component": "external-resizer ebs.csi.aws.com"}
    resizing = formatter.format_event(ev("Resizing", "External resizer is resizing volume pvc-1", 1, **pvc))
    failed = formatter.format_event(ev("VolumeResizeFailed", 'resize volume "pvc-1" by resizer "ebs.csi.aws.com" '
                                       "failed: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
                                       2, type="Warning", **pvc))
    assert resizing["phase"] == failed["phase"] == "volume"
    assert failed["message"] == ("Resizing the volume pvc-1 failed: the storage service did not answer in time "
                                 "(deadline exceeded)")
