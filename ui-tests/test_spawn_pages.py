"""What a user sees while a server starts and after it fails: real hub, proxy, simulated cluster."""

from __future__ import annotations

import re

from playwright.sync_api import expect

#: the image the image-not-found profile asks for (see richprogress/demo/jupyterhub_config.py)
MISSING_IMAGE = "quay.io/jupyter/no-such-notebook:2026-11"


def _record_ids(hub_page) -> list[str]:
    return hub_page.page.eval_on_selector_all(
        "#progress-log .progress-log-event", "rows => rows.map(r => r.dataset.recordId || '')"
    )


def test_happy_path_shows_rows_then_redirects_to_the_server(make_hub_page, unhurried_hub) -> None:
    # on the unhurried hub the stream opens before the server is ready (see the fixture)
    hub_page = make_hub_page(hub=unhurried_hub)
    # the rows are read after the redirect: on a busy machine the spawn can be ready before
    # a test looking at the live page would have seen its first row
    hub_page.record_rows()
    hub_page.spawn("happy-path")
    hub_page.page.wait_for_url(re.compile(rf"/user/{re.escape(hub_page.user_path)}/"))
    # the live timeline showed rows before the hub redirected (slow_spawn_timeout=0)
    sentences = [row["message"] for row in hub_page.seen_rows()]
    assert "Server requested" in sentences and len(sentences) >= 2, sentences
    assert "/hub/spawn-pending/" not in hub_page.page.url
    assert hub_page.dialogs == []


def test_image_not_found_fails_live_and_still_explains_after_reload(hub_page, images_dir) -> None:
    page = hub_page.page
    hub_page.spawn("image-not-found")
    # while it is still pending: the rows name the image the cluster cannot pull
    expect(hub_page.rows().filter(has_text=MISSING_IMAGE).first).to_be_visible()
    expect(page.locator("#progress-bar")).to_have_attribute("aria-valuenow", re.compile(r"\d+"))

    # the failure shows live, on the same page, naming the image
    failure = page.locator("#rp-failure")
    expect(failure).to_be_visible()
    # (the image on a line of its own, under the headline that names the problem)
    expect(page.locator("#rp-failure-summary")).to_contain_text("was not found in its registry")
    expect(page.locator("#rp-failure-ref")).to_have_text(MISSING_IMAGE)
    page.screenshot(path=str(images_dir / "failed-live.png"))
    # a row's time is the reader's own, its zone named; pointed at, it gives the full date and UTC
    _expect_local_time_on_hover(hub_page.rows().locator("time.rp-time").first)

    # after a reload: the server-side failure page, still naming the image, with the timeline
    page.reload()
    expect(page.locator("#richprogress-failed")).to_be_visible()
    expect(page.locator("#rp-summary")).to_contain_text("was not found in its registry")
    expect(page.locator("#rp-summary-ref")).to_have_text(MISSING_IMAGE)
    expect(page.locator("#rp-hint")).to_be_visible()
    rows = page.locator("#rp-timeline .rp-event")
    expect(rows.first).to_be_visible()
    expect(page.locator("#rp-timeline .rp-decisive")).to_have_count(1)
    expect(page.locator("#rp-facts")).to_contain_text(hub_page.username)
    _expect_local_time_on_hover(rows.locator("time.rp-time").first)
    # the Relaunch button still leads to the spawn form
    expect(page.locator("#start")).to_have_attribute("href", re.compile(r"/hub/spawn"))
    page.screenshot(path=str(images_dir / "failed-after-reload.png"), full_page=False)
    assert hub_page.dialogs == []


def _expect_local_time_on_hover(time) -> None:
    """The row's time is the reader's, its zone named ("11:46:28 PM PST", never a bare UTC
    "07:46:28"); its tooltip, once pointed at (worked out then, not for every row at load),
    says the full local time with its zone and the time in UTC."""
    expect(time).to_have_text(re.compile(r"^\d{1,2}:\d\d:\d\d\D*\s\S+$"))
    time.hover()
    expect(time).to_have_attribute(
        "title", re.compile(r"\d{4}.*\d:\d\d:\d\d.* \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)$")
    )


def test_scale_up_clock_advances_and_repeats_fold(hub_page, images_dir) -> None:
    page = hub_page.page
    hub_page.spawn("scale-up")
    clock = page.locator("#rp-elapsed")
    expect(clock).to_have_text(re.compile(r"^\d+:\d\d$"))
    first = clock.inner_text()
    # the elapsed clock ticks while the spawn waits for a node
    page.wait_for_function(
        "before => document.getElementById('rp-elapsed').textContent !== before", arg=first
    )
    # a repeated event (FailedScheduling while the node comes up) folds into one row with a
    # count badge instead of adding rows
    badge = page.locator("#progress-log .progress-log-event .rp-count").first
    expect(badge).to_be_visible()
    expect(badge).to_have_text(re.compile(r"^x\d+$"))
    folded_row = page.locator("#progress-log .progress-log-event", has=page.locator(".rp-count"))
    record_id = folded_row.first.get_attribute("data-record-id")
    assert record_id
    count_before = int(badge.inner_text().lstrip("x"))
    page.screenshot(path=str(images_dir / "pending.png"))
    # the count grows in place: still exactly one row for that event
    page.wait_for_function(
        """([id, before]) => {
            const row = document.querySelector(`#progress-log [data-record-id="${CSS.escape(id)}"]`);
            const badge = row && row.querySelector('.rp-count');
            return !row || (badge && parseInt(badge.textContent.slice(1), 10) > before);
        }""",
        arg=[record_id, count_before],
    )
    if "/spawn-pending/" in page.url:
        ids = _record_ids(hub_page)
        assert ids.count(record_id) <= 1
        assert len(ids) == len(set(ids)), f"duplicate rows: {ids}"
        # FailedScheduling kept repeating after the scale-up began: the step shown must not
        # fall back to "Finding a machine" (it only moves forward, like the progress bar)
        step = page.locator("#rp-step").inner_text()
        if "/spawn-pending/" in page.url:
            assert step not in ("Finding a machine to run it", "Requesting a server"), step
    hub_page.page.wait_for_url(re.compile(rf"/user/{re.escape(hub_page.user_path)}/"))


def test_stream_reconnect_adds_no_duplicate_rows(make_hub_page, unhurried_hub) -> None:
    # at twice a real cluster's pace the failing spawn's stream stays open for seconds after
    # its first rows (at twenty times, fail-fast could end it before a busy machine's
    # browser got to drop the connection, and there was no stream left to reconnect)
    hub_page = make_hub_page(hub=unhurried_hub)
    page = hub_page.page
    progress_requests: list[str] = []
    page.on(
        "request",
        lambda request: (
            progress_requests.append(request.url)
            if request.url.split("?")[0].endswith("/progress")
            else None
        ),
    )
    hub_page.spawn("image-not-found")
    expect(hub_page.rows().nth(1)).to_be_visible()
    rows_before = hub_page.rows().count()
    # drop the connection the way a network blip does: the browser reconnects and the hub
    # replays the whole stream from the start
    assert page.evaluate("window.__forceStreamReconnect()") == 1
    expect(page.locator("#rp-failure")).to_be_visible()
    assert len(progress_requests) >= 2, progress_requests
    ids = _record_ids(hub_page)
    assert all(ids), "every row carries its record id"
    assert len(ids) == len(set(ids)), f"duplicate rows after reconnect: {ids}"
    assert hub_page.rows().count() >= rows_before
