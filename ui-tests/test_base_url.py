"""Everything works under a non-root base_url: a second hub at /jh/."""

from __future__ import annotations

import re

from playwright.sync_api import expect


def test_pages_work_under_a_prefix(make_hub_page, prefixed_hub) -> None:
    assert prefixed_hub.base_url == "/jh/"
    hub_page = make_hub_page(hub=prefixed_hub)
    page = hub_page.page
    failed_responses: list[str] = []
    page.on(
        "response",
        lambda response: (
            failed_responses.append(f"{response.status} {response.url}")
            if response.status >= 400
            else None
        ),
    )
    hub_page.record_rows()  # read after the redirect: a fast spawn may not wait for a look
    hub_page.spawn("happy-path")
    assert "/jh/hub/spawn-pending/" in page.url
    page.wait_for_url(re.compile(rf"/jh/user/{re.escape(hub_page.user_path)}/"))
    # our script and stylesheet loaded from the prefix, and the stream delivered rows
    assert len(hub_page.seen_rows()) >= 2, hub_page.seen_rows()
    assert failed_responses == []
    assert hub_page.dialogs == []


def test_failure_page_under_a_prefix(make_hub_page, prefixed_hub) -> None:
    hub_page = make_hub_page(hub=prefixed_hub)
    page = hub_page.page
    hub_page.spawn("image-not-found")
    expect(page.locator("#rp-failure")).to_be_visible()
    link = page.locator("#rp-failure-link")
    expect(link).to_have_attribute("href", re.compile(r"^/jh/"))
    page.reload()
    expect(page.locator("#rp-summary")).not_to_be_empty()
    expect(page.locator("#rp-timeline .rp-event").first).to_be_visible()
    expect(page.locator("#start")).to_have_attribute("href", re.compile(r"^/jh/hub/spawn"))
