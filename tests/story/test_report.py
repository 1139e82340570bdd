"""The plain-text renderings: the since-spawn clock, the terminal timeline and the
"Copy details" report a user pastes to an admin."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from richprogress.model.timeline import SpawnTimeline
from richprogress.model.times import format_clock, format_duration
from richprogress.story.diagnosis import diagnose
from richprogress.story.report import render_report_text, render_timeline_text

START = datetime(2026, 11, 29, 10, 0, 0, tzinfo=timezone.utc)


def rec(
    id: str,
    reason: str,
    second: int,
    message: str,
    *,
    type: str = "Normal",
    severity: str = "info",
    phase: str | None = None,
    count: int = 1,
    raw: str | None = None,
    container: str | None = "notebook",
    since: float | None = None,
) -> dict[str, Any]:
    stamp = (START + timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%SZ")
    record: dict[str, Any] = {
        "id": id,
        "timestamp": stamp,
        "first_timestamp": stamp,
        "type": type,
        "severity": severity,
        "reason": reason,
        "object": {
            "kind": "Pod",
            "name": "jupyter-alice",
            "container": container,
            "field_path": None,
        },
        "component": "kubelet",
        "count": count,
        "message": message,
        "raw_message": raw or message,
        "rule": None,
        "phase": phase,
        "hint": None,
    }
    if since is not None:
        record["since_spawn"] = since
    return record


IMAGE_FAILURE = [
    rec(
        "sched",
        "Scheduled",
        2,
        "Found a machine for your server",
        phase="scheduled",
        container=None,
    ),
    rec("pull", "Pulling", 3, "Downloading the image quay.io/x/y:z", phase="image"),
    rec(
        "notfound",
        "Failed",
        7,
        "The image quay.io/x/y:z does not exist",
        type="Warning",
        severity="error",
        phase="image",
        raw='Failed to pull image "quay.io/x/y:z": not found',
    ),
    rec(
        "backoff",
        "BackOff",
        151,
        "Waiting before trying again",
        severity="warning",
        phase="image",
        count=4,
        raw='Back-off pulling image "quay.io/x/y:z"',
    ),
]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(None, "", id="unknown"),
        pytest.param(0, "+0:00", id="zero"),
        pytest.param(7.9, "+0:07", id="seconds-round-down"),
        pytest.param(151, "+2:31", id="minutes"),
        pytest.param(3723, "+1:02:03", id="hours"),
        pytest.param(-2, "+0:00", id="clock-skew-never-negative"),
    ],
)
def test_format_clock(seconds: float | None, text: str) -> None:
    assert format_clock(seconds) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(None, "", id="unknown"),
        pytest.param(7, "7 s", id="seconds"),
        pytest.param(151, "2 min 31 s", id="minutes"),
        pytest.param(3723, "1 h 02 min", id="hours"),
    ],
)
def test_format_duration(seconds: float | None, text: str) -> None:
    assert format_duration(seconds) == text


def test_timeline_rows_and_diagnosis() -> None:
    records = [{**r, "since_spawn": float(i * 40)} for i, r in enumerate(IMAGE_FAILURE)]
    text = render_timeline_text(records, diagnosis=diagnose(records, ""))  # type: ignore[arg-type]
    lines = text.splitlines()
    assert lines[0].split() == [
        "10:00:02",
        "+0:00",
        "Normal",
        "Scheduled",
        "Pod/jupyter-alice",
        "Found",
        "a",
        "machine",
        "for",
        "your",
        "server",
    ]
    assert lines[2].split()[:5] == [
        "10:00:07",
        "+1:20",
        "Warning",
        "Failed",
        "Pod/jupyter-alice[notebook]",
    ]
    assert lines[2].endswith("The image quay.io/x/y:z does not exist")
    assert lines[3].endswith("Waiting before trying again  x4")
    assert lines[-2] == "What went wrong: The image quay.io/x/y:z does not exist"
    assert lines[-1].startswith("What you can do: Check the image name")
    assert "\x1b[" not in text


def test_timeline_without_since_spawn_has_no_clock_column() -> None:
    text = render_timeline_text(IMAGE_FAILURE[:1])  # type: ignore[arg-type]
    assert text.split() == [
        "10:00:02",
        "Normal",
        "Scheduled",
        "Pod/jupyter-alice",
        "Found",
        "a",
        "machine",
        "for",
        "your",
        "server",
    ]
    assert "What went wrong" not in text


def test_timeline_folds_consecutive_repeats_and_keeps_decisive() -> None:
    waiting = [
        rec(
            f"w{i}",
            "FailedScheduling",
            10 * i,
            "No machine is free",
            type="Warning",
            severity="warning",
            phase="scheduling",
            container=None,
        )
        for i in range(12)
    ]
    text = render_timeline_text(
        waiting,
        diagnosis={  # type: ignore[arg-type]
            "summary": "No machine is free",
            "hint": None,
            "phase": "scheduling",
            "record_id": "w6",
        },
    )
    lines = text.splitlines()
    assert [line.split()[0] for line in lines[:5]] == [
        "10:00:00",
        "...",
        "10:01:00",
        "...",
        "10:01:50",
    ]
    assert (
        lines[1].strip()
        == "... 5 more events alike (FailedScheduling), 10:00:10 to 10:00:50 (folded)"
    )
    assert (
        lines[3].strip()
        == "... 4 more events alike (FailedScheduling), 10:01:10 to 10:01:40 (folded)"
    )
    assert lines[-1] == "What went wrong: No machine is free"


@pytest.mark.parametrize(
    ("color", "expected"),
    [pytest.param(True, True, id="color-on"), pytest.param(False, False, id="color-off")],
)
def test_timeline_color_only_when_asked(color: bool, expected: bool) -> None:
    text = render_timeline_text(IMAGE_FAILURE, color=color)  # type: ignore[arg-type]
    assert ("\x1b[31m" in text) is expected  # the error row in red


def test_timeline_keeps_each_record_on_one_line() -> None:
    sneaky = rec(
        "x", "Failed", 1, "first line\n10:00:05  Normal  Started  fake row", type="Warning"
    )
    assert render_timeline_text([sneaky]).count("\n") == 1  # type: ignore[list-item]


def _failed_timeline(failure: str) -> dict[str, Any]:
    now = [START]
    timeline = SpawnTimeline(server_name="gpu", started_at=START, clock=lambda: now[0])
    for record in IMAGE_FAILURE:
        timeline.add(record)  # type: ignore[arg-type]
    now[0] = START + timedelta(minutes=5, seconds=3)
    timeline.finish("failed", failure)
    return timeline.to_dict()


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param("Spawn failed: ", id="hub-timeout-empty-message"),
        pytest.param("Spawn failed: pod did not start", id="with-message"),
    ],
)
def test_report_for_a_failed_spawn(failure: str) -> None:
    text = render_report_text(
        _failed_timeline(failure),
        user="a<'&\">b",
        server_name="gpu",
        hub_url="https://hub.example.org/",
    )
    head = text.split("\nSteps:", 1)[0].splitlines()
    fields = dict(line.split(": ", 1) for line in head if ": " in line)
    assert {k.strip(): v.strip() for k, v in fields.items()} == {
        "User": "a<'&\">b",
        "Server": "gpu",
        "Hub": "https://hub.example.org/",
        "Started": "2026-11-29 10:00:00 UTC",
        "Gave up after": "5 min 03 s",
        "Outcome": "failed",
        "Failed during": "Downloading the software image",
        "What went wrong": "The image quay.io/x/y:z does not exist",
        "What you can do": fields["What you can do"],
    }
    assert fields["What you can do"].startswith("Check the image name")
    steps = text.split("Steps:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [s.split() for s in steps] == [
        ["Requesting", "a", "server", "+0:00", "2", "s"],
        ["Machine", "found", "+0:02", "1", "s"],
        ["Downloading", "the", "software", "image", "+0:03", "5", "min", "00", "s"],
    ]
    timeline = text.split("Timeline:\n", 1)[1]
    assert timeline.splitlines()[2].split()[:3] == ["10:00:07", "+0:07", "Warning"]
    assert "<" not in text.replace("a<'&\">b", "")  # plain text, no markup


def test_report_for_a_spawn_that_worked_has_no_failure_section() -> None:
    timeline = SpawnTimeline(
        server_name="", started_at=START, clock=lambda: START + timedelta(seconds=9)
    )
    timeline.add(rec("sched", "Scheduled", 2, "Found a machine for your server", phase="scheduled"))  # type: ignore[arg-type]
    timeline.finish("ready")
    text = render_report_text(timeline.to_dict(), user="alice", server_name="")
    lines = [line.split() for line in text.splitlines()]
    assert ["Server:", "(default", "server)"] in lines
    assert ["Outcome:", "ready"] in lines
    assert "What went wrong" not in text and "Failed during" not in text


def test_report_without_records_still_reads() -> None:
    timeline = SpawnTimeline(started_at=START, clock=lambda: START + timedelta(seconds=300))
    timeline.finish("failed", "Spawn failed: ")
    text = render_report_text(timeline.to_dict(), user="alice", server_name="")
    assert (
        "What went wrong: The cluster had not begun to start the server when the start time limit ran out."
        in text
    )
    assert "Timeline:\n  (no events)" in text


def test_report_uses_the_diagnosis_the_page_showed() -> None:
    data = _failed_timeline("Spawn failed: ")
    data["diagnosis"] = {
        "summary": "Shown on the page",
        "hint": "Do this",
        "phase": "volume",
        "record_id": None,
    }
    text = render_report_text(data, user="alice", server_name="")
    assert "What went wrong: Shown on the page\nWhat you can do: Do this\n" in text
    assert [line.split() for line in text.splitlines() if line.startswith("Failed during")] == [
        ["Failed", "during:", "Preparing", "storage"]
    ]


def test_a_repeat_pairs_its_first_time_with_its_first_offset() -> None:
    # first seen at +0:00, last at +0:17: the row reads "<first time> +0:00 to +0:17",
    # as the page shows it (the time column is the first occurrence's)
    pulling = rec("pull", "Pulling", 17, "Downloading the image", count=6, since=17.2)
    pulling["first_timestamp"] = START.strftime("%Y-%m-%dT%H:%M:%SZ")
    line = render_timeline_text([pulling]).splitlines()[0]  # type: ignore[list-item]
    assert line.split()[:4] == [START.strftime("%H:%M:%S"), "+0:00", "to", "+0:17"], line


def test_the_clock_column_never_goes_backwards() -> None:
    # Kubernetes mixes whole-second and microsecond stamps: the later event's offset
    # truncates lower than the one above it
    first = rec("sched", "Scheduled", 1, "A machine was found", since=1.8)
    second = rec("pull", "Pulling", 1, "Downloading", since=1.05)
    second["since_spawn"] = 0.9
    lines = render_timeline_text([first, second]).splitlines()  # type: ignore[list-item]
    assert [line.split()[1] for line in lines] == ["+0:01", "+0:01"], lines
