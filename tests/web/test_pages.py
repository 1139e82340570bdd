"""Server-side rendering of our two templates, through a Jinja environment built like JupyterHub's.

The environment is JupyterHub 6's own recipe (``app.init_tornado_settings``, in
``tests.helpers.pages``): a ``PrefixLoader`` for ``templates/...`` (the stock templates we
extend), our folder before the stock one, autoescape on. The namespace holds what
JupyterHub's handlers pass. Pages are parsed with the standard library's HTML parser and
checked for what a user sees.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from types import SimpleNamespace
from urllib.parse import quote

import pytest

from richprogress.model.timeline import STOPPED_BEFORE_READY, SpawnTimeline
from richprogress.web.views.failure import FAILURE_PAGE_ROWS
from tests.helpers.pages import (
    HUB,
    OWNER,
    T0,
    failure_page,
    image_not_found,
    make_user,
    pending_page,
    record,
    render,
    timeline,
)

HOSTILE = "<img src=x onerror=alert(1)>"
ODD_USER = "a<'&\">b"


# -- the failure page ---------------------------------------------------------------------


def test_failure_page_leads_with_the_cause_then_what_to_do() -> None:
    doc = failure_page("alice", timeline(image_not_found()))
    assert doc.find_all("h1")[0] is doc.by_id("rp-summary")
    # the headline names the problem; the image stands on its own line, to copy
    assert doc.by_id("rp-summary").words() == "The image does not exist."
    ref = doc.by_id("rp-summary-ref")
    assert ref.words().replace(" ", "") == "quay.io/jupyter/scipy-notebok:2024-01-15"
    # it breaks only after "/", ":" and "." (never at a hyphen): whole pieces, then <wbr>
    pieces = [n.words() for n in ref.find_all("span", class_="rp-nobr")]
    assert pieces == ["quay.", "io/", "jupyter/", "scipy-notebok:", "2024-01-15"]
    assert len(ref.find_all("wbr")) == len(pieces)
    assert doc.by_id("rp-copy-ref").attrs["data-copy"] == "quay.io/jupyter/scipy-notebok:2024-01-15"
    assert doc.by_id("rp-hint").words().startswith("What you can do: Check the image name")


def test_failure_page_says_who_what_when() -> None:
    doc = failure_page("alice", timeline(image_not_found(), ran=75), server_name="gpu")
    facts = {
        div.find_all("dt")[0].words(): div.find_all("dd")[0].words()
        for div in doc.by_id("rp-facts").find_all("div")
    }
    # "Failed": how long ago it ended, by the real clock (the spawn history)
    assert re.fullmatch(r"(just now|\d+ (minute|hour|day|week|month|year)s? ago)", facts.pop("Failed"))
    assert dict(list(facts.items())[:6]) == {
        "User": "alice",
        "Server": "gpu",
        "Started": "2026-11-29 21:33:20 UTC",
        "Gave up after": "1 min 15 s",
        "Pod": "jupyter-alice",
        "Failed during": "Downloading the software image",
    }
    # then the facts an admin needs (this spawner is no KubeSpawner: versions only)
    assert facts["Versions"].startswith("richprogress ")
    started = doc.by_id("rp-facts").find_all("time")[0]
    assert started.attrs["datetime"] == "2026-11-29T21:33:20.000Z"


def test_a_spawn_someone_stopped_reads_stopped_not_failed() -> None:
    """The verdict of a spawn a person stopped is "stopped": the page says so, and names no
    cause the events never gave."""
    tl = timeline(image_not_found(), outcome="pending")
    tl.finish("failed", STOPPED_BEFORE_READY)
    doc = failure_page("alice", tl)
    assert doc.by_id("rp-kicker").words() == "Your server was stopped before it was ready"
    assert doc.by_id("rp-summary").words() == "The server was stopped before it was ready."
    facts = {div.find_all("dt")[0].words(): div.find_all("dd")[0].words()
             for div in doc.by_id("rp-facts").find_all("div")}
    assert facts["Stopped after"] and "Stopped during" in facts and "Failed during" not in facts


def test_default_server_is_named_default() -> None:
    doc = failure_page("alice", timeline(image_not_found()))
    dds = [d.words() for d in doc.by_id("rp-facts").find_all("dd")]
    assert dds[1] == "default"


def test_timeline_rows_show_clock_time_pills_and_count() -> None:
    doc = failure_page("alice", timeline(image_not_found()))
    rows = doc.by_id("rp-timeline").find_all("div", class_="rp-event")
    # the hub's "Server requested" at +0:00 first, as the live page shows it
    assert [r.attrs["data-record-id"] for r in rows] == [
        "message:Server requested", "uid-1", "uid-2", "uid-3", "uid-4"
    ]
    assert rows[0].find_all(class_="rp-clock")[0].words() == "+0:00"
    assert all(r.attrs["role"] == "listitem" for r in rows)
    assert doc.by_id("rp-timeline").attrs["role"] == "list"
    rows = rows[1:]
    failed = rows[2]
    assert failed.find_all(class_="rp-clock")[0].words() == "+0:10"
    # named UTC without JavaScript (the page's module shows it in the viewer's zone)
    assert failed.find_all("time")[0].words() == "21:33:30 UTC"
    assert failed.find_all("time")[0].attrs["datetime"] == "2026-11-29T21:33:30Z"
    assert failed.find_all("time")[0].attrs["title"] == "2026-11-29 21:33:30 UTC"
    pills = [p.words() for p in failed.find_all(class_="rp-pill")]
    # the user's own pod and main container are named once (facts), the type by the colour,
    # the reason ("Failed") by a word, and in the row's details
    assert pills == ["error", "the cause"]
    assert "ReasonFailed" in failed.find_all("dl")[0].words().replace(" ", "")
    # (only the row's closed Kubernetes detail names the object)
    assert "jupyter-alice" not in failed.find_all(class_="rp-when")[0].words()
    assert "jupyter-alice" not in failed.find_all(class_="rp-message")[0].words()
    assert "jupyter-alice" in failed.find_all("dl")[0].words()
    assert failed.find_all(class_="rp-count")[0].words() == "x4"
    assert failed.attrs["data-severity"] == "error"
    assert "rp-decisive" in (failed.attrs["class"] or "")
    assert not rows[0].find_all(class_="rp-count")  # no "x1"


def test_long_repeats_fold_to_fit_the_screenshot_and_keep_the_cause() -> None:
    many = [record(1, 1, "info", "Scheduled", "Found a machine.", phase="scheduled")]
    many += [
        record(10 + i, 2 + i, "warning", "BackOff", "Waiting to retry.", phase="image")
        for i in range(30)
    ]
    many.insert(20, record(5, 15, "error", "Failed", "The image x does not exist.", phase="image"))
    many += [record(100 + i, 40 + i, "info", f"Step{i}", f"Something {i} happened.", phase="image") for i in range(15)]
    doc = failure_page("alice", timeline(many))
    items = doc.by_id("rp-timeline").find_all(role="listitem")
    assert len(items) <= FAILURE_PAGE_ROWS + 3  # + "Server requested"
    assert doc.by_id("rp-timeline").find_all("div", class_="rp-fold")
    decisive = doc.by_id("rp-timeline").find_all("div", class_="rp-decisive")
    assert [d.attrs["data-record-id"] for d in decisive] == ["uid-5"]
    # the heading still counts every event
    assert "(47 events" in doc.by_id("rp-timeline-title").words()


def test_report_for_copy_details_is_embedded_as_text() -> None:
    doc = failure_page("alice", timeline(image_not_found()))
    report = doc.by_id("rp-report").text()
    assert "User:" in report and "alice" in report
    assert "does not exist" in report
    assert "hidden" in doc.by_id("rp-copy").attrs  # shown by the module, where clipboard works


def test_relaunch_button_keeps_the_stock_id_and_url() -> None:
    doc = failure_page("alice", timeline(image_not_found()), server_name="gpu")
    start = doc.by_id("start")
    assert start.attrs["href"] == "/prefix/hub/spawn/alice/gpu"
    assert start.words() == "Relaunch server gpu"


@pytest.mark.parametrize(
    ("viewer", "server_name", "kicker", "clock_from"),
    [
        pytest.param(OWNER, "", "Your server could not start", "when you clicked Start", id="owner-default-server"),
        pytest.param(OWNER, "gpu", "Your server gpu could not start", "when you clicked Start", id="owner-named-server"),
        pytest.param("admin", "", "The server of alice could not start", "the start request", id="admin-looks"),
        pytest.param("admin", "gpu", "The server gpu of alice could not start", "the start request", id="admin-named-server"),
        pytest.param(None, "", "The server of alice could not start", "the start request", id="viewer-unknown"),
    ],
)
def test_wording_addresses_the_owner_and_names_them_to_anyone_else(
    viewer: str | None, server_name: str, kicker: str, clock_from: str
) -> None:
    doc = failure_page("alice", timeline(image_not_found()), server_name=server_name, viewer=viewer)
    assert doc.by_id("rp-kicker").words() == kicker
    assert doc.by_id("rp-timeline-title").words().endswith(f"clock from {clock_from})")


def test_an_admin_sees_an_odd_owner_name_as_text() -> None:
    doc = failure_page(ODD_USER, timeline(image_not_found()), viewer="admin")
    assert doc.by_id("rp-kicker").words() == f"The server of {ODD_USER} could not start"


HOSTILE_CASES = [
    pytest.param("alice", HOSTILE, "", id="image-name-in-message"),
    pytest.param(ODD_USER, "quay.io/x:1", "", id="odd-user-name"),
    pytest.param(ODD_USER, HOSTILE, HOSTILE, id="everything-hostile"),
]


@pytest.mark.parametrize(("user_name", "image", "server_name"), HOSTILE_CASES)
def test_hostile_text_is_shown_as_text(user_name: str, image: str, server_name: str) -> None:
    doc = failure_page(user_name, timeline(image_not_found(image, pod=f"jupyter-{user_name}")), server_name=server_name)
    # nothing was injected: no element carries an event handler, no image points at "x"
    for node in doc.iter():
        assert not any(k.startswith("on") for k in node.attrs), node
        assert not (node.tag == "img" and node.attrs.get("src") == "x")
    # and the text reads exactly as it was
    assert doc.by_id("rp-summary").words() == f"The image {image} does not exist."
    facts = [d.words() for d in doc.by_id("rp-facts").find_all("dd")]
    assert facts[0] == user_name
    assert facts[1] == (server_name or "default")
    # the user's pod is named once, in the facts, not on every row
    assert f"jupyter-{user_name}" in facts
    assert not doc.find_all(class_="rp-pill-object")
    assert image in doc.by_id("rp-report").text()


def test_without_a_timeline_the_stock_page_and_the_message_remain() -> None:
    doc = failure_page("alice", None, failed_message="Spawn failed: pod did not start in 300 seconds!")
    assert not doc.has_id("rp-summary")
    assert doc.find_all("h1")[0].words() == "Spawn failed"
    text = doc.words()
    assert "The latest attempt to start your server" in text
    assert "pod did not start in 300 seconds!" in text
    assert doc.by_id("start").attrs["href"] == "/prefix/hub/spawn/alice"


def test_a_server_that_is_just_not_running_gets_the_stock_page() -> None:
    doc = failure_page("alice", timeline(image_not_found()), failed=False)
    assert not doc.has_id("rp-summary")
    assert doc.find_all("h1")[0].words() == "Server not running"


@pytest.mark.parametrize("template", ["not_running.html", "spawn_pending.html"])
def test_hand_wiring_without_the_template_variable_falls_back_to_stock(template: str) -> None:
    tl = timeline(image_not_found(), outcome="pending")
    spawner = SimpleNamespace(name="", spawn_timeline=tl)
    user = make_user("alice", {"": spawner})
    doc = render(
        template,
        with_helpers=False,
        user=user,
        spawner=spawner,
        server_name="",
        spawn_url=HUB + "spawn/alice",
        failed=True,
        progress_url=HUB + "api/users/alice/server/progress",
    )
    assert not doc.has_id("richprogress-data")
    assert doc.find_all("h1") or doc.has_id("progress-bar")


# -- the pending page ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("viewer", "title", "clock_label", "is_owner"),
    [
        pytest.param(OWNER, "Starting your server", "Elapsed since you clicked Start", True, id="owner"),
        pytest.param("admin", "Starting the server of alice", "Elapsed since the start request", False, id="admin"),
        pytest.param(None, "Starting the server of alice", "Elapsed since the start request", False, id="viewer-unknown"),
    ],
)
def test_pending_page_says_your_server_only_to_its_owner(
    viewer: str | None, title: str, clock_label: str, is_owner: bool
) -> None:
    doc, data = pending_page("alice", "", timeline([], outcome="pending"), viewer=viewer)
    assert " ".join(doc.by_id("rp-title").text().split()) == title
    assert doc.by_id("rp-elapsed-label").text().strip() == clock_label
    # the live failure heading (static/pages/pending.js) reads the same flag
    assert data["viewerIsOwner"] is is_owner


def test_pending_page_keeps_the_stock_dom_contract() -> None:
    doc, _ = pending_page("alice", "", timeline([], outcome="pending"))
    bar = doc.by_id("progress-bar")
    assert bar.attrs["aria-valuenow"] == "0" and bar.attrs["role"] == "progressbar"
    for ident in ("progress-message", "progress-log", "progress-details", "sr-progress", "stop-server-btn"):
        assert doc.has_id(ident), ident
    assert doc.by_id("rp-step").attrs["aria-live"] == "polite"


def test_pending_page_loads_our_module_cache_busted_under_base_url() -> None:
    doc, data = pending_page("alice", "", timeline([], outcome="pending"))
    modules = doc.find_all("script", type="module")
    assert len(modules) == 1
    assert (modules[0].attrs["src"] or "").startswith("/prefix/hub/richprogress/static/pages/pending.js?v=")
    # the stock inline script (jQuery, .html() of messages) is gone; what JupyterHub's own
    # test_pages::test_spawn_pending and admins' scripts read stays: the body's first inline
    # script opens the EventSource on the progress URL
    first = doc.find_all("body")[0].find_all("script")[0]
    assert "src" not in first.attrs
    script = first.text()
    assert "EventSource" in script and ".html(" not in script
    # read the URL the way JupyterHub's test does, and check it is the page's progress URL
    start = script.find("(", script.find("new EventSource"))
    assert script[start + 2 : script.find(")", start) - 1] == data["progressUrl"]


def test_pending_data_for_a_named_server_of_an_odd_user() -> None:
    tl = timeline(image_not_found()[:2], outcome="pending", ran=42.5, server_name="my gpu")
    doc, data = pending_page(ODD_USER, "my gpu", tl)
    escaped = quote(ODD_USER, safe="@~")
    assert data["userName"] == ODD_USER
    assert data["serverName"] == "my gpu"
    assert data["stopUrl"] == f"/prefix/hub/api/users/{escaped}/servers/my%20gpu"
    assert data["timelineUrl"] == f"/prefix/hub/api/richprogress/users/{escaped}/servers/my%20gpu/timeline"
    assert data["pageUrl"] == f"/prefix/hub/spawn-pending/{escaped}/my%20gpu"
    assert data["progressUrl"].startswith(f"/prefix/hub/api/users/{escaped}/servers/my%20gpu/progress")
    # the live clock starts from the hub's count, not the browser's wall clock
    assert data["serverElapsed"] == 42.5
    assert data["progress"] == 55  # "image" reached
    assert doc.by_id("rp-failure-link").attrs["href"] == data["pageUrl"]


def test_pending_data_cannot_break_out_of_its_script_element() -> None:
    name = "</script><script>alert(1)</script>"
    doc, data = pending_page(name, "", timeline([], outcome="pending"))
    # it parsed back whole, and its element holds no "<" that could close it early
    assert data["userName"] == name
    assert "<" not in doc.by_id("richprogress-data").text()


def test_pending_page_without_a_timeline_counts_from_page_load() -> None:
    _, data = pending_page("alice", "", None)
    assert data["serverElapsed"] is None
    assert data["progress"] == 0


@pytest.mark.parametrize("make", [lambda: timeline(image_not_found()), lambda: None], ids=["old-failed-timeline", "none"])
def test_pending_page_ignores_a_finished_timeline(make: Callable[[], SpawnTimeline | None]) -> None:
    _, data = pending_page("alice", "", make())
    assert data["serverElapsed"] is None


def test_a_repeated_event_shows_when_it_began_and_its_badge_when_it_last_happened() -> None:
    repeated = record(2, 30, "warning", "FailedScheduling", "No machine has enough free memory.", count=3)
    repeated["first_timestamp"] = (T0 + timedelta(seconds=2)).isoformat().replace("+00:00", "Z")
    rows = [record(1, 1, "info", "TriggeredScaleUp", "Adding a machine.", phase="scaling"), repeated]
    doc = failure_page("alice", timeline(rows))
    clocks = [c.words() for c in doc.by_id("rp-timeline").find_all(class_="rp-clock")]
    # "Server requested" at +0:00, then in order, though the repeat last happened at +0:30
    assert clocks == ["+0:00", "+0:01", "+0:02"]
    badge = doc.by_id("rp-timeline").find_all(class_="rp-count")[0]
    assert badge.words() == "x3"
    assert badge.attrs["title"] == "happened 3 times, last at +0:30 (21:33:50 UTC)"


def test_a_problem_the_spawn_got_past_reads_resolved_after_a_reload() -> None:
    # a failed pull, the pull that worked, then the container crashed: the failed pull's
    # row is quiet with a "resolved" pill, the crash is the cause
    records = [
        record(1, 8, "info", "Scheduled", "Found a machine for your server: node-1.", phase="scheduled", container=None),
        {**record(2, 9, "error", "Failed", "The image x/y:1 does not exist.", phase="image"), "overcome": True},
        record(3, 12, "info", "Pulled", "Downloaded the image x/y:1.", phase="image"),
        record(4, 14, "error", "BackOff", "The notebook container keeps crashing.", phase="starting"),
    ]
    rows = failure_page("alice", timeline(records)).by_id("rp-timeline").find_all("div", class_="rp-event")
    resolved = [r for r in rows if r.attrs.get("data-overcome") == "true"]
    assert [r.attrs["data-record-id"] for r in resolved] == ["uid-2"]
    assert [p.words() for p in resolved[0].find_all(class_="rp-pill")] == ["error", "resolved"]
    cause = [r for r in rows if "rp-decisive" in (r.attrs.get("class") or "")]
    assert [r.attrs["data-record-id"] for r in cause] == ["uid-4"]
