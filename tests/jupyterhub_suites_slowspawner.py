"""JupyterHub's ``test_spawn_pending_progress`` flow with RichProgressMixin on its SlowSpawner.

JupyterHub's own browser test (``jupyterhub.tests.browser.test_browser``) runs its stock
MockSpawner, whose stream carries no records. This runs the same flow with our mixin on
JupyterHub's ``SlowSpawner``, so the live page renders records, and checks what that test
checks through JupyterHub's own row selector (``div.progress-log-event``): the rows appear,
in order, while the server starts, and the page then lands on the running server.

Not collected by the main suite (it needs JupyterHub's fixtures); ``scripts/dev test`` runs
it with JupyterHub's conftests as plugins::

    python3 -m pytest -p jupyterhub_suites_plugin -p jupyterhub.tests.conftest \\
        -p jupyterhub.tests.browser.conftest tests/jupyterhub_suites_slowspawner.py
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from jupyterhub.tests.browser.test_browser import open_spawn_pending
from jupyterhub.tests.mocking import SlowSpawner
from playwright.async_api import expect

from richprogress.stream.mixin import RichProgressMixin


class RichSlowSpawner(RichProgressMixin, SlowSpawner):
    """JupyterHub's SlowSpawner (``stop()`` takes no ``now``) with richprogress's timeline."""


#: records, in sessionStorage, the longest list of row sentences that JupyterHub's own row
#: selector (div.progress-log-event) found on the page
RECORD_STOCK_ROWS = """
new MutationObserver(() => {
  const rows = [...document.querySelectorAll("div.progress-log-event .rp-message")].map((m) => m.textContent);
  const kept = JSON.parse(sessionStorage.getItem("rp-stock-rows") || "[]");
  if (rows.length > kept.length) sessionStorage.setItem("rp-stock-rows", JSON.stringify(rows));
}).observe(document, {childList: true, subtree: true});
"""


@pytest.fixture
def rich_slow_spawn(app: Any) -> Iterator[None]:
    with mock.patch.dict(app.tornado_settings, {"spawner_class": RichSlowSpawner}):
        yield


async def test_spawn_pending_progress_rows_are_stock_rows(
    app: Any, browser: Any, no_patience: Any, user_special_chars: Any, rich_slow_spawn: Any
) -> None:
    user = user_special_chars.user
    urlname = user_special_chars.urlname
    # Also keep every list of rows the page showed, through the stock selector: on a busy
    # machine the server can be ready before the polling watcher below looked once.
    await browser.context.add_init_script(RECORD_STOCK_ROWS)
    await open_spawn_pending(app, browser, user_special_chars)
    launch_btn = browser.locator("//div[@class='text-center']").get_by_role(
        "button", name="Launch Server"
    )
    await expect(launch_btn).to_be_enabled()
    async with browser.expect_navigation(url=re.compile(".*/spawn-pending/" + f"{urlname}")):
        await launch_btn.click()

    # the hub's first message, then what SlowSpawner's own progress() says, as records
    expected = ["Server requested", "Spawning server..."]
    rows = browser.locator("div.progress-log-event")
    seen: list[str] = []

    async def wait_for_ready() -> None:
        while user.spawner.pending:
            await asyncio.sleep(0.05)

    async def watch_rows() -> None:
        nonlocal seen
        while True:
            texts = [await m.text_content() for m in await rows.locator(".rp-message").all()]
            # rows come in order and never double (a replay updates rows in place)
            assert texts == expected[: len(texts)], texts
            seen = texts
            await asyncio.sleep(0.05)

    async with browser.expect_navigation(url=re.compile(".*/user/" + f"{urlname}/")):
        done, pending = await asyncio.wait(
            [asyncio.create_task(wait_for_ready()), asyncio.create_task(watch_rows())],
            timeout=30,
            return_when=asyncio.FIRST_COMPLETED,
        )
        for task in done:
            await task  # a failed assertion in the watcher surfaces here
        for task in pending:
            task.cancel()
    # JupyterHub's row selector saw every row before the page moved on to the server
    recorded = await browser.evaluate("JSON.parse(sessionStorage.getItem('rp-stock-rows') || '[]')")
    assert recorded == expected, (recorded, seen)
    assert user.spawner.ready
    assert isinstance(user.spawner, RichSlowSpawner)
    # the spawn's timeline holds SlowSpawner's message as a record
    messages = [r["message"] for r in user.spawner.spawn_timeline.records()]
    assert "Spawning server..." in messages


async def test_stop_with_a_spawner_whose_stop_takes_no_arguments(
    app: Any, user_special_chars: Any, rich_slow_spawn: Any
) -> None:
    """SlowSpawner.stop() has no ``now``: the mixin forwards the hub's call unchanged."""
    user = user_special_chars.user
    await user.spawn()
    assert user.spawner.ready
    await user.stop()
    assert not user.spawner.active
