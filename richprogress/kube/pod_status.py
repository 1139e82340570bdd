"""Events made from a pod's status: failed container terminations (out of memory, errors).

Kubernetes reports an out-of-memory kill or a container that exited with an error only
in the pod's ``containerStatuses``, never as an Event. These functions turn such a status
into core/v1-shaped Warning events, so the formatter words them like any other event.

A termination's ``message`` has two authors. When the runtime could not run the command
(``ContainerCannotRun``, ``StartError``) it is the runtime's error chain, which names the
missing command: that goes into the event, redacted. Otherwise it is the container's own
text (the file ``terminationMessagePath`` names or, under ``FallbackToLogsOnError``, its log
tail), which may hold anything the server printed, secrets included: it never goes into an
event (every viewer of the timeline reads events). ``own_termination_messages`` hands it to
the one gate for the container's text (``story.container_log``: redacted, then shown only to
whom ``show_container_log`` allows).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, NamedTuple

from richprogress.kube.event_index import POD
from richprogress.wording.container_exits import CANNOT_RUN
from richprogress.wording.redaction import redact

#: Termination reasons that mean the container failed even when no exit code says so.
_FAILED_TERMINATIONS = frozenset(
    {"OOMKilled", "ContainerCannotRun", "StartError", "DeadlineExceeded"}
)

#: ``reportingComponent`` of the events we make from pod status (no Kubernetes component
#: reports these as Events).
STATUS_COMPONENT = "richprogress"


def _seconds_ran(terminated: Mapping[str, Any]) -> int | None:
    """Whole seconds from ``startedAt`` to ``finishedAt``; None when the status does not
    show it. containerd stamps a container that never started (``StartError``) with the
    zero time, 1970-01-01: that is no start time."""
    try:
        started = datetime.fromisoformat(str(terminated.get("startedAt")).replace("Z", "+00:00"))
        finished = datetime.fromisoformat(str(terminated.get("finishedAt")).replace("Z", "+00:00"))
    except ValueError:
        return None
    if started.year <= 1970:
        return None
    ran = (finished - started).total_seconds()
    return int(ran) if ran >= 0 else None


def _termination_message(
    container: str, terminated: Mapping[str, Any], limit: Any, times: int = 1
) -> str:
    """The raw message of a synthesized termination event, in the kubelet's plain style:
    ``Container notebook terminated: Error (exit code 1, ran 2 s, 5 times): <its message>``
    (how long it ran when the status shows it, how often when more than once)."""
    reason = str(terminated.get("reason") or "")
    code = terminated.get("exitCode")
    if reason == "OOMKilled":
        details = [f"exit code {code}"] if code is not None else []
        if limit:
            details.append(f"memory limit {limit}")
        suffix = f" ({', '.join(details)})" if details else ""
        return f"Container {container} was killed because it ran out of memory{suffix}"
    facts = [f"exit code {code}"] if code is not None else []
    ran = _seconds_ran(terminated)
    if ran is not None:
        facts.append(f"ran {ran} s")
    if times >= 2:
        facts.append(f"{times} times")
    message = f"Container {container} terminated: {reason or 'Error'}"
    if facts:
        message += f" ({', '.join(facts)})"
    if reason not in CANNOT_RUN:
        return message  # the container's own words: not for every viewer (the module's docstring)
    # the runtime's words, lines kept (the chain's last link is the why), trailing space gone
    detail = "\n".join(
        line.rstrip() for line in str(terminated.get("message") or "").strip().splitlines()
    )
    return f"{message}: {redact(detail)}" if detail else message


def status_event(
    metadata: Mapping[str, Any],
    *,
    uid: str,
    name: str,
    event_type: str,
    reason: str,
    message: str,
    count: int,
    when: str | None,
    component: str,
    field_path: str | None = None,
) -> dict[str, Any]:
    """A core/v1-shaped Event about the pod whose ``metadata`` is given, made from its status
    (``component`` says who made it: no Kubernetes component reports these as Events)."""
    involved: dict[str, Any] = {
        "kind": POD,
        "apiVersion": "v1",
        "namespace": metadata.get("namespace"),
        "name": metadata.get("name"),
        "uid": str(metadata.get("uid") or ""),
    }
    if field_path is not None:
        involved["fieldPath"] = field_path
    return {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {
            "uid": uid,
            "name": name,
            "namespace": metadata.get("namespace"),
            "creationTimestamp": when,
        },
        "involvedObject": involved,
        "type": event_type,
        "reason": reason,
        "message": message,
        "count": count,
        "firstTimestamp": when,
        "lastTimestamp": when,
        "eventTime": None,
        "source": {"component": component},
        "reportingComponent": component,
    }


class FailedTermination(NamedTuple):
    """A container's failed termination as the pod's status shows it."""

    #: ``containers`` or ``initContainers``
    spec_key: str
    container: str
    terminated: Mapping[str, Any]
    #: terminations so far (from ``restartCount``), at least 1
    times: int
    #: the container's memory limit, when it has one
    memory_limit: Any
    #: the termination is the run before the current one (``lastState``): it restarted
    previous_run: bool


def failed_terminations(pod: Mapping[str, Any]) -> list[FailedTermination]:
    """The failed terminations in ``pod``'s status, one per container at most.

    A termination is failed when its reason is one of ``OOMKilled``, ``ContainerCannotRun``,
    ``StartError``, ``DeadlineExceeded`` or its exit code is not 0. Both the current state
    and ``lastState`` (a restarted container) are read. A pod being deleted has none: its
    containers are stopped on purpose.
    """
    metadata = pod.get("metadata") or {}
    if metadata.get("deletionTimestamp"):
        return []
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    found: list[FailedTermination] = []
    for spec_key, status_key in (
        ("initContainers", "initContainerStatuses"),
        ("containers", "containerStatuses"),
    ):
        limits = {
            c.get("name"): ((c.get("resources") or {}).get("limits") or {}).get("memory")
            for c in spec.get(spec_key) or []
            if isinstance(c, Mapping)
        }
        for container_status in status.get(status_key) or []:
            if not isinstance(container_status, Mapping):
                continue
            name = str(container_status.get("name") or "")
            restarts = container_status.get("restartCount")
            restarts = restarts if isinstance(restarts, int) and restarts >= 0 else 0
            terminated = (container_status.get("state") or {}).get("terminated")
            count = restarts + 1  # the current run ended: one more than the restarts so far
            previous_run = not isinstance(terminated, Mapping)
            if previous_run:
                terminated = (container_status.get("lastState") or {}).get("terminated")
                count = restarts
            if not isinstance(terminated, Mapping):
                continue
            if str(terminated.get("reason") or "") not in _FAILED_TERMINATIONS and terminated.get(
                "exitCode"
            ) in (None, 0):
                continue
            found.append(
                FailedTermination(
                    spec_key, name, terminated, max(1, count), limits.get(name), previous_run
                )
            )
    return found


def container_terminations(pod: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Warning events (core/v1 shape) for the failed container terminations in ``pod``'s
    status (``failed_terminations``). Each container and reason gets one stable ``uid``;
    ``count`` is the number of terminations so far, so a repeat updates the same record
    with a bigger count. The container's own termination message is not in them (the
    module's docstring)."""
    metadata = pod.get("metadata") or {}
    pod_uid = str(metadata.get("uid") or "")
    events: list[dict[str, Any]] = []
    for failed in failed_terminations(pod):
        name, terminated = failed.container, failed.terminated
        reason = str(terminated.get("reason") or "") or "Error"
        events.append(
            status_event(
                metadata,
                uid=f"{pod_uid}.{name}.terminated.{reason}",
                name=f"{metadata.get('name')}.{name}.{reason}",
                event_type="Warning",
                reason=reason,
                message=_termination_message(name, terminated, failed.memory_limit, failed.times),
                count=failed.times,
                when=terminated.get("finishedAt") or terminated.get("startedAt"),
                component=STATUS_COMPONENT,
                field_path=f"spec.{failed.spec_key}{{{name}}}",
            )
        )
    return events


def own_termination_messages(pod: Mapping[str, Any]) -> list[FailedTermination]:
    """The failed terminations in ``pod``'s status whose ``message`` the container wrote
    itself (not the runtime's error when it could not run it), when it left one. Raw: the
    caller gives the message to the container text's gate, never to an event."""
    return [
        failed
        for failed in failed_terminations(pod)
        if failed.terminated.get("reason") not in CANNOT_RUN
        and isinstance(failed.terminated.get("message"), str)
        and failed.terminated["message"].strip()
    ]
