"""A later success of the same kind clears a problem at once (richprogress.story.recovery).

The live banner used to stay red ("This will not fix itself") through a retried pull that
worked, until the container was created: ``diagnose`` let only a later *step* overcome a
problem. Each case below is a timeline (records in the record schema of docs/contracts.md,
built by hand) and the record that ``decisive_record`` names for it: None when nothing is
wrong any more. Then the same through the live diagnosis of the demo's ``flaky-pull``
scenario, and on the progress stream (the SSE payload of docs/contracts.md:
``diagnosis: null`` rides on the ``Pulled`` event).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from richprogress.model.timeline import SpawnTimeline
from richprogress.story.diagnosis import decisive_record, diagnose, got_past
from richprogress.story.fail_fast import FailFastPolicy, assess
from richprogress.stream.live_diagnosis import LiveDiagnoser
from richprogress.wording.formatter import EventFormatter
from tests.helpers.replay import START, flaky_pull_stream, timed_events

IMAGE = "quay.io/jupyter/course:2026-11"


def rec(id: str, reason: str, at: int, raw: str = "", *, severity: str = "info",
        kind: str = "Pod", name: str = "jupyter-alice", container: str | None = "notebook",
        count: int = 1) -> dict[str, Any]:
    stamp = f"2026-11-29T10:{at // 60:02d}:{at % 60:02d}Z"
    return {
        "id": id, "timestamp": stamp, "first_timestamp": stamp,
        "type": "Normal" if severity == "info" else "Warning", "severity": severity,
        "reason": reason,
        "object": {"kind": kind, "name": name, "container": container, "field_path": None},
        "component": "kubelet", "count": count, "message": raw or reason,
        "raw_message": raw or reason, "rule": None, "phase": None, "hint": None,
    }


SCHEDULED = rec("sched", "Scheduled", 1, "Successfully assigned jhub/jupyter-alice to node-1", container=None)
PULLING = rec("pulling", "Pulling", 2, f'Pulling image "{IMAGE}"')
NOT_FOUND = rec("nf", "Failed", 3, f'Failed to pull image "{IMAGE}": rpc error: code = NotFound desc = not found',
                severity="error")
ERR_PULL = rec("errpull", "Failed", 3, "Error: ErrImagePull", severity="error")
BACKOFF = rec("backoff", "BackOff", 4, f'Back-off pulling image "{IMAGE}"', severity="warning")
ERR_BACKOFF = rec("errbackoff", "Failed", 4, "Error: ImagePullBackOff", severity="warning")
FAILED_PULL = [SCHEDULED, PULLING, NOT_FOUND, ERR_PULL, BACKOFF, ERR_BACKOFF]
PULLED = rec("pulled", "Pulled", 16, f'Successfully pulled image "{IMAGE}" in 2.1s (2.1s including waiting)')
ALREADY = rec("pulled", "Pulled", 16, f'Container image "{IMAGE}" already present on machine')
CREATED = rec("created", "Created", 17, "Created container: notebook")
STARTED = rec("started", "Started", 17, "Started container notebook")
OOM = rec("oom", "OOMKilled", 20, "Container notebook was killed because it ran out of memory", severity="error")
CRASH = rec("crash", "BackOff", 30, "Back-off restarting failed container notebook", severity="warning")
PVC = {"kind": "PersistentVolumeClaim", "name": "claim-alice", "container": None}
NO_SCALE_UP = rec("nsu", "NotTriggerScaleUp", 5, "pod didn't trigger scale-up: 2 Insufficient memory",
                  severity="warning", container=None)
SCALE_UP = rec("tsu", "TriggeredScaleUp", 30, "pod triggered scale-up: [{pool 1->2 (max: 5)}]", container=None)


def with_(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**record, **changes}


CASES = [
    # the retried pull worked: nothing is wrong any more, before any container exists
    pytest.param(FAILED_PULL + [with_(PULLING, timestamp="2026-11-29T10:00:14Z", count=2), PULLED], None,
                 id="pulled-after-retry-clears"),
    pytest.param(FAILED_PULL + [ALREADY], None, id="already-present-clears"),
    # pulling again is the retry, not its success
    pytest.param(FAILED_PULL + [with_(PULLING, timestamp="2026-11-29T10:00:14Z", count=2)], "nf",
                 id="pulling-again-is-not-success"),
    # another container's image (an init container) says nothing about this one
    pytest.param(FAILED_PULL + [rec("init", "Pulled", 16, 'Successfully pulled image "busybox:1"', container="init")],
                 "nf", id="other-container-pulled"),
    pytest.param(FAILED_PULL + [rec("other", "Pulled", 16, 'Successfully pulled image "quay.io/other:1"')],
                 "nf", id="other-image-pulled"),
    # the pull failed again after the success: that failure is the story
    pytest.param(FAILED_PULL + [PULLED, with_(NOT_FOUND, id="nf2", timestamp="2026-11-29T10:00:40Z")], "nf2",
                 id="failed-again-later"),
    # a later genuine failure is named, not the pull that recovered
    pytest.param(FAILED_PULL + [PULLED, CREATED, STARTED, OOM], "oom", id="later-out-of-memory"),
    pytest.param(FAILED_PULL + [PULLED, CREATED, STARTED, CRASH], "crash", id="later-crash-loop"),
    # a crash loop's Started comes again before every crash: it is no success
    pytest.param([SCHEDULED, PULLED, CREATED, CRASH, with_(STARTED, id="started2", timestamp="2026-11-29T10:00:31Z")],
                 "crash", id="started-does-not-end-a-crash-loop"),
    # the autoscaler said no, then did add a machine; said no after a scale-up: no
    pytest.param([NO_SCALE_UP, SCALE_UP], None, id="scale-up-after-no-scale-up-clears"),
    pytest.param([with_(SCALE_UP, timestamp="2026-11-29T10:00:04Z"), NO_SCALE_UP], "nsu",
                 id="no-scale-up-after-scale-up-stays"),
    pytest.param([rec("nsu", "NotTriggerScaleUp", 5, "pod didn't trigger scale-up", severity="warning",
                      container=None), rec("nom", "Nominated", 9, "Pod should schedule on: nodeclaim/x",
                                           container=None)], None, id="karpenter-nominated-clears"),
    # volumes: the same volume attached; another volume did not help
    pytest.param([SCHEDULED, rec("fa", "FailedAttachVolume", 3, 'Multi-Attach error for volume "pvc-1" Volume is '
                                 "already used by pod(s) other", severity="warning", container=None),
                  rec("sa", "SuccessfulAttachVolume", 40, 'AttachVolume.Attach succeeded for volume "pvc-1"',
                      container=None)], None, id="attached-clears"),
    pytest.param([SCHEDULED, rec("fa", "FailedAttachVolume", 3, 'AttachVolume.Attach failed for volume "pvc-1"',
                                 severity="warning", container=None),
                  rec("sa", "SuccessfulAttachVolume", 40, 'AttachVolume.Attach succeeded for volume "pvc-2"',
                      container=None)], "fa", id="other-volume-attached"),
    pytest.param([with_(rec("pf", "ProvisioningFailed", 3, "failed to provision volume: timeout",
                            severity="warning"), object=PVC),
                  with_(rec("ps", "ProvisioningSucceeded", 20, "Successfully provisioned volume pvc-1"), object=PVC)],
                 None, id="provisioned-clears"),
    # the kubelet pulls only once the pod's sandbox exists
    pytest.param([SCHEDULED, rec("sb", "FailedCreatePodSandBox", 3, "Failed to create pod sandbox: rpc error",
                                 severity="warning", container=None), with_(PULLING, timestamp="2026-11-29T10:00:20Z")],
                 None, id="sandbox-then-pulling-clears"),
    # a "Still waiting" row restates the step the spawn is in: it gets past nothing (the
    # scheduler's repeat after the scale-up began stays "Still trying")
    pytest.param([with_(rec("fs", "FailedScheduling", 46, "0/3 nodes are available: 3 Insufficient memory.",
                            severity="warning", container=None), count=2, first_timestamp="2026-11-29T10:00:01Z"),
                  with_(SCALE_UP, timestamp="2026-11-29T10:00:02Z", first_timestamp="2026-11-29T10:00:02Z"),
                  with_(rec("patience-scaling", "", 60, "Still waiting for a new machine to join the cluster",
                            container=None), phase="scaling", reason=None)],
                 "fs", id="patience-row-is-no-progress"),
    # a success of another object (another user's pod) says nothing about this one
    pytest.param(FAILED_PULL + [with_(PULLED, object={**PULLED["object"], "name": "jupyter-bob"})], "nf",
                 id="other-pod-pulled"),
]


@pytest.mark.parametrize(("records", "decisive"), CASES)
def test_the_decisive_record(records: list[dict[str, Any]], decisive: str | None) -> None:
    found = decisive_record(records)  # type: ignore[arg-type]
    assert (found["id"] if found else None) == decisive


def test_a_scale_up_resolves_the_no_scale_up_before_it_but_only_puts_a_failed_scheduling_in_hand() -> None:
    """The autoscaler's "no" is over once it did add a machine (a success of its kind); the
    scheduler's "no room" is only in hand then (not named, not "resolved"): what it blocked,
    the pod being scheduled, has not happened yet."""
    failed = rec("fs", "FailedScheduling", 1, "0/3 nodes are available: 3 Insufficient memory.",
                 severity="warning", container=None)
    records = [failed, NO_SCALE_UP, SCALE_UP]
    assert got_past(records) == {"nsu"}  # type: ignore[arg-type]
    assert decisive_record(records) is None  # type: ignore[arg-type]
    scheduled = rec("s", "Scheduled", 50, "Successfully assigned jhub/jupyter-alice to node-2", container=None)
    assert got_past([*records, scheduled]) == {"nsu", "fs"}  # type: ignore[list-item]


def test_the_live_verdict_clears_on_the_pulled_and_never_stops() -> None:
    live = [*FAILED_PULL[:3], with_(NOT_FOUND, count=1, fatal=True)]
    verdict = assess(live, now=5.0, first_seen={"nf": 3.0})  # type: ignore[arg-type]
    assert verdict.diagnosis is not None and verdict.diagnosis["state"] == "hopeless"
    verdict = assess([*live, PULLED], now=16.0, first_seen={"nf": 3.0})  # type: ignore[arg-type]
    assert verdict.diagnosis is None and not verdict.stop and verdict.recheck_in is None


def test_a_timeout_after_the_recovered_pull_blames_the_time_not_the_pull() -> None:
    # the hub's timeout struck while the container was being created: not "does not exist"
    found = diagnose(FAILED_PULL + [PULLED], "")  # type: ignore[arg-type]
    assert found["record_id"] is None
    assert found["summary"] == "The server was still pulling its image when the start time limit ran out."


def test_flaky_pull_at_real_timing_the_banner_goes_with_the_pulled() -> None:
    """The demo scenario through the default rules and the spawner's live verdict: blocked
    (not hopeless: one "not found" cannot be told from a tag a registry replica does not
    have yet) from the failed pull, still blocked while the kubelet pulls again, gone at
    ``Pulled``; never "will not fix itself", since the server then starts."""
    clock = {"now": START}
    timeline = SpawnTimeline(started_at=START, clock=lambda: clock["now"])
    live = LiveDiagnoser(FailFastPolicy())
    formatter = EventFormatter()
    said: list[tuple[str, str]] = []
    for at, event in timed_events("flaky-pull", until=60):
        clock["now"] = START + timedelta(seconds=at)
        stored, changed = timeline.add(formatter.format_event(event))
        if changed:
            live.note(timeline, stored)
        assert not live.stop_due
        said.append((str(stored["reason"]), live.verdict.state))
        if live.verdict.cause is not None:
            assert live.verdict.cause.certainty == "unconfirmed"
            assert "will try again" in live.verdict.cause.summary
    assert said == [
        ("Scheduled", "progressing"), ("Pulling", "progressing"), ("Failed", "blocked"),
        ("Failed", "blocked"), ("BackOff", "blocked"), ("Failed", "blocked"),
        ("Pulling", "blocked"),  # the retry: not yet a success
        ("Pulled", "progressing"),  # the banner goes here, not at Created
        ("Created", "progressing"), ("Started", "progressing"),
    ]


async def test_the_progress_stream_sends_diagnosis_null_on_the_pulled_event() -> None:
    """The SSE payload (docs/contracts.md) on the stream a page reads: the event that carries
    the ``Pulled`` record is the one with ``diagnosis: null``."""
    got, _timeline = await flaky_pull_stream()
    changes = [(e["record"]["reason"], e["diagnosis"]) for e in got if "diagnosis" in e]
    assert [(reason, d["state"] if d else None) for reason, d in changes] == [
        ("Failed", "trying"), ("Pulled", None)
    ]
    verdicts = [(e["record"]["reason"], e["verdict"]["state"]) for e in got if "verdict" in e]
    assert verdicts == [("Failed", "blocked"), ("Pulled", "progressing")]
