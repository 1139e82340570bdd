"""Default rules for the machines the cluster adds and removes: cluster-autoscaler's scale-ups
(and why none came), Karpenter's scheduling, launches and disruptions, and which of their
causes no new machine can ever fix (``fatal``)."""

from __future__ import annotations

import re
from typing import Any

from richprogress.wording.decisive_facts import karpenter_summary
from richprogress.wording.default_rules.patterns import DETAIL
from richprogress.wording.scheduling import summarize_scale_up_failure


def _scale_up_failure_sentence(detail: str = "", **_: str) -> str:
    return summarize_scale_up_failure(detail).sentence


def _scale_up_failure_hint(detail: str = "", **_: str) -> str:
    return summarize_scale_up_failure(detail).hint or ""


def _karpenter_sentence(detail: str = "", **_: str) -> str:
    return karpenter_summary(detail)[0]


def _karpenter_hint(detail: str = "", **_: str) -> str:
    return karpenter_summary(detail)[1]


_DISRUPTION_WHY = {
    "underutilized": "it was underused",
    "empty": "it was empty",
    "drifted": "its configuration changed",
    "expired": "it reached its maximum age",
    "emptiness": "it was empty",
    "consolidation": "it was underused",
    "drift": "its configuration changed",
    "expiration": "it reached its maximum age",
}


def _karpenter_evicted_sentence(why: str = "", **_: str) -> str:
    reason = _DISRUPTION_WHY.get(why.lower())
    sentence = "Your server was stopped because the cluster is removing its machine"
    return f"{sentence} ({reason})" if reason else sentence


def _karpenter_disrupting_sentence(why: str = "", **_: str) -> str:
    # A Node or NodeClaim event: about a machine, never "your server".
    reason = _DISRUPTION_WHY.get(why.lower())
    return "The cluster is removing a machine" + (f" ({reason})" if reason else "")


def _scale_up_sentence(group: str = "", to: str = "", **_: str) -> str:
    if group:
        size = f"{to} machine" if to == "1" else f"{to} machines"
        return f"Adding a machine to the cluster for your server (machine group {group}, growing to {size})"
    return "Adding a machine to the cluster for your server"


# cluster-autoscaler's NotTriggerScaleUp lists one reason per machine group
# (core/scaleup/orchestrator, "pod didn't trigger scale-up: 2 Insufficient cpu, 1 max node
# group size reached"). Only reasons that a new machine of that group can never overcome
# count; one group at its maximum size or in back-off may still free up.
_NEVER_FITS_ITEM = re.compile(
    r"\s*(?:\d+\s+)?(?:Insufficient \S+|node\(s\) didn't match Pod's node affinity(?:/selector)?"
    r"|node\(s\) didn't match node selector)\s*\Z"
)
_SCALE_UP_BODY = re.compile(r"\s*pod didn't trigger scale-up(?:\s*\([^)]*\))?:?(.*)", re.S)


def never_fits(detail: str = "", **_: str) -> bool:
    """Whether a NotTriggerScaleUp says that no machine group could ever take the pod."""
    found = _SCALE_UP_BODY.match(detail)
    body = (found.group(1) if found else detail).strip().rstrip(".")
    items = [item for item in re.split(r",\s*", body) if item.strip()]
    return bool(items) and all(_NEVER_FITS_ITEM.match(item) for item in items)


def karpenter_never_fits(detail: str = "", **_: str) -> bool:
    """Whether Karpenter says no instance type of any node pool fits (a node pool at its
    limits may free up, so "exceed limits" is not fatal). Up to v1.4 each node pool's reason
    starts "incompatible with nodepool"; from v1.5 the reason stands alone ("no instance type
    has enough resources, requirements=..., resources=...", "incompatible requirements, ...")."""
    return "exceed limits" not in detail and (
        "no instance type satisfied" in detail or "incompatible with nodepool" in detail
        or "no instance type has enough resources" in detail or detail.startswith("incompatible requirements")
    )


#: before kube-scheduler's FailedScheduling rules: Karpenter reports the same reason
KARPENTER_SCHEDULING: list[dict[str, Any]] = [
    {
        "id": "karpenter-failed-scheduling",
        "match": {"reason": r"FailedScheduling\Z", "reportingComponent": r"karpenter",
                  "message": r"(?s)Failed to schedule pod, (?P<detail>.*)"},
        "template": _karpenter_sentence,
        "severity": "error",
        "fatal": karpenter_never_fits,
        "hint": _karpenter_hint,
        "phase": "scheduling",
    },
]

SCALE_UP: list[dict[str, Any]] = [
    {
        "id": "triggered-scale-up",
        "match": {"reason": r"TriggeredScaleUp\Z",
                  "message": r"(?i)(?:pod triggered scale-up: \[\{(?:\S*/)?(?P<group>[^/\s]+) "
                             r"(?P<from>\d+)->(?P<to>\d+))?"},
        "template": _scale_up_sentence,
        "phase": "scaling",
    },
    {
        "id": "not-triggered-scale-up",
        "match": {"reason": r"NotTriggerScaleUp\Z", "message": DETAIL},
        "template": _scale_up_failure_sentence,
        "severity": "warning",
        "fatal": never_fits,
        "hint": _scale_up_failure_hint,
        # no machine is being added: the search for one goes on (the scheduling step)
        "phase": "scheduling",
    },
    {
        "id": "karpenter-nominated",
        "match": {"reason": r"Nominated\Z",
                  "message": r"Pod should schedule on:? (?:node: )?(?:\w+/)?(?P<node>\S+)"},
        "template": "A new machine ({node}) is being prepared for your server",
        "phase": "scaling",
    },
    {
        "id": "karpenter-launched",
        "match": {"reason": r"Launched\Z", "reportingComponent": r"karpenter"},
        "template": "The cloud has started a new machine for the cluster",
        "phase": "scaling",
    },
    {
        "id": "karpenter-registered",
        "match": {"reason": r"Registered\Z", "reportingComponent": r"karpenter"},
        "template": "The new machine has joined the cluster",
        "phase": "scaling",
    },
    {
        "id": "karpenter-initialized",
        "match": {"reason": r"Initialized\Z", "reportingComponent": r"karpenter"},
        "template": "The new machine is ready to run servers",
        "phase": "scaling",
    },
]

#: before kubelet's general Evicted rule, which would take any eviction
KARPENTER_EVICTIONS: list[dict[str, Any]] = [
    {
        # Karpenter's disruption (consolidation, drift, expiry) evicts the pods of a machine
        # it removes: kubernetes-sigs/karpenter pkg/controllers/node/termination, v0.3x-v1.x.
        "id": "karpenter-evicted",
        # "Evicted pod" alone up to v1.1; "Evicted pod: <reason>" from v1.2 (terminator/events).
        "match": {"reason": r"Evicted\Z", "message": r"Evicted pod(?:: ?(?P<why>\w*))?\Z"},
        "template": _karpenter_evicted_sentence,
        "severity": "error",
        "hint": "Start your server again: it will start on another machine.",
    },
    {
        "id": "karpenter-disrupting",
        "match": {"reason": r"DisruptionTerminating\Z|Disrupting\Z",
                  "message": r"Disrupting (?:NodeClaim|Node|Machine)(?:: (?P<why>\w+))?"},
        "template": _karpenter_disrupting_sentence,
    },
]

SCALE_DOWN: list[dict[str, Any]] = [
    {
        "id": "scale-down-eviction",
        "match": {"reason": r"ScaleDown\Z", "kind": r"Pod\Z", "message": r"deleting pod for node scale down"},
        "template": "The cluster is removing the machine your server runs on, so the server will be stopped",
        "severity": "warning",
        "hint": "Start your server again once it has stopped.",
    },
]
