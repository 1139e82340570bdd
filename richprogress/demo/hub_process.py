"""How a JupyterHub process is started, awaited and stopped: the one way the demo and the
tests run a real hub (``DemoHub`` for the demo's config on the simulated cluster,
``tests.helpers.hub.hub_process`` for a test's own spawner code).

The hub leads a process group of its own, so a Ctrl-C in a launcher's terminal reaches
only the launcher, and stopping the group also ends the configurable-http-proxy the hub
started in it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import IO


class DemoHubError(RuntimeError):
    """A hub could not start; the message says what is missing or what failed."""


def launch_jupyterhub(config: Path, *, cwd: Path, env: Mapping[str, str], log: IO[bytes]) -> subprocess.Popen[bytes]:
    """``jupyterhub -f config`` in ``cwd``, its output into ``log``, in its own session."""
    return subprocess.Popen(
        [sys.executable, "-m", "jupyterhub", "-f", str(config)],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
    )


def wait_until_answering(proc: subprocess.Popen[bytes], url: str, *, timeout: float, log: Path) -> None:
    """Poll ``{url}hub/api/`` until it answers 200; raise DemoHubError (with the end of
    ``log``) if the hub exits first or ``timeout`` seconds pass.

    A busy machine may keep a starting hub from answering for a while: a refused
    connection or a read timeout is "not yet", until the deadline.
    """
    api = f"{url}hub/api/"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise DemoHubError(
                f"jupyterhub exited with status {proc.returncode} during start-up; "
                f"last log lines:\n{log_tail(log)}"
            )
        try:
            with urllib.request.urlopen(api, timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    raise DemoHubError(f"jupyterhub did not answer at {api} within {timeout:.0f} s; last log lines:\n{log_tail(log)}")


def terminate(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM, wait up to ``timeout`` seconds, then SIGKILL; then end whatever is still in
    the process group it led (the proxy runs in the hub's)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass


def log_tail(path: Path, lines: int = 25) -> str:
    """The last ``lines`` lines of a log, or why there are none."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty)"
