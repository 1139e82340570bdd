"""The failure diagnosis: which record explains a failed spawn, the hint, the step, the
step durations and the folding that keeps a timeline on one screen.

Records are built by hand here (in the record schema of docs/contracts.md), so these tests
pin the choice of the decisive record independently of the wording of the default rules.
"""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from richprogress.model.records import PHASE_NAMES
from richprogress.story.diagnosis import clean_failure_message, decisive_record, diagnose
from richprogress.story.folding import fold_records, is_fold
from richprogress.story.hints import (
    HINT_CRASH,
    HINT_IMAGE_NAME,
    HINT_MEMORY,
    HINT_RETRY,
    HINT_SLOW_IMAGE,
    HINT_SMALLER,
)
from richprogress.story.ordering import time_order
from richprogress.story.report import render_timeline_text
from richprogress.story.steps import step_durations


def rec(
    id: str,
    reason: str,
    at: str,
    message: str | None = None,
    *,
    raw: str | None = None,
    type: str = "Normal",
    severity: str = "info",
    phase: str | None = None,
    count: int = 1,
    first: str | None = None,
    hint: str | None = None,
    container: str | None = "notebook",
) -> dict[str, Any]:
    """One EventRecord as the formatter would return it; ``at`` is HH:MM:SS on one day."""
    stamp = f"2026-11-29T10:{at}Z"
    return {
        "id": id,
        "timestamp": stamp,
        "first_timestamp": f"2026-11-29T10:{first}Z" if first else stamp,
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
        "message": message or f"{reason} happened",
        "raw_message": raw or message or reason,
        "rule": None,
        "phase": phase,
        "hint": hint,
    }


IMAGE_NOT_FOUND = [
    rec("sched", "Scheduled", "00:02", "A machine was found", phase="scheduled", container=None),
    rec("pull", "Pulling", "00:03", "Downloading quay.io/x/y:z", phase="image"),
    rec(
        "notfound",
        "Failed",
        "00:05",
        "The image quay.io/x/y:z does not exist",
        raw='Failed to pull image "quay.io/x/y:z": rpc error: code = NotFound desc = not found',
        type="Warning",
        severity="error",
        phase="image",
    ),
    rec(
        "errpull",
        "Failed",
        "00:05",
        "The image could not be downloaded",
        raw="Error: ErrImagePull",
        type="Warning",
        severity="error",
        phase="image",
    ),
    rec(
        "backoff",
        "BackOff",
        "00:40",
        "Waiting before trying again",
        first="00:06",
        count=4,
        raw='Back-off pulling image "quay.io/x/y:z"',
        severity="warning",
        phase="image",
    ),
    rec(
        "pullbackoff",
        "Failed",
        "00:40",
        "Waiting before trying again",
        first="00:06",
        count=4,
        raw="Error: ImagePullBackOff",
        type="Warning",
        severity="error",
        phase="image",
    ),
]

# The same failure as kubespawner #910's rules leave it: no phase, no hint, severity only
# from the event type, and the ghcr.io way of saying "not found".
IMAGE_NOT_FOUND_910 = [
    rec("sched", "Scheduled", "00:02", "A node (nixos) has been found to run your server"),
    rec("pull", "Pulling", "00:03", "Pulling image ghcr.io/foo:bat for the notebook container"),
    rec(
        "failed",
        "Failed",
        "00:05",
        'Attempts to pull ghcr.io/foo:bat for the container "notebook" failed',
        raw='Failed to pull image "ghcr.io/foo:bat": failed to resolve reference '
        '"ghcr.io/foo:bat": failed to authorize: 400 Bad Request',
        type="Warning",
        severity="warning",
    ),
    rec(
        "errpull",
        "Failed",
        "00:05",
        'Attempts to pull an image for the container "notebook" failed',
        raw="Error: ErrImagePull",
        type="Warning",
        severity="warning",
    ),
    rec(
        "backoff",
        "BackOff",
        "00:20",
        "Waiting to try pulling ghcr.io/foo:bat",
        raw='Back-off pulling image "ghcr.io/foo:bat"',
    ),
    rec(
        "pullbackoff",
        "Failed",
        "00:20",
        'Waiting to try pulling an image into the container "notebook"',
        raw="Error: ImagePullBackOff",
        type="Warning",
        severity="warning",
    ),
]

NO_NODE_FITS = [
    rec(
        "fs1",
        "FailedScheduling",
        "00:01",
        "No machine has enough CPU for your server",
        raw="0/5 nodes are available: 5 Insufficient cpu. preemption: 0/5 nodes are available",
        type="Warning",
        severity="warning",
        phase="scheduling",
        container=None,
    ),
    rec(
        "nosu",
        "NotTriggerScaleUp",
        "00:12",
        "The cluster cannot add a machine big enough for your server",
        raw="pod didn't trigger scale-up: 2 Insufficient cpu, 1 max node group size reached",
        type="Normal",
        severity="warning",
        phase="scheduling",
        container=None,
    ),
    rec(
        "fs2",
        "FailedScheduling",
        "04:50",
        "No machine has enough CPU for your server",
        raw="0/5 nodes are available: 5 Insufficient cpu. preemption: 0/5 nodes are available",
        type="Warning",
        severity="warning",
        phase="scheduling",
        container=None,
        count=9,
    ),
]

OUT_OF_MEMORY = [
    rec("sched", "Scheduled", "00:01", "A machine was found", phase="scheduled", container=None),
    rec("pulled", "Pulled", "00:02", "The image was already on the machine", phase="image"),
    rec("created", "Created", "00:02", "Created the notebook container", phase="starting"),
    rec("started", "Started", "00:03", "Started the notebook container", phase="starting", count=3),
    rec(
        "oom",
        "OOMKilling",
        "00:30",
        "Your server ran out of memory and was stopped",
        raw="Memory cgroup out of memory: Killed process 4242 (python)",
        type="Warning",
        severity="error",
        phase="starting",
    ),
    rec(
        "crash",
        "BackOff",
        "01:10",
        "Your server keeps stopping; waiting before restarting it",
        raw="Back-off restarting failed container notebook in pod jupyter-alice",
        type="Warning",
        severity="warning",
        phase="starting",
        count=5,
    ),
]

HUB_TIMEOUT_ONLY_NORMAL = [
    rec(
        "fs",
        "FailedScheduling",
        "00:01",
        "No machine is free; adding one",
        raw="0/2 nodes are available: 2 Insufficient memory.",
        type="Warning",
        severity="warning",
        phase="scheduling",
        container=None,
    ),
    rec(
        "scaleup",
        "TriggeredScaleUp",
        "00:02",
        "Adding a machine to the cluster",
        phase="scaling",
        container=None,
    ),
    rec("sched", "Scheduled", "01:30", "A machine was found", phase="scheduled", container=None),
    rec("pull", "Pulling", "01:31", "Downloading the image (this can take minutes)", phase="image"),
]

CRASH_LOOP = [
    rec("started", "Started", "00:03", "Started the notebook container", phase="starting"),
    rec(
        "crash",
        "BackOff",
        "01:10",
        "Your server keeps stopping; waiting before restarting it",
        raw="Back-off restarting failed container notebook in pod jupyter-alice",
        type="Warning",
        severity="warning",
        count=5,
    ),
]

WITH_RULE_HINT = [
    rec(
        "quota",
        "FailedCreate",
        "00:01",
        "Your group has used up its storage quota",
        type="Warning",
        severity="error",
        hint="Delete old files or ask your teacher for more space.",
        phase="volume",
    ),
    rec(
        "fs",
        "FailedScheduling",
        "00:40",
        "Waiting for storage",
        raw="0/3 nodes are available: 3 pod has unbound immediate PersistentVolumeClaims.",
        type="Warning",
        severity="warning",
        phase="scheduling",
    ),
]

UNKNOWN_ERROR_OVER_FOLLOW_UP = [
    rec(
        "weird",
        "FailedCreatePodContainer",
        "00:10",
        "The container could not be created",
        type="Warning",
        severity="error",
        phase="starting",
    ),
    rec(
        "pullbackoff",
        "Failed",
        "00:20",
        "Waiting to retry the image download",
        raw="Error: ImagePullBackOff",
        type="Warning",
        severity="warning",
        phase="image",
    ),
]

# A rule may say a Warning is nothing to worry about; a hand-made record may carry no severity.
DOWNGRADED_WARNING = [
    rec("pull", "Pulling", "00:02", "Downloading the image", phase="image"),
    rec(
        "probe",
        "Unhealthy",
        "00:50",
        "Still warming up",
        type="Warning",
        severity="info",
        phase="image",
    ),
]
NO_SEVERITY = [{**DOWNGRADED_WARNING[1], "severity": None}]

TIMEOUT_SENTENCE = "{} when the start time limit ran out."

DIAGNOSE_CASES = [
    pytest.param(
        DOWNGRADED_WARNING,
        "",
        {
            "summary": TIMEOUT_SENTENCE.format("The server was still pulling its image"),
            "hint": HINT_SLOW_IMAGE,
            "phase": "image",
            "record_id": None,
        },
        id="warning-type-a-rule-marked-info-is-not-the-cause",
    ),
    pytest.param(
        NO_SEVERITY,
        "",
        {"summary": "Still warming up", "hint": HINT_CRASH, "phase": "image", "record_id": "probe"},
        id="no-severity-falls-back-to-warning-type",
    ),
    pytest.param(
        IMAGE_NOT_FOUND,
        "Spawn failed: ",
        {
            "summary": "The image quay.io/x/y:z does not exist",
            "hint": HINT_IMAGE_NAME,
            "phase": "image",
            "record_id": "notfound",
        },
        id="image-not-found-beats-errimagepull-and-backoff",
    ),
    pytest.param(
        IMAGE_NOT_FOUND_910,
        "",
        {
            "summary": 'Attempts to pull ghcr.io/foo:bat for the container "notebook" failed',
            "hint": HINT_IMAGE_NAME,
            "phase": "image",
            "record_id": "failed",
        },
        id="image-not-found-with-910-rules-no-phase-no-severity",
    ),
    pytest.param(
        NO_NODE_FITS,
        "Spawn failed: pod jupyter-alice did not start in 300 seconds!",
        {
            "summary": "The cluster cannot add a machine big enough for your server",
            "hint": HINT_SMALLER,
            "phase": "scheduling",
            "record_id": "nosu",
        },
        id="no-node-fits-not-trigger-scale-up-beats-later-failed-scheduling",
    ),
    pytest.param(
        OUT_OF_MEMORY,
        "Spawn failed: ",
        {
            "summary": "Your server ran out of memory and was stopped",
            "hint": HINT_MEMORY,
            "phase": "starting",
            "record_id": "oom",
        },
        id="oom-beats-later-backoff-restarting",
    ),
    pytest.param(
        CRASH_LOOP,
        None,
        {
            "summary": "Your server keeps stopping; waiting before restarting it",
            "hint": HINT_CRASH,
            "phase": "starting",
            "record_id": "crash",
        },
        id="crash-loop-alone",
    ),
    pytest.param(
        HUB_TIMEOUT_ONLY_NORMAL,
        "Spawn failed: ",
        {
            "summary": TIMEOUT_SENTENCE.format("The server was still pulling its image"),
            "hint": HINT_SLOW_IMAGE,
            "phase": "image",
            "record_id": None,
        },
        id="hub-timeout-empty-message-scheduling-warning-overcome",
    ),
    pytest.param(
        HUB_TIMEOUT_ONLY_NORMAL[1:],
        "",
        {
            "summary": TIMEOUT_SENTENCE.format("The server was still pulling its image"),
            "hint": HINT_SLOW_IMAGE,
            "phase": "image",
            "record_id": None,
        },
        id="hub-timeout-only-normal-records",
    ),
    pytest.param(
        HUB_TIMEOUT_ONLY_NORMAL[:2],
        "Spawn failed:  ",
        {
            "summary": TIMEOUT_SENTENCE.format("The server was still waiting for a new machine to join the cluster"),
            "hint": HINT_RETRY,
            "phase": "scaling",
            "record_id": None,
        },
        id="hub-timeout-during-scale-up",
    ),
    pytest.param(
        [],
        "",
        {
            "summary": TIMEOUT_SENTENCE.format("The cluster had not begun to start the server"),
            "hint": HINT_RETRY,
            "phase": "requested",
            "record_id": None,
        },
        id="no-records-empty-message",
    ),
    pytest.param(
        [],
        "Spawn failed: Spawn failed: the spawner could not reach the Kubernetes API",
        {
            "summary": "The spawner could not reach the Kubernetes API",
            "hint": HINT_RETRY,
            "phase": "requested",
            "record_id": None,
        },
        id="no-records-exception-message-cleaned",
    ),
    pytest.param(
        [],
        "Spawn failed: Spawn failed: pod jupyter-alice did not start in 300 seconds!",
        {
            # KubeSpawner's own start timeout: the limit, and where the spawn was, not "did not start"
            "summary": "The cluster had not begun to start the server when the 5 min start limit ran out.",
            "hint": HINT_RETRY,
            "phase": "requested",
            "record_id": None,
        },
        id="no-records-kubespawner-timeout-names-the-limit",
    ),
    pytest.param(
        WITH_RULE_HINT,
        "",
        {
            "summary": "Your group has used up its storage quota",
            "hint": "Delete old files or ask your teacher for more space.",
            "phase": "volume",
            "record_id": "quota",
        },
        id="rule-hint-and-unknown-error-win",
    ),
    pytest.param(
        UNKNOWN_ERROR_OVER_FOLLOW_UP,
        "",
        {
            "summary": "The container could not be created",
            "hint": None,
            "phase": "starting",
            "record_id": "weird",
        },
        id="unknown-error-beats-pull-backoff-follow-up",
    ),
]


@pytest.mark.parametrize(("records", "failure", "expected"), DIAGNOSE_CASES)
def test_diagnose(
    records: list[dict[str, Any]], failure: str | None, expected: dict[str, Any]
) -> None:
    got = diagnose(records, failure)  # type: ignore[arg-type]
    if expected["hint"] is None:
        # Without a rule hint or a known failure, the hint comes from the step: any
        # non-empty sentence pointing the user to an admin will do.
        assert got["hint"] and "admin" in got["hint"]
        expected = {**expected, "hint": got["hint"]}
    assert dict(got) == expected
    assert got["phase"] in PHASE_NAMES


@pytest.mark.parametrize(
    "records",
    [pytest.param(case.values[0], id=case.id) for case in DIAGNOSE_CASES if case.values[0]],
)
def test_diagnose_ignores_input_order(records: list[dict[str, Any]]) -> None:
    shuffled = list(records)
    random.Random(4).shuffle(shuffled)
    assert diagnose(shuffled, "") == diagnose(records, "")  # type: ignore[arg-type]


def test_decisive_record_none_when_all_is_well() -> None:
    assert decisive_record(HUB_TIMEOUT_ONLY_NORMAL[1:]) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("message", "cleaned"),
    [
        pytest.param(None, "", id="none"),
        pytest.param("", "", id="empty"),
        pytest.param("Spawn failed: ", "", id="hub-timeout"),
        pytest.param("spawn failed:spawn failed: boom", "boom", id="twice-any-case"),
        pytest.param("  Timeout  ", "Timeout", id="no-prefix"),
    ],
)
def test_clean_failure_message(message: str | None, cleaned: str) -> None:
    assert clean_failure_message(message) == cleaned


# -- step durations ------------------------------------------------------------------------

SCALE_UP_SPAWN = [
    rec("fs", "FailedScheduling", "00:01", type="Warning", severity="warning", phase="scheduling"),
    rec("su", "TriggeredScaleUp", "00:02", phase="scaling"),
    rec("sched", "Scheduled", "01:30", phase="scheduled"),
    rec("pull-init", "Pulling", "01:31", phase="image"),
    rec("pulled-init", "Pulled", "01:33", phase="image"),
    rec("started-init", "Started", "01:34", phase="starting"),
    rec("pull", "Pulling", "01:40", phase="image"),
    rec("pulled", "Pulled", "04:10", phase="image"),
    rec("started", "Started", "04:11", phase="starting"),
]


@pytest.mark.parametrize(
    ("records", "started", "finished", "expected"),
    [
        pytest.param(
            SCALE_UP_SPAWN,
            "2026-11-29T10:00:00Z",
            "2026-11-29T10:04:15Z",
            [
                ("requested", 0, 1),
                ("scheduling", 1, 1),
                ("scaling", 2, 88),
                ("scheduled", 90, 1),
                # the init container's start and the notebook image's pull are one
                # download step: the strip never goes back to an earlier step
                ("image", 91, 160),
                ("starting", 251, 4),
            ],
            id="scale-up-init-container-then-notebook",
        ),
        pytest.param(
            SCALE_UP_SPAWN[2:4],
            "2026-11-29T10:01:30Z",
            None,
            [("scheduled", 0, 1), ("image", 1, 0)],
            id="no-finish-last-step-until-last-record",
        ),
        pytest.param(
            [{**r, "phase": None} for r in SCALE_UP_SPAWN[2:5]],
            None,
            None,
            [("scheduled", 0, 1), ("image", 1, 2)],
            id="phases-from-reasons-start-from-first-record",
        ),
        pytest.param(
            [],
            "2026-11-29T10:00:00Z",
            "2026-11-29T10:00:30Z",
            [("requested", 0, 30)],
            id="no-records",
        ),
    ],
)
def test_step_durations(
    records: list[dict[str, Any]],
    started: str | None,
    finished: str | None,
    expected: list[tuple[str, int, int]],
) -> None:
    steps = step_durations(records, started, finished)  # type: ignore[arg-type]
    assert [(s["phase"], s["start"], s["duration"]) for s in steps] == expected
    assert all(s["label"] for s in steps)


# Kubernetes stamps firstTimestamp/lastTimestamp to the second, events.k8s.io eventTime to
# the microsecond: the scheduling (eventTime 10:00:02.8) came before the pull stamped
# 10:00:02 in the same second, and arrival order says so.
SAME_SECOND = [
    {**rec("sched", "Scheduled", "00:02.812345", "A machine was found", container=None), "phase": "scheduled"},
    {**rec("pull", "Pulling", "00:02", "Downloading quay.io/x/y:z"), "phase": "image"},
    {**rec("pulled", "Pulled", "00:05", "Downloaded quay.io/x/y:z"), "phase": "image"},
]


@pytest.mark.parametrize("first", [True, False], ids=["by-first-occurrence", "by-latest-occurrence"])
def test_time_order_ties_within_a_second_keep_arrival_order(first: bool) -> None:
    assert [r["id"] for r in time_order(SAME_SECOND, first=first)] == ["sched", "pull", "pulled"]  # type: ignore[arg-type]


def test_time_order_still_sorts_across_seconds() -> None:
    late_first = [SAME_SECOND[2], SAME_SECOND[0], SAME_SECOND[1]]
    assert [r["id"] for r in time_order(late_first, first=True)] == ["sched", "pull", "pulled"]  # type: ignore[arg-type]


def test_step_durations_same_second_scheduling_comes_first() -> None:
    steps = step_durations(SAME_SECOND, "2026-11-29T10:00:00Z", "2026-11-29T10:00:06Z")  # type: ignore[arg-type]
    assert [(s["phase"], s["start"], s["duration"]) for s in steps] == [
        ("requested", 0, 2),
        ("scheduled", 2, 0),
        ("image", 2, 4),
    ]


# Seen under CPU load: the pull record arrived before Scheduled in the same second, and the
# strip read "Requesting 4 s | Downloading 0 s | Machine found 1 s | Downloading 26 s".
PULL_BEFORE_SCHEDULED = [
    {**rec("pull", "Pulling", "00:04", "Downloading quay.io/x/y:z"), "phase": "image"},
    {**rec("sched", "Scheduled", "00:04", "A machine was found", container=None), "phase": "scheduled"},
    {**rec("pulled", "Pulled", "00:30", "Downloaded quay.io/x/y:z"), "phase": "image"},
]


def test_step_durations_never_go_back_within_a_second() -> None:
    steps = step_durations(PULL_BEFORE_SCHEDULED, "2026-11-29T10:00:00Z", "2026-11-29T10:00:31Z")  # type: ignore[arg-type]
    assert [(s["phase"], s["start"], s["duration"]) for s in steps] == [
        ("requested", 0, 4),
        ("scheduled", 4, 0),
        ("image", 4, 27),
    ]


def test_step_durations_start_again_only_for_a_new_pod() -> None:
    stale_scheduling = {**rec("late", "FailedScheduling", "00:20", "No machine", container=None), "phase": "scheduling"}
    rescheduled = {**rec("again", "Scheduled", "00:40", "A machine was found", container=None), "phase": "scheduled"}
    records = [*PULL_BEFORE_SCHEDULED[:2], stale_scheduling, PULL_BEFORE_SCHEDULED[2], rescheduled]
    steps = step_durations(records, "2026-11-29T10:00:00Z", "2026-11-29T10:00:50Z")  # type: ignore[arg-type]
    phases = [s["phase"] for s in steps]
    # the late FailedScheduling does not send the strip back; the second pod's Scheduled does
    assert phases == ["requested", "scheduled", "image", "scheduled"]


# -- folding -------------------------------------------------------------------------------


def _waiting(n: int) -> list[dict[str, Any]]:
    return [
        rec(
            f"w{i}",
            "FailedScheduling",
            f"{i // 60:02d}:{i % 60:02d}",
            "No machine is free",
            type="Warning",
            severity="warning",
        )
        for i in range(n)
    ]


def _shape(rows: list[Any]) -> list[str]:
    return [f"fold{row['folded']}" if is_fold(row) else row["id"] for row in rows]


@pytest.mark.parametrize(
    ("records", "keep", "decisive", "shape"),
    [
        pytest.param(_waiting(2), 0, None, ["w0", "w1"], id="run-of-two-stays"),
        pytest.param(_waiting(10), 0, None, ["w0", "fold8", "w9"], id="run-of-ten-folds"),
        pytest.param(
            _waiting(10),
            0,
            "w4",
            ["w0", "fold3", "w4", "fold4", "w9"],
            id="decisive-inside-run-stays-visible",
        ),
        pytest.param(
            [rec(f"r{i}", f"Reason{i}", f"00:{i:02d}") for i in range(30)],
            8,
            None,
            ["r0", "r1", "fold23", "r25", "r26", "r27", "r28", "r29"],
            id="keep-limits-rows",
        ),
        pytest.param(
            [rec(f"r{i}", f"Reason{i}", f"00:{i:02d}") for i in range(30)],
            8,
            "r10",
            ["r0", "r1", "fold8", "r10", "fold16", "r27", "r28", "r29"],
            id="keep-limit-never-hides-decisive",
        ),
        pytest.param(
            _waiting(3) + [rec("x", "Pulling", "09:00")] + _waiting(3),
            0,
            None,
            ["w0", "w1", "w2", "x", "w0", "w1", "w2"],
            id="run-of-three-shows-all-and-runs-are-consecutive-only",
        ),
    ],
)
def test_fold_records(
    records: list[dict[str, Any]], keep: int, decisive: str | None, shape: list[str]
) -> None:
    rows = fold_records(records, keep, decisive_id=decisive)  # type: ignore[arg-type]
    assert _shape(rows) == shape


def test_fold_is_data_with_counts_and_span() -> None:
    records = _waiting(10)
    records[3]["count"] = 5
    records[3]["since_spawn"] = 3.0
    fold = fold_records(records, 0)[1]  # type: ignore[arg-type]
    assert fold == {
        "folded": 8,
        "count": 12,
        "reason": "FailedScheduling",
        "message": "No machine is free",
        "first": None,
        "last": None,
        "first_timestamp": "2026-11-29T10:00:01Z",
        "last_timestamp": "2026-11-29T10:00:08Z",
        "ids": [f"w{i}" for i in range(1, 9)],
        "follows": None,
        "raw_messages": ["No machine is free"],
    }


# -- with the default rules: each failure scenario of the simulated cluster ---------------


def event(
    uid: str,
    reason: str,
    at: str,
    message: str,
    *,
    type: str = "Normal",
    component: str = "kubelet",
    container: str | None = "notebook",
    count: int = 1,
    kind: str = "Pod",
) -> dict[str, Any]:
    """A core/v1 Event as the API server returns it (``at`` is MM:SS)."""
    stamp = f"2026-11-29T10:{at}Z"
    return {
        "kind": "Event",
        "metadata": {"uid": uid, "name": f"jupyter-alice.{uid}", "namespace": "jhub"},
        "involvedObject": {
            "kind": kind,
            "name": "jupyter-alice" if kind == "Pod" else "claim-alice",
            "fieldPath": f"spec.containers{{{container}}}" if container else None,
        },
        "reason": reason,
        "message": message,
        "type": type,
        "count": count,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "source": {"component": component},
        "reportingComponent": component,
    }


SCHED = "default-scheduler"
IMAGE = "quay.io/jupyter/does-not-exist:2026"

SCENARIO_EVENTS = {
    "image-not-found": [
        event(
            "s",
            "Scheduled",
            "00:01",
            "Successfully assigned jhub/jupyter-alice to node-1",
            component=SCHED,
            container=None,
        ),
        event("p", "Pulling", "00:02", f'Pulling image "{IMAGE}"'),
        event(
            "f",
            "Failed",
            "00:04",
            f'Failed to pull image "{IMAGE}": rpc error: code = NotFound '
            f'desc = failed to pull and unpack image "{IMAGE}": failed to resolve reference '
            f'"{IMAGE}": {IMAGE}: not found',
            type="Warning",
        ),
        event("e", "Failed", "00:04", "Error: ErrImagePull", type="Warning"),
        event("b", "BackOff", "00:30", f'Back-off pulling image "{IMAGE}"', count=3),
        event("ib", "Failed", "00:30", "Error: ImagePullBackOff", type="Warning", count=3),
    ],
    "no-node-fits": [
        event(
            "fs",
            "FailedScheduling",
            "00:01",
            "0/3 nodes are available: 3 node(s) didn't match "
            "Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is "
            "not helpful for scheduling.",
            type="Warning",
            component=SCHED,
            container=None,
        ),
        event(
            "nt",
            "NotTriggerScaleUp",
            "00:11",
            "pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector",
            component="cluster-autoscaler",
            container=None,
        ),
    ],
    "out-of-memory": [
        event(
            "s",
            "Scheduled",
            "00:01",
            "Successfully assigned jhub/jupyter-alice to node-1",
            component=SCHED,
            container=None,
        ),
        event("pd", "Pulled", "00:01", f'Container image "{IMAGE}" already present on machine'),
        event("c", "Created", "00:02", "Created container: notebook"),
        event("st", "Started", "00:02", "Started container notebook", count=3),
        event(
            "bo",
            "BackOff",
            "00:40",
            "Back-off restarting failed container notebook in pod jupyter-alice_jhub(1234)",
            type="Warning",
            count=4,
        ),
    ],
    "scale-up-cut-off-while-waiting-for-the-new-machine": [
        event(
            "fs1",
            "FailedScheduling",
            "00:01",
            "0/3 nodes are available: 3 Insufficient memory. "
            "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
            type="Warning",
            component=SCHED,
            container=None,
        ),
        event(
            "su",
            "TriggeredScaleUp",
            "00:02",
            "pod triggered scale-up: [{pool-a 3->4 (max: 10)}]",
            component="cluster-autoscaler",
            container=None,
        ),
        event(
            "fs2",
            "FailedScheduling",
            "01:10",
            "0/4 nodes are available: 1 node(s) had "
            "untolerated taint {node.kubernetes.io/not-ready: }, 3 Insufficient memory. "
            "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
            type="Warning",
            component=SCHED,
            container=None,
        ),
    ],
    "volume-provisioning-cut-off": [
        event(
            "w",
            "WaitForFirstConsumer",
            "00:00",
            "waiting for first consumer to be created before binding",
            component="persistentvolume-controller",
            container=None,
            kind="PersistentVolumeClaim",
        ),
        event(
            "pv",
            "Provisioning",
            "00:01",
            'External provisioner is provisioning volume for claim "jhub/claim-alice"',
            component="ebs.csi.aws.com",
            container=None,
            kind="PersistentVolumeClaim",
        ),
    ],
}


@pytest.mark.parametrize(
    ("scenario", "failure", "summary_has", "phase", "record_id"),
    [
        pytest.param(
            "image-not-found", "Spawn failed: ", IMAGE, "image", "f", id="image-not-found"
        ),
        pytest.param("no-node-fits", "Spawn failed: ", "", "scheduling", "nt", id="no-node-fits"),
        pytest.param(
            "out-of-memory",
            "",
            "crash",
            "starting",
            "bo",
            id="out-of-memory-seen-as-crash-loop-no-oom-event",
        ),
        pytest.param(
            "scale-up-cut-off-while-waiting-for-the-new-machine",
            "",
            "",
            "scheduling",
            "fs2",
            id="scale-up-still-waiting",
        ),
        pytest.param(
            "volume-provisioning-cut-off",
            "",
            "The server was still waiting for its storage when the start time limit ran out",
            "volume",
            None,
            id="volume-timeout",
        ),
    ],
)
def test_diagnose_with_default_rules(
    scenario: str, failure: str, summary_has: str, phase: str, record_id: str | None
) -> None:
    from richprogress.wording.formatter import EventFormatter

    formatter = EventFormatter()
    records = [formatter.format_event(e) for e in SCENARIO_EVENTS[scenario]]
    got = diagnose(records, failure)
    assert got["record_id"] == record_id
    assert got["phase"] == phase
    assert summary_has in got["summary"]
    if record_id is not None:
        decisive = next(r for r in records if r["id"] == record_id)
        assert got["summary"] == decisive["message"]
        assert got["hint"] == (decisive.get("hint") or got["hint"])
    assert got["hint"]


# -- never raises: records can come from a user's hook -------------------------------------

JUNK = st.one_of(
    st.none(),
    st.integers(),
    st.floats(),
    st.booleans(),
    st.text(max_size=30),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
TIMESTAMPS = st.one_of(
    st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1)).map(
        lambda d: d.isoformat() + "Z"
    ),
    JUNK,
)
RECORD = st.fixed_dictionaries(
    {
        "id": st.one_of(st.text(max_size=4), JUNK),
        "timestamp": TIMESTAMPS,
        "first_timestamp": TIMESTAMPS,
        "type": st.one_of(st.sampled_from(["Normal", "Warning", "Custom"]), JUNK),
        "severity": st.one_of(st.sampled_from(["info", "warning", "error"]), JUNK),
        "reason": st.one_of(
            st.sampled_from(["Failed", "BackOff", "FailedScheduling", "Scheduled", "Killing"]), JUNK
        ),
        "object": st.one_of(
            st.fixed_dictionaries({"kind": JUNK, "name": JUNK, "container": JUNK}), JUNK
        ),
        "count": JUNK,
        "message": st.one_of(st.text(max_size=40), JUNK),
        "raw_message": st.one_of(
            st.sampled_from(['Failed to pull image "x": not found', "Error: ErrImagePull"]), JUNK
        ),
        "phase": st.one_of(st.sampled_from(PHASE_NAMES), JUNK),
        "hint": st.one_of(st.text(max_size=10), JUNK),
        "since_spawn": JUNK,
    }
)


@settings(max_examples=200, deadline=None)
@given(records=st.lists(RECORD, max_size=12), failure=st.one_of(st.none(), st.text(max_size=20)))
def test_never_raises_on_odd_records(records: list[dict[str, Any]], failure: str | None) -> None:
    got = diagnose(records, failure)  # type: ignore[arg-type]
    assert isinstance(got["summary"], str) and got["summary"].strip()
    assert got["phase"] in PHASE_NAMES
    assert step_durations(records, "2026-11-29T10:00:00Z") is not None  # type: ignore[arg-type]
    rows = fold_records(records, 5, decisive_id=got["record_id"])  # type: ignore[arg-type]
    shown = sum(row["folded"] if is_fold(row) else 1 for row in rows)  # type: ignore[misc]
    assert shown == len(records)
    text = render_timeline_text(records, diagnosis=got)  # type: ignore[arg-type]
    assert text.endswith("\n")
