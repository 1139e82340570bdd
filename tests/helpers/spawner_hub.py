"""Spawns through a real JupyterHub's REST API (a ``DemoHub``), read on its SSE progress
API exactly as the pending page's EventSource reads it.

- ``create_user``, ``request_spawn(hub, name, profile)``;
- ``sse(hub, name)``: the progress stream, one event at a time; ``read_all``: all of it;
- ``records_of(events)``: our records, after checking the stream reads like a
  well-behaved one;
- ``timeline(hub, name)``: the timeline JSON endpoint's answer;
- ``spawn_with(hub, name, body)``: a spawn with these options, read to its end, and how
  long it took; ``spawn_and_wait(hub, name, profile)``: a new user's spawn, its last event.
"""

from __future__ import annotations

import json
import time
import urllib.error
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from richprogress.demo.hub import DemoHub


def create_user(hub: DemoHub, name: str) -> None:
    try:
        hub.api("POST", f"users/{name}")
    except urllib.error.HTTPError as error:
        if error.code != 409:  # already there
            raise



def request_spawn(hub: DemoHub, name: str, profile: str) -> None:
    create_user(hub, name)
    hub.api("POST", f"users/{name}/server", {"profile": profile})



async def sse(hub: DemoHub, name: str) -> AsyncIterator[dict[str, Any]]:
    """The progress stream, one event dict at a time, until the hub ends it."""
    url = f"{hub.url}hub/api/users/{name}/server/progress"
    headers = {"Authorization": f"token {hub.api_token}"}
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        async with session.get(url, headers=headers) as response:
            assert response.status == 200
            async for raw in response.content:
                line = raw.decode().strip()
                if line.startswith("data:"):
                    yield json.loads(line[len("data:") :])



async def read_all(hub: DemoHub, name: str) -> list[dict[str, Any]]:
    return [event async for event in sse(hub, name)]



def records_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our records, after checking the stream reads like a well-behaved one."""
    ours = [e for e in events if "record" in e]
    last_progress = 0
    last_since = 0.0
    counts: dict[str, int] = {}
    for event in ours:
        assert "html_message" not in event  # the hub's own ready event may carry one; ours never
        assert last_progress <= event["progress"] < 100
        last_progress = event["progress"]
        record = event["record"]
        assert event["message"] == record["message"]
        assert record["since_spawn"] >= last_since
        last_since = record["since_spawn"]
        if record["id"] in counts:
            assert record["count"] > counts[record["id"]]
        counts[record["id"]] = record["count"]
    return [e["record"] for e in ours]



def timeline(hub: DemoHub, name: str) -> dict[str, Any]:
    data = hub.api("GET", f"richprogress/users/{name}/timeline")
    assert isinstance(data, dict)
    return data


async def spawn_with(hub: DemoHub, name: str, body: dict[str, Any]) -> tuple[list[dict[str, Any]], float]:
    create_user(hub, name)
    started = time.monotonic()
    hub.api("POST", f"users/{name}/server", body)
    events = await read_all(hub, name)
    return events, time.monotonic() - started


async def spawn_and_wait(hub: DemoHub, name: str, profile: str) -> dict[str, Any]:
    """Request a spawn and read its progress stream to the end; the last event."""
    hub.api("POST", f"users/{name}")
    hub.api("POST", f"users/{name}/server", {"profile": profile})
    url = f"{hub.url}hub/api/users/{name}/server/progress"
    last: dict[str, Any] = {}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
        async with session.get(url, headers={"Authorization": f"token {hub.api_token}"}) as response:
            assert response.status == 200
            async for raw in response.content:
                line = raw.decode().strip()
                if line.startswith("data:"):
                    last = json.loads(line[len("data:") :])
    return last
