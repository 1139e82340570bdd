"""Quiet and hidden records in a real browser: a quiet row is muted to one line and opens on
a click (or from the keyboard, by its Details button); a hidden record is no row, yet in
the "Copy details" report. Real hub, proxy, simulated cluster, Chromium.

The hub of this module quiets the image back-off and hides the "Pulling" events
(``c.EventFormatter.quiet_reasons`` and ``hidden_reasons``); the ``demo_hub`` fixture is
overridden here, so the shared ``hub_page`` logs in to it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from richprogress.demo.hub import DemoHub
from tests.helpers.browser import SPEED, START_TIMEOUT
from tests.helpers.demo_hub import serve

CONFIG = 'c.EventFormatter.quiet_reasons = ["BackOff"]\nc.EventFormatter.hidden_reasons = ["Pulling"]\n'
SCREENSHOT = "/tmp/richprogress-quiet-rows.png"


@pytest.fixture(scope="module")
def demo_hub() -> Iterator[DemoHub]:
    yield from serve(DemoHub(speed=SPEED, start_timeout=START_TIMEOUT, extra_config=CONFIG))


def _style(locator: Any) -> dict[str, Any]:
    return locator.evaluate(
        """(el) => { const s = getComputedStyle(el); const r = el.getBoundingClientRect();
            return {fontSize: parseFloat(s.fontSize), color: s.color, whiteSpace: s.whiteSpace, height: r.height}; }"""
    )


def test_a_quiet_row_is_muted_and_opens_and_a_hidden_one_is_only_in_the_report(hub_page) -> None:
    page = hub_page.page
    hub_page.spawn("image-not-found")

    quiet = page.locator('#progress-log .rp-event[data-show="quiet"]').first
    expect(quiet).to_be_visible()
    expect(quiet).to_contain_text("again")  # the back-off: "... try again ..."
    loud = page.locator('#progress-log .rp-event[data-severity="error"]:not([data-show])').first
    expect(loud).to_be_visible()

    # muted: smaller, grey, its sentence on one line
    quiet_text, loud_text = _style(quiet.locator(".rp-message")), _style(loud.locator(".rp-message"))
    assert quiet_text["fontSize"] < loud_text["fontSize"]
    assert quiet_text["color"] != loud_text["color"]
    assert quiet_text["whiteSpace"] == "nowrap"

    quiet.scroll_into_view_if_needed()
    page.screenshot(path=SCREENSHOT.replace(".png", "-closed.png"), full_page=True)

    # a click on the row opens it: the whole sentence and the event's own words
    toggle = quiet.locator("button.rp-details-toggle")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    quiet.locator(".rp-message").click()
    expect(quiet).to_have_attribute("data-open", "true")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(quiet.locator("dl.rp-details")).to_be_visible()
    expect(quiet.locator("dl.rp-details")).to_contain_text("Back-off pulling image")
    assert _style(quiet.locator(".rp-message"))["whiteSpace"] != "nowrap"
    # and the keyboard closes it again, by its button
    toggle.focus()
    page.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(quiet).not_to_have_attribute("data-open", "true")
    expect(quiet.locator("dl.rp-details")).to_be_hidden()

    # the hidden "Pulling" is no row, but the timeline has it
    data = hub_page.hub.api("GET", f"richprogress/users/{hub_page.user_path}/timeline")
    pulling = [r for r in data["records"] if r["reason"] == "Pulling"]
    assert pulling and all(r["show"] == "hidden" for r in pulling)
    ids = page.eval_on_selector_all("#progress-log .rp-event", "els => els.map((e) => e.dataset.recordId)")
    assert not {r["id"] for r in pulling} & set(ids)

    # the failure page alike, and its "Copy details" report holds the hidden record
    expect(page.locator("#rp-failure")).to_be_visible()
    quiet.scroll_into_view_if_needed()
    quiet.locator(".rp-message").click()  # opened, for the picture
    page.screenshot(path=SCREENSHOT, full_page=True)
    page.reload()
    expect(page.locator("#richprogress-failed")).to_be_visible()
    page_ids = page.eval_on_selector_all("#rp-timeline .rp-event", "els => els.map((e) => e.dataset.recordId)")
    assert page_ids and not {r["id"] for r in pulling} & set(page_ids)
    report = page.locator("#rp-report").text_content() or ""
    assert "Kubernetes: Pulling image" in report
    assert hub_page.dialogs == []
