"""Rows the spawn got past are marked "resolved": the unit (``newly_resolved``) and the
real progress stream of a spawner (the retried pull that worked), whose ``Pulled`` event
carries the failed pull's ids as ``resolved`` while the timeline marks them ``overcome``."""

from __future__ import annotations

from typing import Any

from richprogress.model.records import EventRecord
from richprogress.story.resolved import newly_resolved
from tests.helpers.replay import flaky_pull_stream


def rec(id: str, reason: str, severity: str, message: str, phase: str | None, t: int, **extra: Any) -> EventRecord:
    stamp = f"2026-11-30T12:00:{t:02d}Z"
    record: dict[str, Any] = {
        "id": id, "timestamp": stamp, "first_timestamp": stamp, "type": "Warning" if severity != "info" else "Normal",
        "severity": severity, "reason": reason,
        "object": {"kind": "Pod", "name": "jupyter-alice", "container": "notebook", "field_path": None},
        "component": "kubelet", "count": 1, "message": message, "raw_message": message, "rule": None,
        "phase": phase, "hint": None, "since_spawn": float(t),
    }
    record.update(extra)
    return record  # type: ignore[return-value]


PULL_FAILED = rec("e2", "Failed", "error", 'Failed to pull image "x/y:1": not found', "image", 2)
PULLING = rec("e1", "Pulling", "info", 'Pulling image "x/y:1"', "image", 1)
PULLED = rec("e3", "Pulled", "info", 'Successfully pulled image "x/y:1" in 2s', "image", 3)
UNSCHEDULABLE = rec("e0", "FailedScheduling", "warning", "0/3 nodes are available", "scheduling", 0)
SCHEDULED = rec("e5", "Scheduled", "info", "Successfully assigned default/jupyter-alice to n1", "scheduled", 5)


def test_a_failed_pull_stays_open_until_the_pull_that_works() -> None:
    assert newly_resolved([PULLING, PULL_FAILED]) == ([], 1)
    newly, still_open = newly_resolved([PULLING, PULL_FAILED, PULLED])
    assert still_open == 0
    assert [record["id"] for record in newly] == ["e2"] and newly[0] is PULL_FAILED  # the caller marks it


def test_a_later_step_gets_past_a_problem_of_an_earlier_one() -> None:
    newly, still_open = newly_resolved([UNSCHEDULABLE, SCHEDULED])
    assert ([r["id"] for r in newly], still_open) == (["e0"], 0)


def test_a_machine_being_added_does_not_resolve_no_room() -> None:
    # the scale-up is a later step, but what the FailedScheduling blocked (the pod being
    # scheduled) has not happened: no "resolved" pill yet, and one at the Scheduled
    scale_up = rec("e1", "TriggeredScaleUp", "info", "pod triggered scale-up: [{pool 3->4 (max: 10)}]", "scaling", 1)
    assert newly_resolved([UNSCHEDULABLE, scale_up]) == ([], 1)
    newly, still_open = newly_resolved([UNSCHEDULABLE, scale_up, SCHEDULED])
    assert ([r["id"] for r in newly], still_open) == (["e0"], 0)


def test_a_repeat_after_the_success_stays_open() -> None:
    again = {**PULL_FAILED, "count": 2, "timestamp": "2026-11-30T12:00:09Z"}  # the count grew later
    assert newly_resolved([PULLING, again, PULLED]) == ([], 1)  # type: ignore[list-item]


def test_marked_records_are_not_marked_again() -> None:
    marked = {**PULL_FAILED, "overcome": True}
    assert newly_resolved([PULLING, marked, PULLED]) == ([], 0)  # type: ignore[list-item]


async def test_the_pulled_event_carries_the_failed_pulls_it_got_past() -> None:
    """The demo's flaky-pull through the default rules and a real spawner's progress(): one
    event per record as before (nothing re-sent, the clock never runs back); the
    ``Pulled`` event names the failed pull's rows as ``resolved``, and from then on the
    timeline (a reload, the failure page, the JSON) has them ``overcome``."""
    got, timeline = await flaky_pull_stream()
    clocks = [e["record"]["since_spawn"] for e in got]
    assert clocks == sorted(clocks)
    with_resolved = [(e["record"]["reason"], e["resolved"]) for e in got if "resolved" in e]
    problems = [e["record"]["id"] for e in got if e["record"]["severity"] in ("warning", "error")]
    assert with_resolved == [("Pulled", problems)] and problems
    assert {r["id"] for r in timeline.records() if r.get("overcome") is True} == set(problems)


def test_the_text_report_says_resolved_too() -> None:
    from richprogress.story.report import render_timeline_text

    text = render_timeline_text([PULLING, {**PULL_FAILED, "overcome": True}, PULLED])  # type: ignore[list-item]
    failed_line = next(line for line in text.splitlines() if "not found" in line)
    assert failed_line.endswith("(resolved)")
    assert not any(line.endswith("(resolved)") for line in text.splitlines() if "not found" not in line)
