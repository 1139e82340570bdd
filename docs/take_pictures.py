"""Retake the README's pictures from the demo, as a newcomer following the README sees it.

Starts the demo hub at its defaults (``--speed 10``, so a 30 s start timeout), logs in as
``alice`` and starts **Image not found** (the live failure, then the page after a reload),
then as ``bob`` starts **Cluster scale-up** (the pending page while a machine is added),
then two failures after the container started, **Crash on start** and **Never answers**
(the page after a reload, the container's log opened).
Needs what ``scripts/dev test`` installs (Debian's Chromium, Python Playwright)::

    python3 docs/take_pictures.py          # writes docs/images/demo-*.png and failed-*.png

Look at the pictures before committing them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import Browser, Page, expect, sync_playwright

from richprogress.demo.browser import CHROMIUM, CHROMIUM_ARGS
from richprogress.demo.hub import DemoHub

IMAGES = Path(__file__).resolve().parent / "images"


def log_in_and_start(page: Page, url: str, user: str, profile: str) -> None:
    page.goto(url)
    page.fill("#username_input", user)
    page.fill("#password_input", "anything")
    page.click("#login_submit")
    page.wait_for_url(lambda current: "/hub/login" not in current)
    page.goto(f"{url}hub/spawn")
    page.check(f"#profile-item-{profile}")
    page.locator("#spawn_form [type=submit]").click()
    page.wait_for_url("**/hub/spawn-pending/**")


def take_failure_after_start(browser: Browser, url: str, user: str, profile: str) -> None:
    """The failure page, after a reload, of a spawn whose container ran: its log opened."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(90_000)
    page = context.new_page()
    log_in_and_start(page, url, user, profile)
    expect(page.locator("#rp-failure")).to_be_visible(timeout=90_000)
    page.reload()
    log = page.locator("#rp-log-details")
    expect(log).to_be_attached()
    log.locator("summary").click()
    expect(page.locator("#rp-log")).to_be_visible()
    page.screenshot(path=str(IMAGES / f"failed-{profile}.png"), full_page=True)
    context.close()


def main() -> int:
    with DemoHub() as hub, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for user, profile in (("alice", "image-not-found"), ("bob", "scale-up")):
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                context.set_default_timeout(60_000)
                page = context.new_page()
                log_in_and_start(page, hub.url, user, profile)
                if profile == "image-not-found":
                    expect(page.locator("#rp-failure")).to_be_visible(timeout=60_000)
                    expect(page.locator("#rp-failure-summary")).to_contain_text("was not found in its registry")
                    page.wait_for_timeout(500)  # the last rows' fade-in
                    page.screenshot(path=str(IMAGES / "demo-failed-live.png"))
                    page.reload()
                    expect(page.locator("#rp-summary")).to_contain_text("was not found in its registry")
                    page.screenshot(path=str(IMAGES / "demo-failed-after-reload.png"))
                else:
                    # while the machine is added (the scheduler's warning goes quiet then)
                    expect(page.locator("#progress-log")).to_contain_text("Adding a machine", timeout=60_000)
                    page.wait_for_timeout(500)
                    page.screenshot(path=str(IMAGES / "demo-pending.png"))
                context.close()
            for user, profile in (("carol", "crash-on-start"), ("nell", "never-answers")):
                take_failure_after_start(browser, hub.url, user, profile)
        finally:
            browser.close()
    print(f"wrote {IMAGES}/demo-failed-live.png, demo-failed-after-reload.png, demo-pending.png, "
          "failed-crash-on-start.png, failed-never-answers.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
