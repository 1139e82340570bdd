"""RichKubeSpawner inside a real JupyterHub, read through the hub's SSE progress API.

``DemoHub`` runs the simulated cluster, JupyterHub 6 (with RichKubeSpawner and
``richprogress.setup``) and configurable-http-proxy as processes on loopback. We spawn
through the REST API and read ``/hub/api/users/{name}/server/progress`` exactly as the
pending page's EventSource does.

Fixtures: ``hub`` (module scope, one DemoHub at speed 100 with a 20 s start timeout).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from richprogress.demo.hub import DemoHub
from tests.helpers.spawner_hub import read_all, records_of, request_spawn, sse, timeline

SPEED = 100.0
#: a scale-up takes ~2 s here; the margin is for a busy CI machine (a CI run once saw the
#: hub's timeout end one at 6 s). No test here waits for it: fail-fast ends the failures.
START_TIMEOUT = 20.0


@pytest.fixture(scope="module")
def hub() -> Any:
    with DemoHub(speed=SPEED, start_timeout=START_TIMEOUT) as demo:
        yield demo


def hub_log_tail(hub: DemoHub, lines: int = 40) -> str:
    """The hub log's last lines, for an assertion's message."""
    try:
        return "\n".join(hub.log_path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as err:
        return f"(no hub log: {err})"


async def test_happy_path_stream_through_the_hub(hub):
    request_spawn(hub, "hana", "happy-path")
    events = await read_all(hub, "hana")
    records = records_of(events)
    assert events[0]["message"] == "Server requested"  # the hub's own first event
    assert events[-1].get("ready") is True
    stamps = [(r["reason"], r["timestamp"], r["first_timestamp"]) for r in records]
    assert [r["reason"] for r in records] == ["Scheduled", "Pulling", "Pulled", "Created", "Started"], stamps
    assert {r["object"]["name"] for r in records} == {"jupyter-hana"}
    assert timeline(hub, "hana")["outcome"] == "ready"
    hub.api("DELETE", "users/hana/server")


async def test_volume_provisioning_shows_the_pvc_events(hub):
    request_spawn(hub, "vera", "volume-provisioning")
    events = await read_all(hub, "vera")
    records = records_of(events)
    assert events[-1].get("ready") is True
    kinds = [r["object"]["kind"] for r in records]
    assert "PersistentVolumeClaim" in kinds and "Pod" in kinds
    assert {r["object"]["name"] for r in records} == {"jupyter-vera", "claim-vera"}
    hub.api("DELETE", "users/vera/server")


async def test_failed_spawn_timeline_is_still_there_after_the_failure(hub):
    request_spawn(hub, "fiona", "image-not-found")
    events = await read_all(hub, "fiona")
    records = records_of(events)
    assert events[-1].get("failed") is True
    assert any(r["severity"] == "error" for r in records)
    # a reload after the failure: the hub keeps the failed spawner in user.spawners, and
    # its timeline with it (JupyterHub pops a spawner on stop only if its spawn did not fail)
    await asyncio.sleep(0.5)
    data = timeline(hub, "fiona")
    assert data["outcome"] == "failed"
    assert data["reason"]  # never the hub's empty "Spawn failed: "
    assert [r["id"] for r in data["records"]] == list(dict.fromkeys(r["id"] for r in records))
    assert data["diagnosis"] and data["diagnosis"]["summary"]
    # the progress API now only says "failed"; the timeline is where the story is
    again = await read_all(hub, "fiona")
    assert again and again[-1].get("failed") is True


async def test_reconnect_mid_spawn_replays_the_same_ids(hub):
    request_spawn(hub, "rita", "scale-up")  # ~1.7 s at this speed
    first: list[dict[str, Any]] = []

    async def read_first() -> None:
        async for event in sse(hub, "rita"):
            first.append(event)

    reader = asyncio.ensure_future(read_first())
    while len([e for e in first if "record" in e]) < 2:
        await asyncio.sleep(0.05)
    seen_before = [e["record"]["id"] for e in first if "record" in e]
    second = await read_all(hub, "rita")  # a new EventSource connection
    await asyncio.wait_for(reader, 30)
    second_ids = [r["id"] for r in records_of(second)]
    assert second_ids[: len(seen_before)] == seen_before
    first_ids = [r["id"] for r in records_of(first)]
    assert list(dict.fromkeys(first_ids)) == list(dict.fromkeys(second_ids))
    assert second[-1].get("ready") is True
    hub.api("DELETE", "users/rita/server")


async def test_two_users_spawning_at_once_see_only_their_own_events(hub):
    request_spawn(hub, "anna", "happy-path")
    request_spawn(hub, "bert", "scale-up")
    anna, bert = await asyncio.gather(read_all(hub, "anna"), read_all(hub, "bert"))
    assert {r["object"]["name"] for r in records_of(anna)} == {"jupyter-anna"}
    assert {r["object"]["name"] for r in records_of(bert)} == {"jupyter-bert"}
    for name, events in (("anna", anna), ("bert", bert)):
        # on failure, say what the spawn's own timeline says, and the hub's last words
        assert events[-1].get("ready"), (name, events[-1], timeline(hub, name).get("reason"), hub_log_tail(hub))
    for name in ("anna", "bert"):
        hub.api("DELETE", f"users/{name}/server")


async def test_respawn_after_stop_shows_only_the_new_pods_events(hub):
    request_spawn(hub, "sam", "happy-path")
    first = records_of(await read_all(hub, "sam"))
    hub.api("DELETE", "users/sam/server")
    await asyncio.sleep(0.3)
    request_spawn(hub, "sam", "happy-path")
    second = records_of(await read_all(hub, "sam"))
    assert not {r["id"] for r in first} & {r["id"] for r in second}
    assert [r["reason"] for r in second] == ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
    hub.api("DELETE", "users/sam/server")
