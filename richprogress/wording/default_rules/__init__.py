"""Our default formatting rules, as data, in plain words for people new to Kubernetes.

Each rule says what is happening in one short sentence; rules for problems also say what it
means for the user (``hint``), and rules for causes that no amount of waiting fixes say so
(``fatal``: ``richprogress.story.fail_fast`` ends a spawn once such a cause has held; see the
README's "Fail fast" section for why each one is fatal and what deliberately is not: scale-ups,
slow pulls, storage, quotas that may free up, rate limits, registry errors).

One module per source of events: ``refusals`` (the API server refusing an object: a full
quota, an admission webhook), ``operators`` (custom resources' controllers), ``scheduler``,
``autoscaler`` (cluster-autoscaler and Karpenter), ``storage``, ``images`` and ``kubelet``
(kubelet's image manager and the rest of its pod work), ``nodes`` (the node controllers),
``machines`` (the machine's own events: interruption, shutdown, start-up), ``server_log`` (the
cause a failed server's own log names, as RichKubeSpawner reports it).
Their wording comes from those sources and from events captured on real clusters.
Callable templates (and hints, and ``fatal``) are called as ``f(**groups)``.
"""

from __future__ import annotations

from typing import Any

from richprogress.wording.default_rules import (
    autoscaler,
    images,
    kubelet,
    machines,
    nodes,
    operators,
    refusals,
    scheduler,
    server_log,
    storage,
)

# Rules are tried in this order and the first match wins: a specific rule comes before a
# general one of the same reason, whichever source each comes from.
DEFAULT_RULES: list[dict[str, Any]] = [
    # the API server's refusals read the same on any object, an operator's included
    *refusals.REFUSALS,
    # the machine's own events (spot interruption, shutdown, start-up): before the operators'
    # rules, which would take a NodeClaim's event as a controller's
    *machines.MACHINE_EVENTS,
    # custom resources first: they only match kinds the others do not word
    *operators.OPERATOR_RULES,
    *scheduler.SCHEDULED,
    *autoscaler.KARPENTER_SCHEDULING,  # Karpenter's FailedScheduling before the scheduler's
    *scheduler.FAILED_SCHEDULING,
    *kubelet.ADMISSION,
    *autoscaler.SCALE_UP,
    *storage.STORAGE,
    *images.IMAGES,
    *kubelet.CONTAINERS,
    *autoscaler.KARPENTER_EVICTIONS,  # before kubelet's Evicted rule, which takes any eviction
    *kubelet.EVICTIONS,
    *scheduler.PREEMPTIONS,
    *nodes.NODE_NOT_READY,
    *autoscaler.SCALE_DOWN,
    *kubelet.SANDBOX,
    *server_log.SERVER_LOG,
    *nodes.TAINT_EVICTIONS,
]

#: rule id -> ``fatal`` of the default rules that have one (True, or a function of the
#: rule's groups like a template): read from the rules, for the documentation and tests
FATAL_RULES: dict[str, Any] = {rule["id"]: rule["fatal"] for rule in DEFAULT_RULES if "fatal" in rule}
