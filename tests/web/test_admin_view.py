"""What an admin sees, rendered as JupyterHub renders our templates: another user's failure
page worded for someone who is not its owner, the report with the hub's URL, the navbar's
link to the failures page, and the failures page itself (absolute times, "the server",
a table that scrolls rather than being cut off).

The environment and the tiny DOM are test_pages.py's; here the template folders are all
three that ``richprogress.setup(c)`` configures (ours first, the stock ones, and the
notices folder, whose ``page.html`` adds the navbar link), in JupyterHub's order.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any

import pytest
from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PrefixLoader
from jupyterhub.scopes import Scope

from richprogress.hub_setup import notice_template_path, template_path
from richprogress.web import template_helpers
from richprogress.web.views.history import failures_page_data, when_parts
from richprogress.web.views.payloads import timeline_report_text
from tests.helpers.pages import (
    HUB,
    STOCK,
    Node,
    failure_page,
    image_not_found,
    make_user,
    parse,
    render,
    timeline,
)

ADMIN_SCOPES = {"read:servers": Scope.ALL, "admin-ui": Scope.ALL}


# -- the failure page, to its owner and to an admin -------------------------------------


@pytest.mark.parametrize(
    ("viewer", "label", "row", "copied"),
    [
        pytest.param(
            "alice", "What you can do:", "Found a machine for your server: node-1.",
            "Copied. Paste it into a message to your admin.", id="owner",
        ),
        pytest.param(
            "admin", "What the user can do:", "Found a machine for the server: node-1.",
            "Copied. Paste it into a ticket or your reply to the user.", id="admin",
        ),
    ],
)
def test_the_failure_page_speaks_to_its_owner_and_about_them_to_an_admin(
    viewer: str, label: str, row: str, copied: str
) -> None:
    doc = failure_page("alice", timeline(image_not_found()), viewer=viewer)
    assert doc.by_id("rp-hint").words().startswith(f"{label} Check the image name")
    messages = [m.words() for m in doc.by_id("rp-timeline").find_all(class_="rp-message")]
    assert row in messages
    assert not any("your server" in m for m in messages if viewer == "admin")
    # what "Copy details" says once it copied (static/pages/failure.js shows it)
    assert json.loads(doc.by_id("richprogress-data").text())["copied"] == copied


class FakeHandler:
    """What a template can reach of JupyterHub's handler: its bound ``static_url``."""

    def __init__(self, host: str = "hub.example.org", headers: dict[str, str] | None = None) -> None:
        self.request = SimpleNamespace(protocol="http", host=host, headers=headers or {})
        self.hub = SimpleNamespace(base_url=HUB)
        self.settings: dict[str, Any] = {"public_url": ""}

    def static_url(self, path: str, include_version: bool = True) -> str:
        return HUB + "static/" + path


def test_copy_details_is_the_text_endpoint_with_its_hub_line() -> None:
    tl = timeline(image_not_found())
    handler = FakeHandler(headers={"X-Forwarded-Proto": "https"})
    doc = failure_page("alice", tl, viewer="admin", static_url=handler.static_url)
    report = doc.by_id("rp-report").text()
    assert re.search(r"^Hub: +https://hub.example.org/prefix/hub/$", report, re.M)
    # the very call the timeline endpoint makes for timeline.txt
    facts = [
        (div.find_all("dt")[0].words(), div.find_all("dd")[0].words())
        for div in doc.by_id("rp-facts").find_all("div", class_="rp-fact-admin")
    ]
    assert report == timeline_report_text(
        tl, user="alice", server_name="", hub_url="https://hub.example.org/prefix/hub/", facts=facts
    )


def test_without_the_pages_handler_the_report_has_no_hub_line() -> None:
    report = failure_page("alice", timeline(image_not_found())).by_id("rp-report").text()
    assert "Hub:" not in report and "User:" in report


# -- the navbar ---------------------------------------------------------------------------


def environment() -> Environment:
    """JupyterHub's loader with the folders ``richprogress.setup(c)`` configures."""
    loader = ChoiceLoader(
        [
            PrefixLoader({"templates": FileSystemLoader([STOCK])}, "/"),
            FileSystemLoader([template_path(), notice_template_path(), STOCK]),
        ]
    )
    # as JupyterHub renders pages: async, so the spawn-history helpers are awaited
    return Environment(loader=loader, autoescape=True, enable_async=True)


def hub_page(name: str, scopes: dict[str, Any], *, helpers: bool = True, **ns: Any) -> Node:
    namespace: dict[str, Any] = {
        "base_url": HUB,
        "prefix": "/prefix/",
        "user": make_user("admin", {}),
        "static_url": lambda path, include_version=True: HUB + "static/" + path,
        "parsed_scopes": scopes,
        "services": [],
        "xsrf": "x",
        "status_code": 403,
        "status_message": "Forbidden",
        **ns,
    }
    if helpers:
        namespace["richprogress"] = template_helpers(SimpleNamespace(name="admin"))
    return parse(environment().get_template(name).render(**namespace))


def nav_links(doc: Node) -> dict[str, str]:
    return {a.words(): a.attrs.get("href") or "" for a in doc.find_all("a", class_="nav-link")}


@pytest.mark.parametrize("page", ["admin.html", "error.html", "token.html"])
def test_admins_find_the_failures_page_in_the_navbar(page: str) -> None:
    links = nav_links(hub_page(page, ADMIN_SCOPES))
    assert links["Failed starts"] == "/prefix/hub/richprogress/failures"
    assert links["Admin"] == "/prefix/hub/admin"  # the stock items stay


@pytest.mark.parametrize(
    "scopes",
    [
        pytest.param({"read:servers": {"user": ["alice"]}}, id="read-servers-on-one-user"),
        pytest.param({"access:servers": Scope.ALL}, id="access-is-not-read"),
        pytest.param({}, id="a-plain-user"),
    ],
)
def test_others_get_no_link_to_a_page_they_may_not_open(scopes: dict[str, Any]) -> None:
    links = nav_links(hub_page("error.html", scopes))
    assert "Failed starts" not in links and "Home" in links


def test_without_the_template_variable_the_navbar_is_the_stock_one() -> None:
    links = nav_links(hub_page("error.html", ADMIN_SCOPES, helpers=False))
    assert "Failed starts" not in links and "Admin" in links


# -- the failures page ----------------------------------------------------------------------

NOW = datetime.now(timezone.utc).replace(microsecond=0)


class FakeStore:
    """The reads ``failures_page_data`` makes, answered from a list of failures."""

    available = True

    def __init__(self, failures: list[dict[str, Any]]) -> None:
        self.failures = failures

    def recent_failures(self, cause: str | None = None, limit: int = 50, before: int | None = None) -> list[dict[str, Any]]:
        return self.failures[:limit]

    def cause_counts_since(self, week: datetime, day: datetime) -> dict[str, tuple[int, int]]:
        return {"timeout": (1, 1), "image-not-found": (1, 1)}

    def outcome_counts_since(self, week: datetime, day: datetime) -> dict[str, tuple[int, int]]:
        return {"failed": (2, 2)}

    def ready_seconds_since(self, since: datetime, limit: int) -> list[float]:
        return []


def failure(n: int, user: str, summary: str, ago: timedelta, cause: str) -> dict[str, Any]:
    finished = NOW - ago
    return {
        "id": n,
        "user_name": user,
        "server_name": "",
        "finished_at": finished.isoformat().replace("+00:00", "Z"),
        "summary": summary,
        "cause": cause,
        "phase": "image",
        "profile_slug": "gpu",
        "profile_name": "GPU server",
    }


IMAGE = "The image quay.io/jupyter/no-such-notebook:2026-11 does not exist."


def failures_page(viewer: str = "admin") -> Node:
    store = FakeStore(
        [
            failure(2, "alice", "Your server did not start within the time limit.", timedelta(hours=2, minutes=5), "timeout"),
            failure(1, "bob", IMAGE, timedelta(days=3), "image-not-found"),
        ]
    )
    data = failures_page_data(store, cause=None, before=None, limit=50, hub_base_url=HUB, viewer_name=viewer)
    return render(
        "richprogress/failures.html",
        viewer=viewer,
        user=make_user(viewer, {}),
        parsed_scopes=ADMIN_SCOPES,
        rp_css=HUB + "richprogress/static/richprogress.css",
        page_url=HUB + "richprogress/failures",
        next_url=None,
        **data,
    )


def cells(doc: Node) -> list[list[str]]:
    return [[td.words() for td in row.find_all("td")] for row in doc.find_all("tr", class_="rp-failure-row")]


def test_the_failures_page_says_when_in_full_and_how_long_ago() -> None:
    whens = [row[0] for row in cells(failures_page())]
    stamp = (NOW - timedelta(hours=2, minutes=5)).strftime("%Y-%m-%d %H:%M")
    assert whens[0] == f"{stamp} UTC (2 hours ago)"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC \(3 days ago\)", whens[1])
    assert when_parts(None, NOW) == ("", "", "")


def test_the_failures_page_tells_an_admin_of_the_server_not_your_server() -> None:
    rows = cells(failures_page())
    assert rows[0][4] == "The server did not start within the time limit. (timeout)"
    # a long image name breaks after "/", ":" and "." only, never at its hyphens
    assert rows[1][4].replace(" ", "") == IMAGE.replace(" ", "") + "(image-not-found)"
    # the owner, on their own row, is still told of "your server"
    assert cells(failures_page(viewer="alice"))[0][4].startswith("Your server did not start")


def test_the_failures_table_scrolls_inside_its_own_box() -> None:
    doc = failures_page()
    box = doc.by_id("rp-failures-box")
    assert "table-responsive" in (box.attrs.get("class") or "").split()
    assert box.find_all("table", id="rp-failures")
    # a scrolling region a keyboard can reach, named by its heading
    assert box.attrs.get("tabindex") == "0" and box.attrs.get("aria-labelledby") == "rp-failures-title"
