"""With KubeSpawner's ``events_enabled = False`` (z2jh ``singleuser.events: false``) the bar
still moves: the pod's status (scheduled, its container set up, running, ready) moves the
steps, through hidden records that are no rows.

Through a real JupyterHub (``DemoHub``, the simulated cluster, which serves pods whether
or not the hub watches events), read on the hub's SSE progress API as the pending page does;
and ``pod_steps`` on pod statuses of their own.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from richprogress.demo.hub import DemoHub
from richprogress.kube.pod_steps import PodSteps, reached, step_record
from richprogress.model.records import PHASE_PROGRESS
from richprogress.wording.formatter import EventFormatter
from tests.helpers.spawner_hub import read_all, records_of, request_spawn, timeline


@pytest.fixture(scope="module")
def hub() -> Any:
    with DemoHub(speed=100.0, start_timeout=20.0, extra_config="c.KubeSpawner.events_enabled = False\n") as demo:
        yield demo


async def test_the_bar_moves_through_the_steps_with_no_event_rows(hub: DemoHub) -> None:
    request_spawn(hub, "eve", "happy-path")
    events = await asyncio.wait_for(read_all(hub, "eve"), 60)
    assert events[-1].get("ready") is True, events[-1]
    records = records_of(events)  # a well-behaved stream: never back, nothing twice
    # only what the pod's status said: no Kubernetes Event reached the stream
    from_status = [r for r in records if r.get("component") == "richprogress-pod-status"]
    assert {r["reason"] for r in from_status} >= {"PodScheduled", "ContainerCreating", "ContainerRunning"}
    assert all(r.get("component") in (None, "richprogress-pod-status") for r in records), records
    # none is a row: every one is hidden (the pages draw no row for it)
    assert all(r.get("show") == "hidden" for r in from_status)
    assert [r for r in records if r.get("reason") and r.get("show") != "hidden"] == []
    # the bar went through the steps, never back, up to "starting" before the hub's ready
    progress = [e["progress"] for e in events if "record" in e]
    assert progress == sorted(progress)
    assert {PHASE_PROGRESS["scheduled"], PHASE_PROGRESS["starting"]} <= set(progress)
    assert events[-1]["progress"] == 100
    # the words say what the status says
    words = {r["reason"]: r["message"] for r in from_status}
    assert words["PodScheduled"].startswith("Scheduled on the node ")
    assert words["ContainerRunning"] == "Starting the container"
    # the timeline JSON ("Copy details" and the text endpoint) keeps them
    kept = {r["id"] for r in timeline(hub, "eve")["records"]}
    assert {r["id"] for r in from_status} <= kept
    hub.api("DELETE", "users/eve/server")


def pod(status: dict[str, Any], *, node: str | None = "node-1", deleting: bool = False) -> dict[str, Any]:
    metadata: dict[str, Any] = {"uid": "u1", "name": "jupyter-a", "namespace": "jh", "creationTimestamp": "2026-12-01T10:00:00Z"}
    if deleting:
        metadata["deletionTimestamp"] = "2026-12-01T10:01:00Z"
    return {"metadata": metadata, "spec": {"nodeName": node} if node else {}, "status": status}


SCHEDULED = {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-12-01T10:00:01Z"}


@pytest.mark.parametrize(
    ("status", "node", "steps"),
    [
        ({"phase": "Pending"}, None, ["WaitingForNode"]),
        ({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]},
         None, ["WaitingForNode"]),
        ({"conditions": [SCHEDULED]}, "node-1", ["WaitingForNode", "PodScheduled"]),
        ({"conditions": [SCHEDULED], "containerStatuses": [{"name": "notebook", "state": {"waiting": {"reason": "ContainerCreating"}}}]},
         "node-1", ["WaitingForNode", "PodScheduled", "ContainerCreating"]),
        # a waiting reason that is a problem (a pull that failed) is no step
        ({"conditions": [SCHEDULED], "containerStatuses": [{"name": "notebook", "state": {"waiting": {"reason": "ErrImagePull"}}}]},
         "node-1", ["WaitingForNode", "PodScheduled"]),
        ({"conditions": [SCHEDULED, {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-12-01T10:00:09Z"}],
          "containerStatuses": [{"name": "notebook", "state": {"running": {"startedAt": "2026-12-01T10:00:08Z"}}}]},
         "node-1", ["WaitingForNode", "PodScheduled", "ContainerCreating", "ContainerRunning", "ContainersReady"]),
    ],
)
def test_the_steps_a_pod_status_shows(status: dict[str, Any], node: str | None, steps: list[str]) -> None:
    assert [reason for reason, _ in reached(pod(status, node=node))] == steps


def test_each_step_is_made_once_in_its_phase_and_hidden() -> None:
    made = PodSteps()
    formatter = EventFormatter()
    first = [step_record(formatter.format_event(e)) for e in made.new_events(pod({"conditions": [SCHEDULED]}))]
    assert [(r["reason"], r["phase"], r["show"]) for r in first] == [
        ("WaitingForNode", "scheduling", "hidden"), ("PodScheduled", "scheduled", "hidden"),
    ]
    assert first[1]["message"] == "Scheduled on the node node-1" and first[1]["timestamp"] == "2026-12-01T10:00:01Z"
    assert made.new_events(pod({"conditions": [SCHEDULED]})) == []  # seen: not again
    # a pod being deleted goes through no more steps
    running = {"conditions": [SCHEDULED], "containerStatuses": [{"name": "notebook", "state": {"running": {}}}]}
    assert made.new_events(pod(running, deleting=True)) == []


def test_a_rule_may_show_a_step_as_a_row() -> None:
    rules = [{"match": {"reason": "PodScheduled"}, "template": "On a machine", "show": "row"}]
    [event] = [e for e in PodSteps().new_events(pod({"conditions": [SCHEDULED]})) if e["reason"] == "PodScheduled"]
    # "row" is the default and leaves no key: the step is hidden as always
    assert step_record(EventFormatter(extra_rules=rules).format_event(event))["show"] == "hidden"
    quiet = [{**rules[0], "show": "quiet"}]
    assert step_record(EventFormatter(extra_rules=quiet).format_event(event))["show"] == "quiet"
