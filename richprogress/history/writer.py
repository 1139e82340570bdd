"""Writing finished spawns: off the event loop, in order, within the retention limits.

Take a finished spawn from the hub's event loop and get it into the
database on one writer thread, deleting what retention no longer keeps.

- ``record()`` runs on the loop: it only snapshots the timeline (a list copy) and the
  spawner's facts, keeps the snapshot in memory (``MemorySpawns``) and queues the write.
  Diagnosis, JSON and the database work happen on the writer thread. One thread: SQLite
  wants a single writer, and writes stay in order.
- After each write, the server's spawns beyond ``keep_per_server`` are deleted through the
  per-server index (no scan of other servers). Spawns older than ``max_age_days`` are
  deleted at most every ``sweep_seconds``, through the time index.
- A write that fails leaves the spawn in memory (the ``Database`` logs the outage once).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection

from richprogress.history.database import Database
from richprogress.history.memory import MemorySpawns, ServerKey
from richprogress.history.reads import owned_by
from richprogress.history.rows import build_row, naive_utc, snapshot
from richprogress.history.schema import spawns_table
from richprogress.stream.spawn_end import SpawnEnd

__all__ = ["RetentionSettings", "SpawnWriter"]

T = TypeVar("T")


class RetentionSettings(Protocol):
    """What ``SpawnWriter`` reads from its owner (``SpawnHistory``), at each write."""

    @property
    def keep_per_server(self) -> int: ...

    @property
    def max_age_days(self) -> float: ...

    @property
    def sweep_seconds(self) -> float: ...

    @property
    def log(self) -> logging.Logger | logging.LoggerAdapter[Any]: ...


class SpawnWriter:
    """The writer thread of the spawn history, and the retention it applies."""

    def __init__(
        self,
        settings: RetentionSettings,
        database: Database,
        memory: MemorySpawns,
        clock: Callable[[], datetime],
    ) -> None:
        self._settings = settings
        self._database = database
        self._memory = memory
        self._clock = clock
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rp-history-write")
        self._last_sweep = 0.0

    def record(self, end: SpawnEnd) -> Future[Any] | None:
        """Keep a finished spawn: snapshot now (on the loop), write on the writer thread.

        Never raises: a spawn must not fail because its history could not be kept."""
        try:
            snap = snapshot(end)
        except Exception:
            self._settings.log.exception("richprogress: could not read a finished spawn for the history")
            return None
        key = (snap["user_name"], snap["server_name"])
        self._memory.keep(key, snap)
        return self._thread.submit(self.write, key, snap)

    def write(self, key: ServerKey, snap: dict[str, Any]) -> int | None:
        """Write one snapshot now, on the calling thread (the writer thread, or a benchmark);
        the new row's id, or None when the database could not take it."""
        row = build_row(snap)
        engine = self._database.connect()
        if engine is None:
            self._memory.written(key, snap, row, None)
            return None
        operation = "write"
        try:
            with engine.begin() as conn:
                result = conn.execute(insert(spawns_table).values(**row))
                new_id = result.inserted_primary_key[0]  # type: ignore[index]
                operation = "prune"  # the insert is undone with it: the spawn stays in memory
                self._trim_server(conn, row["user_name"], row["server_name"])
                self._sweep(conn)
                operation = "write"  # the commit, as the block ends
        except Exception as exc:
            self._database.went_down(exc, operation)
            self._memory.written(key, snap, row, None)
            return None
        self._memory.written(key, snap, row, int(new_id))
        return int(new_id)

    def _trim_server(self, conn: Connection, user: str, server: str) -> None:
        """Delete this server's spawns beyond ``keep_per_server`` (per-server index only)."""
        t = spawns_table
        where = owned_by(user, server)  # by key and whole name, as the reads find them
        cutoff = conn.execute(
            select(t.c.id)
            .where(where)
            .order_by(t.c.id.desc())
            .offset(self._settings.keep_per_server)
            .limit(1)
        ).scalar()
        if cutoff is not None:
            conn.execute(delete(t).where(where, t.c.id <= cutoff))

    def _sweep(self, conn: Connection) -> None:
        """Delete spawns older than ``max_age_days``, at most every ``sweep_seconds``."""
        if self._settings.max_age_days <= 0:
            return
        now = time.monotonic()
        if self._last_sweep and now - self._last_sweep < self._settings.sweep_seconds:
            return
        self._last_sweep = now
        cutoff = naive_utc(self._clock() - timedelta(days=self._settings.max_age_days))
        conn.execute(delete(spawns_table).where(spawns_table.c.finished_at < cutoff))

    def after_writes(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``fn(*args)`` on the writer thread once the writes queued so far are done
        (``flush`` waits on a no-op; a test can hold the thread with a gate)."""
        return self._thread.submit(fn, *args)

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until every queued write is done (tests, benchmarks, shutdown)."""
        self.after_writes(lambda: None).result(timeout)

    def close(self) -> None:
        """Finish the queued writes and stop the writer thread."""
        self._thread.shutdown(wait=True)
