"""Fail-fast inside RichKubeSpawner (real KubeSpawner code, simulated cluster, no hub).

What the hub-level tests cannot see: that the spawner stops its own pod before it fails,
that ``fail_fast = False`` only shows the cause, and that a hopeless spawn gets no more
"Still waiting for ..." rows.
"""

from __future__ import annotations

from typing import Any

from richprogress.stream.live_diagnosis import STOPPED_EARLY_ID, StoppedEarly
from tests.helpers.kubespawner import check_stream, make_spawner, rich_cluster, spawn


def live_states(events: list[dict[str, Any]]) -> list[str | None]:
    return [e["diagnosis"]["state"] if e["diagnosis"] else None for e in events if "diagnosis" in e]


async def test_fail_fast_stops_its_own_pod_and_fails_with_the_summary(tmp_path):
    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "image-not-found", start_timeout=20)
        events, error = await spawn(spawner)
        assert isinstance(error, StoppedEarly)
        timeline = spawner.spawn_timeline
        assert str(error) == timeline.failure_message == timeline.stopped_early["summary"]
        assert str(error).startswith("The image ") and str(error).endswith(" was not found in its registry")
        # our own stop() ran before start() failed: the pod is gone, not left to the hub
        assert cluster.pod(spawner.pod_name) is None
        assert timeline.elapsed() < 5
        records = check_stream(events)
        assert STOPPED_EARLY_ID in [r["id"] for r in records]
        assert live_states(events)[-1] == "stopped"


async def test_with_fail_fast_off_the_cause_is_shown_and_the_timeout_ends_it(tmp_path):
    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "image-not-found", start_timeout=2, fail_fast=False,
                               patience_after=0.2, patience_growth=1.5)
        events, error = await spawn(spawner)
        assert error is not None and not isinstance(error, StoppedEarly)
        assert spawner.spawn_timeline.stopped_early is None
        assert "hopeless" in live_states(events)
        records = check_stream(events)
        assert STOPPED_EARLY_ID not in [r["id"] for r in records]
        # patience rows only before the cause was known (the first failed pull comes at
        # +0:00.04 at this speed, the first patience row is due at +0:00.2): none at all
        first_hopeless = next(i for i, e in enumerate(events) if e.get("diagnosis") and e["diagnosis"]["state"] == "hopeless")
        later = [e["record"]["id"] for e in events[first_hopeless:]]
        assert not [i for i in later if i.startswith("patience-")]
        await spawner.stop(now=True)
