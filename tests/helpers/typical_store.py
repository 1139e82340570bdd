"""Spawns for the typical start times, ended into a real store as the spawner ends them.

- ``end(store, user=..., profile=..., started=..., seconds=..., outcome="ready")``: one
  spawn of a profile, through the one "spawn ended" point;
- ``fill(store, clock)``: a store with gpu and cpu starts (ready, failed, too old for the
  window); the steps of the newest gpu start.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from richprogress.history import SpawnHistory
from richprogress.model.timeline import SpawnTimeline
from richprogress.stream import spawn_end as spawn_events
from richprogress.typical.statistics import step_seconds
from tests.helpers.history_store import Clock, fake_spawner, image_not_found_records


def end(
    store: SpawnHistory,
    *,
    user: str,
    profile: str,
    started: datetime,
    seconds: float,
    outcome: str = "ready",
    subscribed: bool = False,
) -> SpawnTimeline:
    """A spawn ended through the one "spawn ended" point; ``subscribed``: the store
    already listens there (``setup(c)`` did it)."""
    finished = started + timedelta(seconds=seconds)
    timeline = SpawnTimeline(started_at=started, clock=lambda: finished)
    for record in image_not_found_records():
        timeline.add(record)
    timeline.finish(outcome, None if outcome == "ready" else "It failed.")
    unsubscribe = (lambda: None) if subscribed else spawn_events.subscribe(store.record)
    try:
        spawn_events.spawn_ended(fake_spawner(user, "", profile), timeline)
    finally:
        unsubscribe()
    return timeline



def fill(store: SpawnHistory, clock: Clock) -> dict[str, Any]:
    """gpu: 8 ready starts of 100..170 s, 3 failures, 2 ready starts too old for the
    window; cpu: 6 ready starts of 20 s."""
    old = clock.now - timedelta(days=30)
    for i in range(2):
        end(store, user=f"old{i}", profile="gpu", started=old, seconds=5.0)
    for i in range(8):
        last = end(store, user=f"g{i}", profile="gpu", started=clock.now - timedelta(hours=8 - i), seconds=100.0 + 10 * i)
    for i in range(3):
        end(store, user=f"f{i}", profile="gpu", started=clock.now - timedelta(hours=1), seconds=900.0, outcome="failed")
    for i in range(6):
        end(store, user=f"c{i}", profile="cpu", started=clock.now - timedelta(hours=2), seconds=20.0)
    store.flush()
    return {"steps": step_seconds(last)}
