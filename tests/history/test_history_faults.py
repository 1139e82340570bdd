"""The spawn history under faults: every spawn that ends is stored exactly once, and nothing dies.

Two kinds of case, marked ``faults``:

- **Store cases** (``fault_cases.py``; each in a process of its own, so a SIGBUS is seen as a
  death): SQLite locked by another connection, made immutable (``chattr +i``), deleted,
  filled with garbage; PostgreSQL stalled (SIGSTOP) and restarted; a store process SIGKILLed
  while 30 writes are in flight, then started again.
- **Hub cases**: a real JupyterHub (``test_history_hub``'s hub) on a real PostgreSQL that is
  stalled while spawns fail, that hub SIGKILLed during the stall and started again, and
  one whose SQLite history file another process holds locked while spawns fail.
  ``/hub/api/`` must answer within 1 s throughout.

For each: made = spawns that ended from the fault on; stored = those in the database after
recovery (by user name; each case's users are its own); duplicates = extra rows. The table
is printed at the end of the module (``scripts/fault_table.py`` prints the store cases alone).
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.fault_cases import (
    CASES,
    POSTGRES_CASES,
    chattr_works,
    run_case,
    stored_names,
    table,
    wait_stored,
)
from tests.helpers.postgres import PostgresServer, postgres_bindir

pytestmark = pytest.mark.faults

_results: list[dict[str, Any]] = []


@pytest.fixture(scope="module", autouse=True)
def fault_table(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None or not _results:
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line("")
        reporter.write_line("spawn history under faults (made = ended from the fault on):")
        for line in table(_results).splitlines():
            reporter.write_line(line)


def _skip_reason(case: str, tmp_path: Path) -> str | None:
    if case in POSTGRES_CASES and postgres_bindir() is None:
        return "PostgreSQL is not installed (scripts/dev setup installs it)"
    if case == "sqlite-unwritable" and not chattr_works(tmp_path):
        return "chattr +i does not work here (needs root and a file system with attributes)"
    return None


@pytest.mark.parametrize("case", CASES)
def test_every_spawn_that_ended_is_stored_once(case: str, tmp_path: Path) -> None:
    reason = _skip_reason(case, tmp_path)
    if reason:
        pytest.skip(reason)
    found = run_case(case)
    _results.append(found)
    assert found["died"] is None, f"the store's process died ({found['died']}):\n{found['stderr']}"
    assert found["made"] > 0
    assert found["missing"] == [], found["stderr"]
    assert found["stored"] == found["made"]
    assert found["duplicates"] == 0


# -- a real hub -------------------------------------------------------------------------------


def hub_api(work: Path) -> str:
    """The hub's own ``hub/api/`` URL (its hub port, not through the proxy): what the
    hub's event loop answers, without the proxy's latency on a busy machine."""
    config = (work / "jupyterhub_config.py").read_text()
    port = re.search(r"c\.JupyterHub\.hub_port = (\d+)", config)
    base = re.search(r"c\.JupyterHub\.base_url = ['\"]([^'\"]+)['\"]", config)
    assert port and base, "no hub_port or base_url in the generated config"
    return f"http://127.0.0.1:{port.group(1)}{base.group(1)}hub/api/"


class Pinger:
    """GET ``/hub/api/`` every 0.1 s on a thread; the slowest answer (a failed request counts
    as the time it took, at least its 5 s timeout when there was no answer), and when the
    slowest ones came (``slow``)."""

    def __init__(self, url: str) -> None:
        import requests

        self._get = requests.get
        self.url = url
        self.slowest = 0.0
        #: (seconds it took, when it was sent: time.time()), the 3 slowest
        self.slow: list[tuple[float, float]] = []
        self.failures: list[str] = []
        self.count = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Pinger:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.is_set():
            sent = time.time()
            t = time.monotonic()
            try:
                ok = self._get(self.url, timeout=5).status_code == 200
            except Exception as exc:  # noqa: BLE001 - any failure is what we measure
                ok = False
                self.failures.append(type(exc).__name__)
            took = time.monotonic() - t
            if not ok and not self.failures:
                self.failures.append("not 200")
            self.slowest = max(self.slowest, took)
            self.slow = sorted([*self.slow, (took, sent)], reverse=True)[:3]
            self.count += 1
            self._stop.wait(0.1)


def _ended(hub: Any, users: list[str]) -> None:
    """Wait until each user's default server is neither running nor starting (its spawn
    failed and ended)."""
    for user in users:
        hub.wait_api(f"users/{user}", lambda u: not u.get("servers"), f"{user}'s spawn did not end", every=0.2, settle=0)


def _spool_lines(path: Path, count: int, seconds: float = 20.0) -> bool:
    """Wait until the spool file holds ``count`` lines; whether it did (code without a
    spool goes on to be measured, and fails later)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return True
        time.sleep(0.05)
    return False


def _alive(work: Path) -> bool:
    try:
        os.kill(int((work / "hub.pid").read_text().strip()), 0)
        return True
    except (OSError, ValueError):
        return False


@contextmanager
def fault_hub(work: Path, url: str | None = None) -> Iterator[Any]:
    """``test_history_hub``'s hub (spawns that fail), its history at ``url`` (None: the
    default SQLite file in ``work``), tried again 1 s after an error instead of 60."""
    from tests.helpers.history_hub import history_hub_process

    with history_hub_process(work, history_url=url, retry_seconds=1) as hub:
        yield hub


@pytest.fixture
def postgres() -> Iterator[PostgresServer]:
    if postgres_bindir() is None:
        pytest.skip("PostgreSQL is not installed (scripts/dev setup installs it)")
    with PostgresServer() as server:
        yield server


def _record(
    case: str, users: list[str], found: dict[str, int], died: str | None, api_slowest: float
) -> None:
    stored = [u for u in users if found.get(u, 0) >= 1]
    _results.append({
        "case": case, "made": len(users), "stored": len(stored),
        "duplicates": sum(found.get(u, 0) - 1 for u in stored), "died": died,
        "api_slowest": api_slowest,
    })


def test_a_hub_on_a_stalled_postgres_answers_and_stores_every_spawn(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    users = ["alice", "bob"]
    with fault_hub(tmp_path, postgres.url) as hub, Pinger(hub_api(tmp_path)) as ping:
        postgres.pause()
        try:
            for user in users:
                hub.start_server(user, "", {})
            _ended(hub, users)
            time.sleep(2)  # the stall goes on a while after the spawns ended
        finally:
            postgres.resume()
        found = wait_stored(postgres.url, users)
        alive = _alive(tmp_path)
    _record("hub-postgres-stall", users, found, None if alive else "hub exited", ping.slowest)
    assert alive
    assert {u: found.get(u) for u in users} == {"alice": 1, "bob": 1}
    assert not ping.failures and ping.slowest < 1.0, (ping.slow, ping.failures)


def test_a_hub_killed_during_a_stall_stores_its_spawns_when_started_again(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    users = ["alice", "bob"]
    spool = tmp_path / "richprogress_history.spool"  # the default: the hub's working folder
    with fault_hub(tmp_path, postgres.url) as hub, Pinger(hub_api(tmp_path)) as ping:
        postgres.pause()
        for user in users:
            hub.start_server(user, "", {})
        _ended(hub, users)
        spooled = _spool_lines(spool, len(users))
        os.kill(int((tmp_path / "hub.pid").read_text().strip()), signal.SIGKILL)
        slowest_before_kill, slow_before_kill = ping.slowest, ping.slow
    postgres.resume()
    assert stored_names(postgres.url).keys().isdisjoint(users)  # the killed hub stored none
    # started again: the spool is stored at start, before any page asks for the history
    with fault_hub(tmp_path, postgres.url) as hub, Pinger(hub_api(tmp_path)) as ping2:
        found = wait_stored(postgres.url, users)
        alive = _alive(tmp_path)
    _record("hub-sigkill-in-stall", users, found, None if alive else "hub exited",
            max(slowest_before_kill, ping2.slowest))
    assert spooled, f"the spool {spool} did not get a line per ended spawn"
    assert {u: found.get(u) for u in users} == {"alice": 1, "bob": 1}
    assert alive
    assert slowest_before_kill < 1.0 and ping2.slowest < 1.0, (slow_before_kill, ping2.slow)
    assert not ping2.failures


def test_a_hub_whose_sqlite_file_is_locked_answers_and_stores_every_spawn(tmp_path: Path) -> None:
    import sqlite3

    users = ["alice", "bob"]
    path = tmp_path / "richprogress_history.sqlite"  # the default: the hub's working folder
    url = f"sqlite:///{path}"
    with fault_hub(tmp_path) as hub, Pinger(hub_api(tmp_path)) as ping:
        # another process holds the write lock longer than SQLite's 5 s busy timeout
        holder = sqlite3.connect(str(path), timeout=1, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            for user in users:
                hub.start_server(user, "", {})
            _ended(hub, users)
            time.sleep(6)  # past the busy timeout: the writes failed, the spawns wait
            assert stored_names(url) == {} or stored_names(url).keys().isdisjoint(users)
        finally:
            holder.execute("COMMIT")
            holder.close()
        found = wait_stored(url, users)
        alive = _alive(tmp_path)
    _record("hub-sqlite-locked", users, found, None if alive else "hub exited", ping.slowest)
    assert alive
    assert {u: found.get(u) for u in users} == {"alice": 1, "bob": 1}
    assert not ping.failures and ping.slowest < 1.0, (ping.slow, ping.failures)
