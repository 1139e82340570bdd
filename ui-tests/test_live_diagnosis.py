"""The live cause banner and fail-fast, as a user sees them (docs/fail-fast.md).

Fixtures: ``slow_stop_hub`` (module): a DemoHub like ``demo_hub`` whose fail-fast waits
``HOLD`` seconds (and does not count repeats), so the page can be watched, and clicked,
while the cause is known and the spawn still runs. The default hub (``demo_hub``) ends a
missing image within a second at its speed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from richprogress.demo.hub import DemoHub
from tests.helpers.demo_hub import serve

MISSING_IMAGE = "quay.io/jupyter/no-such-notebook:2026-11"
TYPED = "quay.io/someone/<img src=x onerror=alert(1)>:1"
HOLD = 6.0
SPEED = 20.0


@pytest.fixture(scope="module")
def slow_stop_hub() -> Iterator[DemoHub]:
    extra = f"c.RichKubeSpawner.fail_fast_repeats = 0\nc.RichKubeSpawner.fail_fast_hold = {HOLD}\n"
    yield from serve(DemoHub(speed=SPEED, start_timeout=40, extra_config=extra))


def test_the_cause_shows_before_the_spawn_ends_then_fail_fast_ends_it(make_hub_page, slow_stop_hub, images_dir):
    hub_page = make_hub_page(hub=slow_stop_hub)
    page = hub_page.page
    hub_page.spawn("image-not-found")
    banner = page.locator("#rp-live")
    expect(banner).to_be_visible()
    # the second "not found" decides it: red, and no longer "the cluster will try again"
    expect(banner).to_have_attribute("data-state", "hopeless")
    expect(page.locator("#rp-live-kicker")).to_have_text("This will not fix itself")
    expect(page.locator("#rp-live-summary")).to_have_text(
        f"The image {MISSING_IMAGE} for the notebook container was not found in its registry")
    # a cause waiting cannot fix: no typical times, no "you will be redirected"
    expect(page.locator("#rp-lead")).to_be_hidden()
    expect(page.locator("#rp-live-hint")).to_contain_text("What you can do:")
    expect(page.locator("#rp-live-stop")).to_be_visible()
    # the bar and the step follow the cause: red, "cannot continue", not blue "downloading"
    expect(page.locator("#progress-bar")).to_have_class(re.compile(r"\bbg-danger\b"))
    expect(page.locator("#rp-step-state")).to_have_text("(cannot continue)")
    expect(page.locator("#rp-step")).to_have_attribute("aria-live", "off")
    # still pending: the failure box is not there yet
    expect(page.locator("#rp-failure")).to_be_hidden()
    page.screenshot(path=str(images_dir / "live-cause.png"))

    # fail-fast: the failure comes after HOLD seconds, not after the 40 s start timeout
    expect(page.locator("#rp-failure")).to_be_visible(timeout=int((HOLD + 15) * 1000))
    # the headline names the problem, the image stands on its own line
    expect(page.locator("#rp-failure-summary")).to_contain_text("was not found in its registry")
    expect(page.locator("#rp-failure-ref")).to_have_text(MISSING_IMAGE)
    expect(banner).to_be_hidden()
    expect(hub_page.rows().filter(has_text="Stopped early, at +0:")).to_have_count(1)

    # the failure page, also after a reload: the same cause, and that it was stopped early
    page.reload()
    expect(page.locator("#richprogress-failed")).to_be_visible()
    expect(page.locator("#rp-summary")).to_have_text("The image for the notebook container was not found in its registry")
    expect(page.locator("#rp-summary-ref")).to_have_text(MISSING_IMAGE)
    expect(page.locator("#rp-stopped-early")).to_contain_text("as waiting could not fix it")
    expect(page.locator("#rp-timeline")).to_contain_text("Stopped early")
    page.screenshot(path=str(images_dir / "stopped-early-after-reload.png"))
    # Relaunch works, and the new spawn starts clean
    page.locator("#start").click()
    page.wait_for_url(re.compile(r"/hub/spawn"))
    hub_page.spawn("happy-path")
    page.wait_for_url(re.compile(rf"/user/{re.escape(hub_page.user_path)}/"))
    assert hub_page.dialogs == []


def test_stop_and_change_options_stops_the_server_and_opens_the_form(make_hub_page, slow_stop_hub):
    hub_page = make_hub_page(hub=slow_stop_hub)
    page = hub_page.page
    hub_page.spawn("custom-image", image=TYPED)
    expect(page.locator("#rp-live-summary")).to_contain_text(TYPED)  # inert text, not markup
    page.locator("#rp-live-stop").click()
    page.wait_for_url(re.compile(r"/hub/spawn(/|$|\?)"))
    expect(page.locator("#spawn_form")).to_be_visible()
    # the server is not running, and no failure box was flashed at the user on the way
    user = slow_stop_hub.api("GET", f"users/{hub_page.user_path}")
    assert user["servers"] == {}
    assert hub_page.dialogs == []


def test_a_scale_up_under_way_is_waiting_not_a_problem(make_hub_page, slow_stop_hub, images_dir):
    """scale-up: "no machine has room" while a machine is being added is in hand: the step
    says a machine is being added, no banner stands, and the server starts."""
    hub_page = make_hub_page(hub=slow_stop_hub)
    page = hub_page.page
    hub_page.spawn("scale-up")
    expect(page.locator("#rp-step")).to_have_text("Adding a machine to the cluster")
    expect(page.locator("#rp-live")).to_be_hidden()
    expect(page.locator("#rp-lead")).to_be_visible()
    expect(page.locator("#progress-bar")).not_to_have_class(re.compile(r"\bbg-danger\b"))
    page.screenshot(path=str(images_dir / "live-adding-a-machine.png"))
    page.wait_for_url(re.compile(rf"/user/{re.escape(hub_page.user_path)}/"))
    assert hub_page.dialogs == []


def test_a_refusal_that_may_clear_is_said_at_once_as_blocked(make_hub_page, slow_stop_hub, images_dir):
    """operator-error: the namespace's quota refuses the pod; more room may come when other
    servers stop. Amber, "Still trying", said at once, with no stop-and-change button (the
    user cannot fix a quota) and no typical times."""
    hub_page = make_hub_page(hub=slow_stop_hub)
    page = hub_page.page
    hub_page.spawn("operator-error")
    banner = page.locator("#rp-live")
    expect(banner).to_have_attribute("data-state", "blocked")
    expect(banner).to_be_visible()
    expect(page.locator("#rp-live-kicker")).to_have_text("Still trying")
    expect(page.locator("#rp-live-summary")).to_contain_text("quota")
    expect(page.locator("#rp-live-stop")).to_be_hidden()
    expect(page.locator("#rp-step-state")).to_have_text("(still trying)")
    expect(page.locator("#progress-bar")).to_have_class(re.compile(r"\brp-bar-trying\b"))
    expect(page.locator("#progress-bar")).not_to_have_class(re.compile(r"\bbg-danger\b"))
    page.screenshot(path=str(images_dir / "live-still-trying.png"))
    assert hub_page.dialogs == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_banner_passes_axe_in_both_colour_schemes(make_hub_page, slow_stop_hub, axe_source, images_dir, scheme):
    hub_page = make_hub_page(hub=slow_stop_hub, color_scheme=scheme)
    page = hub_page.page
    hub_page.spawn("image-not-found")
    expect(page.locator("#rp-live")).to_have_attribute("data-state", "hopeless")
    expect(page.locator("#rp-live")).to_be_visible()
    assert hub_page.axe_violations(axe_source) == []
    page.screenshot(path=str(images_dir / f"live-cause-{scheme}.png"))


# Kept in sessionStorage (the page redirects to the server once it is ready): for each
# timeline row as it is written, its sentence and what the banner said at that moment.
_BANNER_AT_ROWS = """
(() => {
  if (!location.pathname.includes("/spawn-pending/")) return;
  const seen = [];
  new MutationObserver((mutations) => {
    const banner = document.getElementById("rp-live");
    for (const m of mutations) for (const node of m.addedNodes) {
      if (!(node instanceof Element) || !node.classList.contains("progress-log-event")) continue;
      const text = (node.querySelector(".rp-message") || node).textContent;
      seen.push([text, banner && !banner.hidden ? banner.dataset.state : null]);
    }
    sessionStorage.setItem("rp-banner-at-rows", JSON.stringify(seen));
  }).observe(document, {childList: true, subtree: true});
})();
"""

# The rows as they stood when the page left for the server: the spawn is ready moments after
# the retry worked, and the page's redirect does not wait for a test to look.
_ROWS_AT_LEAVE = """
(() => {
  if (!location.pathname.includes("/spawn-pending/")) return;
  addEventListener("pagehide", () => {
    const rows = [...document.querySelectorAll("#progress-log .progress-log-event")].map((row) => [
      (row.querySelector(".rp-message") || row).textContent,
      row.dataset.overcome || null,
      (row.querySelector(".rp-pill-overcome") || {}).textContent || null,
      row.dataset.severity || null,
    ]);
    sessionStorage.setItem("rp-rows-at-leave", JSON.stringify(rows));
  });
})();
"""

FLAKY_SPEED = 2.0  # Pulled -> Created takes 150 ms here: apart on the stream and on screen


@pytest.fixture(scope="module")
def flaky_hub() -> Iterator[DemoHub]:
    yield from serve(DemoHub(speed=FLAKY_SPEED))


def test_a_retried_pull_that_works_clears_the_red_banner_at_once(make_hub_page, flaky_hub, images_dir):
    """flaky-pull: the first pull says "not found" (amber: it may be a tag a registry
    replica does not have yet, and the cluster tries again), the kubelet pulls again
    and it works. The banner goes with the "Downloaded" row, not when the container exists;
    it never said "will not fix itself"."""
    hub_page = make_hub_page(hub=flaky_hub)
    page = hub_page.page
    page.context.add_init_script(_BANNER_AT_ROWS)
    page.context.add_init_script(_ROWS_AT_LEAVE)
    hub_page.spawn("flaky-pull")
    banner = page.locator("#rp-live")
    expect(banner).to_have_attribute("data-state", "blocked")
    expect(banner).to_be_visible()
    expect(page.locator("#rp-live-summary")).to_contain_text("the cluster will try again")
    expect(page.locator("#progress-bar")).not_to_have_class(re.compile(r"\bbg-danger\b"))
    page.screenshot(path=str(images_dir / "flaky-pull-first-not-found.png"))
    downloaded = hub_page.rows().filter(has_text="Downloaded the image")
    expect(downloaded).to_have_count(1)
    # the retry worked: no red, no "cannot continue", the bar back to its normal colour
    expect(banner).to_be_hidden()
    if "/spawn-pending/" in page.url:  # the picture, unless the page already left
        page.screenshot(path=str(images_dir / "flaky-pull-retry-worked.png"))
    page.wait_for_url(re.compile(rf"/user/{re.escape(hub_page.user_path)}/"))
    # the failed pull's rows read as over when the page left: quiet, with a "resolved"
    # pill; no info row was ever marked so
    rows = page.evaluate("JSON.parse(sessionStorage.getItem('rp-rows-at-leave') || '[]')")
    failed = [row for row in rows if "was not found in its registry" in row[0]]
    assert failed and all(row[1] == "true" and row[2] == "resolved" for row in failed), rows
    assert not [row for row in rows if row[1] == "true" and row[3] == "info"], rows
    seen = page.evaluate("JSON.parse(sessionStorage.getItem('rp-banner-at-rows') || '[]')")
    states = {text: state for text, state in seen}
    pull_failed = next(t for t in states if "was not found in its registry" in t)
    retry = next(t for t in states if t.startswith("Downloaded the image"))
    created = next(t for t in states if t.startswith("Created the notebook container"))
    assert states[pull_failed] == "blocked", seen
    assert "hopeless" not in {state for _, state in seen}, seen
    assert states[retry] is None, seen  # gone by the time the row was written
    assert states[created] is None, seen
    assert hub_page.dialogs == []
