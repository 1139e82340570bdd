"""When the events go quiet: a container that exits, a command missing from the image, a
server that never answers, a download that outlasts the start limit. Each through a real
JupyterHub, real KubeSpawner and the simulated cluster: the live stream names the cause, and
the failure page (``hub/spawn-pending/<user>`` once the spawn failed, as after a reload) says
it in one sentence, never "did not start ... while starting".

Fixture: ``hub``, one DemoHub at speed 100 with a small start timeout (8 s: 800 simulated
seconds, shorter than the 900 s download) and http_timeout (3 s), so the four run in seconds.
"""

from __future__ import annotations

import html
import re
import time
from typing import Any

import pytest
import requests

from richprogress.demo.hub import DemoHub
from tests.helpers.spawner_hub import spawn_with, timeline

SPEED = 100.0
START_TIMEOUT = 8.0
HTTP_TIMEOUT = 3


@pytest.fixture(scope="module")
def hub() -> Any:
    # the metrics page open to the test, which reads what the spawn end counted
    extra = f"c.KubeSpawner.http_timeout = {HTTP_TIMEOUT}\nc.JupyterHub.authenticate_prometheus = False\n"
    with DemoHub(speed=SPEED, start_timeout=START_TIMEOUT, extra_config=extra) as demo:
        yield demo


def failure_page(hub: DemoHub, name: str) -> str:
    """The text of the page a reload shows once the spawn failed (the failure page)."""
    session = requests.Session()
    form = session.get(f"{hub.url}hub/login", timeout=10)
    xsrf = re.search(r'name="_xsrf" value="([^"]+)"', form.text)
    assert xsrf, "no _xsrf field on the login form"
    # not following the login's redirect: the spawn form it leads to forgets the failure
    session.post(f"{hub.url}hub/login", data={"username": name, "password": "x", "_xsrf": html.unescape(xsrf.group(1))},
                 timeout=10, allow_redirects=False)
    # the hub marks the spawn failed right after start() raised: wait for it, not a fixed time
    deadline = time.monotonic() + 20
    while True:
        page = session.get(f"{hub.url}hub/spawn-pending/{name}", timeout=10)
        if "rp-failure" in page.text or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    text = html.unescape(re.sub(r"<[^>]+>", " ", page.text))
    return " ".join(text.split())


def ended_timeline(hub: DemoHub, name: str) -> dict[str, Any]:
    """The timeline once the spawner has recorded the end (the hub's start timeout cancels
    start() while it tells the stream: either may come first)."""
    deadline = time.monotonic() + 10
    data = timeline(hub, name)
    while data["outcome"] == "pending" and time.monotonic() < deadline:
        time.sleep(0.05)
        data = timeline(hub, name)
    return data


CASES = [
    pytest.param(
        "crash-on-start", "cora",
        # the traceback in its log names the cause (the exit is in the rows)
        "Python could not find the module jupyterlab_git (ModuleNotFoundError in the server's log)",
        id="crash-on-start",
    ),
    pytest.param(
        "missing-singleuser", "milo",
        "The command jupyterhub-singleuser is not in the server's image, so it could not start",
        id="missing-singleuser",
    ),
    pytest.param(
        "never-answers", "nell",
        # where its log says it listens names the cause
        "The notebook server listens on port 18888, but the hub waits for it on port ",
        id="never-answers",
    ),
    pytest.param(
        "slow-pull-timeout", "sven",
        "The server was still pulling its image when the 8 s start limit ran out.",
        id="slow-pull-timeout",
    ),
]


@pytest.mark.parametrize(("profile", "name", "sentence"), CASES)
async def test_the_failure_page_names_the_cause(hub, profile, name, sentence):
    events, took = await spawn_with(hub, name, {"profile": profile})
    assert events[-1].get("failed") is True, events[-1]
    # live: the pending page, told "failed", shows the verdict of the timeline endpoint
    data = ended_timeline(hub, name)
    assert data["outcome"] == "failed" and data["verdict"]["state"] == "failed"
    assert data["verdict"]["cause"]["summary"].startswith(sentence), data["verdict"]
    # after a reload: the failure page
    page = failure_page(hub, name)
    assert sentence in page, page[:3000]
    # said once, and never the tautology
    assert not ("did not start" in page and "while starting" in page)
    live = events[-1]["message"]
    if profile in ("crash-on-start", "missing-singleuser"):
        # fail-fast ended it once the exit came back: the stream's last word is the cause
        assert took < START_TIMEOUT, f"took {took:.1f} s: the start timeout ended it, not fail-fast"
        assert live.startswith(f"Spawn failed: {sentence}")
        assert "Stopped early" in page
    elif profile == "never-answers":
        # the hub's own error, as JupyterHub words it: the page reads it into a sentence
        assert re.fullmatch(rf"Spawn failed: Server at http://127\.[\d.]+:\d+/user/{name}/(?:api)? didn't respond in "
                            rf"{HTTP_TIMEOUT} seconds", live), live
        assert re.search(r"The notebook server listens on port 18888, but the hub waits for it on port \d+ \(from the "
                         r"server's log\)", page), page[:3000]
    else:
        # the hub's own start timeout (its error has no text) or KubeSpawner's, which waits
        # for the pod as long: whichever fires first, the page names the limit the same way
        assert live in ("Spawn failed: ", f"Spawn failed: pod default/jupyter-{name} did not start in {START_TIMEOUT:g} seconds!"), live
        assert "the next start may be faster" in page


async def test_a_server_that_never_answers_is_stored_as_failed(hub):
    # start() returned, so the pages said "ready" for a moment; the hub's HTTP check then
    # gave up: the history and the metrics must hear of a failure, once, not of a start
    name = "nora"
    events, _ = await spawn_with(hub, name, {"profile": "never-answers"})
    assert events[-1].get("failed") is True, events[-1]
    deadline = time.monotonic() + 20
    while True:
        spawns = hub.api("GET", f"richprogress/users/{name}/spawns")["spawns"]
        if spawns or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert [s["outcome"] for s in spawns] == ["failed"], spawns
    assert "The notebook server listens on port 18888, but the hub waits" in spawns[0]["summary"], spawns[0]
    answer = requests.get(f"{hub.url}hub/metrics", timeout=10)
    assert answer.status_code == 200, answer.status_code
    metrics = answer.text
    counts = dict(re.findall(r'^richprogress_spawn_duration_seconds_count\{outcome="(\w+)",profile="never-answers"\} '
                             r'([\d.]+)$', metrics, re.M))
    assert counts.get("ready", "0") in ("0", "0.0") and float(counts.get("failed", "0")) >= 1, (counts, [m for m in metrics.splitlines() if m.startswith("richprogress_spawn_duration_seconds_count")])
