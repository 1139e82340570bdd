"""The spawn history's fault cases: a database that stalls, restarts, locks, turns read-only,
disappears or fills with garbage, and a store process SIGKILLed in the middle of writes.

Each case runs in a process of its own (``run_case``, or by hand
``python -m tests.helpers.fault_cases CASE``), so a case that kills its process (SIGBUS) is
seen as a death rather than taking the test run down. The case's process owns everything it
needs: a SQLite file in a temporary folder, or a throwaway PostgreSQL server
(``tests.helpers.postgres.PostgresServer``) it stops, SIGSTOPs and starts. Spawns end
through ``SpawnHistory.record`` with real timelines, each with a user name of its own, so
"stored" is counted from the database by name whatever the code under test stores (this
file also measures a release without the spool). Counted are the spawns that end from the
fault's start on (the spawns before it open the database; a deleted file takes its own away).

A case prints one JSON line: ``{"case", "made", "stored", "duplicates", "missing"}``.
``scripts/fault_table.py`` prints them all as a table;
``tests/history/test_history_faults.py`` asserts.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

#: the repository's root, where ``tests.helpers`` is found
ROOT = Path(__file__).absolute().parents[2]

#: how long a fault lasts, in seconds (longer than SQLite's 5 s busy timeout where it matters)
FAULT_SECONDS = 3.0
#: how long the store may take to store everything once the fault is over
RECOVERY_SECONDS = 20.0

SQLITE_CASES = ["sqlite-locked", "sqlite-unwritable", "sqlite-deleted", "sqlite-garbage", "sqlite-sigkill"]
POSTGRES_CASES = ["postgres-stall", "postgres-restart", "postgres-sigkill"]
CASES = SQLITE_CASES + POSTGRES_CASES


def chattr_works(folder: Path) -> bool:
    """Whether ``chattr +i`` can make a file immutable here (root, and a file system that
    supports it)."""
    if shutil.which("chattr") is None:
        return False
    probe = folder / "chattr-probe"
    probe.write_text("x")
    try:
        if subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode != 0:
            return False
        try:
            with open(probe, "a") as f:
                f.write("y")
            return False  # immutable did not stop a write
        except OSError:
            return True
    finally:
        subprocess.run(["chattr", "-i", str(probe)], capture_output=True)
        probe.unlink()


# -- spawns -------------------------------------------------------------------------------


def _end(user: str) -> Any:
    from richprogress.model.timeline import SpawnTimeline
    from richprogress.stream.spawn_end import SpawnEnd

    started = datetime.now(timezone.utc) - timedelta(seconds=40)
    finished = started + timedelta(seconds=30)
    timeline = SpawnTimeline(started_at=started, clock=lambda: finished)
    timeline.add(
        {
            "id": f"ev-{user}", "timestamp": None, "first_timestamp": None, "type": "Warning",
            "severity": "error", "reason": "Failed", "count": 1, "component": "kubelet",
            "object": {"kind": "Pod", "name": f"jupyter-{user}", "container": None, "field_path": None},
            "message": "The image does not exist", "raw_message": "not found", "rule": None,
        }
    )
    timeline.finish("failed", "")
    spawner = SimpleNamespace(
        user=SimpleNamespace(name=user), name="", namespace="jhub", pod_name=f"jupyter-{user}",
        image="quay.io/x/nope:1", user_options={}, profile_list=[],
    )
    return SpawnEnd(spawner, timeline, "failed")


class Spawns:
    """Spawns ended through one store, named ``<prefix>-<n>``; the counted ones listed."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.counted: list[str] = []
        self._n = 0

    def end(self, store: Any, count: int = 1, *, counted: bool = True) -> list[str]:
        names = []
        for _ in range(count):
            self._n += 1
            name = f"{self.prefix}-{self._n}"
            store.record(_end(name))
            names.append(name)
            if counted:
                self.counted.append(name)
        return names


def stored_names(url: str) -> dict[str, int]:
    """How many rows each user name has in the spawn table ({} when it cannot be read)."""
    import sqlalchemy as sa

    if url.startswith("sqlite") and not Path(url.split("///", 1)[1]).exists():
        return {}
    engine = sa.create_engine(url, connect_args={"connect_timeout": 5} if "postgresql" in url else {})
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text("SELECT user_name, count(*) FROM richprogress_spawns GROUP BY user_name")
            ).all()
        return {str(name): int(n) for name, n in rows}
    except Exception:
        return {}
    finally:
        engine.dispose()


def wait_stored(url: str, names: list[str], seconds: float = RECOVERY_SECONDS) -> dict[str, int]:
    """The stored counts, once every name is stored or ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    while True:
        found = stored_names(url)
        if all(found.get(n, 0) >= 1 for n in names) or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def result(case: str, names: list[str], found: dict[str, int]) -> dict[str, Any]:
    stored = [n for n in names if found.get(n, 0) >= 1]
    return {
        "case": case,
        "made": len(names),
        "stored": len(stored),
        "duplicates": sum(found.get(n, 0) - 1 for n in stored),
        "missing": [n for n in names if n not in stored],
    }


def make_store(url: str, folder: Path) -> Any:
    """A store as a hub makes it, with a short retry (the spool beside the file, or in the
    case's folder for PostgreSQL; a release without the spool ignores those settings)."""
    from traitlets.config import Config

    from richprogress.history import SpawnHistory

    config = Config()
    config.SpawnHistory.url = url
    config.SpawnHistory.retry_seconds = 0.3
    if not url.startswith("sqlite"):  # a SQLite file has its spool beside it
        config.SpawnHistory.spool_path = str(folder / "history.spool")
    return SpawnHistory(config=config)


def settle(store: Any, seconds: float = 30.0) -> None:
    """Wait for the store's queued writes, if its writer answers within ``seconds``."""
    try:
        store.flush(seconds)
    except Exception:
        pass


# -- SQLite cases -------------------------------------------------------------------------


def _sqlite_files(path: Path) -> list[Path]:
    return [p for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists()]


def sqlite_case(case: str, folder: Path) -> dict[str, Any]:
    path = folder / "history.sqlite"
    url = f"sqlite:///{path}"
    store = make_store(url, folder)
    spawns = Spawns(case)
    spawns.end(store, 2, counted=False)
    settle(store)
    if case == "sqlite-locked":
        # another process's connection holds the write lock longer than SQLite's busy timeout
        holder = sqlite3.connect(str(path), timeout=1, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        spawns.end(store, 3)
        time.sleep(FAULT_SECONDS + 4)
        holder.execute("COMMIT")
        holder.close()
    elif case == "sqlite-unwritable":
        files = _sqlite_files(path)
        subprocess.run(["chattr", "+i", *map(str, files)], check=True)
        try:
            spawns.end(store, 3)
            time.sleep(FAULT_SECONDS)
        finally:
            subprocess.run(["chattr", "-i", *map(str, files)], check=True)
    elif case == "sqlite-deleted":
        for p in _sqlite_files(path):
            p.unlink()
        spawns.end(store, 3)
        time.sleep(FAULT_SECONDS)
    elif case == "sqlite-garbage":
        for p in _sqlite_files(path):
            p.unlink()
        path.write_bytes(os.urandom(64 * 1024))
        spawns.end(store, 3)
        time.sleep(FAULT_SECONDS)
        path.unlink()  # the admin moves the broken file away
    spawns.end(store, 2)
    found = wait_stored(url, spawns.counted)
    store.close()
    return result(case, spawns.counted, found)


# -- PostgreSQL cases ---------------------------------------------------------------------


def postgres_case(case: str, folder: Path) -> dict[str, Any]:
    from tests.helpers.postgres import PostgresServer

    with PostgresServer() as server:
        store = make_store(server.url, folder)
        spawns = Spawns(case)
        spawns.end(store, 2, counted=False)
        settle(store)
        if case == "postgres-stall":
            server.pause()
            try:
                spawns.end(store, 3)
                time.sleep(FAULT_SECONDS)
            finally:
                server.resume()
        elif case == "postgres-restart":
            server.stop()
            spawns.end(store, 3)
            time.sleep(FAULT_SECONDS)
            server.start()
        spawns.end(store, 2)
        found = wait_stored(server.url, spawns.counted)
        store.close()
        return result(case, spawns.counted, found)


# -- a store process SIGKILLed in the middle of writes ---------------------------------------


CHILD = """
import logging, sys, time
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(process)d %(threadName)s %(message)s")
sys.path[:0] = {paths!r}
from tests.helpers.fault_cases import Spawns, make_store
from pathlib import Path
store = make_store({url!r}, Path({folder!r}))
spawns = Spawns({prefix!r})
names = spawns.end(store, {count})
durable = getattr(store, "wait_spooled", None)
if durable is not None:
    durable(30)  # every ended spawn is in the spool (fsynced): as far as the end can wait
print(" ".join(names), flush=True)
time.sleep(600)
"""


def _store_process(url: str, folder: Path, prefix: str, count: int) -> tuple[subprocess.Popen[str], list[str]]:
    code = CHILD.format(paths=list(sys.path), url=url, folder=str(folder), prefix=prefix, count=count)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, line.split()


def sigkill_case(case: str, url: str, folder: Path) -> dict[str, Any]:
    """A store process ends 30 spawns and is SIGKILLed while their writes are in flight;
    a second one (the restarted hub) ends 2 more."""
    proc, first = _store_process(url, folder, f"{case}-a", 30)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    at_kill = stored_names(url)  # how far the writes had got: they were under way
    proc2, second = _store_process(url, folder, f"{case}-b", 2)
    names = first + second
    found = wait_stored(url, names)
    code = proc2.poll()  # the restarted store must still be running
    proc2.kill()
    proc2.wait()
    if code is not None:
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit {code}"
        raise SystemExit(f"the restarted store process died ({how})")
    return {**result(case, names, found), "stored_at_kill": sum(1 for n in first if n in at_kill)}


# -- running a case -------------------------------------------------------------------------


def run_here(case: str) -> dict[str, Any]:
    """Run one case in this process; its result."""
    folder = Path(tempfile.mkdtemp(prefix="rp-fault-"))
    try:
        if case == "sqlite-sigkill":
            return sigkill_case(case, f"sqlite:///{folder / 'history.sqlite'}", folder)
        if case == "postgres-sigkill":
            from tests.helpers.postgres import PostgresServer

            with PostgresServer() as server:
                return sigkill_case(case, server.url, folder)
        if case.startswith("sqlite"):
            return sqlite_case(case, folder)
        return postgres_case(case, folder)
    finally:
        subprocess.run(["chattr", "-R", "-i", str(folder)], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


#: a case's own process: ``python -c CASE_PROCESS CASE``
CASE_PROCESS = "import sys; sys.path[:0] = {paths!r}; from tests.helpers.fault_cases import main; main(sys.argv)"


def run_case(case: str, pythonpath: str | None = None, timeout: float = 240) -> dict[str, Any]:
    """Run one case in a process of its own; its result, with ``died`` (the signal or exit
    status that ended the process, when it did not finish)."""
    env = dict(os.environ)
    # ``pythonpath`` first, before even the working folder: its richprogress runs the case;
    # this tree's helpers after it
    paths = [pythonpath or str(ROOT), str(ROOT)]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    proc = subprocess.run(
        [sys.executable, "-c", CASE_PROCESS.format(paths=paths), case],
        capture_output=True, text=True, env=env, timeout=timeout,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        died = f"signal {signal.Signals(-proc.returncode).name}" if proc.returncode < 0 else f"exit {proc.returncode}"
        return {"case": case, "made": None, "stored": None, "duplicates": None, "missing": [],
                "died": died, "stderr": proc.stderr[-3000:]}
    found: dict[str, Any] = json.loads(lines[-1])
    found["died"] = None
    found["stderr"] = proc.stderr[-3000:]
    return found


def table(results: list[dict[str, Any]]) -> str:
    """The results as a Markdown table."""
    rows = ["| case | made | stored | duplicates | process | slowest /hub/api/ |", "|---|---|---|---|---|---|"]
    for r in results:
        slowest = r.get("api_slowest")
        cells = [r["case"], r["made"], r["stored"], r["duplicates"], r.get("died") or "alive",
                 f"{slowest:.2f} s" if isinstance(slowest, float) else None]
        rows.append("| " + " | ".join("-" if c is None else str(c) for c in cells) + " |")
    return "\n".join(rows)


@contextmanager
def _quiet() -> Iterator[None]:
    import logging

    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    yield


def main(argv: list[str]) -> None:
    with _quiet():
        print(json.dumps(run_here(argv[1])), flush=True)


if __name__ == "__main__":
    main(sys.argv)
