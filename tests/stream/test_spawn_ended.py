"""The spawner announces each finished spawn once: metrics and typical times hear of it.

Uses ``RichScripted`` from ``tests.helpers.scripted_spawner`` (a real JupyterHub Spawner
whose steps the test releases) and reads the metrics in prometheus_client's default registry, as
/hub/metrics would, before and after. Each test uses its own profile slug so the numbers
of other tests in the same process do not mix in.
"""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace
from typing import Any

import pytest
from prometheus_client import REGISTRY

from richprogress.metrics import default_metrics, on_spawn_end
from richprogress.model.timeline import SpawnTimeline
from richprogress.stream import spawn_end as spawn_events
from richprogress.typical import cache as typical_cache
from richprogress.typical import statistics as typical
from tests.helpers.scripted_spawner import collect, make, run


@pytest.fixture(autouse=True)
def _metrics_listen(_isolated_spawn_listeners: None) -> None:
    # what richprogress.setup(c) does at hub start: the metrics hear each spawn's end
    spawn_events.subscribe(on_spawn_end)
    spawn_events.subscribe(typical_cache.on_spawn_end)


def read(name: str, **labels: str) -> float:
    default_metrics()
    return REGISTRY.get_sample_value(name, labels) or 0.0


def spawner_with_profile(slug: str, **kwargs: Any) -> Any:
    spawner = make(**kwargs)
    spawner.user_options = {"profile": slug}
    return spawner


async def test_a_ready_start_is_counted_once_and_feeds_typical_times():
    spawner = spawner_with_profile("ended-ready")
    _events, error = await run(spawner)
    assert error is None
    count = "richprogress_spawn_duration_seconds_count"
    assert read(count, outcome="ready", profile="ended-ready") == 1
    await spawner.stop()  # the user stops the running server later: no second count
    spawn_events.spawn_ended(spawner, spawner.spawn_timeline)  # a repeated announcement is ignored
    assert read(count, outcome="ready", profile="ended-ready") == 1
    assert len(typical_cache.default_cache()._recent["ended-ready"]) == 1


async def test_a_failed_start_counts_a_failure_by_cause_and_step():
    spawner = spawner_with_profile("ended-failed", fail=RuntimeError("no capacity"))
    before = read("richprogress_spawn_failures_total", cause="unknown", step="requested")
    _events, error = await run(spawner)
    assert isinstance(error, RuntimeError)
    assert read("richprogress_spawn_duration_seconds_count", outcome="failed", profile="ended-failed") == 1
    # a plain spawner's messages carry no rule: the cause is unknown
    assert read("richprogress_spawn_failures_total", cause="unknown", step="requested") == before + 1
    await spawner.stop()  # what the hub does after a failed start
    assert read("richprogress_spawn_duration_seconds_count", outcome="failed", profile="ended-failed") == 1
    assert "ended-failed" not in typical_cache.default_cache()._recent  # failures are no typical start


async def test_a_stop_while_pending_counts_as_stopped_not_failed():
    spawner = spawner_with_profile("ended-stopped")
    spawner._spawn_pending = True
    events: list[dict[str, Any]] = []
    reader = asyncio.ensure_future(collect(spawner, events))
    await asyncio.sleep(0.01)
    failures_before = sum(
        s.value for m in REGISTRY.collect() if m.name == "richprogress_spawn_failures" for s in m.samples
    )
    await spawner.stop()
    await asyncio.wait_for(reader, 5)
    assert read("richprogress_spawn_duration_seconds_count", outcome="stopped", profile="ended-stopped") == 1
    assert read("richprogress_spawn_duration_seconds_count", outcome="failed", profile="ended-stopped") == 0
    failures_after = sum(
        s.value for m in REGISTRY.collect() if m.name == "richprogress_spawn_failures" for s in m.samples
    )
    assert failures_after == failures_before


async def test_a_broken_metrics_path_never_fails_the_spawn(monkeypatch, caplog):
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("broken summary")

    monkeypatch.setattr(typical, "summarize", broken)
    spawner = spawner_with_profile("ended-broken")
    with caplog.at_level(logging.ERROR):
        _events, error = await run(spawner)
    assert error is None and spawner.spawn_timeline.outcome == "ready"
    assert "could not record the end of a spawn" in caplog.text


def test_as_a_listener_of_a_spawn_end_notification():
    """The shape the spawn-end notification point passes to its listeners."""
    spawner = spawner_with_profile("ended-listener")
    timeline = SpawnTimeline()
    timeline.finish("failed", "The server was stopped before it was ready.")
    end = SimpleNamespace(spawner=spawner, timeline=timeline, outcome="stopped")
    on_spawn_end(end)
    on_spawn_end(end)
    assert read("richprogress_spawn_duration_seconds_count", outcome="stopped", profile="ended-listener") == 1
