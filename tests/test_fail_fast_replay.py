"""Fail-fast at real-cluster timing (``--speed 1``), replayed on an injected clock.

The demo's scenarios are replayed step by step at their recorded delays (a scale-up takes
three minutes here, as on a cluster), through the default rules and the spawner's live
diagnosis (``LiveDiagnoser``) with the default policy, on a ``SpawnTimeline`` whose clock
the test moves. The verdict is checked at every step and every second in between:

- the spawns that succeed on a real cluster (happy path, scale-up, storage provisioning, a
  pull that fails once and then works) are never stopped early;
- the hopeless ones are stopped within 15 s of the first decisive failure.

The real hub and KubeSpawner run the same scenarios in ``test_fail_fast_hub.py``.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from richprogress.demo.cluster.scenarios import builtin_scenarios, expand
from richprogress.model.timeline import SpawnTimeline
from richprogress.model.times import isoformat_z
from richprogress.story.fail_fast import FailFastPolicy
from richprogress.stream.live_diagnosis import LiveDiagnoser
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


def replay(name: str, until: float, policy: FailFastPolicy = FailFastPolicy()) -> tuple[float | None, float | None]:
    """(when fail-fast became due, when the first fatal record arrived), in seconds."""
    clock = {"now": START}
    timeline = SpawnTimeline(started_at=START, clock=lambda: clock["now"])
    live = LiveDiagnoser(policy)
    formatter = EventFormatter()
    events = timed_events(name, until)
    first_fatal = None
    second = 0.0
    for at, event in events:
        # every second between events: time alone may end it (the hold)
        while second < at:
            clock["now"] = START + timedelta(seconds=second)
            if live.current is not None:
                live.refresh(timeline)
            if live.stop_due:
                return second, first_fatal
            second += 1.0
        clock["now"] = START + timedelta(seconds=at)
        stored, changed = timeline.add(formatter.format_event(event))
        if stored.get("fatal") and first_fatal is None:
            first_fatal = at
        if changed:
            live.note(timeline, stored)
        if live.stop_due:
            return at, first_fatal
    while second <= until:
        clock["now"] = START + timedelta(seconds=second)
        if live.current is not None:
            live.refresh(timeline)
        if live.stop_due:
            return second, first_fatal
        second += 1.0
    return None, first_fatal


@pytest.mark.parametrize("name", ["happy-path", "scale-up", "volume-provisioning", "flaky-pull"])
def test_spawns_that_can_succeed_are_never_stopped_at_real_timing(name: str) -> None:
    scenario = builtin_scenarios()[name]
    assert scenario.outcome == "ready"
    stopped, _ = replay(name, until=scenario.duration + 60)
    assert stopped is None


def test_flaky_pull_looks_fatal_for_a_while_and_still_is_not_stopped() -> None:
    stopped, first_fatal = replay("flaky-pull", until=60)
    assert first_fatal is not None and stopped is None


@pytest.mark.parametrize(("name", "within"), [
    pytest.param("image-not-found", 15.0, id="image-not-found"),
    pytest.param("custom-image", 15.0, id="typed-missing-image"),
    # the autoscaler says it again on its next pass, 20 s later in this recording
    pytest.param("no-node-fits", 20.0, id="no-node-fits"),
])
def test_hopeless_spawns_are_stopped_soon_after_the_first_failure(name: str, within: float) -> None:
    stopped, first_fatal = replay(name, until=300)
    assert first_fatal is not None and stopped is not None
    assert stopped - first_fatal <= within, (stopped, first_fatal)


def test_with_fail_fast_off_nothing_is_ever_stopped() -> None:
    stopped, first_fatal = replay("image-not-found", until=300, policy=FailFastPolicy(enabled=False))
    assert first_fatal is not None and stopped is None
