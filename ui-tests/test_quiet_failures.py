"""When the events go quiet, the page still says why: a server that crashes at start, an image
without the command the hub runs, a server that never answers, a download that outlasts the
start limit. Each fails live on the pending page with its cause in one sentence, and says the
same after a reload (the failure page). Real hub, proxy, KubeSpawner, simulated cluster.

The hub here has small limits (``quiet_hub``): an 8 s start timeout and a 3 s http_timeout,
so the two scenarios only a limit ends take seconds; the others end by fail-fast.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect
from running_hub import serve

from richprogress.demo.hub import DemoHub

pytestmark = pytest.mark.browser

HTTP_TIMEOUT = 3


@pytest.fixture(scope="module")
def quiet_hub() -> Iterator[DemoHub]:
    yield from serve(DemoHub(speed=100.0, start_timeout=8.0, extra_config=f"c.KubeSpawner.http_timeout = {HTTP_TIMEOUT}\n"))


CASES = [
    pytest.param("crash-on-start", re.compile(r"^The server's program exited with code 1 right after it started, \d+ times$"),
                 id="crash-on-start"),
    pytest.param("missing-singleuser",
                 re.compile(r"^The command jupyterhub-singleuser is not in the server's image, so it could not start"),
                 id="missing-singleuser"),
    pytest.param("never-answers",
                 re.compile(rf"^The server's container is running, but the notebook server in it never answered the hub "
                            rf"on port \d+ of 127\.[\d.]+ within {HTTP_TIMEOUT} s \(it may listen on another port or "
                            r"address, or still be loading\)\.$"),
                 id="never-answers"),
    pytest.param("slow-pull-timeout",
                 re.compile(r"^The server was still pulling its image when the 8 s start limit ran out\.$"),
                 id="slow-pull-timeout"),
]


@pytest.mark.parametrize(("profile", "sentence"), CASES)
def test_the_cause_in_one_sentence_live_and_after_reload(make_hub_page, quiet_hub, profile, sentence) -> None:
    hub_page = make_hub_page(hub=quiet_hub)
    page = hub_page.page
    hub_page.spawn(profile)
    # live, on the pending page: the failure alert, in the hub's verdict
    expect(page.locator("#rp-failure")).to_be_visible()
    expect(page.locator("#rp-failure-summary")).to_have_text(sentence)
    # after a reload: the failure page says the same
    page.reload()
    expect(page.locator("#richprogress-failed")).to_be_visible()
    expect(page.locator("#rp-summary")).to_have_text(sentence)
    expect(page.locator("#rp-hint")).to_be_visible()
    text = page.locator("#richprogress-failed").inner_text()
    assert not ("did not start" in text and "while starting" in text)
    if profile == "slow-pull-timeout":
        expect(page.locator("#rp-hint")).to_contain_text("the next start may be faster")
    assert hub_page.dialogs == []
