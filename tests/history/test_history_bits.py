"""Small pieces of the spawn history: "2 hours ago", the spawn-ended point, the demo flags."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from richprogress.demo.__main__ import parse_args
from richprogress.model.timeline import SpawnTimeline
from richprogress.model.times import time_ago
from richprogress.stream import spawn_end as spawn_events

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("seconds_ago", "text"),
    [
        (-30, "just now"),
        (0, "just now"),
        (44, "just now"),
        (60, "1 minute ago"),
        (45, "1 minute ago"),
        (150, "2 minutes ago"),
        (3600, "1 hour ago"),
        (2 * 3600 + 59 * 60, "2 hours ago"),
        (86400, "1 day ago"),
        (9 * 86400, "1 week ago"),
        (40 * 86400, "1 month ago"),
        (800 * 86400, "2 years ago"),
    ],
)
def test_time_ago(seconds_ago: float, text: str) -> None:
    assert time_ago(NOW - timedelta(seconds=seconds_ago), NOW) == text


def test_time_ago_of_nothing_is_empty() -> None:
    assert time_ago(None, NOW) == ""


def _finished(outcome: str, message: str | None = None) -> SpawnTimeline:
    timeline = SpawnTimeline(started_at=NOW)
    timeline.finish(outcome, message)  # type: ignore[arg-type]
    return timeline


@pytest.mark.parametrize(
    ("outcome", "message", "told"),
    [
        ("ready", None, "ready"),
        ("failed", "", "failed"),
        ("failed", "The server did not start within 30 seconds.", "failed"),
        ("failed", "The server was stopped before it was ready.", "stopped"),
        ("failed", "The spawn was cancelled.", "stopped"),
    ],
)
def test_each_ending_is_told_once_with_its_outcome(outcome: str, message: str | None, told: str) -> None:
    heard: list[spawn_events.SpawnEnd] = []
    spawn_events.subscribe(heard.append)
    timeline = _finished(outcome, message)
    spawner = SimpleNamespace(name="")
    spawn_events.spawn_ended(spawner, timeline)
    spawn_events.spawn_ended(spawner, timeline)  # stop() after start() failed: not again
    assert [(e.outcome, e.timeline, e.spawner) for e in heard] == [(told, timeline, spawner)]


def test_a_pending_timeline_is_not_told() -> None:
    heard: list[spawn_events.SpawnEnd] = []
    spawn_events.subscribe(heard.append)
    spawn_events.spawn_ended(SimpleNamespace(), SpawnTimeline())
    assert heard == []


def test_a_failing_listener_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    heard: list[str] = []

    def broken(end: spawn_events.SpawnEnd) -> None:
        raise RuntimeError("boom")

    spawn_events.subscribe(broken)
    spawn_events.subscribe(lambda end: heard.append(end.outcome))
    spawn_events.spawn_ended(SimpleNamespace(), _finished("ready"))
    assert heard == ["ready"]
    assert "listener failed" in caplog.text


def test_unsubscribe() -> None:
    heard: list[str] = []
    listener = lambda end: heard.append(end.outcome)  # noqa: E731
    unsubscribe = spawn_events.subscribe(listener)
    spawn_events.subscribe(listener)  # twice: one subscription
    spawn_events.spawn_ended(SimpleNamespace(), _finished("ready"))
    unsubscribe()
    spawn_events.spawn_ended(SimpleNamespace(), _finished("ready"))
    assert heard == ["ready"]


def test_demo_state_flags() -> None:
    args = parse_args(["--state-dir", "/tmp/rp-state", "--history-url", "postgresql://u@h/db"])
    assert args.state_dir == "/tmp/rp-state"
    assert args.history_url == "postgresql://u@h/db"
    plain = parse_args([])
    assert plain.state_dir is None and plain.history_url is None
