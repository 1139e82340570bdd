"""The Kubernetes detail one click away: rows open from the keyboard, and the
failure page's facts box says what an admin needs. Real hub, proxy, simulated cluster.

The live page builds a row's list only when it is first opened (lazy lists); the last tests
check that on the render benchmark's page, fed by a stand-in stream (no hub needed)."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from benchmarks import render_rows

MISSING_IMAGE = "quay.io/jupyter/no-such-notebook:2026-11"


def test_rows_open_from_the_keyboard_on_both_pages(hub_page, images_dir, axe_source) -> None:
    page = hub_page.page
    page.set_viewport_size({"width": 1280, "height": 800})
    hub_page.spawn("image-not-found")

    # live page: the row that says the image was not found, closed by default
    row = hub_page.rows().filter(has_text="was not found in its registry").first
    expect(row).to_be_visible()
    toggle = row.locator("button.rp-details-toggle")
    details = row.locator("dl.rp-details")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    # lazy lists: the list is built when first opened, and only then named by aria-controls
    expect(details).to_have_count(0)
    assert toggle.get_attribute("aria-controls") is None

    # opened with the keyboard: focus, Enter; the event's own words are there
    toggle.focus()
    page.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(details).to_be_visible()
    assert toggle.get_attribute("aria-controls") == details.get_attribute("id")
    expect(details).to_contain_text("Kubernetes message")
    expect(details).to_contain_text(f'Failed to pull image "{MISSING_IMAGE}"')
    expect(details).to_contain_text("Reason")
    expect(details).to_contain_text("kubelet")

    # the failure arrives; an open row stays open while rows refresh
    expect(page.locator("#rp-failure")).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    row.scroll_into_view_if_needed()
    page.screenshot(path=str(images_dir / "row-details.png"))

    # the failure page: the same, rendered by the hub, wired by the module
    page.reload()
    expect(page.locator("#richprogress-failed")).to_be_visible()
    decisive = page.locator("#rp-timeline .rp-decisive")
    toggle = decisive.locator("button.rp-details-toggle")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(decisive.locator("dl.rp-details")).to_be_hidden()
    toggle.focus()
    page.keyboard.press("Space")
    expect(decisive.locator("dl.rp-details")).to_be_visible()
    expect(decisive.locator("dl.rp-details")).to_contain_text("rpc error")
    page.keyboard.press("Space")
    expect(decisive.locator("dl.rp-details")).to_be_hidden()

    # the facts box: what an admin needs
    facts = page.locator("#rp-facts")
    for label in ("Namespace", "Pod", "Images", "Start timeout", "Versions"):
        expect(facts.locator("dt", has_text=re.compile(f"^{label}$"))).to_have_count(1)
    expect(facts).to_contain_text(MISSING_IMAGE)
    expect(facts).to_contain_text(re.compile(r"richprogress \S+, JupyterHub \S+, KubeSpawner \S+"))
    page.screenshot(path=str(images_dir / "facts.png"))

    # the report that "Copy details" copies carries the raw message and the facts
    report = page.locator("#rp-report").text_content() or ""
    assert "Kubernetes: Failed to pull image" in report
    assert "Facts for an admin:" in report

    # still no serious accessibility problem with a row open
    toggle.focus()
    page.keyboard.press("Enter")
    assert hub_page.axe_violations(axe_source) == []
    assert hub_page.dialogs == []


def test_a_100_kb_image_name_is_shortened_and_the_page_stays_responsive(hub_page) -> None:
    """A 100 kB image name once made the tab unresponsive for 20+ s; now every view
    shows it cut with "... (N more characters)" (the JSON keeps it whole)."""
    import time

    page = hub_page.page
    image = "quay.io/" + "a" * 100_000 + ":1"
    hub_page.spawn("custom-image", image=image)
    row = hub_page.rows().filter(has_text="more characters").first
    expect(row).to_be_visible()
    # the event loop of the tab answers at once while rows keep arriving
    started = time.monotonic()
    page.evaluate("() => new Promise((resolve) => setTimeout(resolve, 0))")
    answer = time.monotonic() - started
    print(f"\n100 kB image name: the tab answered in {answer * 1000:.0f} ms")
    assert answer < 5
    expect(page.locator("#rp-failure")).to_be_visible()
    longest = page.eval_on_selector_all(
        "#progress-log .rp-message, #rp-failure-summary", "els => Math.max(...els.map(e => e.textContent.length))"
    )
    assert longest < 3000
    page.reload()
    # the headline names the problem; the name stands on its own line, shortened
    expect(page.locator("#rp-summary-ref")).to_contain_text("more characters")
    assert len(page.locator("#rp-summary").text_content() or "") < 3000
    assert len(page.locator("#rp-summary-ref").text_content() or "") < 3000
    assert len(page.locator("#rp-report").text_content() or "") < 60_000


# -- the live page's lazy lists, on the benchmark's page with a stand-in stream --

HOSTILE = '<img src=x onerror="alert(1)"> <script>alert(2)</script>'


def _event(i: int, **changes: object) -> str:
    """Progress event ``i`` of the benchmark's replay, with some record fields changed."""
    event = json.loads(render_rows.make_events(12)[i])
    event["record"].update(changes)
    return json.dumps(event)


@pytest.fixture
def stand_in_page(browser):
    """The live page (this checkout's static/) fed by the benchmark's stand-in stream."""
    context, page = render_rows.open_page(browser, render_rows.static_files(None))
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    yield page
    assert dialogs == []
    context.close()


def test_live_details_are_built_on_first_open_with_the_records_words(stand_in_page) -> None:
    page = stand_in_page
    events = [_event(i) for i in range(12)]
    events[5] = _event(5, raw_message=HOSTILE, reason="<b>Pulling</b>", count=3)
    events.append(json.dumps({"progress": 50, "message": "A message without a record"}))
    render_rows.send(page, events)
    rows = page.locator("#progress-log > .progress-log-event")
    expect(rows).to_have_count(13)
    # nothing hidden is built up front: no lists, no aria-controls naming a missing id
    expect(page.locator("#progress-log dl")).to_have_count(0)
    assert page.locator("#progress-log [aria-controls]").count() == 0
    expect(page.locator("#progress-log button.rp-details-toggle")).to_have_count(12)
    # a message without a Kubernetes event has nothing more to say: no button
    expect(rows.nth(12).locator("button")).to_have_count(0)

    row = rows.nth(5)
    toggle = row.locator("button.rp-details-toggle")
    expect(toggle).to_have_attribute("aria-label", re.compile(r"^Details of: Downloading "))
    toggle.focus()
    page.keyboard.press("Enter")
    details = row.locator("dl.rp-details")
    expect(details).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    assert toggle.get_attribute("aria-controls") == details.get_attribute("id") == "rp-details-uid-5"
    pairs = details.locator("div").evaluate_all("els => els.map((d) => [d.children[0].textContent, d.children[1].textContent])")
    assert pairs == [
        ["Kubernetes message", HOSTILE],
        ["Reason", "<b>Pulling</b>"],
        ["Object", "Pod/jupyter-alice"],
        ["Component", "kubelet"],
        ["Count", "3"],
        ["First", "2026-11-30 08:00:11 UTC"],
        ["Last", "2026-11-30 08:00:11 UTC"],
    ]
    # hostile text stays text
    expect(page.locator("#progress-log img, #progress-log script, #progress-log b")).to_have_count(0)
    # only the opened row got a list; Space closes it again (keeps it, hidden)
    expect(page.locator("#progress-log dl")).to_have_count(1)
    page.keyboard.press("Space")
    expect(details).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    page.keyboard.press("Space")
    expect(details).to_be_visible()


def test_a_refilled_open_row_stays_open_with_new_words_and_keeps_the_focus(stand_in_page) -> None:
    page = stand_in_page
    render_rows.send(page, [_event(i) for i in range(12)])
    row = page.locator("#progress-log > .progress-log-event").nth(3)
    toggle = row.locator("button.rp-details-toggle")
    toggle.focus()
    page.keyboard.press("Enter")
    expect(row.locator("dl.rp-details")).to_contain_text("Count4")
    # the event repeats while the list is open and the button has the keyboard focus
    render_rows.send(page, [_event(3, count=9, message="Downloading it again")])
    expect(page.locator("#progress-log > .progress-log-event")).to_have_count(12)
    expect(row.locator(".rp-message")).to_have_text("Downloading it again")
    expect(row.locator("dl.rp-details")).to_be_visible()
    expect(row.locator("dl.rp-details")).to_contain_text("Count9")
    expect(toggle).to_have_attribute("aria-label", "Details of: Downloading it again")
    assert page.evaluate("() => document.activeElement.closest('.rp-event').dataset.recordId") == "uid-3"
    # the keyboard goes on where it was: Enter closes the same list
    page.keyboard.press("Enter")
    expect(row.locator("dl.rp-details")).to_be_hidden()


def test_live_page_with_a_row_open_has_no_serious_axe_violation(stand_in_page, axe_source, images_dir) -> None:
    page = stand_in_page
    render_rows.send(page, [_event(i) for i in range(12)])
    page.locator("#progress-log button.rp-details-toggle").nth(2).click()
    page.add_script_tag(content=axe_source)
    violations = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ["violations"]})).violations
            .filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id)"""
    )
    assert violations == []
    page.screenshot(path=str(images_dir / "row-details-lazy.png"), full_page=True)
