"""``richprogress.note`` from an admin's hooks, and failing hooks, inside a real JupyterHub.

One ``DemoHub`` (the simulated cluster, JupyterHub 6 with RichKubeSpawner) whose config
adds a ``pre_spawn_hook`` and a ``modify_pod_hook`` that do what the user's name says:
note from sync code, note from async code, note hostile text, pass bad arguments, raise.
We read what users read: the SSE progress stream, the failure page, the text report, and
the stored spawn history.

Fixtures: ``hub`` (module scope, speed 100).
"""

from __future__ import annotations

import json
import re
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from richprogress.demo.hub import DemoHub
from tests.helpers.hub import Hub
from tests.helpers.spawner_hub import read_all, records_of, request_spawn

HOOKS = textwrap.dedent(
    '''
    import asyncio
    import richprogress

    async def _async_part(spawner):
        richprogress.note(spawner, "Preparing your home folder")
        await asyncio.sleep(0.05)
        richprogress.note(
            spawner, "Your home folder is ready", phase="volume", hint="Nothing to do."
        )

    def _pre_spawn(spawner):
        name = spawner.user.name
        if name.startswith("syncnote"):
            richprogress.note(spawner, "Copying your course files")
            richprogress.note(spawner, "Copying your course files")  # counts up
        elif name.startswith("asyncnote"):
            return _async_part(spawner)  # an awaitable: JupyterHub awaits it
        elif name.startswith("broken"):
            raise RuntimeError("could not reach the course API (HTTP 503) <b>x</b>\\x1b[2J")
        elif name.startswith("hostile"):
            richprogress.note(spawner, "<script>alert(1)</script>\\x1b]0;pwned\\x07" + "y" * 100_000)
        elif name.startswith("badargs"):
            for kwargs in ({"phase": "nowhere"}, {"severity": "fatal"}, {"hint": 3}):
                try:
                    richprogress.note(spawner, "never shown", **kwargs)
                except (TypeError, ValueError) as error:
                    richprogress.note(spawner, f"refused: {error}")

    def _modify_pod(spawner, pod):
        if spawner.user.name.startswith("syncnote"):
            # inside start(), while the spawn's own events are being read
            richprogress.note(spawner, "Adding your course volume to the pod")
        if spawner.user.name.startswith("badpod"):
            raise ValueError("no volume template for this course")
        return pod

    c.KubeSpawner.pre_spawn_hook = _pre_spawn
    c.KubeSpawner.modify_pod_hook = _modify_pod
    '''
)


@pytest.fixture(scope="module")
def hub() -> Any:
    with DemoHub(speed=100.0, start_timeout=20.0, extra_config=HOOKS) as demo:
        yield demo


def pages(demo: DemoHub) -> Hub:
    """The demo hub as ``tests.helpers.hub.Hub``, for its logged-in page requests."""
    return Hub(url=demo.url, tokens={}, log=demo.log_path, work=Path(demo.workdir or "."))


def timeline(demo: DemoHub, name: str) -> dict[str, Any]:
    data = demo.api("GET", f"richprogress/users/{name}/timeline")
    assert isinstance(data, dict)
    return data


def report(demo: DemoHub, name: str) -> str:
    r = requests.get(
        f"{demo.url}hub/api/richprogress/users/{name}/timeline.txt",
        headers={"Authorization": f"token {demo.api_token}"},
        timeout=10,
    )
    assert r.status_code == 200, r.text
    return r.text


def stored_spawns(demo: DemoHub, name: str) -> list[dict[str, Any]]:
    """The user's stored spawns, waiting for the last one to be written."""
    deadline = time.monotonic() + 20
    while True:
        data = demo.api("GET", f"richprogress/users/{name}/spawns")
        spawns = data["spawns"] if isinstance(data, dict) else []
        if spawns or time.monotonic() > deadline:
            return spawns
        time.sleep(0.1)


def stored_records(demo: DemoHub, name: str) -> list[dict[str, Any]]:
    spawns = stored_spawns(demo, name)
    assert spawns, "no stored spawn"
    data = demo.api("GET", f"richprogress/users/{name}/spawns/{spawns[0]['id']}")
    assert isinstance(data, dict)
    return data["records"]


def notes(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("rule") == "note"]


async def test_a_sync_hook_note_is_a_row_on_the_stream_and_in_history(hub):
    request_spawn(hub, "syncnote", "happy-path")
    events = await read_all(hub, "syncnote")
    assert events[-1].get("ready") is True
    records = records_of(events)
    row, in_start = notes(records)
    assert row["message"] == "Copying your course files"
    assert in_start["message"] == "Adding your course volume to the pod"
    assert row["component"] == "hub" and row["severity"] == "info" and row["phase"] == "requested"
    assert row["count"] == 2  # the same note twice is one row that counts up
    assert row["id"].startswith("note-")
    # the note comes before the cluster's own events, as it happened
    assert records.index(row) < [r.get("reason") for r in records].index("Scheduled")
    assert "Copying your course files" in report(hub, "syncnote")
    assert [r["message"] for r in notes(stored_records(hub, "syncnote"))] == [
        "Copying your course files", "Adding your course volume to the pod",
    ]
    hub.api("DELETE", "users/syncnote/server")


async def test_an_async_hook_notes_rows_with_their_phase_and_hint(hub):
    request_spawn(hub, "asyncnote", "happy-path")
    events = await read_all(hub, "asyncnote")
    assert events[-1].get("ready") is True
    rows = notes(records_of(events))
    assert [r["message"] for r in rows] == ["Preparing your home folder", "Your home folder is ready"]
    assert rows[1]["phase"] == "volume" and rows[1]["hint"] == "Nothing to do."
    # the bar follows the note's step as it follows an event's
    bars = [e["progress"] for e in events if e.get("record", {}).get("id") == rows[1]["id"]]
    assert bars and bars[0] >= 45
    text = report(hub, "asyncnote")
    assert "Preparing your home folder" in text and "Your home folder is ready" in text
    hub.api("DELETE", "users/asyncnote/server")


async def test_a_failing_pre_spawn_hook_is_the_cause_on_every_page(hub):
    create = requests.post(
        f"{hub.url}hub/api/users/broken", headers={"Authorization": f"token {hub.api_token}"}, timeout=10
    )
    assert create.status_code in (201, 409)
    start = requests.post(
        f"{hub.url}hub/api/users/broken/server",
        headers={"Authorization": f"token {hub.api_token}"},
        json={"profile": "happy-path"},
        timeout=30,
    )
    assert start.status_code >= 400 or start.status_code == 202
    sentence = "The hub's pre-spawn step failed: could not reach the course API (HTTP 503) <b>x</b>\\x1b[2J"
    deadline = time.monotonic() + 20
    while timeline(hub, "broken")["outcome"] == "pending" and time.monotonic() < deadline:
        time.sleep(0.1)
    data = timeline(hub, "broken")
    assert data["outcome"] == "failed"
    assert data["diagnosis"]["summary"] == sentence
    assert data["verdict"]["cause"]["fatal"] is True
    (row,) = notes(data["records"])
    assert row["severity"] == "error" and row["fatal"] is True and row["reason"] == "HookFailed"
    assert "\x1b" not in json.dumps(data)  # the escape is shown, never sent
    assert sentence in report(hub, "broken")
    # the failure page, as the owner sees it: the sentence, escaped by Jinja, no traceback
    page = pages(hub).page("richprogress/failed/broken", "broken").text
    assert "The hub&#39;s pre-spawn step failed: could not reach the course API (HTTP 503) &lt;b&gt;x&lt;/b&gt;" in page
    assert "<b>x</b>" not in page and "Traceback" not in page
    # and as an admin sees it
    admin_page = pages(hub).page("richprogress/failed/broken", "admin").text
    assert "pre-spawn step failed: could not reach the course API (HTTP 503)" in admin_page
    assert stored_spawns(hub, "broken")[0]["outcome"] == "failed"


async def test_a_failing_modify_pod_hook_is_the_cause(hub):
    request_spawn(hub, "badpod", "happy-path")
    events = await read_all(hub, "badpod")
    assert events[-1].get("failed") is True
    data = timeline(hub, "badpod")
    assert data["diagnosis"]["summary"] == "The hub's pod set-up step failed: no volume template for this course"
    page = pages(hub).page("richprogress/failed/badpod", "badpod").text
    assert "pod set-up step failed: no volume template for this course" in page


async def test_hostile_note_text_is_made_one_short_line(hub):
    request_spawn(hub, "hostile", "happy-path")
    events = await read_all(hub, "hostile")
    (row,) = notes(records_of(events))
    assert row["message"].startswith("<script>alert(1)</script>\\x1b]0;pwned\\x07yyy")
    assert re.search(r"\.\.\. \([\d,]+ more characters\)$", row["message"])
    assert len(row["message"]) < 600 and len(row["raw_message"]) < 600
    assert not any(ord(ch) < 0x20 for ch in row["message"])
    hub.api("DELETE", "users/hostile/server")


async def test_bad_arguments_are_refused_naming_what_to_fix(hub):
    request_spawn(hub, "badargs", "happy-path")
    events = await read_all(hub, "badargs")
    said = [r["message"] for r in notes(records_of(events))]
    assert said == [
        (
            "refused: richprogress.note: phase must be one of requested, scheduling, scaling, "
            "scheduled, volume, image, starting, ready; not 'nowhere'"
        ),
        "refused: richprogress.note: severity must be one of info, warning, error; not 'fatal'",
        "refused: richprogress.note: hint must be a str or None, not int",
    ]
    hub.api("DELETE", "users/badargs/server")
