"""The one verdict (``story.verdict.decide``): the state each demo scenario passes through,
replayed at a real cluster's timing through the default rules and the spawner's live
verdict, and what each state lets the page show."""

from __future__ import annotations

from datetime import timedelta

import pytest

from richprogress.model.timeline import STOPPED_BEFORE_READY, SpawnTimeline
from richprogress.story.fail_fast import FailFastPolicy
from richprogress.story.verdict import SHOWS, STATE_WORDS, STATES, decide
from richprogress.stream.live_diagnosis import LiveDiagnoser
from richprogress.wording.formatter import EventFormatter
from tests.helpers.replay import START, timed_events


def states_of(scenario: str, until: float, policy: FailFastPolicy = FailFastPolicy()) -> list[str]:
    """The verdict's states, in order, each once, as the scenario's events arrive."""
    clock = {"now": START}
    timeline = SpawnTimeline(started_at=START, clock=lambda: clock["now"])
    live = LiveDiagnoser(policy)
    formatter = EventFormatter()
    said: list[str] = []
    for at, event in timed_events(scenario, until=until):
        clock["now"] = START + timedelta(seconds=at)
        stored, changed = timeline.add(formatter.format_event(event))
        if changed:
            live.note(timeline, stored)
        if live.stop_due:
            live.mark_stopped()
        state = live.verdict.state + ("/early" if live.verdict.stopped_early else "")
        if not said or said[-1] != state:
            said.append(state)
        if live.verdict.stopped_early:
            break
    return said


def test_a_pull_that_fails_once_then_works_is_never_called_hopeless() -> None:
    assert states_of("flaky-pull", until=60) == ["progressing", "blocked", "progressing"]


def test_a_missing_image_is_blocked_first_and_hopeless_only_once_it_held() -> None:
    # fail-fast off: the page shows the decisive verdict and the spawn goes on
    off = FailFastPolicy(enabled=False)
    assert states_of("image-not-found", until=60, policy=off) == ["progressing", "blocked", "hopeless"]
    # on: the spawn is ended as soon as the cause held
    assert states_of("image-not-found", until=60) == ["progressing", "blocked", "failed/early"]


def test_a_scale_up_under_way_is_waiting_not_a_problem() -> None:
    # "No machine has enough free memory" comes first; once a machine is being added the
    # page waits calmly, even while the scheduler repeats itself
    assert states_of("scale-up", until=400) == ["blocked", "waiting", "progressing"]


def test_the_first_not_found_says_what_it_knows() -> None:
    records = [
        {"id": "a", "reason": "Failed", "severity": "error", "fatal": True, "count": 1, "phase": "image",
         "message": "The image x:1 for the notebook container was not found in its registry",
         "raw_message": 'Failed to pull image "x:1": rpc error: code = NotFound desc = x:1: not found'},
    ]
    verdict = decide(records, now=1.0, first_seen={"a": 1.0})
    assert verdict.state == "blocked"
    assert verdict.cause is not None and verdict.cause.certainty == "unconfirmed"
    assert verdict.cause.summary.endswith("This usually means a wrong name or tag; the cluster will try again.")
    shown = verdict.to_dict()
    assert shown["words"]["kicker"] == "Still trying"
    assert "will not" not in " ".join(str(v) for v in shown["words"].values())
    # the second one decides it
    again = decide([{**records[0], "count": 2}], now=12.0, first_seen={"a": 1.0})
    assert again.state == "hopeless" and again.cause is not None
    assert again.cause.certainty == "decisive" and "try again" not in again.cause.summary


def test_after_the_end() -> None:
    assert decide([], outcome="ready").state == "ready"
    stopped = decide([], outcome="failed", failure_message=STOPPED_BEFORE_READY)
    assert stopped.state == "stopped" and stopped.cause is None
    failed = decide([], outcome="failed", failure_message="Spawn failed: ")
    assert failed.state == "failed" and failed.cause is not None
    assert failed.cause.summary == "The cluster had not begun to start the server when the start time limit ran out."


@pytest.mark.parametrize("state", STATES)
def test_every_state_has_its_show_and_words(state: str) -> None:
    assert state in SHOWS and state in STATE_WORDS


def test_no_state_shows_typical_times_or_the_redirect_line_beside_a_failure() -> None:
    for state in ("failed", "hopeless", "stopped", "stopping"):
        assert not SHOWS[state].typical, state
        assert not SHOWS[state].redirect_line, state
    # a cause on the page (blocked) hides the typical times: "usually ready in 5 s" under a
    # problem reads as a promise
    assert not SHOWS["blocked"].typical
    # nothing to stop once it ended
    assert SHOWS["failed"].stop is None and SHOWS["stopped"].stop is None and SHOWS["ready"].stop is None
