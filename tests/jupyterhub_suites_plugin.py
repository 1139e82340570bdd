"""A pytest plugin that runs JupyterHub's own test suites against richprogress.

One and only purpose: every ``MockHub`` that JupyterHub's suites start is configured with
``richprogress.setup(c)``, so JupyterHub's own checks of its pages (the spawn-pending page's
progress stream, ``div.progress-log-event`` rows, the Stop button, the not-running page...)
run on our templates. The suites ship in the jupyterhub wheel; ``scripts/dev jupyterhub-suites``
runs them with this plugin::

    python3 -m pytest -p jupyterhub_suites_plugin --pyargs \\
        jupyterhub.tests.test_pages jupyterhub.tests.browser.test_browser

Four things of this machine (and CI) are adapted, nothing the tests check:

- JupyterHub's browser fixture launches Playwright's own Firefox, which cannot be
  downloaded here; it gets Debian's Chromium instead (as ui-tests/conftest.py uses).
- Run as root (CI containers), a real single-user server refuses to start without
  ``allow_root``; the spawned servers get a config folder that allows it.
- Started as a background job of a script (``scripts/dev test &``, a runner without job
  control), the suites inherit SIGINT ignored, and so do the servers they spawn. JupyterHub
  stops a local server with SIGINT first, so each stop waited out its 10 s interrupt
  timeout, and the suites' spawn-and-stop tests failed (5 failed, 6 errors, 32 minutes).
  SIGINT is given back its default before any server is spawned.
- JupyterHub's ``open_token_page`` returns at ``domcontentloaded``, and its callers click
  "Request new API token" at once. The button's handler comes from ``token.js``, which
  RequireJS loads after that; on a busy 2-core machine the click came first, the form was
  submitted as a plain GET (the page's URL ended in ``/hub/token?``) and
  ``test_request_token_expiration`` waited 30 s for a token that was never asked for
  (twice in a row, on different parameters). Waiting for ``load`` was not enough: RequireJS
  adds its script tags after ``load`` may already have fired, and a CI rehearsal failed the
  same way. The helper now waits for the state the click needs: the form's submit handler
  bound (jQuery's own record of the element's events). A CI run still once saw the token
  stay hidden after a click with the handler bound; the page's script errors, failed
  requests and error responses are now printed as they happen, so a failed test's report
  says which.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from traitlets.config import Config

import richprogress
from richprogress.demo.browser import CHROMIUM, CHROMIUM_ARGS

#: the module whose ``async_playwright`` gets Debian's Chromium
BROWSER_CONFTEST = "jupyterhub.tests.browser.conftest"
#: the module of JupyterHub's browser tests, whose token-page helper waits for its scripts
BROWSER_TESTS = "jupyterhub.tests.browser.test_browser"


def _allow_root_config_dir() -> str:
    """A Jupyter config folder allowing a single-user server to run as root."""
    folder = tempfile.mkdtemp(prefix="richprogress-jh-suites-")
    with open(os.path.join(folder, "jupyter_server_config.json"), "w") as f:
        json.dump({"ServerApp": {"allow_root": True}}, f)
    return folder


def configure_hub(config: Config) -> Config:
    """What an admin's ``jupyterhub_config.py`` does: ``richprogress.setup(c)``."""
    richprogress.setup(config)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        config.Spawner.environment = {
            **dict(config.Spawner.get("environment", {})),
            "JUPYTER_CONFIG_PATH": _allow_root_config_dir(),
        }
    return config


def _wrap_mock_hub() -> None:
    from jupyterhub.tests.mocking import MockHub

    if getattr(MockHub, "_richprogress_wrapped", False):
        return
    original_init = MockHub.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        # The config goes in at construction: traitlets applies a Config it is given then,
        # not one mutated afterwards.
        kwargs["config"] = configure_hub(kwargs.get("config") or Config())
        original_init(self, *args, **kwargs)

    MockHub.__init__ = __init__  # type: ignore[method-assign]
    MockHub._richprogress_wrapped = True  # type: ignore[attr-defined]


class _Launcher:
    """Stands for ``playwright.firefox``: launches Debian's Chromium instead."""

    def __init__(self, chromium: Any) -> None:
        self._chromium = chromium

    async def launch(self, **kwargs: Any) -> Any:
        kwargs.setdefault("executable_path", CHROMIUM)
        kwargs.setdefault("args", CHROMIUM_ARGS)
        return await self._chromium.launch(**kwargs)


class _DebianPlaywright:
    """A Playwright whose ``firefox`` (and ``chromium``) is Debian's Chromium."""

    def __init__(self, playwright: Any) -> None:
        self._playwright = playwright
        self.firefox = self.chromium = _Launcher(playwright.chromium)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._playwright, name)


@asynccontextmanager
async def debian_chromium_playwright() -> AsyncIterator[_DebianPlaywright]:
    """``async_playwright()`` as JupyterHub's browser conftest uses it, on Debian's Chromium."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        yield _DebianPlaywright(playwright)


#: markers JupyterHub's suites use (registered in its own pytest settings, not shipped)
JUPYTERHUB_MARKERS = ("browser", "db", "group", "role", "services", "slow", "ssl", "user")


def pytest_configure(config: pytest.Config) -> None:
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # a handler (unlike "ignored") is not inherited: spawned servers get the default
        signal.signal(signal.SIGINT, signal.default_int_handler)
    for marker in JUPYTERHUB_MARKERS:
        config.addinivalue_line("markers", f"{marker}: a JupyterHub test marker")
    _wrap_mock_hub()


def pytest_plugin_registered(plugin: Any, manager: Any) -> None:
    # JupyterHub's browser conftest imported `async_playwright` into its namespace.
    if getattr(plugin, "__name__", "") == BROWSER_CONFTEST and hasattr(plugin, "async_playwright"):
        plugin.async_playwright = debian_chromium_playwright


#: true once token.js has bound the token form's submit handler (it does so with jQuery,
#: which keeps each element's handlers in ``$._data(element, "events")``)
TOKEN_FORM_READY = """() => {
    const form = document.getElementById("request-token-form");
    const $ = window.jQuery;
    return Boolean(form && $ && $._data && ($._data(form, "events") || {}).submit);
}"""


def _print_what_the_page_meets(page: Any) -> None:
    """Print the page's script errors, failed requests and error responses as they happen.

    Printed output is shown with a failed test's report, beside the page's HTML that
    JupyterHub's fixture prints: a token that never appeared then says whether its request
    was refused, failed or never sent.
    """

    def on_console(message: Any) -> None:
        if message.type in ("error", "warning"):
            print(f"[page console {message.type}] {message.text}")

    def on_response(response: Any) -> None:
        if response.status >= 400:
            print(f"[page response {response.status}] {response.request.method} {response.url}")

    def on_request_failed(request: Any) -> None:
        print(f"[page request failed: {request.failure}] {request.method} {request.url}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: print(f"[page script error] {error}"))
    page.on("response", on_response)
    page.on("requestfailed", on_request_failed)


def _wait_for_token_page_scripts() -> None:
    module = sys.modules.get(BROWSER_TESTS)
    original = getattr(module, "open_token_page", None)
    if original is None or getattr(original, "_richprogress_wrapped", False):
        return

    async def open_token_page(app: Any, browser: Any, user: Any) -> None:
        _print_what_the_page_meets(browser)
        await original(app, browser, user)
        await browser.wait_for_function(TOKEN_FORM_READY)

    open_token_page._richprogress_wrapped = True  # type: ignore[attr-defined]
    module.open_token_page = open_token_page  # type: ignore[union-attr]


def pytest_collection_finish(session: pytest.Session) -> None:
    _wait_for_token_page_scripts()


def pytest_report_header(config: pytest.Config) -> str:
    return "richprogress: JupyterHub's MockHub runs with richprogress.setup(c); browser: " + CHROMIUM
