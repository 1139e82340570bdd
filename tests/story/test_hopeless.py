"""The live diagnosis and the fail-fast verdict (richprogress.story.fail_fast), as a pure function.

Records are built by hand (in the record schema of docs/contracts.md) and time is passed in,
so every case reads as "these records, at this second, with this policy: the page says X,
stop or not".
"""

from __future__ import annotations

from typing import Any

import pytest

from richprogress.story.diagnosis import diagnose
from richprogress.story.fail_fast import FailFastPolicy, assess


def rec(id: str, reason: str, at: int, *, severity: str = "info", phase: str | None = None,
        count: int = 1, fatal: bool | None = None, message: str | None = None,
        raw: str | None = None) -> dict[str, Any]:
    stamp = f"2026-11-29T10:00:{at:02d}Z"
    record: dict[str, Any] = {
        "id": id, "timestamp": stamp, "first_timestamp": stamp,
        "type": "Normal" if severity == "info" else "Warning", "severity": severity,
        "reason": reason,
        "object": {"kind": "Pod", "name": "jupyter-alice", "container": "notebook", "field_path": None},
        "component": "kubelet", "count": count, "message": message or f"{reason} happened",
        "raw_message": raw or message or reason, "rule": None, "phase": phase, "hint": None,
    }
    if fatal is not None:
        record["fatal"] = fatal
    return record


SCHEDULED = rec("sched", "Scheduled", 1, phase="scheduled")
PULLING = rec("pull", "Pulling", 2, phase="image")


def not_found(count: int = 1, fatal: bool = True) -> dict[str, Any]:
    return rec("nf", "Failed", 3, severity="error", phase="image", count=count, fatal=fatal,
               message="The image quay.io/x:y for the notebook container does not exist",
               raw='Failed to pull image "quay.io/x:y": not found')


ERR_PULL = rec("err", "Failed", 3, severity="error", phase="image", message="Could not download the image",
               raw="Error: ErrImagePull")


def test_nothing_wrong_says_nothing() -> None:
    verdict = assess([SCHEDULED, PULLING], now=3.0)
    assert verdict.diagnosis is None and not verdict.stop and verdict.recheck_in is None


def test_a_fatal_cause_is_shown_at_once_in_the_failure_pages_words_but_not_acted_on_alone() -> None:
    records = [SCHEDULED, PULLING, not_found(), ERR_PULL]
    verdict = assess(records, now=3.0, first_seen={"nf": 3.0})
    assert verdict.diagnosis is not None
    assert verdict.diagnosis["state"] == "hopeless" and verdict.diagnosis["fatal"] is True
    # the same sentence, hint and step as the failure page and `explain --diagnose`
    final = diagnose(records)  # type: ignore[arg-type]
    assert {k: verdict.diagnosis[k] for k in final} == dict(final)  # type: ignore[literal-required]
    assert not verdict.stop
    assert verdict.recheck_in == pytest.approx(60.0)


def test_the_second_occurrence_stops_it() -> None:
    verdict = assess([SCHEDULED, PULLING, not_found(count=2), ERR_PULL], now=14.0, first_seen={"nf": 3.0})
    assert verdict.stop and verdict.diagnosis is not None and verdict.diagnosis["count"] == 2


def test_a_cause_that_holds_long_enough_stops_it_without_repeating() -> None:
    records = [SCHEDULED, PULLING, not_found()]
    assert not assess(records, now=62.9, first_seen={"nf": 3.0}).stop
    verdict = assess(records, now=63.0, first_seen={"nf": 3.0})
    assert verdict.stop


@pytest.mark.parametrize(("policy", "count", "held", "stop"), [
    pytest.param(FailFastPolicy(enabled=False), 9, 999.0, False, id="off-never-stops"),
    pytest.param(FailFastPolicy(repeats=3, hold_seconds=0), 2, 999.0, False, id="count-only-not-yet"),
    pytest.param(FailFastPolicy(repeats=3, hold_seconds=0), 3, 0.0, True, id="count-only-reached"),
    pytest.param(FailFastPolicy(repeats=0, hold_seconds=5), 9, 4.9, False, id="time-only-not-yet"),
    pytest.param(FailFastPolicy(repeats=0, hold_seconds=5), 1, 5.0, True, id="time-only-reached"),
    pytest.param(FailFastPolicy(repeats=0, hold_seconds=0), 1, 0.0, True, id="both-off-at-once"),
])
def test_policy(policy: FailFastPolicy, count: int, held: float, stop: bool) -> None:
    verdict = assess([PULLING, not_found(count=count)], now=10.0 + held, first_seen={"nf": 10.0}, policy=policy)
    assert verdict.stop is stop
    assert verdict.diagnosis is not None and verdict.diagnosis["state"] == "hopeless"


def test_a_cause_waiting_can_fix_says_still_trying_and_never_stops() -> None:
    fs = rec("fs", "FailedScheduling", 1, severity="warning", phase="scheduling", count=40,
             message="No machine has enough free memory", raw="0/3 nodes are available: 3 Insufficient memory.")
    verdict = assess([fs], now=600.0, first_seen={"fs": 0.0})
    assert verdict.diagnosis is not None and verdict.diagnosis["state"] == "trying"
    assert verdict.diagnosis["fatal"] is False
    assert not verdict.stop and verdict.recheck_in is None


def test_a_cause_that_is_overcome_is_no_longer_shown() -> None:
    fs = rec("fs", "FailedScheduling", 1, severity="warning", phase="scheduling")
    scaling = rec("up", "TriggeredScaleUp", 2, phase="scaling")
    assert assess([fs], now=1.0).diagnosis is not None
    assert assess([fs, scaling], now=2.0).diagnosis is None


def test_a_fatal_looking_failure_that_clears_is_not_stopped() -> None:
    started = rec("started", "Started", 20, phase="starting")
    verdict = assess([SCHEDULED, PULLING, not_found(), rec("pulled", "Pulled", 15, phase="image"), started],
                     now=21.0, first_seen={"nf": 3.0})
    assert verdict.diagnosis is None and not verdict.stop


def test_a_hook_that_unmarks_fatal_is_obeyed() -> None:
    verdict = assess([PULLING, not_found(count=5, fatal=False)], now=100.0, first_seen={"nf": 0.0})
    assert verdict.diagnosis is not None and verdict.diagnosis["state"] == "trying" and not verdict.stop


def test_only_a_true_fatal_counts() -> None:
    record = not_found(count=5)
    record["fatal"] = "yes"
    assert not assess([record], now=100.0, first_seen={"nf": 0.0}).stop


def test_the_decisive_record_decides_not_any_fatal_record() -> None:
    # a fatal record that a more telling, non-fatal record outranks is not acted on
    crash = rec("crash", "BackOff", 5, severity="error", phase="starting", count=3, fatal=True,
                raw="Back-off restarting failed container notebook")
    evicted = rec("ev", "Evicted", 6, severity="error", phase="starting",
                  message="Your server was stopped by the cluster")
    verdict = assess([crash, evicted], now=10.0, first_seen={"crash": 5.0})
    assert verdict.diagnosis is not None and verdict.diagnosis["record_id"] == "ev"
    assert not verdict.stop


def test_an_unseen_record_counts_as_seen_now() -> None:
    verdict = assess([not_found()], now=500.0)
    assert not verdict.stop and verdict.recheck_in == pytest.approx(60.0)
