"""Reading the failing container's last log lines through KubeSpawner's own API client,
within a deadline and a byte bound, never raising into the spawn.

Which container and which run come from the pod's status as the pods reflector holds it
(no extra request): the first container that terminated, is terminated now, or restarted
(the notebook container first). A container that never ran has no log, and then nothing
is read at all: an image that cannot be pulled costs no request. ``previous=True`` asks
for the run before the last restart when the container is not terminated now but has
been (a crash loop waiting to run again: its current run has written nothing yet).

The answer is cut, cleaned and redacted once, here (``story.container_log``), before
anything keeps it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from richprogress.story.container_log import MAX_BYTES, MAX_LINES, ContainerLog, container_log

log = logging.getLogger("richprogress")

#: seconds a log read may take before the spawn's failure goes on without it
DEFAULT_TIMEOUT = 2.0
#: what the API may send at most: more than is kept, so the end of the tail (which
#: ``limitBytes`` would cut, as it keeps the start) is rarely lost
READ_BYTES = 4 * MAX_BYTES


def _statuses(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    status = pod.get("status") if isinstance(pod, Mapping) else None
    found = (status or {}).get("containerStatuses") if isinstance(status, Mapping) else None
    return [s for s in found or [] if isinstance(s, Mapping)]


def log_target(pod: Mapping[str, Any] | None, preferred: str = "notebook") -> tuple[str, bool] | None:
    """``(container, previous)`` whose log tells why the pod failed, or None when no
    container has run (nothing to read)."""
    if not pod:
        return None
    statuses = _statuses(pod)
    statuses.sort(key=lambda s: s.get("name") != preferred)
    for status in statuses:
        name = status.get("name")
        if not isinstance(name, str) or not name:
            continue
        state = status.get("state") or {}
        last = status.get("lastState") or {}
        if isinstance(state, Mapping) and "terminated" in state:
            return name, False
        restarted = isinstance(last, Mapping) and "terminated" in last
        if restarted or int(status.get("restartCount") or 0) > 0:
            running = isinstance(state, Mapping) and "running" in state
            # running again after a crash: this run's lines are the freshest (it may be
            # the run the hub gave up on); waiting: only the previous run wrote anything
            return name, not running
    for status in statuses:
        state = status.get("state") or {}
        if isinstance(state, Mapping) and "running" in state and isinstance(status.get("name"), str):
            return str(status["name"]), False  # it runs and never answered: what it says
    return None


async def read_container_log(
    api: Any,
    namespace: str,
    pod_name: str,
    container: str,
    previous: bool,
    *,
    timeout: float = DEFAULT_TIMEOUT,
) -> ContainerLog | None:
    """The last lines of ``container``'s log (``previous``: of its run before the last
    restart), kept as ``story.container_log`` says; None when it cannot be read within
    ``timeout`` seconds or the API refuses (logged, never raised)."""
    try:
        data = await asyncio.wait_for(_fetch(api, namespace, pod_name, container, previous, timeout), timeout)
    except asyncio.TimeoutError:
        log.warning(
            "richprogress: the log of %s/%s (container %s) took over %g s to read; the failure goes on without it",
            namespace, pod_name, container, timeout,
        )  # fmt: skip
        return None
    except Exception as exc:  # a 400 (no such run), a 403 (no pods/log permission), a drop
        log.info(
            "richprogress: could not read the log of %s/%s (container %s): %s",
            namespace, pod_name, container, getattr(exc, "status", None) or type(exc).__name__,
        )  # fmt: skip
        return None
    text = data[:READ_BYTES].decode("utf-8", "replace")
    filled = len(data) >= READ_BYTES or text.count("\n") >= MAX_LINES
    return container_log(container, previous, text, maybe_more=filled)


class LogRefused(Exception):
    """The API answered the log request with an error status."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


async def _fetch(api: Any, namespace: str, pod_name: str, container: str, previous: bool, timeout: float) -> bytes:
    # the raw answer (_preload_content=False): the client would otherwise json.loads a
    # log that happens to be JSON (a JSON logger's one line) and hand back a dict
    response = await api.read_namespaced_pod_log(
        pod_name,
        namespace,
        container=container,
        previous=previous,
        tail_lines=MAX_LINES,
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

