"""What ``GET .../pods/NAME/log`` answers: a simulated container's output, and the refusals.

The notebook stand-in writes a few lines as a Jupyter server would (started, listening,
requests served). The API server's answers follow the real ones (Kubernetes v1.31,
``pkg/registry/core/pod/strategy.go``, ``LogLocation`` and ``validateContainer``): a pod with
several containers needs ``container``, an unknown one is named, a container that has not
started is "waiting to start", and ``previous`` needs a terminated container before it.
``tailLines``, ``limitBytes`` and ``timestamps`` shape the text; ``follow`` keeps it open.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .store import Obj


@dataclass(eq=False)
class PodLog:
    """The output of one pod's (first) container: this run's lines and the previous run's."""

    lines: list[tuple[str, str]] = field(default_factory=list)  # (RFC 3339 time, text)
    previous: list[tuple[str, str]] | None = None
    closed: bool = False
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def write(self, text: str) -> None:
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        for line in text.splitlines():
            self.lines.append((stamp, line))
        self._wake()

    def restart(self) -> None:
        """The container ran again: what it wrote is now the previous run's."""
        self.previous, self.lines = self.lines, []
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait(self, timeout: float) -> None:
        """Until something is written or the log closes (or ``timeout`` seconds pass)."""
        changed = self._changed
        try:
            await asyncio.wait_for(changed.wait(), timeout)
        except asyncio.TimeoutError:
            pass


def render(lines: list[tuple[str, str]], tail: int | None, limit_bytes: int | None, timestamps: bool) -> bytes:
    """The text of ``lines`` as the kubelet sends it: last ``tail`` lines, cut at ``limit_bytes``."""
    chosen = lines[-tail:] if tail is not None and tail >= 0 else lines
    if tail == 0:
        chosen = []
    text = "".join((f"{stamp} {line}\n" if timestamps else f"{line}\n") for stamp, line in chosen)
    data = text.encode()
    return data[:limit_bytes] if limit_bytes is not None else data


def refusal(pod: Obj, container: str | None, previous: bool, log: PodLog | None) -> str | None:
    """The 400 message for a log request that cannot be served, or None."""
    name = pod["metadata"]["name"]
    names = [str(c.get("name", "")) for c in (pod.get("spec") or {}).get("containers") or []]
    if container is None:
        if len(names) != 1:
            return f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
        container = names[0]
    elif container not in names:
        return f"container {container} is not valid for pod {name}"
    statuses: dict[str, Any] = {
        s.get("name"): s for s in (pod.get("status") or {}).get("containerStatuses") or []
    }
    status = statuses.get(container) or {}
    if previous:
        if log is None or log.previous is None:
            return f'previous terminated container "{container}" in pod "{name}" not found'
        return None
    waiting = (status.get("state") or {}).get("waiting")
    if not status or (waiting is not None and not status.get("lastState")):
        reason = (waiting or {}).get("reason") or "ContainerCreating"
        if reason in ("ErrImagePull", "ImagePullBackOff"):
            return f'container "{container}" in pod "{name}" is waiting to start: trying and failing to pull image'
        return f'container "{container}" in pod "{name}" is waiting to start: {reason}'
    return None
