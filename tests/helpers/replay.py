"""The demo's scenarios at real-cluster timing (``--speed 1``), as timed events to replay on an
injected clock.

- ``timed_events(name, until)``: the scenario's events as (seconds since the spawn,
  core/v1 Event), with the kubelet's growing back-off on loops, as the simulated cluster
  plays them; the spawn starts at ``START``.
- ``flaky_pull_stream()``: the ``flaky-pull`` scenario through the default rules into a
  real spawner's timeline (``RichProgressMixin`` on a spawner that never runs): the
  progress events a page reads, and the timeline.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any

from jupyterhub.spawner import Spawner

from richprogress.demo.cluster.scenarios import builtin_scenarios, expand
from richprogress.model.timeline import SpawnTimeline
from richprogress.model.times import isoformat_z
from richprogress.stream.broadcast import TimelineBroadcast
from richprogress.stream.mixin import RichProgressMixin
from richprogress.wording.formatter import EventFormatter

START = datetime(2026, 11, 30, 9, 0, 0, tzinfo=timezone.utc)



VALUES = {
    "namespace": "jhub",
    "pod": "jupyter-alice",
    "pod_uid": "pod-uid-1",
    "user": "alice",
    "image": "quay.io/jupyter/no-such-notebook:2026-11",
    "image_ref": "quay.io/jupyter/no-such-notebook:2026-11",
    "container": "notebook",
    "scheduler": "default-scheduler",
    "claim": "claim-alice",
    "volume": "pvc-1",
    "node": "node-1",
    "backoff": "10s",
}



def timed_events(name: str, until: float) -> list[tuple[float, dict[str, Any]]]:
    """The scenario's events at speed 1 as (seconds since the spawn, core/v1 Event), with
    the kubelet's growing back-off on loops, as the simulated cluster plays them."""
    scenario = builtin_scenarios()[name]
    values = {**VALUES, **scenario.vars}
    values = {key: expand(value, values) for key, value in values.items()}
    out: list[tuple[float, dict[str, Any]]] = []
    keyed: dict[str, dict[str, Any]] = {}
    now = 0.0
    serial = 0

    def play(step: dict[str, Any], delay: float) -> None:
        nonlocal now, serial
        now += delay
        stamp = isoformat_z(START + timedelta(seconds=now))
        for spec in step.get("events", []):
            key = spec.get("key")
            if key and key in keyed:
                event = {**keyed[key], "count": keyed[key]["count"] + 1, "lastTimestamp": stamp}
            else:
                serial += 1
                kind = spec.get("object", "Pod")
                involved = {"kind": kind, "namespace": "jhub", "uid": f"{kind}-uid",
                            "name": values["claim"] if kind != "Pod" else values["pod"]}
                if spec.get("fieldPath"):
                    involved["fieldPath"] = expand(spec["fieldPath"], values)
                component = expand(spec.get("component", "kubelet"), values)
                event = {
                    "metadata": {"uid": f"event-{serial}", "name": f"e{serial}", "namespace": "jhub"},
                    "involvedObject": involved, "reason": spec["reason"],
                    "message": expand(spec["message"], values), "type": spec.get("type", "Normal"),
                    "reportingComponent": component, "source": {"component": component},
                    "count": 1, "firstTimestamp": stamp, "lastTimestamp": stamp,
                }
            if key:
                keyed[key] = event
            out.append((now, event))

    for step in scenario.steps:
        play(step, step.get("delay", 0))
    loop = scenario.loop
    iteration = 0
    while loop is not None and now < until:
        iteration += 1
        factor = float(loop.get("delay_factor", 1)) ** (iteration - 1)
        for step in scenario.steps[loop["from"]:]:
            delay = min(step["repeat_delay"] * factor, loop.get("max_delay", 300)) \
                if "repeat_delay" in step else step.get("delay", 0)
            play(step, delay)
    return [(t, e) for t, e in out if t <= until]


class Plain(RichProgressMixin, Spawner):
    """A spawner that never runs: records are added by the test, progress() is read."""

    async def start(self) -> str:  # pragma: no cover - never called
        raise NotImplementedError

    async def stop(self, now: bool = False) -> None:  # pragma: no cover - never called
        pass

    async def poll(self) -> int | None:  # pragma: no cover - never called
        return None



async def flaky_pull_stream() -> tuple[list[dict[str, Any]], SpawnTimeline]:
    """The demo's flaky-pull through the default rules into a real spawner's timeline, at
    its real timing on an injected clock: the progress events a page reads (one per record
    added), and the timeline."""
    user = SimpleNamespace(name="alice", id=1, url="/user/alice/", escaped_name="alice")
    spawner = Plain(user=user, patience_after=0)
    clock = {"now": START}
    timeline = spawner._rp_new_timeline()
    timeline._clock = lambda: clock["now"]  # type: ignore[method-assign]
    timeline.started_at = START
    _, broadcast = spawner._rp_current  # type: ignore[misc]
    assert isinstance(broadcast, TimelineBroadcast)
    formatter = EventFormatter()
    stream = spawner.progress()
    got: list[dict[str, Any]] = []
    for at, event in timed_events("flaky-pull", until=60):
        clock["now"] = START + timedelta(seconds=at)
        record = formatter.format_event(event)
        record["since_spawn"] = at
        if spawner._rp_add_record(timeline, broadcast, record):
            broadcast.notify()
            got.append(await asyncio.wait_for(stream.__anext__(), 5))
    await stream.aclose()
    return got, timeline
