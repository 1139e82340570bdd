"""The demo exactly as the README tells it: one command, log in, pick image-not-found, watch it
fail, reload, read why, Ctrl-C, and nothing is left running."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from playwright.sync_api import expect

from richprogress.demo.hub import descendant_pids, free_port, pid_alive

#: fast enough that image-not-found fails in about ten seconds
SPEED = "60"


def _wait_for_line(proc: subprocess.Popen[str], pattern: str, timeout: float) -> re.Match[str]:
    """Read the launcher's output until a line matches; fail with everything it printed."""
    seen: list[str] = []
    found: list[re.Match[str]] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            seen.append(line)
            match = re.search(pattern, line)
            if match:
                found.append(match)
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    if not found:
        raise AssertionError(f"no line matching {pattern!r} within {timeout} s:\n{''.join(seen)}")
    return found[0]


def test_readme_demo_walkthrough(browser, images_dir) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "richprogress.demo", "--port", str(port), "--speed", SPEED],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    children: set[int] = set()
    try:
        match = _wait_for_line(
            proc, r"Open (http://\S+) and log in with any name and password", timeout=90
        )
        url = match.group(1)
        assert url == f"http://127.0.0.1:{port}/"
        children.update(descendant_pids(proc.pid))

        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.set_default_timeout(45_000)
        page = context.new_page()
        try:
            # log in with any name and password
            page.goto(url)
            page.fill("#username_input", "readme-reader")
            page.fill("#password_input", "anything")
            page.click("#login_submit")
            page.wait_for_url(lambda current: "/hub/login" not in current)
            # the spawn form offers every scenario; pick image-not-found and start
            page.goto(f"{url}hub/spawn")
            expect(page.locator("#profile-item-happy-path")).to_be_attached()
            page.check("#profile-item-image-not-found")
            page.locator("#spawn_form [type=submit]").click()
            page.wait_for_url("**/hub/spawn-pending/readme-reader*")
            # watch it fail
            expect(page.locator("#progress-log .progress-log-event").first).to_be_visible()
            expect(page.locator("#rp-failure")).to_be_visible()
            # reload, and read why
            page.reload()
            expect(page.locator("#rp-summary")).to_contain_text("was not found in its registry")
            expect(page.locator("#rp-summary-ref")).to_contain_text("no-such-notebook")
            expect(page.locator("#rp-hint")).not_to_be_empty()
            children.update(descendant_pids(proc.pid))
        finally:
            context.close()
    finally:
        # Ctrl-C, as a person at the terminal would
        started = time.monotonic()
        children.update(descendant_pids(proc.pid))
        proc.send_signal(signal.SIGINT)
        try:
            output, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
            raise
    print(f"demo stopped {time.monotonic() - started:.1f} s after Ctrl-C")
    assert proc.returncode == 0, output
    assert "Stopped." in output
    # the hub log the demo printed at its start is kept, and said where; then tidied away,
    # so the test leaves nothing behind
    kept = re.search(r"The hub log is kept in (\S+)", output)
    assert kept, output
    log = Path(kept.group(1))
    assert log.is_file() and log.stat().st_size > 0
    shutil.rmtree(log.parent)
    # the cluster, JupyterHub and configurable-http-proxy were all running, and none is left
    assert len(children) >= 3, children
    assert [pid for pid in children if pid_alive(pid)] == []
