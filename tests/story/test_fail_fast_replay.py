"""Fail-fast at real-cluster timing (``--speed 1``), replayed on an injected clock.

The demo's scenarios are replayed step by step at their recorded delays (a scale-up takes
three minutes here, as on a cluster), through the default rules and the spawner's live
diagnosis (``LiveDiagnoser``) with the default policy, on a ``SpawnTimeline`` whose clock
the test moves. The verdict is checked at every step and every second in between:

- the spawns that succeed on a real cluster (happy path, scale-up, storage provisioning, a
  pull that fails once and then works) are never stopped early;
- the hopeless ones are stopped within 15 s of the first decisive failure.

The real hub and KubeSpawner run the same scenarios in ``tests/stream/test_fail_fast_hub.py``.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from richprogress.demo.cluster.scenarios import builtin_scenarios
from richprogress.model.timeline import SpawnTimeline
from richprogress.story.fail_fast import FailFastPolicy
from richprogress.stream.live_diagnosis import LiveDiagnoser
from richprogress.wording.formatter import EventFormatter
from tests.helpers.replay import START, timed_events


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
