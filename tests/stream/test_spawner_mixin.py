"""RichProgressMixin on a plain (non-Kubernetes) JupyterHub spawner.

``ScriptedSpawner`` (``tests.helpers.scripted_spawner``) is a real ``jupyterhub.spawner.Spawner`` subclass whose ``start()``
walks through steps that the test releases one by one (no sleeps to race against), and
whose own ``progress()`` yields one message per step, as a third-party spawner would.
We read what the mixin's ``progress()`` yields and what ``spawn_timeline`` keeps.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from richprogress.model.times import format_clock as format_elapsed
from tests.helpers.scripted_spawner import STEPS, collect, make, release_all, run


async def test_parent_messages_become_records_and_the_bar_never_reaches_100():
    spawner = make()
    events, error = await run(spawner)
    assert error is None
    assert [e["message"] for e in events] == [m for m, _ in STEPS]
    progress = [e["progress"] for e in events]
    assert progress == sorted(progress) and max(progress) < 100
    assert progress[-1] == 70  # the spawner's own numbers still move the bar
    for event in events:
        assert "html_message" not in event
        record = event["record"]
        assert record["message"] == event["message"] and record["type"] == "Custom"
        assert isinstance(record["since_spawn"], float) and record["since_spawn"] >= 0
    assert len({e["record"]["id"] for e in events}) == len(events)
    timeline = spawner.spawn_timeline
    assert timeline.outcome == "ready"
    assert [r["id"] for r in timeline.records()] == [e["record"]["id"] for e in events]


OUTCOMES = [
    # id, exception raised by the parent's start(), expected failure message (substring)
    ("error-with-text", RuntimeError("quota exceeded for alice"), "quota exceeded for alice"),
    ("empty-timeout", TimeoutError(), "TimeoutError"),
    ("empty-error", RuntimeError(), "RuntimeError"),
]


@pytest.mark.parametrize("exc,expected", [row[1:] for row in OUTCOMES], ids=[row[0] for row in OUTCOMES])
async def test_a_failed_start_is_recorded_with_a_reason(exc, expected):
    spawner = make(fail=exc)
    events, error = await run(spawner)
    assert error is exc
    timeline = spawner.spawn_timeline
    assert timeline.outcome == "failed"
    assert expected in timeline.failure_message
    # the records of the failed spawn stay readable
    assert [r["message"] for r in timeline.records()] == [m for m, _ in STEPS]


@pytest.mark.parametrize(
    "start_timeout,expected",
    [(1, "did not start within 1 seconds"), (600, "cancelled")],
    ids=["hub-start-timeout", "cancelled-early"],
)
async def test_hub_cancelling_start_marks_the_timeline_failed(start_timeout, expected):
    # JupyterHub: asyncio.wait_for(spawner.start(), start_timeout) cancels start()
    spawner = make(start_timeout=start_timeout)
    spawner.gates[0].set()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(spawner.start(), 1.0)
    timeline = spawner.spawn_timeline
    assert timeline.outcome == "failed"
    assert expected in timeline.failure_message


async def test_reconnect_replays_the_same_ids_first_then_live_records():
    spawner = make()
    start = asyncio.ensure_future(spawner.start())
    await asyncio.sleep(0)
    first: list[dict[str, Any]] = []
    reader = asyncio.ensure_future(collect(spawner, first))
    spawner.gates[0].set()
    spawner.gates[1].set()
    while len(first) < 2:
        await asyncio.sleep(0.01)
    second: list[dict[str, Any]] = []
    reconnect = asyncio.ensure_future(collect(spawner, second))
    while len(second) < 2:
        await asyncio.sleep(0.01)
    assert [e["record"]["id"] for e in second] == [e["record"]["id"] for e in first]
    assert [e["progress"] for e in second] == [e["progress"] for e in first]
    spawner.gates[2].set()
    await start
    await asyncio.wait_for(asyncio.gather(reader, reconnect), 5)
    assert [e["record"]["id"] for e in second] == [e["record"]["id"] for e in first]
    assert len(first) == 3


async def test_patience_records_keep_one_id_per_step_and_come_at_growing_intervals():
    spawner = make(patience_after=0.1, patience_growth=2)
    start = asyncio.ensure_future(spawner.start())
    await asyncio.sleep(0)
    events: list[dict[str, Any]] = []
    reader = asyncio.ensure_future(collect(spawner, events))
    await asyncio.sleep(0.9)  # due at +0.1, +0.2, +0.4, +0.8: four at most, not one per tick
    await release_all(spawner)
    await start
    await asyncio.wait_for(reader, 5)
    patience = [e["record"] for e in events if e["record"]["id"].startswith("patience-")]
    # at most one per due time passed (a loaded machine may stretch the 0.9 s)
    due_times = [0.1 * 2**n for n in range(12) if 0.1 * 2**n <= spawner.spawn_timeline.elapsed()]
    assert 2 <= len(patience) <= len(due_times)
    assert {r["id"] for r in patience} == {"patience-requested"}
    assert [r["count"] for r in patience] == list(range(1, len(patience) + 1))
    for n, record in enumerate(patience):
        assert record["since_spawn"] >= 0.1 * 2**n
        # the row's clock column says when; the text does not repeat it
        assert record["message"] == "Still waiting for your server to start"
    # the final timeline holds the one patience record, at its last count
    kept = [r for r in spawner.spawn_timeline.records() if r["id"] == "patience-requested"]
    assert len(kept) == 1 and kept[0]["count"] == len(patience)


async def test_the_timeline_stays_until_the_next_start():
    spawner = make(fail=RuntimeError("no capacity"))
    await run(spawner)
    failed = spawner.spawn_timeline
    assert failed.outcome == "failed"
    await spawner.stop()  # what the hub does after a failed start: the timeline stays
    assert spawner.spawn_timeline is failed and failed.outcome == "failed"
    spawner.fail = None
    spawner.gates = [asyncio.Event() for _ in STEPS]
    await run(spawner)
    assert spawner.spawn_timeline is not failed
    assert spawner.spawn_timeline.outcome == "ready"
    assert failed.failure_message == "no capacity"


async def test_stop_while_pending_before_start_ends_the_timeline():
    # the hub marks the spawn pending and the page connects before start() is called
    spawner = make()
    spawner._spawn_pending = True
    events: list[dict[str, Any]] = []
    reader = asyncio.ensure_future(collect(spawner, events))
    await asyncio.sleep(0.01)
    timeline = spawner.spawn_timeline
    assert timeline is not None and timeline.outcome == "pending"
    await spawner.stop()
    await asyncio.wait_for(reader, 5)
    assert timeline.outcome == "failed" and timeline.failure_message


async def test_start_adopts_the_timeline_a_page_opened_first():
    spawner = make()
    spawner._spawn_pending = True
    events: list[dict[str, Any]] = []
    reader = asyncio.ensure_future(collect(spawner, events))
    await asyncio.sleep(0.01)
    early = spawner.spawn_timeline
    start = asyncio.ensure_future(spawner.start())
    await release_all(spawner)
    await start
    await asyncio.wait_for(reader, 5)
    assert spawner.spawn_timeline is early
    assert [e["message"] for e in events] == [m for m, _ in STEPS]


async def test_timeline_is_bounded():
    spawner = make(spawn_timeline_max_records=2)
    events, _error = await run(spawner)
    assert len(events) == 3
    assert len(spawner.spawn_timeline.records()) == 2
    assert spawner.spawn_timeline.dropped == 1


async def test_a_live_reader_reads_only_what_changed_and_wakes_once_per_batch(monkeypatch):
    """A long timeline (450 records, several tabs) costs a reader what changed: after its
    replay it never copies the timeline again, and changes handled in one batch reach it in
    one wake-up, each record once in its latest version."""
    spawner = make()
    events: list[dict[str, Any]] = []
    reader = asyncio.ensure_future(collect(spawner, events))
    await asyncio.sleep(0)
    timeline = spawner.spawn_timeline
    broadcast = spawner._rp_broadcast(timeline)
    formatter = spawner.event_formatter

    def add(text: str, id: str) -> None:
        spawner._rp_add_record(timeline, broadcast, formatter.format_message(text, id=id))

    for n in range(450):
        add(f"step {n}", f"m{n}")
    broadcast.notify()
    while len(events) < 450:
        await asyncio.sleep(0.01)

    def no_full_read() -> Any:
        raise AssertionError("a live reader copied the whole timeline")

    monkeypatch.setattr(timeline, "records", no_full_read)
    monkeypatch.setattr(timeline, "snapshot", no_full_read)
    wakeups = 0
    waiter = type(broadcast).waiter

    def counting_waiter(self: Any, version: int) -> Any:
        nonlocal wakeups
        wakeups += 1
        return waiter(self, version)

    monkeypatch.setattr(type(broadcast), "waiter", counting_waiter)
    add("step 3, again", "m3")  # one batch: an update and two new records, one notify
    add("new one", "n1")
    add("step 3, once more", "m3")
    add("new two", "n2")
    broadcast.notify()
    broadcast.notify()
    while len(events) < 453:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    assert [e["record"]["message"] for e in events[450:]] == ["new one", "step 3, once more", "new two"]
    assert wakeups == 1  # one wait, before this batch: the reader now waits for the next
    monkeypatch.undo()
    timeline.finish("ready")
    broadcast.notify()
    await asyncio.wait_for(reader, 5)


@pytest.mark.parametrize(
    "seconds,text", [(0, "+0:00"), (90.7, "+1:30"), (3725, "+1:02:05")], ids=["zero", "minutes", "hours"]
)
def test_format_elapsed(seconds, text):
    assert format_elapsed(seconds) == text
