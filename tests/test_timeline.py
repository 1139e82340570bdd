"""SpawnTimeline: the one spawn's record store that the spawner writes and the pages read."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from richprogress.records import EventRecord
from richprogress.timeline import SpawnTimeline, isoformat_z, parse_timestamp

T0 = datetime(2026, 11, 29, 9, 0, 0, tzinfo=timezone.utc)


def record(id: str, seconds: float | None, *, count: int = 1, phase: Any = None) -> EventRecord:
    stamp = isoformat_z(T0 + timedelta(seconds=seconds)) if seconds is not None else None
    return {
        "id": id,
        "timestamp": stamp,
        "first_timestamp": stamp,
        "type": "Normal",
        "severity": "info",
        "reason": "Pulling",
        "object": {"kind": "Pod", "name": "jupyter-alice", "container": None, "field_path": None},
        "component": "kubelet",
        "count": count,
        "message": "Downloading the image",
        "raw_message": "Pulling image",
        "rule": None,
        "phase": phase,
    }


def fixed_clock(now: datetime) -> SpawnTimeline:
    return SpawnTimeline(started_at=T0, clock=lambda: now)


@pytest.mark.parametrize(
    ("event_seconds", "received_seconds", "expected"),
    [
        pytest.param(7.0, None, 7.0, id="event-time"),
        pytest.param(-2.0, None, 0.0, id="cluster-clock-behind-is-not-negative"),
        pytest.param(None, 3.5, 3.5, id="no-timestamp-uses-arrival"),
    ],
)
def test_since_spawn(event_seconds: float | None, received_seconds: float | None, expected: float) -> None:
    tl = fixed_clock(T0 + timedelta(seconds=60))
    received = T0 + timedelta(seconds=received_seconds) if received_seconds is not None else None
    stored, changed = tl.add(record("a", event_seconds), received_at=received)
    assert changed
    assert stored["since_spawn"] == expected


def test_a_repeat_updates_in_place_and_an_identical_one_changes_nothing() -> None:
    tl = fixed_clock(T0)
    tl.add(record("a", 1))
    tl.add(record("b", 2))
    stored, changed = tl.add(record("a", 5, count=3))
    assert changed and stored["count"] == 3
    assert [r["id"] for r in tl.records()] == ["a", "b"]
    _, changed = tl.add(record("a", 5, count=3))
    assert not changed


def test_bounded_oldest_first() -> None:
    tl = SpawnTimeline(started_at=T0, max_records=3, clock=lambda: T0)
    for i in range(5):
        tl.add(record(f"r{i}", i))
    assert [r["id"] for r in tl.records()] == ["r2", "r3", "r4"]
    assert tl.dropped == 2


@pytest.mark.parametrize(
    ("phases", "expected"),
    [
        pytest.param(["scheduling", "image", "scheduling"], 55, id="never-goes-back"),
        pytest.param([None, "no-such-phase"], 0, id="unknown-ignored"),
        pytest.param([["image"], {"x": 1}, 7], 0, id="odd-types-from-a-hook-ignored"),
    ],
)
def test_progress_from_phases(phases: list[Any], expected: int) -> None:
    tl = fixed_clock(T0)
    for i, phase in enumerate(phases):
        tl.add(record(f"r{i}", i, phase=phase))
    assert tl.progress == expected


def test_a_failure_is_not_overwritten_by_a_later_stop() -> None:
    tl = fixed_clock(T0 + timedelta(seconds=30))
    tl.finish("failed", "")
    tl.finish("stopped")
    assert tl.outcome == "failed"
    assert tl.failure_message == ""
    data = tl.to_dict()
    assert data["outcome"] == "failed" and data["elapsed"] == 30.0
    assert data["started"] == "2026-11-29T09:00:00.000Z"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("2026-11-29T09:00:05Z", T0 + timedelta(seconds=5), id="z"),
        pytest.param("2026-11-29T10:00:05+01:00", T0 + timedelta(seconds=5), id="offset"),
        pytest.param("2026-11-29T09:00:05", T0 + timedelta(seconds=5), id="naive-is-utc"),
        pytest.param("yesterday", None, id="junk"),
        pytest.param(None, None, id="none"),
    ],
)
def test_parse_timestamp(text: str | None, expected: datetime | None) -> None:
    assert parse_timestamp(text) == expected
