"""Default rules for events of custom resources: what operators and controllers report.

The wording of common controller reasons on objects that are not a pod or a PVC (an
operator's ``JupyterServer``, a ``Workspace``, ...). Tried before the other default rules,
each rule restricted to kinds other than the core ones a spawn shows (``NOT_CORE_KIND``), so
they cannot change what a pod's or a PVC's event says, and a kubelet ``Created`` or
``Failed`` still reaches its own rule.

The reasons are conventions, not an API: controller-runtime operators (Kubebuilder,
Operator SDK) and sample-controller emit ``Synced``/``Reconciled``, ``Created``/
``SuccessfulCreate``, ``Updated``, and ``ReconcileError``/``SyncFailed``-style reasons with
the error text as message. Each sentence says no more than the event does: "reported an
error", with the controller's own words, never a guessed cause; "created Pod x", never
"your server is starting".
"""

from __future__ import annotations

from typing import Any

#: any kind except those whose events richprogress words elsewhere (anchored by re.match)
NOT_CORE_KIND = r"(?!(?:Pod|PersistentVolumeClaim|PersistentVolume|Node|Event)\Z)(?P<kind>\w+)\Z"
_OBJECT = "{kind} {name}"
_NAME = r"(?P<name>.*)"
#: "Created Pod jupyter-alice", "Created pod: jupyter-alice", "created StatefulSet \"nb\""
_CHILD = r'(?i)(?:\w+ )?(?:created|updated|deleted) (?:new |a )?(?P<child_kind>[A-Za-z]+):? "?(?P<child>[\w.:/-]+?)"?(?:[ .,;]|\Z)'
_ERROR_REASON = (
    r"(?i)(?:\w*Reconcil\w*(?:Error|Fail\w*)|(?:Error|Failed)Reconcil\w*|Sync(?:Error|Failed|Failure)"
    r"|ReconcileError|InternalError|Failed\w*|\w*Error)\Z"
)
_ADMIN_HINT = (
    # said live and on the failure page alike: no "if the server does not start"
    "The service that sets up servers on this hub reported this. If it keeps happening, "
    "ask an admin for help and send them this page."
)

OPERATOR_RULES: list[dict[str, Any]] = [
    {
        "id": "operator-conflict",
        # optimistic concurrency: another writer changed the object first (the API server's
        # own message); controller-runtime requeues on any error
        "match": {"kind": NOT_CORE_KIND, "name": _NAME, "reason": _ERROR_REASON,
                  "message": r"(?s).*the object has been modified"},
        "template": "The controller could not save " + _OBJECT + " because it changed meanwhile",
        "severity": "warning",
        "hint": "Controllers usually try again. " + _ADMIN_HINT,
        "phase": "requested",
    },
    {
        "id": "operator-error",
        "match": {"kind": NOT_CORE_KIND, "name": _NAME, "reason": _ERROR_REASON,
                  "message": r"(?s)\s*(?P<detail>.*\S)"},
        "template": "The controller of " + _OBJECT + " reported an error: {detail}",
        "severity": "error",
        "hint": _ADMIN_HINT,
        "phase": "requested",
    },
    {
        "id": "operator-created-child",
        "match": {"kind": NOT_CORE_KIND, "name": _NAME, "reason": r"(?:Successful)?Created?\Z",
                  "message": _CHILD},
        "template": "The controller of " + _OBJECT + " created {child_kind} {child}",
        "phase": "requested",
    },
    {
        "id": "operator-updated-child",
        "match": {"kind": NOT_CORE_KIND, "name": _NAME, "reason": r"(?:Successful)?Updated?\Z",
                  "message": _CHILD},
        "template": "The controller of " + _OBJECT + " updated {child_kind} {child}",
        "phase": "requested",
    },
    {
        "id": "operator-reconciling",
        "match": {"kind": NOT_CORE_KIND, "name": _NAME, "type": r"Normal\Z",
                  "reason": r"(?i)(?:Reconcil(?:e|ing)|Sync(?:ing)?|Progressing|Pending)\Z"},
        "template": "The controller is working on " + _OBJECT,
        "phase": "requested",
    },
    {
        "id": "operator-reconciled",
        "match": {"kind": NOT_CORE_KIND, "name": _NAME, "type": r"Normal\Z",
                  "reason": r"(?i)(?:Reconciled|Synced|SuccessfulSync|ReconcileSuccess\w*)\Z"},
        "template": "The controller processed " + _OBJECT,
        "phase": "requested",
    },
]
