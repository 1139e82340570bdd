"""SpawnTimeline: the one spawn's record store that the spawner writes and the pages read."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from richprogress.model.records import EventRecord
from richprogress.model.timeline import SpawnTimeline
from richprogress.model.times import isoformat_z, parse_timestamp

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


# -- the change log: what a live reader reads on each wake-up --------------------------------


def ids(records: list[EventRecord]) -> list[tuple[str, int]]:
    return [(r["id"], r["count"]) for r in records]


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        pytest.param([], [("a", 1), ("b", 1)], [("a", 1), ("b", 1)], id="new-records-in-order"),
        pytest.param([("a", 1), ("b", 1)], [("a", 2)], [("a", 2)], id="an-update-only"),
        pytest.param([("a", 1)], [("a", 2), ("b", 1), ("a", 3)], [("b", 1), ("a", 3)], id="latest-version-once-at-its-latest-change"),
        pytest.param([("a", 1)], [("a", 1)], [], id="an-identical-repeat-is-no-change"),
        pytest.param([], [], [], id="nothing"),
    ],
)
def test_changes_since_a_readers_position(
    before: list[tuple[str, int]], after: list[tuple[str, int]], expected: list[tuple[str, int]]
) -> None:
    tl = fixed_clock(T0)
    for name, count in before:
        tl.add(record(name, 1, count=count))
    snapshot, seen = tl.snapshot()
    assert ids(snapshot) == ids(tl.records()) and seen == tl.change_seq
    for name, count in after:
        tl.add(record(name, 1, count=count))
    changed, now = tl.changes(seen)
    assert ids(changed) == expected
    assert now == tl.change_seq
    assert tl.changes(now) == ([], now)  # caught up: nothing more


def test_changes_leave_out_records_dropped_past_the_bound() -> None:
    tl = SpawnTimeline(started_at=T0, max_records=3, clock=lambda: T0)
    tl.add(record("r0", 0))
    _, seen = tl.snapshot()
    for i in range(1, 6):
        tl.add(record(f"r{i}", i))
    changed, _ = tl.changes(seen)
    assert [r["id"] for r in changed] == ["r3", "r4", "r5"] == [r["id"] for r in tl.records()]


def test_the_change_log_stays_small_and_old_positions_still_read_right() -> None:
    """A crash-looping pod updates a few records thousands of times: the log is compacted
    (its length stays within a small multiple of the records kept), and a reader that last
    read long ago still gets each changed record once, in its latest version."""
    tl = fixed_clock(T0)
    for name in "abc":
        tl.add(record(name, 1))
    _, old_position = tl.snapshot()
    tl.add(record("d", 1))
    for count in range(2, 2002):
        tl.add(record("b", 1, count=count))
        assert len(tl._log) <= 2 * len(tl.records()) + 65
    tl.add(record("a", 1, count=2))
    changed, _ = tl.changes(old_position)
    assert ids(changed) == [("d", 1), ("b", 2001), ("a", 2)]
    changed, _ = tl.changes(tl.change_seq - 1)
    assert ids(changed) == [("a", 2)]


def test_add_owned_stores_the_record_itself_and_add_a_copy() -> None:
    tl = fixed_clock(T0)
    mine = record("a", 1)
    mine["since_spawn"] = 1.0
    stored, changed = tl.add_owned(mine)
    assert changed and stored is mine
    given = record("b", 2)
    stored, _ = tl.add(given)
    assert stored is not given and stored["since_spawn"] == 2.0 and "since_spawn" not in given
