"""The live page and the failure page tell one calm, consistent story.

Real hub, proxy, simulated cluster and Chromium, at 1280x800, on a phone (390x844) and in
dark mode. Each test takes the screenshots it judges (test-output/screenshots/, or the
README's docs/images/ with RICHPROGRESS_UPDATE_DOC_IMAGES=1).
"""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, expect

#: the image the image-not-found profile asks for (see richprogress/demo/jupyterhub_config.py)
MISSING_IMAGE = "quay.io/jupyter/no-such-notebook:2026-11"
PHONE = {"width": 390, "height": 844}

# what every live row says about itself, read in one pass
ROWS_JS = """(list) => [...document.querySelectorAll((list || '#progress-log') + ' > *')].map((row) => ({
    tag: row.tagName, role: row.getAttribute('role'), cls: row.className, id: row.dataset.recordId,
    clock: (row.querySelector('.rp-clock') || {}).textContent || '',
    last: (row.querySelector('.rp-last') || {}).textContent || '',
    time: (row.querySelector('.rp-time') || {}).textContent || '',
    pills: [...row.querySelectorAll('.rp-pill')].map((p) => p.textContent),
    message: (row.querySelector('.rp-message') || {}).textContent || '',
}))"""

#: words the pills may say (model/display.py row_word), besides "resolved" and "the cause"
PILL_WORDS = {"done", "working", "waiting", "retrying", "stopping", "stopped", "note", "problem", "error"}


def _seconds(clock: str) -> int:
    parts = [int(p) for p in clock.lstrip("+").split(":")]
    total = 0
    for part in parts:
        total = total * 60 + part
    return total


def _check_rows(rows: list[dict[str, Any]], username: str) -> None:
    assert rows, "no rows"
    for row in rows:
        # the stock contract: JupyterHub's tests and admins' CSS select div.progress-log-event
        assert row["tag"] == "DIV" and row["role"] == "listitem", row
        assert "progress-log-event" in row["cls"].split(), row
        # the user's pod and plain Normal/Warning types are not repeated on every row
        assert not any(f"jupyter-{username}" in p for p in row["pills"]), row
        assert not any(p in ("Normal", "Warning", "Custom") for p in row["pills"]), row
        # patience rows do not repeat the clock column in their text
        assert not re.search(r"\(\+\d+:\d\d\)", row["message"]), row
        # a word a person reads, not a Kubernetes reason (FailedScheduling, BackOff)
        words = [p for p in row["pills"] if p not in ("resolved", "the cause")]
        assert len(words) <= 1 and set(words) <= PILL_WORDS, row
        # a row's time names its zone ("11:46:28 PM PST"), never a bare "07:46:28"
        assert not row["time"] or re.fullmatch(r"\d{1,2}:\d\d:\d\d\D*\s\S+", row["time"]), row
    # the clock never goes backwards down the list
    clocks = [_seconds(r["clock"]) for r in rows if r["clock"]]
    assert clocks == sorted(clocks), clocks
    # the hub's "Server requested" opens the list at +0:00
    assert rows[0]["message"] == "Server requested" and rows[0]["clock"] == "+0:00", rows[0]


def _page_width(page: Page) -> float:
    return page.evaluate("() => document.querySelector('main.rp-page').getBoundingClientRect().width")


def _fails_live(hub_page: Any) -> Page:
    page = hub_page.page
    hub_page.spawn("image-not-found")
    expect(hub_page.rows().first).to_be_visible()
    expect(page.locator("#rp-failure")).to_be_visible()
    # the cause is marked once the hub's diagnosis arrived
    expect(page.locator("#progress-log .rp-decisive .rp-pill-decisive")).to_have_text("the cause")
    return page


def test_live_failure_reads_like_the_failure_page(hub_page) -> None:
    page = _fails_live(hub_page)
    live_rows = page.evaluate(ROWS_JS)
    _check_rows(live_rows, hub_page.username)
    live_count = page.locator("#rp-event-count").inner_text()
    # one vocabulary: "Failed during", "Gave up after", "Timeline (N events"
    expect(page.locator("#rp-step")).to_have_text(re.compile(r"^Failed during: Downloading the software image$"))
    expect(page.locator("#rp-elapsed-label")).to_have_text("Gave up after")
    expect(page.locator("#rp-elapsed")).to_have_text(re.compile(r"^\d+ s$|^\d+ min \d\d s$"))
    expect(page.locator("#progress-details summary")).to_contain_text("Timeline (")
    # a failure is not "100% Complete" to a screen reader
    bar = page.locator("#progress-bar")
    expect(bar).to_have_attribute("aria-label", "Server start failed")
    expect(bar).to_have_attribute("aria-valuetext", re.compile(r"^Failed at \d+%$"))
    assert "Complete" not in bar.inner_text()
    # the headline names the problem; the image has its own line with a copy button
    expect(page.locator("#rp-failure-summary")).to_have_text(re.compile(r"^The image .*was not found in its registry"))
    assert MISSING_IMAGE not in page.locator("#rp-failure-summary").inner_text()
    expect(page.locator("#rp-failure-ref")).to_have_text(MISSING_IMAGE)
    expect(page.locator("#rp-failure-copy-ref")).to_be_visible()
    expect(page.locator("#rp-failure-link")).to_have_text("Open the full report")
    # no empty gap between the bar and the alert
    gap = page.evaluate(
        """() => document.getElementById('rp-failure').getBoundingClientRect().top
                 - document.querySelector('.progress').getBoundingClientRect().bottom"""
    )
    assert gap < 24, gap
    # the repeat badge is an outline, quieter than "the cause"
    badge_bg, cause_bg = page.evaluate(
        """() => [getComputedStyle(document.querySelector('.rp-count') || document.body).backgroundColor,
                  getComputedStyle(document.querySelector('.rp-pill-decisive')).backgroundColor]"""
    )
    assert badge_bg in ("rgba(0, 0, 0, 0)", "transparent") or not page.locator(".rp-count").count(), badge_bg
    assert cause_bg not in ("rgba(0, 0, 0, 0)", "transparent"), cause_bg
    live_width = _page_width(page)

    page.reload()
    expect(page.locator("#richprogress-failed")).to_be_visible()
    # one width: the content does not jump on reload
    assert abs(_page_width(page) - live_width) < 1, (live_width, _page_width(page))
    expect(page.locator("#rp-summary")).to_have_text(re.compile(r"^The image .*was not found in its registry"))
    assert MISSING_IMAGE not in page.locator("#rp-summary").inner_text()
    expect(page.locator("#rp-summary-ref")).to_have_text(MISSING_IMAGE)
    expect(page.locator("#rp-timeline-title")).to_contain_text("Timeline (")
    expect(page.locator("#rp-facts")).to_contain_text("Gave up after")
    expect(page.locator("#rp-facts")).to_contain_text("Failed during")
    expect(page.locator("#rp-facts")).to_contain_text(f"jupyter-{hub_page.username}")
    rows = page.locator("#rp-timeline .progress-log-event")
    expect(rows.first).to_contain_text("Server requested")
    clocks = [_seconds(c) for c in page.locator("#rp-timeline .rp-event .rp-clock").all_inner_texts()]
    assert clocks == sorted(clocks), clocks
    # each row reads as it did live: the same clock, repeat clock, time and pills, under the
    # same "(N events"
    page_rows = page.evaluate(ROWS_JS, "#rp-timeline")
    # the failed pull's follow-ups fold into one row after the cause on the failure page
    folds = [row for row in page_rows if "rp-fold" in row["cls"].split()]
    page_rows = [row for row in page_rows if row not in folds]
    _check_rows(page_rows, hub_page.username)
    seen = {row["id"]: row for row in page_rows}
    shown = ("clock", "last", "time", "pills", "message")
    kept = [row for row in live_rows if row["id"] in seen]
    assert [[row[k] for k in shown] for row in kept] == [[seen[row["id"]][k] for k in shown] for row in kept]
    # what is not a row any more is in a fold, never lost
    assert len(kept) == len(live_rows) or folds, (live_rows, page_rows)
    count = re.match(r"\(\d+ events?", live_count)
    assert count and count.group(0) in page.locator("#rp-timeline-title").inner_text(), live_count


def test_admin_reads_about_someone_elses_server(make_hub_page, images_dir) -> None:
    owner = make_hub_page()
    _fails_live(owner)
    admin = make_hub_page(username="admin")
    page = admin.page
    page.goto(f"{admin.hub.url}hub/spawn-pending/{owner.user_path}")
    expect(page.locator("#richprogress-failed")).to_be_visible()
    kicker = page.locator("#rp-kicker")
    expect(kicker).to_have_text(re.compile(rf"^\s*The server of {re.escape(owner.username)} could not start\s*$"))
    # the user's name as it is spelled, never upper-cased
    assert page.evaluate("() => getComputedStyle(document.getElementById('rp-kicker')).textTransform") == "none"
    for text in (page.locator("#rp-summary").inner_text(), page.locator("#rp-hint").inner_text()):
        assert "your server" not in text.lower(), text
    expect(page.locator("#rp-hint")).to_contain_text("What the user can do:")
    page.screenshot(path=str(images_dir / "failed-admin-view.png"))


def test_phone_pages_fit_and_names_break_at_slashes(make_hub_page, images_dir) -> None:
    hub_page = make_hub_page()
    page = hub_page.page
    page.set_viewport_size(PHONE)
    _fails_live(hub_page)
    no_overflow = "() => document.documentElement.scrollWidth <= window.innerWidth"
    assert page.evaluate(no_overflow)
    page.screenshot(path=str(images_dir / "phone-failed-live.png"), full_page=True)
    page.reload()
    expect(page.locator("#richprogress-failed")).to_be_visible()
    assert page.evaluate(no_overflow)
    # the image name wraps only between its pieces, never inside one (at a hyphen)
    pieces = page.locator("#rp-summary-ref .rp-nobr")
    expect(pieces.first).to_be_visible()
    heights = page.evaluate(
        "() => [...document.querySelectorAll('#rp-summary-ref .rp-nobr')].map((s) => s.getClientRects().length)"
    )
    assert all(h == 1 for h in heights), heights
    page.screenshot(path=str(images_dir / "phone-failed-after-reload.png"), full_page=True)


def test_dark_mode_live_page_badges_are_quiet(make_hub_page, images_dir) -> None:
    hub_page = make_hub_page(color_scheme="dark")
    page = hub_page.page
    hub_page.spawn("scale-up")
    # modules that decorate rows hear about each batch written (a repeat rebuilds its row)
    page.evaluate(
        """() => { window.__written = [];
            document.getElementById('progress-log').addEventListener('richprogress:rows',
                (e) => window.__written.push(...e.detail.rows.map((r) => r.dataset.recordId))); }"""
    )
    page.wait_for_function("() => window.__written.length > 0")
    badge = page.locator("#progress-log .rp-count").first
    expect(badge).to_be_visible()
    # no white blobs in dark mode: the badge is an outline on the row's own background
    background = page.evaluate("() => getComputedStyle(document.querySelector('.rp-count')).backgroundColor")
    assert background in ("rgba(0, 0, 0, 0)", "transparent"), background
    _check_rows(page.evaluate(ROWS_JS), hub_page.username)
    # the status line under the bar says what the step is doing, not the newest event
    status = page.locator("#progress-message").inner_text()
    assert "free memory" not in status and "cancelled" not in status, status
    if "/spawn-pending/" in page.url:
        page.screenshot(path=str(images_dir / "dark-pending.png"))
    page.wait_for_url(re.compile(rf"/user/{re.escape(hub_page.user_path)}/"))


def test_happy_path_ends_on_a_page_that_leads_back_to_the_hub(make_hub_page, unhurried_hub) -> None:
    # at the usual demo speed the server can be ready before the page's stream opens, and
    # then the page has no row to read (see the unhurried_hub fixture)
    hub_page = make_hub_page(hub=unhurried_hub)
    page = hub_page.page
    # read after the redirect: a quick spawn may leave the pending page before a look
    hub_page.record_rows()
    hub_page.spawn("happy-path")
    page.wait_for_url(re.compile(rf"/user/{re.escape(hub_page.user_path)}/"))
    first = hub_page.seen_rows()[0]
    assert (first["message"], first["clock"]) == ("Server requested", "+0:00"), first
    page.locator("#hub-home").click()
    page.wait_for_url(re.compile(r"/hub/home"))
