"""The spawn history inside a real JupyterHub: what lasts through the spawn form, a hub
restart, and who may read it.

A real ``jupyterhub`` (with configurable-http-proxy) runs on 127.0.0.1 free ports with
``richprogress.setup(c)``. Its spawner is ``RichProgressMixin`` on ``HistoryTestSpawner``
(in the generated config, ``tests.helpers.history_hub``): its ``progress()`` tells three
steps of an image that does not exist (the image name holds HTML), then ``start()`` fails,
or, when started with the options ``{"ok": true}``, serves a tiny web server so the hub
sees it ready. Finished spawns go to the real store (a SQLite file in the hub's folder, or
PostgreSQL).

Fixtures: ``history_hub`` (module): the hub, with alice's default server failed once.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import jupyterhub
import pytest

from tests.helpers.history_hub import history_hub_process, spawns_path, start, wait_stored
from tests.helpers.hub import BASE_URL, Hub

#: the JupyterHub these tests run on (CI runs them on the newest and on z2jh's)
JUPYTERHUB_MAJOR = int(jupyterhub.__version__.split(".")[0])


#: the image and start timeout a failed spawn ran with, unlike the hub's defaults
SPAWN_IMAGE = "quay.io/jupyter/no-such-notebook:2026-11"
SPAWN_TIMEOUT = 246


def report_on_page(page: str) -> str:
    """The text "Copy details" copies: the page's pre#rp-report, unescaped."""
    found = re.search(r'<pre id="rp-report">(.*?)</pre>', page, re.S)
    assert found, page[:2000]
    return html.unescape(found.group(1))


def expect_the_spawns_own_facts(hub: Hub, viewer: str, owner: str, server: str, page: str) -> None:
    """The JSON facts and timeline.txt name the image and start timeout the stored spawn
    ran with, and the failure page's "Copy details" is timeline.txt to the byte."""
    path = f"richprogress/users/{owner}" + (f"/servers/{server}" if server else "")
    facts = dict(hub.api(path + "/timeline", viewer).json()["facts"])
    assert (facts["Images"], facts["Start timeout"]) == (SPAWN_IMAGE, f"{SPAWN_TIMEOUT} s")
    text = hub.api(path + "/timeline.txt", viewer).text
    assert re.search(rf"^  Images: +{re.escape(SPAWN_IMAGE)}$", text, re.M), text
    assert re.search(rf"^  Start timeout: +{SPAWN_TIMEOUT} s$", text, re.M), text
    assert re.search(r"^Hub: +http://127\.0\.0\.1:\d+/prefix/hub/$", text, re.M), text
    assert report_on_page(page) == text
    assert "base-notebook" not in page


def failure_page(hub: Hub, viewer: str, owner: str, server: str = "") -> str:
    """JupyterHub's own failure page (spawn-pending) as ``viewer`` sees it (JupyterHub
    answers a server that is not running with 404 and its not_running page)."""
    path = f"spawn-pending/{quote(owner, safe='')}" + (f"/{quote(server, safe='')}" if server else "")
    r = hub.page(path, viewer)
    assert r.status_code in (200, 404), r.status_code
    return r.text


def summary_of(page: str) -> str:
    found = re.search(r'<h1 id="rp-summary" class="rp-summary">(.*?)</h1>', page, re.S)
    return " ".join(found.group(1).split()) if found else ""


@pytest.fixture(scope="module")
def history_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    work = tmp_path_factory.mktemp("history-hub")
    with history_hub_process(work) as hub:
        start(hub, "alice")
        wait_stored(hub, "alice")
        start(hub, "alice", "gpu")
        wait_stored(hub, "alice", "gpu")
        yield hub


HOSTILE_TEXT = "The image quay.io/x/&lt;img src=x onerror=alert(1)&gt;:1 does not exist"

ACCESS = [
    pytest.param("alice", "alice", "", 200, id="owner"),
    pytest.param("alice", "alice", "gpu", 200, id="owner-named"),
    pytest.param("admin", "alice", "", 200, id="admin"),
    pytest.param("reader", "alice", "gpu", 200, id="read-servers-on-owner"),
    pytest.param("bob", "alice", "", 404, id="other-user-404"),
    pytest.param("visitor", "alice", "", 404, id="access-servers-is-not-read"),
    pytest.param(None, "alice", "", 403, id="no-token-403"),
    pytest.param("admin", "nobody", "", 404, id="unknown-user"),
]


@pytest.mark.parametrize(("requester", "owner", "server", "status"), ACCESS)
def test_spawn_list_and_detail_access(
    history_hub: Hub, requester: str | None, owner: str, server: str, status: int
) -> None:
    listed = history_hub.api(spawns_path(owner, server), requester)
    assert listed.status_code == status, listed.text
    spawn_id = wait_stored(history_hub, "alice", server)[0]["id"]
    one = history_hub.api(spawns_path(owner, server, f"/{spawn_id}"), requester)
    assert one.status_code == status, one.text
    if status != 200:
        return
    spawns = listed.json()["spawns"]
    assert spawns[0]["outcome"] == "failed"
    assert spawns[0]["summary"] == "The image quay.io/x/<img src=x onerror=alert(1)>:1 does not exist"
    detail = one.json()
    assert detail["id"] == spawn_id
    assert detail["server_name"] == server
    assert detail["diagnosis"]["summary"] == spawns[0]["summary"]
    assert [r["message"] for r in detail["records"]][0] == "Found a machine for your server"
    assert one.headers["X-Content-Type-Options"] == "nosniff"


def test_a_spawn_of_another_server_is_404(history_hub: Hub) -> None:
    spawn_id = wait_stored(history_hub, "alice", "gpu")[0]["id"]
    assert history_hub.api(spawns_path("alice", "", f"/{spawn_id}"), "alice").status_code == 404


def test_the_list_pages(history_hub: Hub) -> None:
    r = history_hub.api(spawns_path("alice"), "alice", limit="1")
    assert r.status_code == 200
    assert len(r.json()["spawns"]) == 1
    assert history_hub.api(spawns_path("alice"), "alice", limit="0").status_code == 400
    assert history_hub.api(spawns_path("alice"), "alice", before="x").status_code == 400


def test_the_failure_page_lasts_after_the_spawn_form_replaced_the_spawner(history_hub: Hub) -> None:
    session = history_hub.login("alice")
    form = session.get(history_hub.url + "hub/spawn/alice/gpu", timeout=10)
    assert form.status_code == 200 and "spawn_form" in form.text
    # JupyterHub replaced the failed spawner: its in-memory timeline is gone. JupyterHub 6
    # then forgets the named server (its pending page is 404); 5 keeps it and renders its
    # not-running page, which is ours: it tells the stored spawn too...
    stock = session.get(history_hub.url + "hub/spawn-pending/alice/gpu", timeout=10)
    if JUPYTERHUB_MAJOR >= 6:
        assert stock.status_code == 404
    else:
        assert stock.status_code == 200 and summary_of(stock.text) == HOSTILE_TEXT
    page = session.get(history_hub.url + "hub/richprogress/failed/alice/gpu", timeout=10).text
    # ...and the page tells the stored spawn, with when it happened
    assert summary_of(page) == HOSTILE_TEXT
    assert "<img src=x" not in page
    assert re.search(r'id="rp-ended"><dt>Failed</dt><dd><time datetime="[^"]+Z">(just now|\d+ minutes? ago)</time>', page)
    assert 'id="rp-timeline"' in page and "Found a machine for your server" in page
    assert "Relaunch server" in page


@pytest.fixture(scope="module")
def form_failed(history_hub: Hub) -> Hub:
    """reader's server "form" failed, started with its own image and start timeout (not
    alice's: her notices are counted below)."""
    start(history_hub, "reader", "form", image=SPAWN_IMAGE, timeout=SPAWN_TIMEOUT)
    wait_stored(history_hub, "reader", "form")
    return history_hub


@pytest.mark.parametrize("viewer", ["reader", "admin"])
def test_after_the_spawn_form_the_endpoints_tell_the_stored_spawns_facts(form_failed: Hub, viewer: str) -> None:
    """The spawn form gives the server a new spawner, with the hub's default image and
    timeout: the endpoints and the page tell the failed spawn's, as it ran."""
    hub = form_failed
    session = hub.login("reader")
    assert "spawn_form" in session.get(hub.url + "hub/spawn/reader/form", timeout=10).text
    page = hub.page("richprogress/failed/reader/form", viewer).text
    expect_the_spawns_own_facts(hub, viewer, "reader", "form", page)


def test_the_home_page_and_spawn_form_say_the_last_start_failed(history_hub: Hub) -> None:
    session = history_hub.login("alice")
    for path in ("hub/home", "hub/spawn/alice/other"):
        page = session.get(history_hub.url + path, timeout=10).text
        notices = re.findall(r'<div class="alert alert-warning[^"]*rp-notice".*?</div>', page, re.S)
        assert len(notices) == 2, page[:3000]
        text = re.sub(r" ([:.])", r"\1", " ".join(re.sub(r"<[^>]+>", " ", notices[0]).split()))
        assert text.startswith("The last start of your server gpu failed just now: " + HOSTILE_TEXT)
        assert f'href="{BASE_URL}hub/richprogress/failed/alice/gpu"' in notices[0]
        assert f'href="{BASE_URL}hub/richprogress/failed/alice"' in notices[1]
    assert "rp-notice" not in history_hub.page("home", "bob").text


def test_a_later_success_removes_the_notice(history_hub: Hub) -> None:
    start(history_hub, "alice", "ok", ok=False)
    wait_stored(history_hub, "alice", "ok")
    assert "failed/alice/ok" in history_hub.page("home", "alice").text
    start(history_hub, "alice", "ok", ok=True)
    spawns = wait_stored(history_hub, "alice", "ok", count=2)
    assert [s["outcome"] for s in spawns] == ["ready", "failed"]
    assert "failed/alice/ok" not in history_hub.page("home", "alice").text


def test_the_admin_page_lists_failures_with_counts(history_hub: Hub) -> None:
    page = history_hub.page("richprogress/failures", "admin")
    assert page.status_code == 200
    rows = re.findall(r'<tr class="rp-failure-row".*?</tr>', page.text, re.S)
    assert len(rows) >= 2
    # the row as read (a long name breaks at <wbr>s after "/", ":" and ".")
    first = " ".join(re.sub(r"<[^>]+>", "", rows[0]).split())
    assert "alice" in first and HOSTILE_TEXT in first
    assert "<img src=x" not in page.text
    counts = re.search(r'<tr data-cause="([^"]+)">\s*<td>.*?</td>\s*<td class="text-end">(\d+)</td>', page.text, re.S)
    assert counts is not None and int(counts.group(2)) >= 2
    # the last day and week in words (start_stats.py), from the same store
    stats = re.findall(r'<p class="rp-stats-period" data-period="(day|week)">(.*?)</p>', page.text, re.S)
    assert [period for period, _ in stats] == ["day", "week"]
    day = " ".join(stats[0][1].split())
    assert re.match(r"Last day: \d+ starts, \d+ failed \(\d+%\)", day), day
    assert "Most failures: " in day and "<img src=x" not in day
    filtered = history_hub.page(f"richprogress/failures?cause={counts.group(1)}", "admin")
    assert 'id="rp-cause-filter"' in filtered.text
    # when, in full with its zone, and how long ago
    when = re.search(r'<td class="rp-when-cell">(.*?)</td>', rows[0], re.S)
    assert when and re.search(r'<time datetime="[^"]+Z" title="[^"]+ UTC">', when.group(1))
    said = " ".join(re.sub(r"<[^>]+>", "", when.group(1)).split())
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC \((just now|\d+ minutes? ago)\)", said), said


NAV_LINK = f'<a class="nav-link" id="rp-nav-failures" href="{BASE_URL}hub/richprogress/failures">Failed starts</a>'


def test_admins_reach_the_failures_page_from_the_navbar_of_every_page(history_hub: Hub) -> None:
    session = history_hub.login("admin")
    # the home page, JupyterHub's admin page (a React app under the stock navbar), a
    # failure page, the spawn form and the failures page itself
    for path in ("home", "admin", "richprogress/failed/alice/gpu", "spawn/alice/other", "richprogress/failures"):
        r = session.get(history_hub.url + "hub/" + path, timeout=10)
        assert r.status_code == 200 and NAV_LINK in r.text, path
    for viewer in ("alice", "reader"):
        assert "rp-nav-failures" not in history_hub.page("home", viewer).text


@pytest.mark.parametrize("viewer", ["alice", "reader"])
def test_the_failures_page_tells_a_non_admin_why_it_is_closed(history_hub: Hub, viewer: str) -> None:
    r = history_hub.page("richprogress/failures", viewer)
    assert r.status_code == 403
    heading = re.search(r"<h1>(.*?)</h1>", r.text, re.S)
    assert heading and " ".join(heading.group(1).split()) == "403 : Forbidden"
    assert "only admins can open it" in r.text and "None" not in heading.group(1)
    assert "hub/richprogress/failures" not in r.text.replace(r.url, "")


def test_the_failure_page_lasts_through_a_hub_restart(tmp_path: Path) -> None:
    # the hub ran with another default image then, and the spawns set their own timeout
    with history_hub_process(tmp_path, image=SPAWN_IMAGE) as hub:
        start(hub, "alice", timeout=SPAWN_TIMEOUT)
        start(hub, "alice", "gpu", timeout=SPAWN_TIMEOUT)
        wait_stored(hub, "alice")
        wait_stored(hub, "alice", "gpu")
    with history_hub_process(tmp_path) as hub:
        # the default server: JupyterHub's own failure page tells the stored spawn
        assert summary_of(failure_page(hub, "alice", "alice")) == HOSTILE_TEXT
        # a named server: JupyterHub forgot it (404), our page has it
        named = hub.page("richprogress/failed/alice/gpu", "alice")
        assert summary_of(named.text) == HOSTILE_TEXT
        home = hub.page("home", "alice").text
        assert "failed/alice/gpu" in home and 'failed/alice"' in home
        # the timeline endpoint falls back to the stored spawn too, with its own facts,
        # not those of today's spawners, and "Copy details" is its timeline.txt
        r = hub.api("richprogress/users/alice/timeline", "alice")
        assert r.status_code == 200 and r.json()["diagnosis"]["summary"].startswith("The image")
        for viewer in ("alice", "admin"):
            expect_the_spawns_own_facts(hub, viewer, "alice", "", failure_page(hub, viewer, "alice"))
            named = hub.page("richprogress/failed/alice/gpu", viewer).text
            expect_the_spawns_own_facts(hub, viewer, "alice", "gpu", named)
    assert (tmp_path / "richprogress_history.sqlite").is_file()
