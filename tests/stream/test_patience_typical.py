"""Patience rows and "longer than usual" tell one story (richprogress.stream.patience).

The pending page says "This is taking longer than usual" once the step runs past its p90
or the whole start past its p90 (static/typical-times.js, ``typical_words``); the spawner's
"Still waiting for ..." rows used to come at +0:30, +1:00, +2:00, ... whatever the page
said. Here the spawner's pump is simulated on an injected clock (``Clock`` of
test_patience_clock.py): records arrive at their own moments without waking it, as the
reflector's inline handler adds them; the pump wakes when ``_rp_next_wakeup`` says and
runs ``_rp_patience``. Each row is then compared with what the page shows at that moment.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from richprogress.model.records import PHASE_NAMES
from richprogress.model.timeline import SpawnTimeline
from richprogress.stream.broadcast import TimelineBroadcast
from richprogress.stream.patience import PatiencePlan
from richprogress.typical.statistics import Typical
from richprogress.typical.words import is_longer_than_usual, patience_note
from tests.helpers.patience import Clock, Plain, patience_records

#: as c.TypicalTimes.expected = {"scale-up": {"total": [170, 290], "scaling": [120, 240],
#: "image": [20, 40]}} gives them (typical_cache.TypicalTimes.expected_for)
TYPICAL: Typical = {
    "samples": 0, "source": "config",
    "total": {"p50": 170.0, "p90": 290.0, "samples": 0},
    "steps": {"scaling": {"p50": 120.0, "p90": 240.0, "samples": 0},
              "image": {"p50": 20.0, "p90": 40.0, "samples": 0}},
}
TOTAL_ONLY: Typical = {"samples": 0, "source": "config", "total": {"p50": 170.0, "p90": 290.0, "samples": 0},
                       "steps": {}}
LONGER = "this is taking longer than usual"


def record(id: str, phase: str, at: float) -> dict[str, Any]:
    return {
        "id": id, "timestamp": None, "first_timestamp": None, "type": "Normal", "severity": "info",
        "reason": id, "object": {"kind": "Pod", "name": "jupyter-alice", "container": None, "field_path": None},
        "component": None, "count": 1, "message": id, "raw_message": id, "rule": None,
        "phase": phase, "hint": None, "since_spawn": at,
    }


def page_says_longer(typical: Typical | None, arrivals: list[tuple[float, str, str]], now: float) -> bool:
    """What the page shows at ``now`` (static/pages/pending.js advanceStep + TypicalLine.tick): the
    furthest step reached, timed from the record that reached it."""
    step, start = None, None
    for at, _id, phase in arrivals:
        if at <= now and (step is None or PHASE_NAMES.index(phase) > PHASE_NAMES.index(step)):
            step, start = phase, at
    return is_longer_than_usual(typical, step=step, step_elapsed=None if start is None else now - start,
                                total_elapsed=now)


def run_pump(typical: Typical | None, arrivals: list[tuple[float, str, str]], until: float,
             *, after: float = 30.0) -> list[tuple[float, str]]:
    """The rows the pump says, as (seconds since the request, text), up to ``until``."""
    user = SimpleNamespace(name="alice", id=1, url="/user/alice/", escaped_name="alice")
    spawner = Plain(user=user, patience_after=after, patience_growth=2.0)
    spawner.typical = typical
    clock = Clock()
    timeline = SpawnTimeline(started_at=Clock()(), clock=clock)
    state: dict[str, Any] = {"patience_n": 0, "patience_count": {}}
    broadcast = TimelineBroadcast()
    waiting = sorted(arrivals)
    said: list[tuple[float, str]] = []
    wake = 0.0
    while wake <= until:
        while waiting and waiting[0][0] <= wake:  # arrived while the pump slept
            at, id, phase = waiting.pop(0)
            clock.seconds = at
            timeline.add(record(id, phase, at))  # type: ignore[arg-type]
        clock.seconds = wake
        before = {r["id"]: r["count"] for r in patience_records(timeline)}
        if spawner._rp_patience(timeline, broadcast, state):
            (row,) = [r for r in patience_records(timeline) if before.get(r["id"]) != r["count"]]
            said.append((round(wake, 3), row["message"]))
        delay = spawner._rp_next_wakeup(timeline, state)
        if delay is None:
            break
        # records arriving meanwhile do not wake it (they are handled inline)
        wake = round(wake + max(delay, 0.001), 6)
    return said


SCALE_UP = [(1.0, "FailedScheduling", "scheduling"), (5.0, "TriggeredScaleUp", "scaling")]


def test_without_typical_times_the_rows_come_as_they_always_did() -> None:
    said = run_pump(None, SCALE_UP, until=300)
    assert [at for at, _ in said] == [30, 60, 120, 240]
    assert all(text == "Still waiting for your server to start" for _, text in said)


def test_a_step_on_time_is_quiet_and_the_first_row_comes_when_the_page_says_longer() -> None:
    said = run_pump(TYPICAL, SCALE_UP, until=400)
    # no row while adding a machine is on time (the page says "usually takes 2-4 min");
    # the first exactly at the step's p90 (5 s + 240 s), then at growing intervals
    assert [at for at, _ in said] == [245, 275, 335]
    assert said[0][1] == f"Still waiting for your server to start; {LONGER} (usually 2-4 min)"
    for at, text in said:
        # the page says it too, from that very second on
        assert page_says_longer(TYPICAL, SCALE_UP, at + 0.001) and LONGER in text


def test_only_the_total_known_plain_rows_until_its_p90_then_longer() -> None:
    said = run_pump(TOTAL_ONLY, SCALE_UP, until=400)
    # the p90 of 4:50 reads "9 in 10 within 5 min" on the page: late from +5:00
    assert [at for at, _ in said] == [30, 60, 120, 240, 300, 330, 390]
    for at, text in said:
        longer = page_says_longer(TOTAL_ONLY, SCALE_UP, at + 0.001)
        assert (LONGER in text) is longer, (at, text)
    assert said[4][1].endswith(f"{LONGER} (usually ready in about 3 min)")


def test_a_step_reached_while_the_pump_sleeps_is_not_missed() -> None:
    # the download begins at +0:10 without waking the pump; its p90 is 40 s: the row is
    # due at +0:50, the second the page says "longer than usual", not at the next +0:30 x 2^n
    arrivals = [(1.0, "Scheduled", "scheduled"), (10.0, "Pulling", "image")]
    said = run_pump(TYPICAL, arrivals, until=100)
    assert said[0] == (50.0, f"Still waiting for your server to start; {LONGER} (usually 20-40 s)")
    assert not page_says_longer(TYPICAL, arrivals, 49.9) and page_says_longer(TYPICAL, arrivals, 50.001)


def test_late_in_all_a_new_step_goes_on_with_the_same_cadence() -> None:
    # adding a machine ran late (rows at 245, 275); the download begins at 280 and the
    # start passes its p90 (as worded: 5 min) at 300: the page says "longer than usual"
    # again from then on,
    # and the rows go on at their cadence (not again at once for the new step)
    arrivals = SCALE_UP + [(280.0, "Pulling", "image")]
    said = run_pump(TYPICAL, arrivals, until=400)
    assert [at for at, _ in said] == [245, 275, 335]
    # by +5:35 the download itself runs past its usual 20-40 s
    assert said[2][1].endswith(f"{LONGER} (usually 20-40 s)")
    for at, _ in said:
        assert page_says_longer(TYPICAL, arrivals, at + 0.001)
    # a download that began at +3:20 runs past its usual 40 s at +4:00, before the start
    # passes its p90 (+4:50): the first row comes then, with the download's usual time
    arrivals = SCALE_UP + [(200.0, "Pulling", "image")]
    said = run_pump(TYPICAL, arrivals, until=400)
    assert said[0] == (240.0, f"Still waiting for your server to start; {LONGER} (usually 20-40 s)")


def test_no_rows_once_the_cause_is_hopeless_and_none_when_patience_is_off() -> None:
    plan = PatiencePlan(30.0, 2.0, TYPICAL)
    plan.step, plan.step_start = "image", 10.0
    assert plan.take(50.0, hopeless=True) is None  # skipped, not delayed:
    assert plan.take(51.0) is None
    assert plan.take(60.0) is None  # the plain schedule's moment: silent while late
    assert plan.take(80.0) is not None  # the next "longer" row
    off = PatiencePlan(0.0, 2.0, TYPICAL)
    assert off.take(1000.0) is None and off.next_due(1000.0) is None


@pytest.mark.parametrize(("step", "step_elapsed", "total_elapsed", "note"), [
    ("scaling", 239.0, 100.0, None),
    ("scaling", 240.0, 245.0, f"{LONGER} (usually 2-4 min)"),
    ("image", 10.0, 300.0, f"{LONGER} (usually ready in about 3 min)"),
    ("volume", 500.0, 100.0, None),  # no typical time for the step, the start on time
])
def test_the_note(step: str, step_elapsed: float, total_elapsed: float, note: str | None) -> None:
    assert patience_note(TYPICAL, step=step, step_elapsed=step_elapsed, total_elapsed=total_elapsed) == note
