"""Reading the failing container's last log lines through KubeSpawner's own API client,
within a deadline and a byte bound, never raising into the spawn.

Which container and which run come from the pod's status as the pods reflector holds it
(no extra request): the first container that terminated or restarted (the notebook
container first), else one that runs. A container that never ran (no container yet, or one
whose command the runtime could not start) has no log, and then nothing is read at all: an
image that cannot be pulled costs no request. The latest run is read first (in a crash
loop that is the run that just crashed, until the next one starts); ``previous=True`` only
when that run wrote nothing and the container ran before.

The answer is cut, cleaned and redacted once, here (``story.container_log``), before
anything keeps it. When its lines name a well-known cause (``wording.log_causes``),
``log_cause_event`` makes it an event about the pod, which the formatter words like any
other (``wording.default_rules.server_log``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from richprogress.kube.pod_status import STATUS_COMPONENT, FailedTermination, status_event
from richprogress.story.container_log import MAX_BYTES, MAX_LINES, ContainerLog, container_log
from richprogress.wording.log_causes import LogCause, read_log_cause
from richprogress.wording.redaction import redact

log = logging.getLogger("richprogress")

#: termination reasons of a container whose command the runtime could not start at all
#: (containerd's StartError, the Docker runtime's ContainerCannotRun): it has no log
NEVER_STARTED = frozenset({"StartError", "ContainerCannotRun"})

#: seconds a log read may take before the spawn's failure goes on without it
DEFAULT_TIMEOUT = 2.0
#: what the API may send at most: more than is kept, so the end of the tail (which
#: ``limitBytes`` would cut, as it keeps the start) is rarely lost
READ_BYTES = 4 * MAX_BYTES


def _statuses(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    status = pod.get("status") if isinstance(pod, Mapping) else None
    found = (status or {}).get("containerStatuses") if isinstance(status, Mapping) else None
    return [s for s in found or [] if isinstance(s, Mapping)]


def log_target(
    pod: Mapping[str, Any] | None, preferred: str = "notebook"
) -> tuple[str, bool] | None:
    """``(container, restarted)`` whose log tells why the pod failed, or None when no
    container has run (nothing to read). ``restarted``: it ran before its latest run, so
    an empty latest run can be told by the one before (``previous``)."""
    if not pod:
        return None
    statuses = _statuses(pod)
    statuses.sort(key=lambda s: s.get("name") != preferred)
    running: str | None = None
    for status in statuses:
        name = status.get("name")
        if not isinstance(name, str) or not name:
            continue
        state = _mapping(status.get("state"))
        last = _mapping(status.get("lastState"))
        ended = [
            t for t in (_mapping(state.get("terminated")), _mapping(last.get("terminated"))) if t
        ]
        if (
            ended
            and "running" not in state
            and all(t.get("reason") in NEVER_STARTED for t in ended)
        ):
            continue  # the runtime could not start its command: it never wrote a line
        restarted = "terminated" in last or _count(status.get("restartCount")) > 0
        if "terminated" in state or restarted:
            return name, restarted
        if "running" in state and running is None:
            running = name  # it runs and never answered: what it says may tell why
    return (running, False) if running is not None else None


def still_running(pod: Mapping[str, Any] | None, container: str) -> bool:
    """Whether ``container`` of ``pod`` runs now (its server may have said where it listens)."""
    for status in _statuses(pod or {}):
        if status.get("name") == container:
            return "running" in _mapping(status.get("state"))
    return False


def log_cause_event(
    pod: Mapping[str, Any], container: str, cause: LogCause, when: str | None
) -> dict[str, Any]:
    """The event (core/v1 shape, reason ``ServerLog``) saying which cause ``container``'s
    log names: ``Container <name> log says <kind> (<subject>)``, the shape the default rules
    read. The cause's class and its decisive word only, redacted: the line itself is the
    container's text, which only the viewers ``show_container_log`` names may read (in the
    log block), while every viewer of the timeline reads its events. One per pod and
    container (its uid): a second failure's read of the same pod updates it."""
    metadata = _mapping(pod.get("metadata"))
    pod_uid = str(metadata.get("uid") or "")
    subject = f" ({redact(cause.subject)})" if cause.subject else ""
    return status_event(
        metadata,
        uid=f"{pod_uid}.{container}.log-cause",
        name=f"{metadata.get('name')}.{container}.log-cause",
        event_type="Warning",
        reason="ServerLog",
        message=f"Container {container} log says {cause.kind}{subject}",
        count=1,
        when=when,
        component=STATUS_COMPONENT,
        field_path=f"spec.containers{{{container}}}",
    )


def termination_message_log(
    pod: Mapping[str, Any], failed: FailedTermination
) -> tuple[ContainerLog, dict[str, Any] | None]:
    """A container's own termination message (``pod_status.own_termination_messages``)
    through the gate for the container's text: its kept form (cut, cleaned, redacted) for
    the log block, and the ``ServerLog`` event naming the cause it names, by its class and
    decisive word (None when it names none)."""
    terminated = failed.terminated
    kept = container_log(
        failed.container,
        failed.previous_run,
        str(terminated.get("message") or ""),
        source="termination message",
    )
    cause = read_log_cause(kept["lines"], listening=False)
    if cause is None:
        return kept, None
    when = terminated.get("finishedAt") or terminated.get("startedAt")
    return kept, log_cause_event(
        pod, failed.container, cause, when if isinstance(when, str) else None
    )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


async def read_container_log(
    api: Any,
    namespace: str,
    pod_name: str,
    container: str,
    restarted: bool,
    *,
    timeout: float = DEFAULT_TIMEOUT,
) -> ContainerLog | None:
    """The last lines of ``container``'s latest run (in a crash loop, the run that just
    crashed: the kubelet serves it until the next one starts), or, when that run wrote
    nothing and the container ``restarted``, of the run before (``previous``); kept as
    ``story.container_log`` says. None when it cannot be read within ``timeout`` seconds
    (both reads together) or the API refuses: logged, never raised."""
    try:
        return await asyncio.wait_for(
            _read(api, namespace, pod_name, container, restarted, timeout), timeout
        )
    except asyncio.TimeoutError:
        log.warning(
            "richprogress: the log of %s/%s (container %s) took over %g s to read; the failure goes on without it",
            namespace, pod_name, container, timeout,
        )  # fmt: skip
    except Exception as exc:  # a 400 (no such run), a 403 (no pods/log permission), a drop
        status = getattr(exc, "status", None)
        if status == 403 and not _told_forbidden:
            _say_forbidden()
        log.info(
            "richprogress: could not read the log of %s/%s (container %s): %s",
            namespace, pod_name, container, status or type(exc).__name__,
        )  # fmt: skip
    return None


_told_forbidden = False


def _say_forbidden() -> None:
    """Once per hub process: the hub's role lacks ``pods/log`` (z2jh's does by default)."""
    global _told_forbidden
    _told_forbidden = True
    log.warning(
        "richprogress: the hub may not read pods/log (403), so failure pages show no container log;"
        " grant its service account 'get' on pods/log to show it (docs/container-log.md)"
    )


async def _read(
    api: Any, namespace: str, pod_name: str, container: str, restarted: bool, timeout: float
) -> ContainerLog:
    data = await _fetch(api, namespace, pod_name, container, False, timeout)
    previous = False
    if not data.strip() and restarted:
        try:
            data = await _fetch(api, namespace, pod_name, container, True, timeout)
            previous = True
        except LogRefused:
            pass  # no run before it the kubelet still has: the latest run's (empty) log
    data, shortened = await _tail_that_fits(
        api, namespace, pod_name, container, previous, timeout, data
    )
    text = data[:READ_BYTES].decode("utf-8", "replace")
    filled = shortened or len(data) >= READ_BYTES or text.count("\n") >= MAX_LINES
    return container_log(container, previous, text, maybe_more=filled)


async def _tail_that_fits(
    api: Any,
    namespace: str,
    pod_name: str,
    container: str,
    previous: bool,
    timeout: float,
    data: bytes,
) -> tuple[bytes, bool]:
    """The last lines that fit in ``READ_BYTES``, and whether fewer were asked for than
    ``MAX_LINES``. ``limitBytes`` keeps the *start* of the asked tail, so one very long line
    (a JSON blob, a minified bundle) among the last ``MAX_LINES`` used to push the lines
    after it, the ones that say why, out of the answer: half as many lines are asked for
    until the answer is no longer cut (40, 20, 10, 5, 2, then 1, whose start is kept: at
    most six reads of at most ``READ_BYTES`` each, within the read's one deadline)."""
    lines = MAX_LINES
    while len(data) >= READ_BYTES and lines > 1:
        lines = max(1, lines // 2)
        data = await _fetch(
            api, namespace, pod_name, container, previous, timeout, tail_lines=lines
        )
    return data, lines < MAX_LINES


class LogRefused(Exception):
    """The API answered the log request with an error status."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


async def _fetch(
    api: Any,
    namespace: str,
    pod_name: str,
    container: str,
    previous: bool,
    timeout: float,
    tail_lines: int = MAX_LINES,
) -> bytes:
    # the raw answer (_preload_content=False): the client would otherwise json.loads a
    # log that happens to be JSON (a JSON logger's one line) and hand back a dict
    response = await api.read_namespaced_pod_log(
        pod_name,
        namespace,
        container=container,
        previous=previous,
        tail_lines=tail_lines,
        limit_bytes=READ_BYTES,
        _request_timeout=timeout,
        _preload_content=False,
    )
    try:
        if not 200 <= response.status < 300:
            raise LogRefused(response.status)
        return bytes(await response.read())
    finally:
        response.release()
