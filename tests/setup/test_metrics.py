"""Prometheus metrics of finished spawns: what a scrape shows, and that labels stay bounded.

Timelines are built from the recorded event sequences in tests/data/ run through the real
formatter, with a fake clock for the spawn's start and end. Each test observes into a
private registry and reads it back as Prometheus would (``get_sample_value`` and the
text exposition). ``promtool check metrics`` (Debian's prometheus package) lints that text.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from richprogress.metrics import (
    MAX_PROFILES,
    SpawnMetrics,
    count_store_error,
    observe_spawn_end,
    register_rule_ids,
)
from richprogress.model.timeline import SpawnTimeline
from richprogress.wording.formatter import EventFormatter
from tests.helpers.paths import DATA

# the first event of each tests/data sequence is at 21:33:00; the spawn was requested 5 s before
T0 = datetime(2026, 11, 29, 21, 32, 55, tzinfo=timezone.utc)


def events(name: str) -> list[dict[str, Any]]:
    data = json.loads((DATA / f"{name}.events.json").read_text())
    return data["items"] if isinstance(data, dict) else data


def make_timeline(
    name: str | None,
    *,
    ended_after: float,
    outcome: str,
    failure_message: str | None = None,
    hook: Any = None,
) -> SpawnTimeline:
    """A finished spawn of the recorded sequence ``name`` (None: no events at all)."""
    now = [T0]
    timeline = SpawnTimeline(started_at=T0, clock=lambda: now[0])
    formatter = EventFormatter()
    for event in events(name) if name else []:
        record = formatter.format_event(event)
        if hook is not None:
            hook(record)
        timeline.add(record)
    now[0] = T0 + timedelta(seconds=ended_after)
    timeline.finish(outcome, failure_message)  # type: ignore[arg-type]
    return timeline


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def metrics(registry: CollectorRegistry) -> SpawnMetrics:
    return SpawnMetrics(registry)


def value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    found = registry.get_sample_value(name, labels)
    return 0.0 if found is None else found


def failure_count(registry: CollectorRegistry) -> float:
    return sum(
        s.value
        for m in registry.collect()
        if m.name == "richprogress_spawn_failures"
        for s in m.samples
        if s.name.endswith("_total")
    )


def test_a_ready_spawn_counts_its_duration_and_its_steps(registry, metrics):
    timeline = make_timeline("volume-provisioning", ended_after=20, outcome="ready")
    observe_spawn_end(timeline, profile_slug="small", diagnosis=None, metrics=metrics)

    spawn = "richprogress_spawn_duration_seconds"
    assert value(registry, f"{spawn}_count", outcome="ready", profile="small") == 1
    assert value(registry, f"{spawn}_sum", outcome="ready", profile="small") == 20
    assert value(registry, f"{spawn}_bucket", outcome="ready", profile="small", le="10.0") == 0
    assert value(registry, f"{spawn}_bucket", outcome="ready", profile="small", le="20.0") == 1
    step = "richprogress_spawn_step_duration_seconds"
    # 5 s from the request to the first event, then storage is prepared in two stretches
    # (21:33:00-02 and 21:33:05-12, around the machine being found): 2 + 7 s
    assert value(registry, f"{step}_sum", step="requested", outcome="ready") == 5
    assert value(registry, f"{step}_sum", step="volume", outcome="ready") == 2 + 7
    assert value(registry, f"{step}_count", step="volume", outcome="ready") == 1
    assert value(registry, f"{step}_sum", step="scheduled", outcome="ready") == 3
    # the last step lasts until the spawn ended (21:33:12 -> 21:33:15)
    assert value(registry, f"{step}_sum", step="starting", outcome="ready") == 3
    assert value(registry, "richprogress_spawn_failures_total", cause="timeout", step="starting") == 0


@pytest.mark.parametrize(
    ("scenario", "message", "cause", "step"),
    [
        ("image-not-found", "pod did not start in 300 seconds!", "image-not-found", "image"),
        ("out-of-memory", "", "out-of-memory", "starting"),
        (None, "The server did not start within 30 seconds.", "timeout", "requested"),
        (None, "Spawn failed: boom", "unknown", "requested"),
        ("volume-provisioning", "pod jupyter-x did not start in 300 seconds!", "timeout", "starting"),
    ],
    ids=["decisive-rule", "decisive-rule-no-message", "timeout", "unknown", "timeout-after-progress"],
)
def test_a_failure_counts_once_by_cause_and_step(registry, metrics, scenario, message, cause, step):
    timeline = make_timeline(scenario, ended_after=300, outcome="failed", failure_message=message)
    observe_spawn_end(timeline, profile_slug="small", diagnosis=None, metrics=metrics)
    observe_spawn_end(timeline, profile_slug="small", diagnosis=None, metrics=metrics)  # again

    assert value(registry, "richprogress_spawn_failures_total", cause=cause, step=step) == 1
    assert failure_count(registry) == 1
    assert value(registry, "richprogress_spawn_duration_seconds_count", outcome="failed", profile="small") == 1


def test_a_stop_before_ready_is_no_failure(registry, metrics):
    timeline = make_timeline(
        "image-not-found", ended_after=40, outcome="failed",
        failure_message="The server was stopped before it was ready.",
    )
    observe_spawn_end(timeline, profile_slug=None, diagnosis=None, outcome="stopped", metrics=metrics)
    assert value(registry, "richprogress_spawn_duration_seconds_count", outcome="stopped", profile="none") == 1
    assert failure_count(registry) == 0


def test_a_pending_spawn_is_not_counted_yet(registry, metrics):
    timeline = SpawnTimeline(started_at=T0)
    observe_spawn_end(timeline, profile_slug="small", diagnosis=None, metrics=metrics)
    assert "richprogress_spawn_duration_seconds_count{" not in generate_latest(registry).decode()
    timeline.finish("ready")  # ... and counted once it ends
    observe_spawn_end(timeline, profile_slug="small", diagnosis=None, metrics=metrics)
    assert value(registry, "richprogress_spawn_duration_seconds_count", outcome="ready", profile="small") == 1


def test_a_fail_fast_stop_counts_as_stopped_early(registry, metrics):
    timeline = make_timeline("image-not-found", ended_after=12, outcome="failed", failure_message="")
    observe_spawn_end(timeline, profile_slug="small", diagnosis=None, stopped_early=True, metrics=metrics)
    assert value(registry, "richprogress_spawn_stopped_early_total", cause="image-not-found") == 1
    assert value(registry, "richprogress_spawn_failures_total", cause="image-not-found", step="image") == 1


def test_the_given_diagnosis_is_used(registry, metrics):
    timeline = make_timeline("image-not-found", ended_after=12, outcome="failed", failure_message="")
    diagnosis = {"summary": "x", "hint": None, "phase": "volume", "record_id": None}
    observe_spawn_end(timeline, profile_slug="small", diagnosis=diagnosis, metrics=metrics)  # type: ignore[arg-type]
    assert value(registry, "richprogress_spawn_failures_total", cause="unknown", step="volume") == 1


def test_profiles_are_bounded_and_free_text_never_becomes_a_label(registry, metrics):
    slugs = [f"profile-{n}" for n in range(MAX_PROFILES + 10)]
    hostile = ["alice's <script>alert(1)</script>", "quay.io/jupyter/x:latest", "a b", "", "x" * 200]
    for slug in [*slugs, *hostile]:
        timeline = make_timeline(None, ended_after=10, outcome="ready")
        observe_spawn_end(timeline, profile_slug=slug, diagnosis=None, metrics=metrics)
    text = generate_latest(registry).decode()
    profiles = {
        line.split('profile="', 1)[1].split('"', 1)[0]
        for line in text.splitlines()
        if line.startswith("richprogress_spawn_duration_seconds_count{")
    }
    assert profiles == {*slugs[:MAX_PROFILES], "other"}
    assert value(registry, "richprogress_spawn_duration_seconds_count", outcome="ready", profile="other") == 10 + len(hostile)
    for bad in ("<script>", "quay.io", "alice"):
        assert bad not in text


def test_a_rule_id_from_a_hook_is_bounded_and_loaded_rules_are_known(registry, metrics):
    def free_text_rule(record: dict[str, Any]) -> None:
        if record["rule"] == "image-not-found":
            record["rule"] = "The image quay.io/x:y was not found!"

    timeline = make_timeline("image-not-found", ended_after=60, outcome="failed", hook=free_text_rule)
    observe_spawn_end(timeline, profile_slug="p", diagnosis=None, metrics=metrics)
    assert value(registry, "richprogress_spawn_failures_total", cause="other", step="image") == 1

    # an admin's own rule (its id is known once the hub's rules are registered)
    def own_rule(record: dict[str, Any]) -> None:
        if record["rule"] == "image-not-found":
            record["rule"] = "site-image-typo"

    register_rule_ids(["site-image-typo"], metrics)
    timeline = make_timeline("image-not-found", ended_after=60, outcome="failed", hook=own_rule)
    observe_spawn_end(timeline, profile_slug="p", diagnosis=None, metrics=metrics)
    assert value(registry, "richprogress_spawn_failures_total", cause="site-image-typo", step="image") == 1


def test_observing_never_raises(registry, metrics, caplog):
    class Broken(SpawnTimeline):
        def records(self):  # type: ignore[override]
            raise RuntimeError("a broken timeline")

    timeline = Broken(started_at=T0)
    timeline.finish("failed", "x")
    with caplog.at_level(logging.ERROR):
        observe_spawn_end(timeline, profile_slug="p", diagnosis=None, metrics=metrics)
    assert "could not record a spawn in the metrics" in caplog.text


def test_expected_failures_start_at_zero(registry, metrics):
    """So that an alert on increase() sees the first one (a series born at 1 has none)."""
    text = generate_latest(registry).decode()
    for cause, step in [
        ("not-triggered-scale-up", "scheduling"),
        ("image-not-found", "image"),
        ("out-of-memory", "starting"),
        ("timeout", "scheduling"),
        ("unknown", "requested"),
    ]:
        assert f'richprogress_spawn_failures_total{{cause="{cause}",step="{step}"}} 0.0' in text
    assert failure_count(registry) == 0
    # not every rule: an informational one (a machine was found) is never a failure's cause
    assert 'cause="scheduled"' not in text


def test_store_errors_start_at_zero_and_count_by_operation(registry, metrics):
    text = generate_latest(registry).decode()
    assert 'richprogress_store_errors_total{operation="write"} 0.0' in text
    count_store_error("write", metrics)
    count_store_error("write", metrics)
    count_store_error("DROP TABLE users", metrics)
    assert value(registry, "richprogress_store_errors_total", operation="write") == 2
    assert value(registry, "richprogress_store_errors_total", operation="other") == 1


def promtool() -> str:
    found = shutil.which("promtool")
    assert found, "promtool is missing: run scripts/dev setup (Debian package prometheus)"
    return found


def test_the_exposition_passes_promtool_check_metrics(registry, metrics):
    for name, outcome, message in [
        ("volume-provisioning", "ready", None),
        ("image-not-found", "failed", "pod did not start in 300 seconds!"),
        ("out-of-memory", "failed", ""),
        (None, "failed", "The server did not start within 30 seconds."),
    ]:
        timeline = make_timeline(name, ended_after=90, outcome=outcome, failure_message=message)
        observe_spawn_end(timeline, profile_slug="small", diagnosis=None, stopped_early=True, metrics=metrics)
    count_store_error("read", metrics)
    text = generate_latest(registry)
    assert b"richprogress_spawn_failures_total" in text
    result = subprocess.run(
        [promtool(), "check", "metrics"], input=text, capture_output=True, timeout=60
    )
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    assert result.stdout.decode().strip() == "" and result.stderr.decode().strip() == ""
