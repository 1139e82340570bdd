"""The container's last log lines on the failure page, in Chromium.

The hub is ``tests/web/test_container_log_hub.py``'s (``LastWordsSpawner`` of
``tests.helpers.last_words``: a start that fails after its container "wrote" a log holding a
token, a password and markup), started with ``tests.helpers.hub.hub_process``. The owner opens the failure page: the block is closed, opens
on a click, shows the lines as text (the markup inert, the secrets redacted), and its Copy
button puts exactly those lines on the clipboard.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from tests.helpers import last_words
from tests.helpers.hub import Hub, hub_process


@pytest.fixture(scope="module")
def failed_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    work = tmp_path_factory.mktemp("lastwords-ui")
    tokens = {user: f"token-{i}-{os.urandom(8).hex()}" for i, user in enumerate(last_words.USERS)}
    with hub_process(
        work,
        last_words.SPAWNER_CODE,
        spawner_class="LastWordsSpawner",
        users=last_words.USERS,
        tokens=tokens,
        extra_config=last_words.EXTRA_CONFIG,
    ) as hub:
        hub.start_server("alice")
        hub.wait_api(
            "richprogress/users/alice/timeline",
            lambda data: data["outcome"] == "failed",
            "alice's spawn did not fail",
            every=0.1,
            settle=0.3,
        )
        yield hub


def test_the_owner_opens_the_last_lines_and_copies_them(browser: Browser, failed_hub: Hub) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=failed_hub.url.split("/prefix/")[0])
    dialogs: list[Any] = []
    try:
        page = context.new_page()
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{failed_hub.url}hub/login")
        page.fill("#username_input", "alice")
        page.fill("#password_input", "x")
        page.click("#login_submit")
        page.wait_for_url(lambda url: "/hub/login" not in url)
        page.goto(f"{failed_hub.url}hub/spawn-pending/alice")
        expect(page.locator("body")).to_have_attribute("data-richprogress", "ready")
        block = page.locator("#rp-log-details")
        lines = page.locator("#rp-log")
        expect(block).to_be_visible()
        expect(block).not_to_have_attribute("open", "")
        expect(lines).to_be_hidden()
        block.locator("summary").click()
        expect(lines).to_be_visible()
        shown = lines.text_content() or ""
        assert shown.splitlines()[-1] == last_words.LAST_LINE
        assert "JUPYTERHUB_API_TOKEN=[redacted]" in shown and "DB_PASSWORD=[redacted]" in shown
        assert last_words.TOKEN not in page.content() and last_words.SECRET not in page.content()
        # the log's markup is text: no element made of it, no script run
        assert "<script>alert(1)</script>" in shown
        assert lines.locator("script").count() == 0 and dialogs == []
        expect(page.locator("#rp-log-heading")).to_contain_text("container notebook")
        # monospace, like the report below it
        assert "mono" in page.eval_on_selector("#rp-log", "e => getComputedStyle(e).fontFamily")
        copy = page.locator("#rp-copy-log")
        expect(copy).to_be_visible()
        copy.click()
        expect(copy).to_have_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == shown
    finally:
        context.close()
