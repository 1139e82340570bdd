"""Default rules for events about the machine, not the pod: a machine the cloud takes back
(spot interruption, rebalance, stop), a machine shutting down (graceful node shutdown), a
machine that stops answering, a removal Karpenter holds off, and a new machine's own start-up
events, worded as quiet progress of the "adding a machine" step.

Sources: kubernetes-sigs/karpenter and aws/karpenter-provider-aws (``pkg/controllers/
interruption/events``: "Spot interruption warning was triggered", "Spot rebalance
recommendation was triggered", "Instance is stopping", "Instance is terminating", and the
older "Node %s event: A spot interruption warning was triggered for the node"; ``disruption/
events``: "Cannot disrupt NodeClaim: %s"), kubelet's node shutdown manager
(``pkg/kubelet/nodeshutdown``: reason "NodeShutdown", "Pod was rejected as the node is shutting
down.", "Pod was terminated in response to imminent node shutdown.", "Shutdown manager detected
shutdown event"), kubelet's node status (``kubelet_node_status.go``: "Node %s status is now:
%s"; "Starting kubelet."; "Updated Node Allocatable limit across pods"; "invalid capacity %d on
image filesystem") and the node controller ("Registered Node %s in Controller").

A machine event names the machine, not the server: the sentences say "the machine chosen for
your server", which holds whether the server runs on it yet or not.
"""

from __future__ import annotations

from typing import Any

_NODE = r"(?:Node|NodeClaim|Machine)\Z"
_AGAIN = "Start your server again once it has stopped: it will start on another machine."

MACHINE_EVENTS: list[dict[str, Any]] = [
    {
        "id": "machine-spot-interrupted",
        "match": {"reason": r"(?:Instance)?SpotInterrupted\Z"},
        "template": "The machine chosen for your server is being taken back by the cloud provider (spot interruption)",
        "severity": "error",
        "hint": _AGAIN,
    },
    {
        "id": "machine-rebalance",
        "match": {"reason": r"(?:Instance)?(?:Spot)?RebalanceRecommendation\Z"},
        "template": "The cloud provider may soon take back the machine chosen for your server "
        "(spot rebalance recommendation)",
        "severity": "warning",
        "hint": "Nothing to do yet: if the machine is taken back, your server will stop and can be started again.",
    },
    {
        "id": "machine-stopping",
        "match": {"reason": r"Instance(?:Stopping|Terminating)\Z|TerminatingOnInterruption\Z"},
        "template": "The cloud provider is stopping the machine chosen for your server",
        "severity": "error",
        "hint": _AGAIN,
    },
    {
        "id": "machine-shutting-down-rejected",
        "match": {"reason": r"NodeShutdown\Z", "kind": r"Pod\Z"},
        "template": "Your server could not start there: its machine is shutting down",
        "severity": "error",
        "hint": "Start your server again: it will be placed on another machine.",
    },
    {
        "id": "machine-shutdown-terminated",
        "match": {"message": r"Pod was terminated in response to imminent node shutdown"},
        "template": "Your server was stopped because its machine is shutting down",
        "severity": "error",
        "hint": _AGAIN,
    },
    {
        "id": "machine-shutting-down",
        "match": {"reason": r"NodeShutdown\Z|Shutdown\Z", "kind": _NODE},
        "template": "The machine chosen for your server is shutting down",
        "severity": "warning",
        "hint": _AGAIN,
    },
    {
        "id": "machine-not-ready",
        "match": {"reason": r"NodeNotReady\Z", "kind": _NODE},
        "template": "The machine chosen for your server stopped responding",
        "severity": "warning",
        "hint": "If your server does not come back within a few minutes, start it again or ask your administrator.",
    },
    {
        "id": "machine-disruption-blocked",
        "match": {"reason": r"DisruptionBlocked\Z"},
        "template": "The cluster keeps the machine chosen for your server for now (it will not remove it yet)",
    },
    # a new machine's start-up: quiet progress of the step that adds it
    {
        "id": "machine-starting",
        "match": {"reason": r"Starting\Z", "kind": r"Node\Z", "message": r"Starting kubelet"},
        "template": "The new machine is starting up",
        "phase": "scaling",
    },
    {
        "id": "machine-allocatable",
        "match": {"reason": r"NodeAllocatableEnforced\Z"},
        "template": "The new machine is setting aside room for its own services",
        "phase": "scaling",
        # kubelet start-up bookkeeping on every new machine: nothing to act on
        "show": "quiet",
    },
    {
        "id": "machine-disk-capacity",
        "match": {"reason": r"InvalidDiskCapacity\Z", "message": r"invalid capacity 0 on image filesystem"},
        "template": "The new machine is still measuring its disk (normal while it starts)",
        "severity": "info",
        "phase": "scaling",
        # a Warning every new machine's kubelet sends once before its first disk measurement
        # (kubelet's image GC, "invalid capacity 0"): it scares for nothing
        "show": "quiet",
    },
    {
        "id": "machine-ready",
        "match": {"reason": r"NodeReady\Z", "kind": r"Node\Z"},
        "template": "The new machine is ready",
        "phase": "scaling",
    },
    {
        "id": "machine-status",
        "match": {"reason": r"NodeHasSufficient(?:Memory|Disk|PID)\Z|NodeHasNoDiskPressure\Z", "kind": r"Node\Z"},
        "template": "The new machine reports enough room to start servers",
        "phase": "scaling",
        "show": "quiet",
    },
    {
        "id": "machine-registered",
        "match": {"reason": r"RegisteredNode\Z", "kind": r"Node\Z"},
        "template": "The new machine has joined the cluster",
        "phase": "scaling",
    },
]
