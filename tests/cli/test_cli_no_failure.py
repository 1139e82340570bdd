"""``richprogress explain --diagnose`` on events that hold no failure says so, and exits 0.

Four healthy events (Scheduled, Pulled, Created, Started) once gave "did not start within
the time limit": a cause the events do not show.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from tests.helpers.paths import DATA

PEER = DATA / "kubespawner-pr910"


def event(n: int, reason: str, message: str, *, container: bool = True, kind: str = "Normal") -> dict[str, Any]:
    involved: dict[str, Any] = {"kind": "Pod", "name": "jupyter-alice", "namespace": "ns"}
    if container:
        involved["fieldPath"] = "spec.containers{notebook}"
    return {
        "metadata": {"uid": f"uid-{n}", "namespace": "ns", "name": f"jupyter-alice.{n}"},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": kind,
        "source": {"component": "kubelet"},
        "lastTimestamp": f"2026-12-01T10:00:0{n}Z",
        "count": 1,
    }


HEALTHY = [
    event(0, "Scheduled", "Successfully assigned ns/jupyter-alice to node-1", container=False),
    event(1, "Pulled", 'Container image "quay.io/jupyter/base-notebook:latest" already present on machine'),
    event(2, "Created", "Created container notebook"),
    event(3, "Started", "Started container notebook"),
]


def diagnose(events: list[dict[str, Any]]) -> tuple[int, dict[str, Any], str]:
    done = subprocess.run(
        [sys.executable, "-m", "richprogress.cli", "explain", "--diagnose", "-"],
        input=json.dumps({"kind": "List", "items": events}),
        capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"},
    )
    return done.returncode, json.loads(done.stdout), done.stderr


def test_healthy_events_say_there_is_no_failure() -> None:
    status, diagnosis, stderr = diagnose(HEALTHY)
    assert status == 0, stderr
    assert diagnosis == {
        "summary": "No failure in these events: the last one says the container started.",
        "hint": None,
        "phase": "starting",
        "record_id": None,
        "pod": "jupyter-alice",
    }


def test_a_problem_a_start_overcame_is_no_failure_that_lasted() -> None:
    failed = event(1, "BackOff", "Back-off restarting failed container notebook", kind="Warning")
    status, diagnosis, _ = diagnose([HEALTHY[0], failed, *[{**e, "lastTimestamp": e["lastTimestamp"].replace(":0", ":1", 1)} for e in HEALTHY[1:]]])
    assert status == 0
    assert diagnosis["summary"] == "No failure that lasted in these events: the last one says the container started."
    assert "time limit" not in diagnosis["summary"] and diagnosis["hint"] is None


def test_a_failed_spawn_is_still_diagnosed() -> None:
    events = json.loads((PEER / "invalid-pod-image.events.json").read_text())
    status, diagnosis, _ = diagnose(events)
    assert status == 0
    assert "could not be downloaded" in diagnosis["summary"] and diagnosis["record_id"]
