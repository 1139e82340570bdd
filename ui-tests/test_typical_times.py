"""Typical start times on the pending page, as a user sees them.

Fixtures: ``typical_hub`` (module): a DemoHub whose admin gave expected times
(``c.TypicalTimes.expected``) for the scale-up and no-node-fits profiles, replaying slowly
enough (``SPEED``) that the scale-up's "adding a machine" step can be watched. The default
``demo_hub`` has no expected times and no history: its pages read as without this feature
(test_spawn_pages.py pins them), checked here once more for the typical-time elements.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from richprogress.demo.hub import DemoHub
from tests.helpers.demo_hub import serve

SPEED = 4.0  # the scale-up's ~120 s of adding a machine take ~30 s here
EXPECTED = {
    "*": {"total": [60, 180]},
    "scale-up": {"total": [170, 290], "scaling": [120, 240], "image": [20, 40]},
    # a machine is found within seconds on this hub, so a spawn that finds none is slow
    "no-node-fits": {"scheduling": [2, 4], "scaling": [2, 4]},
}


@pytest.fixture(scope="module")
def typical_hub() -> Iterator[DemoHub]:
    yield from serve(DemoHub(speed=SPEED, start_timeout=120, extra_config=(
        f"c.TypicalTimes.expected = {EXPECTED!r}\n"
        # no fail-fast: the spawn that finds no machine keeps waiting, to be watched
        "c.RichKubeSpawner.fail_fast = False\n"
    )))


def _bar(page) -> int:
    return int(page.locator("#progress-bar").get_attribute("aria-valuenow") or 0)


def test_the_usual_time_shows_beside_the_clock_and_the_bar_moves_within_the_step(
    make_hub_page, typical_hub, images_dir
):
    hub_page = make_hub_page(hub=typical_hub)
    page = hub_page.page
    hub_page.spawn("scale-up")
    expect(page.locator("#rp-typical")).to_have_text("Usually ready in about 3 min (9 in 10 within 5 min)")
    step = page.locator("#rp-typical-step")
    expect(page.locator("#rp-step")).to_have_text("Adding a machine to the cluster")
    expect(step).to_have_text(re.compile(r"^Adding a machine usually takes 2-4 min; 0:\d\d so far$"))
    # the clock in the line runs
    first = step.text_content()
    expect(step).not_to_have_text(first or "", timeout=5000)
    # the bar moves inside the step (20% is the step's own, 35% the next step's; halfway at
    # the step's usual 2 min), and never back
    seen = [_bar(page)]
    while seen[-1] <= 21 and len(seen) < 30:
        page.wait_for_timeout(1000)
        seen.append(_bar(page))
    assert seen == sorted(seen), seen
    assert 21 < seen[-1] < 35 and seen[0] <= 21, seen
    expect(page.locator("#rp-step")).to_have_text("Adding a machine to the cluster")
    # well within the usual time: nothing alarming
    expect(page.locator("#rp-typical-longer")).to_be_hidden()
    page.screenshot(path=str(images_dir / "pending-typical.png"))


def test_usual_times_step_aside_when_waiting_cannot_fix_it(make_hub_page, typical_hub, tmp_path):
    """No machine can ever fit (fail-fast off, so the spawn keeps waiting): once the banner
    says "This will not fix itself", the page no longer says how long the step usually takes
    or that it is "taking longer than usual", which would promise that waiting ends it."""
    hub_page = make_hub_page(hub=typical_hub)
    page = hub_page.page
    hub_page.spawn("no-node-fits")
    expect(page.locator("#rp-typical-step")).to_have_text(
        re.compile(r"^(Finding|Adding) a machine usually takes about 5 s; 0:\d\d so far$")
    )
    banner = page.locator("#rp-live")
    expect(banner).to_have_attribute("data-state", "hopeless", timeout=20_000)
    expect(banner).to_be_visible()
    expect(page.locator("#rp-typical-step")).to_be_hidden()
    expect(page.locator("#rp-typical-longer")).to_be_hidden()
    # nor does the status line under the bar say the step "often takes a few minutes"
    expect(page.locator("#progress-message")).to_have_text("Waiting will not get past this: the reason is below.")
    page.wait_for_timeout(2500)  # the page's clock ticks on: the lines stay hidden
    expect(page.locator("#rp-typical-step")).to_be_hidden()
    expect(page.locator("#rp-typical-longer")).to_be_hidden()
    # "*": the start's usual time stays (it describes this hub, not this spawn)
    expect(page.locator("#rp-typical")).to_have_text("Usually ready in about 1 min (9 in 10 within 3 min)")
    page.screenshot(path=str(tmp_path / "hopeless-with-typical-times.png"))


def test_without_history_or_expected_times_the_page_reads_as_before(hub_page):
    page = hub_page.page
    # a spawn that ends on its pending page (the happy path can redirect before a look)
    hub_page.spawn("image-not-found")
    expect(page.locator("#rp-step")).not_to_have_text("Requesting a server")
    assert page.locator("#rp-typical, #rp-typical-step, #rp-typical-longer").count() == 0
    expect(page.locator("#rp-failure")).to_be_visible()
    assert "/hub/spawn-pending/" in page.url
    assert page.locator("#rp-typical, #rp-typical-step, #rp-typical-longer").count() == 0


LATE_SPEED = 8.0  # adding a machine takes ~17 s here
#: this hub's machines usually come within 4-8 s: the scale-up's runs late after ~8 s
LATE_EXPECTED = {"scale-up": {"total": [20, 60], "scaling": [4, 8]}}


@pytest.fixture(scope="module")
def late_hub() -> Iterator[DemoHub]:
    yield from serve(DemoHub(speed=LATE_SPEED, extra_config=f"c.TypicalTimes.expected = {LATE_EXPECTED!r}\n"))


def test_the_patience_row_and_longer_than_usual_come_together(make_hub_page, late_hub, images_dir):
    """The pending page's "This is taking longer than usual" and the timeline's "Still
    waiting" row tell one story: no "Still waiting" while the step is on time, and the row
    that comes when the step runs late says so, with the usual time."""
    hub_page = make_hub_page(hub=late_hub)
    page = hub_page.page
    hub_page.spawn("scale-up")
    expect(page.locator("#rp-step")).to_have_text("Adding a machine to the cluster")
    step = page.locator("#rp-typical-step")
    expect(step).to_have_text(re.compile(r"^Adding a machine usually takes 5-10 s; 0:0\d so far$"))
    waiting = hub_page.rows().filter(has_text="Still waiting")
    longer = page.locator("#rp-typical-longer")
    # on time: the step line speaks, no "Still waiting" row
    assert waiting.count() == 0 and longer.is_hidden()
    expect(longer).to_be_visible(timeout=20_000)
    # the row comes within a second or two of the page's words, and says the same
    expect(waiting).to_have_text(re.compile(
        r"Still waiting for a new machine to join the cluster; "
        r"this is taking longer than usual \(usually 5-10 s\)"), timeout=3_000)
    expect(longer).to_have_text("This is taking longer than usual")
    # calm: not an error box, no red
    assert "alert" not in (longer.get_attribute("class") or "")
    # the scheduler's repeats after the scale-up began are in hand: no banner says they
    # are a problem, and the line under the bar says it once, not twice
    expect(page.locator("#rp-live")).to_be_hidden()
    expect(page.get_by_text("This is taking longer than usual", exact=True)).to_have_count(1)
    page.screenshot(path=str(images_dir / "pending-longer-than-usual.png"))
    page.wait_for_url(re.compile(rf"/user/{re.escape(hub_page.user_path)}/"), timeout=60_000)
    assert hub_page.dialogs == []
