"""What the spawn pages say about a cause follows what the events state, on the demo's
scenarios as the simulated cluster plays them (``timed_events``: the scenario JSON at
real-cluster timing):

- no-node-fits: the scheduler and cluster-autoscaler both say no machine is of the kind
  the server asks for. That is a matter for an admin (not "try a smaller size"), and since
  no machine was added the spawn failed while finding a machine, not while adding one;
- scale-up: "No machine has enough free memory" stays open while the new machine is being
  added (no "resolved" pill at +0:01), is not named as the cause meanwhile, and is resolved
  when the pod is scheduled; its repeats never flip it;
- image-not-found: the failed pull's follow-ups (ErrImagePull, the back-off) fold into one
  row right after it on the failure page and in the report.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from richprogress.model.timeline import SpawnTimeline
from richprogress.story.diagnosis import decisive_record, diagnose, got_past
from richprogress.story.folding import fold_records, is_fold
from richprogress.story.hints import HINT_NO_SUCH_MACHINE
from richprogress.story.report import render_report_text, render_timeline_text
from richprogress.story.resolved import newly_resolved
from richprogress.story.steps import step_durations
from richprogress.web.views.failure import failure_view
from richprogress.wording.formatter import EventFormatter
from richprogress.wording.scheduling import summarize_scale_up_failure
from tests.helpers.replay import START, timed_events


def played(name: str, until: float) -> tuple[SpawnTimeline, list[tuple[float, dict[str, Any]]]]:
    """The scenario's records in a timeline, and (when, stored record) for each event."""
    timeline = SpawnTimeline(started_at=START)
    formatter = EventFormatter()
    seen = []
    for at, event in timed_events(name, until):
        stored, _changed = timeline.add(formatter.format_event(event))
        seen.append((at, stored))
    return timeline, seen


# -- no-node-fits ------------------------------------------------------------------------------


def test_no_node_fits_is_a_kind_of_machine_the_cluster_has_none_of() -> None:
    timeline, _ = played("no-node-fits", until=120)
    records = list(timeline.records())
    found = diagnose(records, "")
    decisive = next(r for r in records if r["id"] == found["record_id"])
    assert decisive["reason"] == "NotTriggerScaleUp" and decisive.get("fatal") is True
    assert found["hint"] == HINT_NO_SUCH_MACHINE
    assert "smaller" not in found["hint"] and "size limit" not in found["hint"]
    # no machine was added: the spawn never left the scheduling step
    assert found["phase"] == "scheduling"
    assert [s["phase"] for s in step_durations(records, START)] == ["scheduling"]
    report = render_report_text({**timeline.to_dict(), "outcome": "failed"}, user="alice", server_name="")
    assert "Failed during: Finding a machine to run it" in report
    assert "Adding a machine" not in report
    # the scheduler's own words about it: it knows running machines only, so "may"
    scheduler = next(r for r in records if r["reason"] == "FailedScheduling")
    assert scheduler["message"] == "No running machine matches this server's machine type"
    assert "smaller" not in scheduler["hint"] and "usually" not in scheduler["hint"]


def test_the_failure_page_says_finding_a_machine() -> None:
    timeline, _ = played("no-node-fits", until=120)
    timeline.finish("failed", "")
    view = failure_view("alice", "", timeline)
    assert view is not None
    assert view.phase_label == "Finding a machine to run it"
    assert view.hint == HINT_NO_SUCH_MACHINE
    assert [step["label"] for step in view.steps] == ["Finding a machine to run it"]


@pytest.mark.parametrize(("message", "hint_has", "hint_lacks"), [
    pytest.param("pod didn't trigger scale-up: 2 node(s) didn't match Pod's node affinity/selector",
                 "a kind of machine this cluster does not have", "smaller", id="wrong-kind-only"),
    pytest.param("pod didn't trigger scale-up (it wouldn't fit if a new node is added): 2 Insufficient memory",
                 "big enough", "kind of machine", id="too-big-only"),
    pytest.param("pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient "
                 "cpu", "too small", "size limit", id="wrong-kind-or-too-small"),
    pytest.param("pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector, 1 max node "
                 "group size reached", "size limit", "kind of machine this cluster", id="one-group-may-free-up"),
])
def test_a_scale_up_that_did_not_happen_gets_the_hint_of_its_cause(
    message: str, hint_has: str, hint_lacks: str
) -> None:
    hint = summarize_scale_up_failure(message).hint or ""
    assert hint_has in hint and hint_lacks not in hint


# -- scale-up: resolved when the pod is scheduled, in hand while the machine is added ---------


def test_no_machine_has_room_is_resolved_only_by_the_scheduled() -> None:
    timeline, seen = played("scale-up", until=400)
    first = next(r["id"] for _, r in seen if r["reason"] == "FailedScheduling")
    scheduled_at = next(at for at, r in seen if r["reason"] == "Scheduled")
    pills: list[tuple[float, bool]] = []
    records: list[Any] = []
    by_id: dict[str, Any] = {}
    for at, stored in seen:
        by_id[stored["id"]] = stored
        records = list(by_id.values())
        pills.append((at, first in got_past(records)))
        if stored["reason"] == "TriggeredScaleUp":
            # the machine is being added: in hand, so not named as the cause
            assert decisive_record(records) is None
    # never "resolved" before the pod was scheduled, always after: it never flips
    assert [resolved for at, resolved in pills] == [at >= scheduled_at for at, _ in pills]
    assert pills[1][0] < 2 and pills[1][1] is False  # the TriggeredScaleUp at +0:01.5
    assert got_past(list(timeline.records())) >= {r["id"] for _, r in seen if r["reason"] == "FailedScheduling"}


def test_the_stream_marks_it_resolved_once_at_the_scheduled() -> None:
    """What the spawner does with ``newly_resolved``: each record marked once, when the
    spawn got past it; repeats of the FailedScheduling before then are never marked."""
    clock = {"now": START}
    timeline = SpawnTimeline(started_at=START, clock=lambda: clock["now"])
    formatter = EventFormatter()
    marked: list[tuple[str, str]] = []
    for at, event in timed_events("scale-up", until=400):
        clock["now"] = START + timedelta(seconds=at)
        stored, _ = timeline.add(formatter.format_event(event))
        newly, _open = newly_resolved(list(timeline.records()))
        for record in newly:
            timeline.add({**record, "overcome": True})
            marked.append((str(stored["reason"]), str(record["reason"])))
    assert marked == [("Scheduled", "FailedScheduling"), ("Scheduled", "FailedScheduling")]


def test_karpenter_nominating_a_machine_is_in_hand_not_resolved() -> None:
    def rec(id: str, reason: str, t: int, severity: str, phase: str) -> dict[str, Any]:
        stamp = f"2026-11-30T12:00:{t:02d}Z"
        return {"id": id, "timestamp": stamp, "first_timestamp": stamp, "severity": severity, "reason": reason,
                "type": "Normal" if severity == "info" else "Warning", "phase": phase, "message": reason,
                "object": {"kind": "Pod", "name": "jupyter-alice", "container": None}}

    failed = rec("fs", "FailedScheduling", 0, "warning", "scheduling")
    nominated = rec("nom", "Nominated", 1, "info", "scaling")
    launched = rec("l", "Launched", 20, "info", "scaling")
    scheduled = rec("s", "Scheduled", 40, "info", "scheduled")
    assert decisive_record([failed, nominated, launched]) is None  # type: ignore[list-item]
    assert got_past([failed, nominated, launched]) == frozenset()  # type: ignore[list-item]
    assert got_past([failed, nominated, launched, scheduled]) == {"fs"}  # type: ignore[list-item]
    # a FailedScheduling about storage is over once the pod is scheduled too
    storage = {**failed, "id": "fsv", "phase": "volume", "message": "0/3 nodes: unbound PVC"}
    assert got_past([storage, scheduled]) == {"fsv"}  # type: ignore[list-item]


# -- image-not-found: the follow-ups fold after the cause --------------------------------------


def test_the_failed_pulls_follow_ups_fold_right_after_it_on_the_failure_page() -> None:
    timeline, _ = played("image-not-found", until=40)
    timeline.finish("failed", "")
    view = failure_view("alice", "", timeline)
    assert view is not None
    shown = [(row["kind"], row.get("message") or row.get("text", "")) for row in view.rows]
    cause = next(i for i, row in enumerate(view.rows) if row.get("decisive"))
    assert view.rows[cause]["message"].endswith("was not found in its registry")
    assert view.rows[cause + 1]["kind"] == "fold", shown
    assert view.rows[cause + 1]["text"].startswith("3 more events folded")
    # nothing of "Could not download" or "Waiting before trying again" is left as a row
    # the pill words a person reads: the hub's "Server requested" (none), then the machine
    # found, the download, and the cause
    assert [row.get("word") for row in view.rows if row["kind"] == "record"] == [
        "", "done", "working", "error"], shown


def test_the_report_folds_them_and_still_says_what_they_were() -> None:
    timeline, _ = played("image-not-found", until=40)
    timeline.finish("failed", "")
    report = render_report_text(timeline.to_dict(), user="alice", server_name="")
    lines = report.split("Timeline:\n", 1)[1].splitlines()
    cause = next(i for i, line in enumerate(lines) if "was not found in its registry" in line)
    folded = lines[cause + 2]  # the cause's own Kubernetes words come first
    assert folded.startswith("  ... 3 follow-ups of the failed download above")
    for words in ("Error: ErrImagePull", "Back-off pulling image", "Error: ImagePullBackOff"):
        assert words in folded
    assert "Could not download the image" not in report
    assert "Waiting before trying again" not in report


def test_a_follow_up_is_never_folded_away_when_it_is_the_decisive_record() -> None:
    timeline, _ = played("image-not-found", until=40)
    records = list(timeline.records())
    follow_up = next(r["id"] for r in records if r["raw_message"] == "Error: ErrImagePull")
    rows = fold_records(records, decisive_id=follow_up)  # type: ignore[arg-type]
    assert follow_up in [row.get("id") for row in rows if not is_fold(row)]
    # the two others still fold (a fold of one would not save a row)
    folds = [row for row in rows if is_fold(row)]
    assert [fold["folded"] for fold in folds] == [2]  # type: ignore[index]


def test_follow_ups_of_a_pull_that_then_worked_fold_too_and_a_lone_one_stays() -> None:
    timeline, _ = played("flaky-pull", until=60)
    rows = fold_records(list(timeline.records()))  # type: ignore[arg-type]
    kinds = ["fold" if is_fold(row) else row["reason"] for row in rows]  # type: ignore[index]
    assert kinds == ["Scheduled", "Pulling", "Failed", "fold", "Pulled", "Created", "Started"]
    text = render_timeline_text(list(timeline.records())[:4])  # the failed pull and one follow-up
    assert "Could not download the image" in text and "folded" not in text
