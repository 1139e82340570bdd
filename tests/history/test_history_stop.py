"""A hub stops in bounded time, whatever its history database does.

A process holding the hub's store (``history_for``, as ``setup(c)`` makes it) ends a spawn
while its PostgreSQL is stalled (SIGSTOP), then exits as a stopped hub does: it must be
gone within a few seconds (``writer.STOP_SECONDS``, the threads are daemon threads), with
the spawn in the spool; the next start stores it, once, and a clean exit cuts the spool.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers.fault_cases import ROOT, stored_names, wait_stored
from tests.helpers.postgres import PostgresServer, postgres_bindir

CHILD = textwrap.dedent(
    """
    import logging, sys
    sys.path[:0] = {paths!r}
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    from traitlets.config import Config
    from richprogress.history import history_for
    from tests.helpers.fault_cases import Spawns

    config = Config()
    config.SpawnHistory.url = {url!r}
    config.SpawnHistory.spool_path = {spool!r}
    store = history_for(config)
    Spawns({prefix!r}).end(store, {count})
    store.wait_spooled()
    print("ended", flush=True)
    sys.stdin.readline()
    """
)


def run_child(url: str, spool: Path, prefix: str, count: int, before_exit: object = None) -> float:
    """Run the store's process; seconds from its being told to exit to its end."""
    code = CHILD.format(paths=[str(ROOT)], url=url, spool=str(spool), prefix=prefix, count=count)
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ended"
        if callable(before_exit):
            before_exit()
        began = time.monotonic()
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait(60)
        return time.monotonic() - began
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_stalled_postgres_does_not_hold_a_stopping_hub(tmp_path: Path) -> None:
    if postgres_bindir() is None:
        pytest.skip("PostgreSQL is not installed (scripts/dev setup installs it)")
    spool = tmp_path / "history.spool"
    with PostgresServer() as server:
        run_child(server.url, spool, "warm", 1)  # the tables exist; a clean exit cut the spool
        assert spool.read_bytes() == b""
        server.pause()
        try:
            took = run_child(server.url, spool, "stall", 2)
        finally:
            server.resume()
        assert took < 8.0, f"the process took {took:.1f} s to exit"
        assert spool.read_bytes().count(b'"snapshot"') == 2  # durable, for the next start
        assert stored_names(server.url).keys().isdisjoint(["stall-1", "stall-2"])
        run_child(server.url, spool, "next", 1)  # started again: stores them, exits cleanly
        found = wait_stored(server.url, ["stall-1", "stall-2", "next-1"])
        assert {name: found.get(name) for name in ("stall-1", "stall-2", "next-1")} == {
            "stall-1": 1,
            "stall-2": 1,
            "next-1": 1,
        }
        assert spool.read_bytes() == b""
