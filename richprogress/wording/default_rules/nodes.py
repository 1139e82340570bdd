"""Default rules for kube-controller-manager's node lifecycle and taint-eviction controllers:
the machine under a server stops answering, or is taken out of service."""

from __future__ import annotations

from typing import Any

NODE_NOT_READY: list[dict[str, Any]] = [
    {
        "id": "pod-node-not-ready",
        "match": {"reason": r"NodeNotReady\Z", "kind": r"Pod\Z"},
        "template": "The machine running your server stopped responding",
        "severity": "warning",
        "hint": "If your server does not come back within a few minutes, start it again or ask your administrator.",
    },
]

TAINT_EVICTIONS: list[dict[str, Any]] = [
    {
        "id": "taint-eviction-cancelled",
        "match": {"reason": r"TaintManagerEviction\Z", "message": r"Cancelling deletion"},
        "template": "Your server can stay on its machine: a planned removal was cancelled",
    },
    {
        "id": "taint-eviction",
        "match": {"reason": r"TaintManagerEviction\Z", "message": r"Marking for deletion"},
        "template": "Your server's machine is being taken out of service, so the server will be stopped",
        "severity": "warning",
        "hint": "Start your server again once it has stopped.",
    },
]
