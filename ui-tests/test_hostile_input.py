"""Hostile text stays text: an image name and a user name full of HTML, on the live and failure pages."""

from __future__ import annotations

from playwright.sync_api import expect

HOSTILE_IMAGE = "<img src=x onerror=alert(1)>"
HOSTILE_USER = "a<'&\">b"

# elements that only an injection could have added to the page
INJECTED = "img[src='x'], #progress-log img, #rp-timeline img, #rp-summary img"


def test_hostile_image_name_renders_as_text(hub_page) -> None:
    page = hub_page.page
    hub_page.spawn("custom-image", image=HOSTILE_IMAGE)
    # the cluster cannot pull it; the row that says so shows the name, character for character
    expect(hub_page.rows().filter(has_text=HOSTILE_IMAGE).first).to_be_visible()
    assert page.locator(INJECTED).count() == 0
    expect(page.locator("#rp-failure")).to_be_visible()
    expect(page.locator("#rp-failure-summary")).to_contain_text(HOSTILE_IMAGE)
    assert page.locator(INJECTED).count() == 0

    page.reload()
    expect(page.locator("#rp-summary")).to_contain_text(HOSTILE_IMAGE)
    expect(page.locator("#rp-timeline").get_by_text(HOSTILE_IMAGE).first).to_be_visible()
    assert page.locator(INJECTED).count() == 0
    # the copy-able plain-text report carries it verbatim too
    assert HOSTILE_IMAGE in page.locator("#rp-report").text_content()
    assert hub_page.dialogs == [], f"a dialog fired: {hub_page.dialogs}"


def test_user_named_with_html_characters(make_hub_page) -> None:
    hub_page = make_hub_page(username=HOSTILE_USER)
    page = hub_page.page
    hub_page.spawn("no-node-fits")
    expect(hub_page.rows().first).to_be_visible()
    expect(page.locator("#rp-failure")).to_be_visible()
    page.reload()
    # the failure page names the user exactly, as text
    expect(page.locator("#rp-facts")).to_contain_text(HOSTILE_USER)
    expect(page.locator("#rp-summary")).not_to_be_empty()
    assert hub_page.dialogs == [], f"a dialog fired: {hub_page.dialogs}"
