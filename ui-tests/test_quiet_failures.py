"""When the events go quiet, the page still says why: a server that crashes at start, an image
without the command the hub runs, a server that never answers, a download that outlasts the
start limit. Each fails live on the pending page with its cause in one sentence, and says the
same after a reload (the failure page). Real hub, proxy, KubeSpawner, simulated cluster.

Then, as a user who tries again: the spawn form's notice names the same cause and leads to
the failure page, told from the stored spawn. And after a hub restart on the same state
(four users at once, one scenario each) every failure page and home notice still says it;
the owner sees the container's last lines where a container ran, another user gets none.

The hubs here have small limits (``QUIET``): an 8 s start timeout and a 3 s http_timeout,
so the two scenarios only a limit ends take seconds; the others end by fail-fast.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from playwright.sync_api import Page, expect

from richprogress.demo.hub import DemoHub
from tests.helpers.demo_hub import restartable, serve

HTTP_TIMEOUT = 3
#: the small limits of the hubs here (the module's, and the one a test restarts)
QUIET: dict[str, Any] = {
    "speed": 100.0,
    "start_timeout": 8.0,
    "extra_config": f"c.KubeSpawner.http_timeout = {HTTP_TIMEOUT}\n",
}


@pytest.fixture(scope="module")
def quiet_hub() -> Iterator[DemoHub]:
    yield from serve(DemoHub(**QUIET))


CASES = [
    # the traceback in its log names the module it lacks (the exit is in the rows)
    pytest.param("crash-on-start",
                 re.compile(r"^Python could not find the module jupyterlab_git \(ModuleNotFoundError in the server's log\)$"),
                 id="crash-on-start"),
    pytest.param("missing-singleuser",
                 re.compile(r"^The command jupyterhub-singleuser is not in the server's image, so it could not start"),
                 id="missing-singleuser"),
    # its log says where it listens: not where the hub waits
    pytest.param("never-answers",
                 re.compile(r"^The notebook server listens on port 18888, but the hub waits for it on port \d+ \(from the "
                            r"server's log\)$"),
                 id="never-answers"),
    pytest.param("slow-pull-timeout",
                 re.compile(r"^The server was still pulling its image when the 8 s start limit ran out\.$"),
                 id="slow-pull-timeout"),
]


#: each scenario's cause sentence, as CASES says it (the one place that does)
SENTENCES: dict[str, re.Pattern[str]] = {str(case.values[0]): cast(re.Pattern[str], case.values[1]) for case in CASES}


def expect_notice(page: Page, sentence: re.Pattern[str]) -> None:
    """The page (server-rendered) has the owner's one line: "The last start of your server
    failed <when>: <the cause sentence> Show what went wrong"."""
    notice = page.locator(".rp-notice")
    expect(notice).to_have_count(1)
    line = " ".join(notice.inner_text().split())  # the template's line breaks are spaces
    said = re.fullmatch(r"The last start of your server failed [^:]+: (.+) Show what went wrong", line)
    assert said and sentence.search(said[1]), line


def expect_failure_pages(hub_page: Any, sentence: re.Pattern[str]) -> None:
    """Both failure pages say the sentence: JupyterHub's (``spawn-pending``) and the one the
    notices link to (``richprogress/failed``), read from the stored spawn."""
    page = hub_page.page
    for path in ("spawn-pending", "richprogress/failed"):
        page.goto(f"{hub_page.hub.url}hub/{path}/{hub_page.user_path}")
        expect(page.locator("#richprogress-failed")).to_be_visible()
        expect(page.locator("#rp-summary")).to_have_text(sentence)


@pytest.mark.parametrize(("profile", "sentence"), CASES)
def test_the_cause_in_one_sentence_live_and_after_reload(
    make_hub_page: Callable[..., Any], quiet_hub: DemoHub, images_dir: Path, profile: str, sentence: re.Pattern[str]
) -> None:
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
    # to try again the user opens the spawn form (JupyterHub replaces the failed spawner
    # there): its notice names the same cause, its link leads to the failure page, and
    # JupyterHub's own failure page, now told from the stored spawn, says it too
    page.goto(f"{quiet_hub.url}hub/spawn")
    expect_notice(page, sentence)
    page.screenshot(path=str(images_dir / f"quiet-{profile}-spawn-form.png"))
    page.locator(".rp-notice-link").click()
    page.wait_for_url(f"**/hub/richprogress/failed/{hub_page.user_path}")
    expect(page.locator("#rp-summary")).to_have_text(sentence)
    expect_failure_pages(hub_page, sentence)
    assert hub_page.dialogs == []


#: the last line the container wrote, in the scenarios where one ran
LAST_LOG_LINES: dict[str, re.Pattern[str]] = {
    "crash-on-start": re.compile(r"^ModuleNotFoundError: No module named 'jupyterlab_git'$"),
    "never-answers": re.compile(r"^\[I [\d:. -]+ ServerApp\] http://127\.[\d.]+:18888/user/[^/]+/$"),
}


@pytest.fixture
def restartable_quiet_hub(tmp_path: Path) -> Iterator[Callable[..., DemoHub]]:
    """``start()``: a hub with ``QUIET``'s limits; again after ``stop()``: a restart on the same state."""
    yield from restartable(tmp_path / "state", **QUIET)


def test_each_cause_lasts_across_a_hub_restart(
    restartable_quiet_hub: Callable[..., DemoHub], make_hub_page: Callable[..., Any]
) -> None:
    """Four users, one scenario each, then the hub restarts on the same state: each failure
    page and home notice still names its cause, and the container's last lines are the
    owner's (the default scenario's block itself: test_container_log_page)."""
    hub = restartable_quiet_hub()
    owners = {profile: make_hub_page(hub=hub) for profile in SENTENCES}
    # the four start at once: each waits for its own verdict below, not for the others
    for profile, owner in owners.items():
        owner.spawn(profile)
    for profile, owner in owners.items():
        expect(owner.page.locator("#rp-failure-summary")).to_have_text(SENTENCES[profile])
    hub.stop()
    hub = restartable_quiet_hub()
    shown: dict[str, list[str]] = {}  # the log lines each owner sees
    for profile, owner in owners.items():
        owner.hub = hub
        page = owner.page
        page.goto(f"{hub.url}hub/home")  # the same browser: its cookie still works
        if "/hub/login" in page.url:
            owner.login()
        expect_failure_pages(owner, SENTENCES[profile])
        # the owner sees the container's last lines where a container ran, and no line where
        # none did (missing-singleuser's block says the container wrote nothing)
        block = page.locator("#rp-log-details")
        if profile in LAST_LOG_LINES:
            expect(block).to_be_visible()
            block.locator("summary").click()
            shown[profile] = (page.locator("#rp-log").text_content() or "").splitlines()
            assert shown[profile] and LAST_LOG_LINES[profile].match(shown[profile][-1]), shown[profile]
        else:
            expect(page.locator("#rp-log")).to_have_count(0)
        page.goto(f"{hub.url}hub/home")
        expect_notice(page, SENTENCES[profile])
    # another user, not an admin, gets neither failure page of an owner whose container
    # wrote its log (JupyterHub's answer to a server one has no scope on), and none of its lines
    other = make_hub_page(hub=hub)
    for profile, lines in shown.items():
        for path in ("spawn-pending", "richprogress/failed"):
            response = other.page.goto(f"{hub.url}hub/{path}/{owners[profile].user_path}")
            assert response is not None and response.status == 404
            # JupyterHub 6 adds "No access to resources or resources not found"; 5.5 says "Not Found"
            expect(other.page.locator("h1")).to_have_text(re.compile(r"^404 : (No access to resources|Not Found)"))
            body = other.page.locator("body").inner_text()
            assert not [line for line in lines if line.strip() and line in body]
    assert [owner.dialogs for owner in owners.values()] == [[] for _owner in owners]
