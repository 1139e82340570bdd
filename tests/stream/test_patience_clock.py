"""Patience messages on an injected clock: when they come, and how many.

The timing of patience messages used to be checked only through a real spawn on the
simulated cluster, where a loaded machine shifts every moment; one run saw an extra message.
Here the spawner's pump step (``_rp_patience``) runs against a timeline whose clock the test
sets, so every due time is checked exactly, and nothing sleeps.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from richprogress.model.timeline import SpawnTimeline
from richprogress.stream.broadcast import TimelineBroadcast
from tests.helpers.patience import T0, Clock, Plain, patience_records


def setup(after: float = 0.3, growth: float = 2.0) -> tuple[Plain, SpawnTimeline, Clock, dict]:
    user = SimpleNamespace(name="alice", id=1, url="/user/alice/", escaped_name="alice")
    spawner = Plain(user=user, patience_after=after, patience_growth=growth)
    clock = Clock()
    timeline = SpawnTimeline(started_at=T0, clock=clock)
    return spawner, timeline, clock, {"patience_n": 0, "patience_count": {}}


def test_one_message_per_due_time_counted_from_the_request() -> None:
    spawner, timeline, clock, state = setup()
    broadcast = TimelineBroadcast()
    said = []
    # the pump wakes at each due time, and also (events arriving) in between
    for moment in (0.0, 0.29, 0.3, 0.31, 0.45, 0.6, 0.61, 1.19, 1.2, 2.39, 2.4, 2.9):
        clock.seconds = moment
        if spawner._rp_patience(timeline, broadcast, state):
            said.append(moment)
    assert said == [0.3, 0.6, 1.2, 2.4]  # growing intervals, never one per tick
    (record,) = patience_records(timeline)
    assert record["id"] == "patience-requested" and record["count"] == 4
    assert record["since_spawn"] == 2.4
    # the row's clock column says when: the text does not repeat it
    assert record["message"] == "Still waiting for your server to start"
    # the pump's next wake-up is the next due time, measured on the same clock
    assert spawner._rp_next_wakeup(timeline, state) == pytest.approx(4.8 - 2.9)


def test_overdue_messages_are_skipped_not_sent_in_a_burst() -> None:
    spawner, timeline, clock, state = setup()
    clock.seconds = 5.0  # the pump was held up (a slow hook): 0.3 ... 4.8 are all due
    assert spawner._rp_patience(timeline, TimelineBroadcast(), state)
    assert not spawner._rp_patience(timeline, TimelineBroadcast(), state)
    (record,) = patience_records(timeline)
    assert record["count"] == 1
    assert spawner._rp_next_wakeup(timeline, state) == pytest.approx(9.6 - 5.0)


def test_no_message_once_the_spawn_ended() -> None:
    spawner, timeline, clock, state = setup()
    clock.seconds = 0.2
    timeline.finish("failed", "no")
    clock.seconds = 10.0
    assert not spawner._rp_patience(timeline, TimelineBroadcast(), state)
    assert patience_records(timeline) == []


def test_patience_off() -> None:
    spawner, timeline, clock, state = setup(after=0)
    clock.seconds = 100.0
    assert not spawner._rp_patience(timeline, TimelineBroadcast(), state)
    assert spawner._rp_next_wakeup(timeline, state) is None
