"""Fixtures for the browser tests: a real JupyterHub, a real proxy, the simulated cluster, Chromium.

Fixtures:

``demo_hub`` (session)
    A ``DemoHub`` at base_url ``/``: real JupyterHub + configurable-http-proxy +
    ``RichKubeSpawner`` on the simulated cluster, replaying scenarios ``SPEED`` times
    faster than a real cluster, with a short spawn timeout (``START_TIMEOUT``) so failures
    come quickly (both in ``tests.helpers.browser``).
``prefixed_hub`` (session)
    The same, at base_url ``/jh/``; started only when a test asks for it.
``browser`` (session)
    Debian's Chromium driven by Python Playwright (never a downloaded browser).
``new_username`` (function)
    Makes a fresh, unique user name per call, so tests never share a server.
``hub_page`` (function)
    A ``HubPage``: a new browser context and page, logged in to ``demo_hub`` as a fresh
    user, with helpers to pick a scenario in the spawn form and to watch the page. It
    records every JavaScript dialog (an XSS that fires would show up there) and deletes
    the user (stopping its server) afterwards.
``make_hub_page`` (function)
    The factory behind ``hub_page``: ``make_hub_page(hub=..., username=...,
    color_scheme="dark")`` for a user with a chosen name, a hub with another base_url, or a
    browser that prefers dark mode.
``images_dir`` (session)
    Where screenshots go: ``test-output/screenshots/`` by default (ignored by git), or
    ``docs/images/`` (the README's pictures) when ``RICHPROGRESS_UPDATE_DOC_IMAGES=1``.
``axe_source`` (session)
    The text of axe-core's ``axe.min.js`` from the repository's node_modules.

The shared steps hang off ``HubPage`` (tests never import conftest):
``spawn(profile, image=None)`` picks a scenario in the spawn form and waits for the pending
page, ``rows()`` locates the live timeline rows, ``axe_violations(axe_source)`` runs axe-core,
``user_path`` is the user's name as it appears in URLs. Every browser page has
``window.__forceStreamReconnect()`` (see ``RECONNECTABLE_EVENTSOURCE``).
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from richprogress.demo.browser import CHROMIUM, CHROMIUM_ARGS
from richprogress.demo.hub import DemoHub
from tests.helpers.browser import PAGE_GATED, SPEED, START_TIMEOUT, WAIT_MS
from tests.helpers.demo_hub import serve
from tests.helpers.paths import REPO, TEST_OUTPUT

expect.set_options(timeout=WAIT_MS)

# Replaces window.EventSource (before any page script runs) with a stand-in that behaves
# exactly like the browser's own, relaying the real stream, plus one extra:
# `window.__forceStreamReconnect()` drops the connection and opens it again the way a
# browser does after a network error (an "error" event, then the stream replays from the
# start on the same EventSource object).
RECONNECTABLE_EVENTSOURCE = """
(() => {
  const Native = window.EventSource;
  if (!Native || window.__forceStreamReconnect) return;
  const streams = [];
  class ReconnectableEventSource extends EventTarget {
    constructor(url, init) {
      super();
      this.url = new URL(url, document.baseURI).href;
      this.withCredentials = Boolean(init && init.withCredentials);
      this._init = init;
      this.onopen = null; this.onmessage = null; this.onerror = null;
      this._closed = false;
      this._forcedState = null;
      this._connect();
      streams.push(this);
    }
    get readyState() {
      if (this._closed) return 2;
      return this._forcedState !== null ? this._forcedState : this._native.readyState;
    }
    _relay(type, original) {
      const copy = type === "message"
        ? new MessageEvent("message", {data: original.data, lastEventId: original.lastEventId,
                                       origin: original.origin})
        : new Event(type);
      this.dispatchEvent(copy);
      const handler = this["on" + type];
      if (typeof handler === "function") handler.call(this, copy);
    }
    _connect() {
      const native = new Native(this.url, this._init);
      this._native = native;
      for (const type of ["open", "message", "error"]) {
        native.addEventListener(type, (e) => {
          if (this._native !== native || this._closed) return;
          this._forcedState = null;
          this._relay(type, e);
        });
      }
    }
    reconnect() {
      if (this._closed) return false;
      this._native.close();
      this._forcedState = 0;  // CONNECTING, as during a browser's own retry
      this._relay("error", new Event("error"));
      if (this._closed) return false;
      this._connect();
      return true;
    }
    close() { this._closed = true; this._native.close(); }
  }
  ReconnectableEventSource.CONNECTING = 0;
  ReconnectableEventSource.OPEN = 1;
  ReconnectableEventSource.CLOSED = 2;
  window.EventSource = ReconnectableEventSource;
  window.__forceStreamReconnect = () => streams.filter((s) => s.reconnect()).length;
  window.__openStreams = () => streams.filter((s) => s.readyState !== 2).length;
})();
"""


@pytest.fixture(scope="session")
def demo_hub() -> Iterator[DemoHub]:
    yield from serve(DemoHub(speed=SPEED, start_timeout=START_TIMEOUT, extra_config=PAGE_GATED))


@pytest.fixture(scope="session")
def prefixed_hub() -> Iterator[DemoHub]:
    """A second hub, at base_url ``/jh/`` (started only by the tests that ask for it)."""
    yield from serve(DemoHub(speed=SPEED, start_timeout=START_TIMEOUT, base_url="/jh/", extra_config=PAGE_GATED))


@pytest.fixture(scope="session")
def unhurried_hub() -> Iterator[DemoHub]:
    """A hub whose scenarios run at twice a real cluster's pace, not twenty times: a spawn
    there takes seconds, so the pending page's stream is open before the server is ready.
    (When a spawn is ready before the stream opens, JupyterHub answers the stream with
    "ready" alone and the page redirects without a row: right for a user, but a test that
    reads the rows would have nothing to read.) Started only by the tests that ask for it."""
    yield from serve(DemoHub(speed=2.0, start_timeout=START_TIMEOUT, extra_config=PAGE_GATED))


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install chromium")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def images_dir() -> Path:
    # A test run must not dirty the checkout; refresh the README's pictures on purpose.
    if os.environ.get("RICHPROGRESS_UPDATE_DOC_IMAGES") == "1":
        path = REPO / "docs" / "images"
    else:
        path = TEST_OUTPUT / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def axe_source() -> str:
    path = REPO / "node_modules" / "axe-core" / "axe.min.js"
    if not path.is_file():
        pytest.fail(f"axe-core not found at {path}: run `npm install` in the repository")
    return path.read_text()


_counter = itertools.count(1)


@pytest.fixture
def new_username(request: pytest.FixtureRequest) -> Callable[[], str]:
    """Fresh user names like ``t3-hostile-image-1a2b``: unique across tests and runs."""

    def make() -> str:
        stem = request.node.name.split("[")[0].removeprefix("test_").replace("_", "-")[:20]
        return f"t{next(_counter)}-{stem}-{uuid.uuid4().hex[:4]}"

    return make


#: an init script for ``HubPage.record_rows``: watches #progress-log and keeps the longest
#: list of rows seen (a row is rewritten in place when its record changes)
_RECORD_ROWS = """
(() => {
  const seen = () => JSON.parse(sessionStorage.getItem("rp-seen") || "[]");
  new MutationObserver(() => {
    const log = document.getElementById("progress-log");
    if (!log) return;
    const rows = [...log.querySelectorAll(".progress-log-event")].map((row) => {
      const text = (selector) => (row.querySelector(selector) || {}).textContent || "";
      return {object: text(".rp-pill-object"), message: text(".rp-message") || row.textContent,
              clock: text(".rp-clock")};
    });
    if (rows.length > seen().length) sessionStorage.setItem("rp-seen", JSON.stringify(rows));
  }).observe(document, {childList: true, subtree: true});
})();
"""


@dataclass
class HubPage:
    """A logged-in browser page on a demo hub, with the steps the tests share."""

    hub: DemoHub
    page: Page
    username: str
    dialogs: list[str] = field(default_factory=list)

    @property
    def user_path(self) -> str:
        """The user's name as it appears in hub URLs (percent-encoded)."""
        return quote(self.username, safe="")

    def login(self) -> None:
        self.page.goto(f"{self.hub.url}hub/login")
        self.page.fill("#username_input", self.username)
        self.page.fill("#password_input", "any password")
        self.page.click("#login_submit")
        self.page.wait_for_url(lambda url: "/hub/login" not in url)

    def record_rows(self) -> None:
        """From the next page load on, keep every timeline row the page shows in
        ``sessionStorage`` (object pill, sentence), so a test can read them after a spawn
        that became ready and redirected before it looked: ``seen_rows()``."""
        self.page.context.add_init_script(_RECORD_ROWS)

    def seen_rows(self) -> list[dict[str, str]]:
        """The rows ``record_rows`` kept: ``{"object": pill or "", "message": sentence,
        "clock": "+m:ss" or ""}`` each."""
        return self.page.evaluate("JSON.parse(sessionStorage.getItem('rp-seen') || '[]')")

    def spawn(self, profile: str, image: str | None = None) -> None:
        """Pick ``profile`` in the spawn form (typing ``image`` for custom-image), start it,
        and wait for the pending page."""
        self.page.goto(f"{self.hub.url}hub/spawn")
        self.page.check(f"#profile-item-{profile}")
        if image is not None:
            select = f"#profile-option-{profile}--image"
            self.page.select_option(select, "unlisted-choice")
            self.page.fill(f"{select}--unlisted-choice", image)
        self.page.locator("#spawn_form [type=submit]").click()
        self.page.wait_for_url("**/hub/spawn-pending/**")

    def rows(self) -> Any:
        """The timeline rows (stock contract: ``#progress-log .progress-log-event``)."""
        return self.page.locator("#progress-log .progress-log-event")

    def axe_violations(
        self, axe_source: str, impacts: tuple[str, ...] = ("serious", "critical")
    ) -> list[dict[str, Any]]:
        """Run axe-core in the page; the violations of the given impacts, summarized."""
        self.page.add_script_tag(content=axe_source)
        result = self.page.evaluate(
            """async () => {
                const r = await axe.run(document, {resultTypes: ["violations"]});
                return r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
                    nodes: v.nodes.map((n) => n.target.join(" ") + " :: " + n.failureSummary)}));
            }"""
        )
        return [v for v in result if v["impact"] in impacts]

    def delete_user(self) -> None:
        try:
            self.hub.api("DELETE", f"users/{self.user_path}")
        except Exception:  # the hub may be gone already, or the user never existed
            pass


@pytest.fixture
def make_hub_page(
    browser: Browser, demo_hub: DemoHub, new_username: Callable[[], str]
) -> Iterator[Callable[..., HubPage]]:
    made: list[tuple[HubPage, Any]] = []

    def make(
        hub: DemoHub | None = None,
        username: str | None = None,
        color_scheme: str = "light",
    ) -> HubPage:
        context = browser.new_context(
            viewport={"width": 1280, "height": 800},
            color_scheme=color_scheme,  # type: ignore[arg-type]
        )
        context.set_default_timeout(WAIT_MS)
        context.add_init_script(RECONNECTABLE_EVENTSOURCE)
        page = context.new_page()
        hub_page = HubPage(hub=hub or demo_hub, page=page, username=username or new_username())

        def on_dialog(dialog: Any) -> None:
            hub_page.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
        made.append((hub_page, context))
        hub_page.login()
        return hub_page

    yield make
    for hub_page, context in made:
        context.close()
        hub_page.delete_user()


@pytest.fixture
def hub_page(make_hub_page: Callable[..., HubPage]) -> HubPage:
    return make_hub_page()
