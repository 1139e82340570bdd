"""The timeline endpoints and the failure page, against a real JupyterHub process.

A real ``jupyterhub`` (with configurable-http-proxy) runs at a non-root base_url on
127.0.0.1 free ports, configured by ``richprogress.setup(c)`` only. Its spawner is
``TimelineTestSpawner`` (defined in the generated config below): it fills a real
``SpawnTimeline`` with hand-built records and then fails with an empty message, like the
hub's own start timeout does. Users get API tokens through ``api_tokens``.

Fixtures: ``running_hub`` (module) is the hub; ``failed_spawns`` (module) the same hub once
alice's default and "gpu" servers and the odd user's server have failed. ``timeline_hub``
is the context manager behind them (``tests.helpers.hub.hub_process`` with this spawner),
usable from a script (e.g. to take screenshots).
"""

from __future__ import annotations

import html
import json
import os
import re
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
import requests

from tests.helpers.endpoints import timeline_path
from tests.helpers.hub import BASE_URL, HOSTILE, Hub, hub_process

#: the image the spawns ran with (the spawner's image until a test changes it)
SPAWN_IMAGE = "quay.io/jupyter/no-such-notebook:2026-11"
#: a user name holding every character HTML and JS care about
ODD_USER = "a<'&\">b"
#: reader holds read:servers on alice's servers only; visitor only access:servers on them
USERS = ["alice", "bob", "admin", ODD_USER, "reader", "visitor"]

# The spawner of the generated jupyterhub_config.py (``tests.helpers.hub`` adds the common settings).
SPAWNER_CODE = textwrap.dedent(
    '''
    import asyncio
    import os

    from jupyterhub.spawner import Spawner

    import richprogress
    from richprogress.model.timeline import SpawnTimeline

    HOSTILE = {hostile!r}

    def record(n, since, severity, reason, message, *, count=1, phase=None, kind="Pod",
               name="jupyter-x", container=None, typ=None):
        return {{
            "id": f"uid-{{n}}", "timestamp": None, "first_timestamp": None,
            "type": typ or ("Normal" if severity == "info" else "Warning"),
            "severity": severity, "reason": reason,
            "object": {{"kind": kind, "name": name, "container": container, "field_path": None}},
            "component": "kubelet", "count": count, "message": message,
            "raw_message": message, "rule": None, "phase": phase, "since_spawn": since,
        }}

    # image-not-found, with an image name that holds HTML
    PLAN = [
        record(1, 0.4, "info", "Scheduled", "Found a machine for your server: node-1.",
               phase="scheduled"),
        record(2, 1.2, "info", "Pulling", f"Downloading image quay.io/x/{{HOSTILE}}:1.",
               phase="image", container="notebook"),
        record(3, 2.0, "error", "Failed",
               f"The image quay.io/x/{{HOSTILE}}:1 does not exist.", phase="image",
               container="notebook", count=4),
        record(4, 2.5, "warning", "BackOff", f"Waiting to retry downloading quay.io/x/{{HOSTILE}}:1.",
               phase="image", container="notebook", count=7),
    ]

    class TimelineTestSpawner(Spawner):
        """Fills a SpawnTimeline with PLAN, waits HOLD seconds, then fails with no message."""

        spawn_timeline = None

        @property
        def image(self):
            """The image the spawner's options name now (a test changes the file later, as
            a spawn form changes a KubeSpawner's options)."""
            with open(os.environ["RP_TEST_IMAGE_FILE"]) as f:
                return f.read().strip()

        async def start(self):
            self.spawn_timeline = SpawnTimeline(server_name=self.name)
            for item in PLAN:
                self.spawn_timeline.add(dict(item, object=dict(item["object"],
                                                             name="jupyter-" + self.user.name)))
            await asyncio.sleep(float(os.environ.get("RP_TEST_HOLD", "0.2")))
            self.spawn_timeline.finish("failed", "")
            raise RuntimeError("")

        async def progress(self):
            sent = {{}}
            while True:
                timeline = self.spawn_timeline
                if timeline is not None:
                    for rec in timeline.records():
                        if sent.get(rec["id"]) != rec:
                            sent[rec["id"]] = rec
                            yield {{"progress": timeline.progress, "message": rec["message"],
                                   "record": rec}}
                await asyncio.sleep(0.1)

        async def poll(self):
            return 0

        async def stop(self):
            pass

    '''
)

# The lines after tests.helpers.hub's COMMON_CONFIG.
EXTRA_CONFIG = """
richprogress.setup(c)
richprogress.setup(c)  # twice: must change nothing
"""


def wait_failed(hub: Hub, user: str, server_name: str = "") -> None:
    """Until the spawn has failed (its timeline endpoint says so)."""
    hub.wait_api(
        timeline_path(user, server_name),
        lambda data: data["outcome"] == "failed",
        f"spawn of {user}/{server_name} did not fail",
        every=0.1,
        settle=0.3,
    )


@contextmanager
def timeline_hub(work: Path, *, hold: float = 0.2) -> Iterator[Hub]:
    """A real jupyterhub (and its proxy) in ``work``; spawns fail after ``hold`` seconds."""
    tokens = {user: f"token-{i}-{os.urandom(8).hex()}" for i, user in enumerate(USERS)}
    (work / "image.txt").write_text(SPAWN_IMAGE)
    with hub_process(
        work,
        SPAWNER_CODE.format(hostile=HOSTILE),
        spawner_class="TimelineTestSpawner",
        users=USERS,
        tokens=tokens,
        extra_config=EXTRA_CONFIG,
        env={"RP_TEST_HOLD": str(hold), "RP_TEST_IMAGE_FILE": str(work / "image.txt")},
    ) as hub:
        yield hub


@pytest.fixture(scope="module")
def running_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    with timeline_hub(tmp_path_factory.mktemp("hub")) as hub:
        yield hub


@pytest.fixture(scope="module")
def failed_spawns(running_hub: Hub) -> Hub:
    """alice's default and "gpu" servers, and the odd user's server, have failed."""
    for user, server in (("alice", ""), ("alice", "gpu"), (ODD_USER, "")):
        running_hub.start_server(user, server)
    for user, server in (("alice", ""), ("alice", "gpu"), (ODD_USER, "")):
        wait_failed(running_hub, user, server)
    return running_hub


# -- who may read a timeline -------------------------------------------------------------

AUTH_TABLE = [
    pytest.param("alice", "alice", "", 200, id="owner-default-server"),
    pytest.param("alice", "alice", "gpu", 200, id="owner-named-server"),
    pytest.param("admin", "alice", "", 200, id="admin-reads-others"),
    pytest.param("admin", "alice", "gpu", 200, id="admin-reads-named"),
    pytest.param("bob", "alice", "", 404, id="other-user-gets-404"),
    pytest.param("bob", "alice", "gpu", 404, id="other-user-named-gets-404"),
    pytest.param(None, "alice", "", 403, id="anonymous-gets-403"),
    pytest.param("admin", "nobody", "", 404, id="unknown-user"),
    pytest.param("alice", "alice", "nosuch", 404, id="unknown-server"),
    pytest.param("bob", "bob", "", 404, id="never-started-no-timeline"),
    pytest.param("reader", "alice", "", 200, id="read-servers-on-owner-reads"),
    pytest.param("reader", "alice", "gpu", 200, id="read-servers-on-owner-reads-named"),
    pytest.param("reader", ODD_USER, "", 404, id="read-servers-on-someone-else-gets-404"),
    pytest.param("visitor", "alice", "", 404, id="access-servers-is-not-read-access"),
    pytest.param("visitor", "alice", "gpu", 404, id="access-servers-is-not-read-access-named"),
]


@pytest.mark.parametrize(("requester", "owner", "server", "status"), AUTH_TABLE)
def test_timeline_access(failed_spawns: Hub, requester: str | None, owner: str, server: str, status: int) -> None:
    r = failed_spawns.api(timeline_path(owner, server), requester)
    assert r.status_code == status, r.text
    if status == 200:
        data = r.json()
        assert data["outcome"] == "failed"
        assert data["server_name"] == server


def test_timeline_json_has_records_and_diagnosis(failed_spawns: Hub) -> None:
    data = failed_spawns.api(timeline_path("alice"), "alice").json()
    assert [r["id"] for r in data["records"]] == ["uid-1", "uid-2", "uid-3", "uid-4"]
    assert data["reason"] == ""  # the empty message the hub's timeout leaves...
    # ...and the diagnosis still names the cause, from the timeline
    assert data["diagnosis"]["record_id"] == "uid-3"
    assert "does not exist" in data["diagnosis"]["summary"]
    assert data["diagnosis"]["phase"] == "image"


def test_timeline_endpoints_carry_the_admin_facts_and_raw_messages(failed_spawns: Hub) -> None:
    """The facts an admin needs, in the JSON and in the text report."""
    facts = dict(failed_spawns.api(timeline_path("alice"), "alice").json()["facts"])
    assert facts["Versions"].startswith("richprogress ")
    text = failed_spawns.api(timeline_path("alice", "", "timeline.txt"), "alice").text
    assert "Facts for an admin:" in text and "Versions:" in text


def report_on_page(page: str) -> str:
    """The text "Copy details" copies: the page's pre#rp-report, unescaped."""
    found = re.search(r'<pre id="rp-report">(.*?)</pre>', page, re.S)
    assert found, page[:2000]
    return html.unescape(found.group(1))


@pytest.mark.parametrize("viewer", ["alice", "admin"])
def test_the_spawns_facts_stay_when_the_spawners_options_change(failed_spawns: Hub, viewer: str) -> None:
    """The spawner's options now name another image (as after a spawn form): the endpoints
    and the page still tell the image the failed spawn ran, and "Copy details" is exactly
    timeline.txt, "Hub:" line and all."""
    (failed_spawns.work / "image.txt").write_text("quay.io/jupyter/base-notebook:latest")
    facts = dict(failed_spawns.api(timeline_path("alice"), viewer).json()["facts"])
    assert facts["Images"] == SPAWN_IMAGE
    text = failed_spawns.api(timeline_path("alice", "", "timeline.txt"), viewer).text
    assert re.search(rf"^  Images: +{re.escape(SPAWN_IMAGE)}$", text, re.M), text
    assert re.search(r"^Hub: +http://127\.0\.0\.1:\d+/prefix/hub/$", text, re.M), text
    page = failed_spawns.page("spawn-pending/alice", viewer).text
    assert report_on_page(page) == text
    assert "base-notebook" not in page


@pytest.mark.parametrize(
    ("suffix", "params"),
    [
        pytest.param("timeline", {"format": "text"}, id="format-text"),
        pytest.param("timeline.txt", {}, id="txt-route"),
    ],
)
def test_timeline_text_report(failed_spawns: Hub, suffix: str, params: dict[str, str]) -> None:
    r = failed_spawns.api(timeline_path("alice", "gpu", suffix), "alice", **params)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/plain")
    # the report quotes event text (an image name with <img onerror>): never sniffed as HTML
    assert HOSTILE in r.text
    assert r.headers.get("X-Content-Type-Options") == "nosniff"
    assert "User:" in r.text and "alice" in r.text
    assert "gpu" in r.text
    assert "does not exist" in r.text


def test_timeline_text_needs_scope_too(failed_spawns: Hub) -> None:
    assert failed_spawns.api(timeline_path("alice", "", "timeline.txt"), "bob").status_code == 404


def test_bad_format_is_400(failed_spawns: Hub) -> None:
    assert failed_spawns.api(timeline_path("alice"), "alice", format="xml").status_code == 400


# -- static files ---------------------------------------------------------------------------


def test_static_file_served_under_base_url_with_version(running_hub: Hub) -> None:
    from richprogress.web.urls import static_url

    url = static_url(BASE_URL + "hub/", "pages/pending.js")
    assert url.startswith("/prefix/hub/richprogress/static/pages/pending.js?v=")
    r = requests.get(f"http://127.0.0.1:{running_hub.url.split(':')[2].split('/')[0]}{url}", timeout=10)
    assert r.status_code == 200
    assert "javascript" in r.headers["Content-Type"]
    assert "class PendingPage" in r.text
    # versioned URLs may be cached for long: the version changes with the content
    assert "max-age" in r.headers.get("Cache-Control", "")


def test_static_file_missing_is_404(running_hub: Hub) -> None:
    r = requests.get(running_hub.url + "hub/richprogress/static/nope.js", timeout=10)
    assert r.status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("../../pyproject.toml", id="dot-dot"),
        pytest.param("..%2f..%2fpyproject.toml", id="encoded-slash"),
        pytest.param("%2e%2e/%2e%2e/pyproject.toml", id="encoded-dots"),
        pytest.param("%2fetc%2fpasswd", id="encoded-absolute"),
        pytest.param("richprogress.js%00.css", id="nul-byte"),
    ],
)
def test_static_files_stay_inside_static(running_hub: Hub, path: str) -> None:
    # The proxy or the client may normalize "../" first (404), tornado refuses the rest (403);
    # never the file, and never a 500 with a traceback in the hub log.
    r = requests.get(running_hub.url + "hub/richprogress/static/" + path, timeout=10)
    assert r.status_code in (403, 404)
    assert "[build-system]" not in r.text and "root:" not in r.text


# -- the failure page, rendered by the real hub -----------------------------------------------


def test_failure_page_after_reload_names_the_cause(failed_spawns: Hub) -> None:
    r = failed_spawns.page("spawn-pending/alice", "alice")
    page = r.text
    assert 'id="rp-summary"' in page
    # the cause and the hint, from the timeline though the exception's message was empty
    assert "does not exist" in page
    assert "What you can do" in page
    # the stock Relaunch button still points at the spawn URL under the base_url
    assert 'id="start"' in page and 'href="/prefix/hub/spawn/alice' in page
    # our CSS and JS, cache-busted, under the base_url
    assert "/prefix/hub/richprogress/static/richprogress.css?v=" in page
    assert "/prefix/hub/richprogress/static/pages/failure.js?v=" in page


def test_failure_page_escapes_event_text(failed_spawns: Hub) -> None:
    page = failed_spawns.page("spawn-pending/alice/gpu", "alice").text
    assert HOSTILE not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "gpu" in page


def test_failure_page_escapes_user_name(failed_spawns: Hub) -> None:
    page = failed_spawns.page(f"spawn-pending/{quote(ODD_USER, safe='')}", ODD_USER).text
    assert 'id="rp-summary"' in page
    assert ODD_USER not in page
    assert "a&lt;&#39;&amp;&#34;&gt;b" in page


def test_hub_log_mentions_the_extra_handlers_deprecation_once(failed_spawns: Hub) -> None:
    # hub_setup's docstring promises exactly this line (setup is called twice in the config)
    log = failed_spawns.log.read_text()
    assert log.count("extra_handlers is deprecated") == 1


def test_timeline_routes_are_the_documented_ones() -> None:
    from richprogress import web as handlers

    routes = [route[0] for route in handlers.default_handlers]
    for route in routes:
        shown = route.replace("([^/]+)", "{user}").replace("([^/]*)", "{server_name}")
        shown = shown.replace("(.*)", "{path}").replace("\\.", ".").replace("(-?\\d+)", "{id}")
        shown = shown.lstrip("/")
        assert shown in (handlers.__doc__ or ""), shown


def test_json_is_json(failed_spawns: Hub) -> None:
    r = failed_spawns.api(timeline_path("alice"), "alice")
    assert r.headers["Content-Type"].startswith("application/json")
    json.loads(r.text)
