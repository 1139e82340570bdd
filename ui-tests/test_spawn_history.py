"""The failure page lasts (spawn history), in Chromium against the demo hub.

``hub_page`` / ``make_hub_page`` give ``HubPage``s (ui-tests/conftest.py), typed ``Any``
here because tests never import conftest.

A spawn fails (image-not-found), then, as a user does: (a) opens the spawn form and comes
back, (b) logs out and in, (c) the hub restarts with the same state (SQLite, and the same
against a real PostgreSQL). Each time the failure page shows the cause and the timeline,
and the home page says in one line that the last start failed. And a hub restart in the
middle of a spawn: the open page says it lost contact, then reloads when the hub is back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from playwright.sync_api import Page, expect

from richprogress.demo.hub import DemoHub
from tests.helpers.demo_hub import restartable

# the throwaway PostgreSQL server of the store's tests
from tests.helpers.postgres import postgres_server

CAUSE = "quay.io/jupyter/no-such-notebook:2026-11"


def fail_a_spawn(hub_page: Any) -> None:
    hub_page.spawn("image-not-found")
    expect(hub_page.page.locator("#rp-failure")).to_be_visible()


def expect_failure_page(page: Page) -> None:
    """The failure page, told from the store: cause, when, steps and timeline."""
    expect(page.locator("#rp-summary")).to_contain_text("was not found in its registry")
    expect(page.locator("#rp-summary-ref")).to_have_text(CAUSE)
    expect(page.locator("#rp-hint")).not_to_be_empty()
    expect(page.locator("#rp-ended")).to_contain_text("Failed")
    expect(page.locator("#rp-timeline .rp-event").first).to_be_visible()
    expect(page.locator("#rp-timeline .rp-decisive")).to_have_count(1)


def expect_home_notice(hub_page: Any) -> None:
    page = hub_page.page
    page.goto(f"{hub_page.hub.url}hub/home")
    notice = page.locator(".rp-notice")
    expect(notice).to_have_count(1)
    expect(notice).to_contain_text("The last start of your server failed")
    expect(notice).to_contain_text(CAUSE)
    notice.locator(".rp-notice-link").click()
    page.wait_for_url(f"**/hub/richprogress/failed/{hub_page.user_path}")
    expect_failure_page(page)


def timeline_text(hub_page: Any) -> str:
    """The user's timeline.txt, asked with the demo's admin token."""
    r = requests.get(
        f"{hub_page.hub.url}hub/api/richprogress/users/{hub_page.user_path}/timeline.txt",
        headers={"Authorization": f"token {hub_page.hub.api_token}"},
        timeout=10,
    )
    assert r.status_code == 200, r.text
    return r.text


def failure_page_url(hub_page: Any) -> str:
    return f"{hub_page.hub.url}hub/spawn-pending/{hub_page.user_path}"


def test_after_the_spawn_form_replaced_the_spawner(hub_page: Any, images_dir: Path) -> None:
    fail_a_spawn(hub_page)
    page = hub_page.page
    page.goto(f"{hub_page.hub.url}hub/spawn")  # JupyterHub replaces the failed spawner here
    expect(page.locator(".rp-notice")).to_contain_text(CAUSE)
    page.goto(failure_page_url(hub_page))
    expect_failure_page(page)
    # the new spawner has the hub's default image until it starts: the page and the text
    # endpoint tell the stored spawn's, and "Copy details" is timeline.txt
    report = timeline_text(hub_page)
    assert re.search(rf"^  Images: +{re.escape(CAUSE)}$", report, re.M), report
    assert page.locator("#rp-report").text_content() == report
    page.screenshot(path=str(images_dir / "history-failure-after-spawn-form.png"), full_page=True)
    expect_home_notice(hub_page)
    page.goto(f"{hub_page.hub.url}hub/home")
    page.screenshot(path=str(images_dir / "history-home-notice.png"))
    assert hub_page.dialogs == []


def test_after_logging_out_and_in(hub_page: Any) -> None:
    fail_a_spawn(hub_page)
    page = hub_page.page
    page.goto(f"{hub_page.hub.url}hub/logout")
    hub_page.login()  # lands on the spawn form, which replaces the failed spawner
    expect(page.locator(".rp-notice")).to_contain_text(CAUSE)
    page.goto(failure_page_url(hub_page))
    expect_failure_page(page)
    expect_home_notice(hub_page)


def test_the_notice_can_be_dismissed(hub_page: Any) -> None:
    fail_a_spawn(hub_page)
    page = hub_page.page
    page.goto(f"{hub_page.hub.url}hub/home")
    expect(page.locator(".rp-notice")).to_have_count(1)
    page.locator(".rp-notice-dismiss").click()
    expect(page.locator(".rp-notice")).to_have_count(0)
    page.reload()
    expect(page.locator("#start")).to_be_visible()
    expect(page.locator(".rp-notice")).to_have_count(0)


@pytest.fixture
def restartable_hub(tmp_path: Path, demo_hub: DemoHub) -> Iterator[Callable[..., DemoHub]]:
    """``start(history_url=None)``: a DemoHub on a fixed port and state folder, with the
    session hub's speed and start timeout; calling it again after ``stop()`` is a hub
    restart."""
    yield from restartable(tmp_path / "state", speed=demo_hub.speed, start_timeout=demo_hub.start_timeout)


@pytest.fixture(params=["sqlite", "postgresql"])
def history_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    if request.param == "sqlite":
        yield None
        return
    with postgres_server() as url:
        yield url


def test_after_a_hub_restart(
    restartable_hub: Callable[..., DemoHub],
    history_url: str | None,
    make_hub_page: Callable[..., Any],
) -> None:
    hub = restartable_hub(history_url)
    hub_page = make_hub_page(hub=hub)
    fail_a_spawn(hub_page)
    hub.stop()
    hub = restartable_hub(history_url)
    hub_page.hub = hub
    page = hub_page.page
    page.goto(failure_page_url(hub_page))  # the same browser: its cookie still works
    if "/hub/login" in page.url:
        hub_page.login()
        page.goto(failure_page_url(hub_page))
    expect_failure_page(page)
    expect_home_notice(hub_page)
    if history_url is not None:
        assert not (hub.workdir / "richprogress_history.sqlite").exists()  # type: ignore[operator]


def test_a_restart_mid_spawn_says_lost_contact(
    restartable_hub: Callable[..., DemoHub], make_hub_page: Callable[..., Any], images_dir: Path
) -> None:
    hub = restartable_hub()
    hub_page = make_hub_page(hub=hub)
    hub_page.spawn("scale-up")  # minutes at a real cluster's pace: still pending below
    page = hub_page.page
    expect(hub_page.rows().first).to_be_visible()
    hub.stop()
    lost = page.locator("#rp-lost")
    expect(lost).to_be_visible(timeout=15_000)
    expect(lost).to_contain_text("Lost contact with the hub")
    clock = page.locator("#rp-elapsed").text_content()
    page.wait_for_timeout(2500)
    assert page.locator("#rp-elapsed").text_content() == clock  # no longer ticking
    page.screenshot(path=str(images_dir / "history-lost-contact.png"))
    restartable_hub()
    # the hub is back: the page reloads itself and tells what is true now (the spawn died
    # with the old hub and its cluster): no pending page ticking on
    expect(page.locator("#richprogress-pending")).to_have_count(0, timeout=60_000)
    expect(page.locator("#start")).to_be_visible()


def test_the_admin_page_lists_the_failure(
    hub_page: Any, make_hub_page: Callable[..., Any], images_dir: Path, axe_source: str
) -> None:
    fail_a_spawn(hub_page)
    admin = make_hub_page(username="admin")
    page = admin.page
    # JupyterHub's admin page (its React app) has the navbar's link to the failures page
    page.goto(f"{admin.hub.url}hub/admin")
    page.locator("#rp-nav-failures").click()
    page.wait_for_url("**/hub/richprogress/failures")
    row = page.locator(f".rp-failure-row:has-text('{hub_page.username}')")
    expect(row).to_have_count(1)
    expect(row).to_contain_text(CAUSE)
    expect(row).to_contain_text("Image not found")  # the profile's display name
    # when, in full with its zone, and how long ago
    expect(row.locator("td").first).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC \((just now|\d+ minutes? ago)\)$"))
    expect(page.locator("#rp-causes tr[data-cause='image-not-found']")).to_have_count(1)
    # the visible part only: after a whole test session the list is long, and Chromium
    # cannot capture a page taller than its largest texture
    page.screenshot(path=str(images_dir / "history-admin-failures.png"))
    assert admin.axe_violations(axe_source) == []
    # filter by the cause, then follow the row's link to the user's failure page
    page.locator("#rp-causes a", has_text="image-not-found").click()
    expect(page.locator("#rp-cause-filter")).to_have_text("image-not-found")
    page.locator(f".rp-failure-row:has-text('{hub_page.username}') a").click()
    expect_failure_page(page)
    # a user who is not an admin gets no such page, and a sentence that says why
    response = hub_page.page.goto(f"{hub_page.hub.url}hub/richprogress/failures")
    assert response is not None and response.status == 403
    expect(hub_page.page.locator("h1")).to_have_text("403 : Forbidden")
    expect(hub_page.page.locator(".error")).to_contain_text("only admins can open it")
    expect(hub_page.page.locator("#rp-nav-failures")).to_have_count(0)


#: a name a registry could hold with a part no line can break: the widest cell of a table
LONG_IMAGE = "quay.io/jupyter/" + "an-image-" * 2 + "whosenamegoesonandonwithoutanywheretobreakit:2026-11"


def test_the_failures_page_at_twice_the_zoom_cuts_nothing_off(
    hub_page: Any, make_hub_page: Callable[..., Any], images_dir: Path
) -> None:
    """A 1280 px window at 200 % zoom is 640 CSS pixels wide: the table scrolls in its own
    box (the page itself does not), and its last column can be reached."""
    hub_page.spawn("custom-image", image=LONG_IMAGE)
    expect(hub_page.page.locator("#rp-failure")).to_be_visible()
    admin = make_hub_page(username="admin")
    page = admin.page
    page.set_viewport_size({"width": 640, "height": 800})
    page.goto(f"{admin.hub.url}hub/richprogress/failures")
    row = page.locator(f".rp-failure-row:has-text('{hub_page.username}')")
    expect(row).to_have_count(1)
    # the page does not scroll sideways (only the table's box does)
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], width
    box = page.locator("#rp-failures-box")
    assert box.evaluate("el => el.getBoundingClientRect().right <= window.innerWidth")
    link = row.locator("a", has_text="Failure page")
    link.scroll_into_view_if_needed()
    expect(link).to_be_in_viewport()
    page.screenshot(path=str(images_dir / "history-admin-failures-640.png"))
    link.click()
    expect(page.locator("#rp-summary")).to_contain_text("was not found in its registry")


def test_an_admin_reads_the_failure_page_about_the_user(
    hub_page: Any, make_hub_page: Callable[..., Any], images_dir: Path
) -> None:
    """Another user's failure page, as an admin reads it: what the user can do, "the
    server" in the rows, a confirmation worded for an admin, and Copy details is the
    text endpoint's report, to the byte."""
    fail_a_spawn(hub_page)
    # the owner's own failure page says "your server" in a row (the scheduler's)
    hub_page.page.goto(f"{hub_page.hub.url}hub/richprogress/failed/{hub_page.user_path}")
    expect(hub_page.page.locator("#rp-timeline .rp-message", has_text="for your server")).to_have_count(1)
    admin = make_hub_page(username="admin")
    page = admin.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{admin.hub.url}hub/richprogress/failed/{hub_page.user_path}")
    expect_failure_page(page)
    expect(page.locator("#rp-kicker")).to_have_text(f"The server of {hub_page.username} could not start")
    expect(page.locator("#rp-hint")).to_contain_text("What the user can do:")
    rows = page.locator("#rp-timeline .rp-message").all_text_contents()
    assert rows and not any("your server" in text.lower() for text in rows), rows
    assert any("for the server" in text for text in rows), rows
    page.screenshot(path=str(images_dir / "history-failure-as-admin.png"), full_page=True)
    page.locator("#rp-copy").click()
    expect(page.locator("#rp-copy-status")).to_have_text("Copied. Paste it into a ticket or your reply to the user.")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == timeline_text(hub_page)
    assert re.search(rf"^Hub: +{re.escape(admin.hub.url)}hub/$", copied, re.M), copied
    assert re.search(rf"^  Images: +{re.escape(CAUSE)}$", copied, re.M), copied
