"""The steps a pod's status shows, for a hub whose spawner reads no Events.

With KubeSpawner's ``events_enabled = False`` (z2jh ``singleuser.events: false``) the hub
watches no Events, and the progress page stayed empty until the server answered. The pod
itself still moves through its status, which the pods reflector (that KubeSpawner always
runs) keeps: the pod waits for a node, ``PodScheduled`` becomes True with the machine's name in ``spec.nodeName``, the
containers wait as ``PodInitializing`` or ``ContainerCreating`` (the kubelet's reason while it
sets a container up, image download included), then run, then are ready.

``PodSteps.new_events`` turns each step the status newly reached into a core/v1-shaped
Normal event, so the formatter (and a ``format_hook``) treat it like any other, and
``step_record`` makes its record a ``hidden`` one of that step: it moves the step strip and
the bar, is in "Copy details", and is no row. The words say only what the status says.
Failed container terminations are ``pod_status``'s; an image that cannot be pulled shows
only in the container's waiting reason, which this leaves to the hub's own timeout.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from richprogress.kube.pod_status import status_event
from richprogress.model.records import EventRecord
from richprogress.model.times import isoformat_z, utcnow

#: ``reportingComponent`` of these events: the pod's status, read by the hub
STATUS_STEPS_COMPONENT = "richprogress-pod-status"

#: waiting reasons of a container being set up (kubelet: the default waiting reason
#: before a container exists, and the main containers' while init containers run)
_SETTING_UP = frozenset({"ContainerCreating", "PodInitializing"})

#: (reason of our event, the step, what it says), in the order a pod goes through them
_STEPS: tuple[tuple[str, str, str], ...] = (
    ("WaitingForNode", "scheduling", "Waiting to be scheduled on a node"),
    ("PodScheduled", "scheduled", "Scheduled on a node"),
    ("ContainerCreating", "starting", "Setting up the container (this may include downloading its image)"),
    ("ContainerRunning", "starting", "Starting the container"),
    ("ContainersReady", "starting", "The container is running and ready; waiting for the server to answer"),
)
_STEP_OF = {reason: (phase, text) for reason, phase, text in _STEPS}


def _condition(status: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    for condition in status.get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == kind and condition.get("status") == "True":
            return condition
    return None


def _statuses(status: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [s for s in status.get("containerStatuses") or [] if isinstance(s, Mapping)]


def reached(pod: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """The steps ``pod``'s status shows, in order: ``(reason, when)``, ``when`` the status's
    own time of it (ISO 8601) or None where the status gives none."""
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    steps: list[tuple[str, str | None]] = []
    scheduled = _condition(status, "PodScheduled")
    if scheduled is None and not spec.get("nodeName"):
        # the pod exists; no node yet (its PodScheduled is False, or not set yet)
        return [("WaitingForNode", pod.get("metadata", {}).get("creationTimestamp"))]
    steps.append(("WaitingForNode", None))
    steps.append(("PodScheduled", scheduled.get("lastTransitionTime") if scheduled else None))
    containers = _statuses(status)
    running = [s for s in containers if isinstance((s.get("state") or {}).get("running"), Mapping)]
    waiting = [
        s for s in containers
        if ((s.get("state") or {}).get("waiting") or {}).get("reason") in _SETTING_UP
    ]
    initializing = _condition(status, "Initialized") is None and bool(status.get("initContainerStatuses"))
    if waiting or running or initializing:
        steps.append(("ContainerCreating", None))
    if running:
        started = min(str((s.get("state") or {})["running"].get("startedAt") or "") for s in running) or None
        steps.append(("ContainerRunning", started))
    ready = _condition(status, "ContainersReady")
    if ready is not None and running:
        steps.append(("ContainersReady", ready.get("lastTransitionTime")))
    return steps


class PodSteps:
    """The steps of one spawn's pod made into events, each once."""

    def __init__(self) -> None:
        self._made: set[str] = set()

    def new_events(self, pod: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Normal events (core/v1 shape) for the steps ``pod``'s status reached that were not
        made yet; a step the status skipped over (a fast start) comes with the later ones."""
        metadata = pod.get("metadata") or {}
        if metadata.get("deletionTimestamp"):
            return []  # a pod being stopped goes through no more steps
        pod_uid = str(metadata.get("uid") or "")
        node = (pod.get("spec") or {}).get("nodeName")
        events: list[dict[str, Any]] = []
        steps = reached(pod)
        for index, (reason, when) in enumerate(steps):
            uid = f"{pod_uid}.status.{reason}"
            if uid in self._made:
                continue
            self._made.add(uid)
            _phase, text = _STEP_OF[reason]
            if reason == "PodScheduled" and node:
                text = f"Scheduled on the node {node}"
            # no time of its own: that of the step after it (passed over in one update), else now
            stamp = when or next((w for _, w in steps[index + 1 :] if w), None) or isoformat_z(utcnow())
            events.append(
                status_event(
                    metadata,
                    uid=uid,
                    name=f"{metadata.get('name')}.status.{reason}",
                    event_type="Normal",
                    reason=reason,
                    message=text,
                    count=1,
                    when=stamp,
                    component=STATUS_STEPS_COMPONENT,
                )
            )
        return events


def step_record(record: EventRecord) -> EventRecord:
    """The record of a step event: in its step, and ``hidden`` (no row; in the details), unless a
    rule or the hook chose how it shows."""
    step = _STEP_OF.get(str(record.get("reason") or ""))
    if step is not None and not record.get("phase"):
        record["phase"] = step[0]
    record.setdefault("show", "hidden")
    return record
