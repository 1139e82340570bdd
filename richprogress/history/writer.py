"""Writing finished spawns: durable at once, stored in order, exactly once, within retention.

Take a finished spawn from the hub's event loop, make it durable in the
spool, and get it into the database on one writer thread, deleting what retention no
longer keeps.

- ``record()`` runs on the loop: it only snapshots the timeline (a list copy) and the
  spawner's facts, gives the spawn its id (``spawn_uid``, a uuid), keeps the snapshot in
  memory (``MemorySpawns``) and hands it to the spool thread.
- The **spool thread** appends it to the spool and fsyncs (``spool.Spool``), then queues it
  for the database thread. It never touches the database, so a stalled database does
  not keep spawns from becoming durable. A spawn the spool could not take (a full disk,
  the bound) is **not durable**: logged, and spooled again, before the next spawn, at the
  next spawn end or retry, and once more when the store closes.
- The **database thread** stores the queue in order (``drain``): diagnosis, JSON, an
  insert unless a row with that ``spawn_uid`` is already there (a replay after a crash),
  then retention. One thread: SQLite wants a single writer, and writes stay in order.
  When the database cannot take a spawn, the queue waits (the ``Database`` logs the
  outage once; each waiting spawn is logged and counted) and is tried again after
  ``retry_seconds``, or as soon as the next spawn ends after that.
- At start, the spawns a previous run left in the spool are queued first (and kept in
  memory, so the pages show them meanwhile), each checked first (``spool_check``): a
  line that could not be shown is set aside, never kept in memory.
- **Stopping** (``close``) waits at most ``STOP_SECONDS`` for the queued writes (a stalled
  database does not hold the hub), spools what is not durable yet, and cuts the spool
  when the database holds everything. The threads are daemon threads
  (``daemon_threads``): a write stuck on the database never keeps the process alive.
- Before each write, a SQLite file that was deleted or replaced is noticed and opened again,
  and one that cannot be written is an outage (``Database.connect`` checks it).
- After each write, the server's spawns beyond ``keep_per_server`` are deleted through the
  per-server index (no scan of other servers). Spawns older than ``max_age_days`` are
  deleted at most every ``sweep_seconds``, through the time index.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from richprogress.history.daemon_threads import DaemonThreads
from richprogress.history.database import Database
from richprogress.history.memory import MemorySpawns, ServerKey
from richprogress.history.reads import owned_by
from richprogress.history.rows import build_row, naive_utc, snapshot
from richprogress.history.schema import spawns_table
from richprogress.history.spool import Spool, count_spool_event
from richprogress.history.spool_check import checked_row
from richprogress.stream.spawn_end import SpawnEnd

__all__ = ["RetentionSettings", "SpawnWriter"]

T = TypeVar("T")

#: a database write that has not answered for this long makes later spawns "waiting"
STALLED_SECONDS = 5.0
#: spawns the spool could not take (full, unwritable) that still wait in memory, at most
MAX_UNSPOOLED = 1000
#: how long ``close`` (the hub stopping) waits for the writes queued before it
STOP_SECONDS = 3.0


class RetentionSettings(Protocol):
    """What ``SpawnWriter`` reads from its owner (``SpawnHistory``), at each write."""

    @property
    def keep_per_server(self) -> int: ...

    @property
    def max_age_days(self) -> float: ...

    @property
    def sweep_seconds(self) -> float: ...

    @property
    def retry_seconds(self) -> float: ...

    @property
    def log(self) -> logging.Logger | logging.LoggerAdapter[Any]: ...


@dataclass
class Waiting:
    """A finished spawn on its way to the database."""

    uid: str
    key: ServerKey
    snap: dict[str, Any]
    #: built once (the diagnosis walks every record), kept across retries
    row: dict[str, Any] | None = None
    #: counted and logged as waiting already
    waited: bool = False
    #: in the spool file (False: in memory only, not durable)
    spooled: bool = True
    #: the database thread is done with it (stored, refused or dropped)
    done: bool = False


class SpawnWriter:
    """The spool and database threads of the spawn history, and the retention it applies."""

    def __init__(
        self,
        settings: RetentionSettings,
        database: Database,
        memory: MemorySpawns,
        clock: Callable[[], datetime],
        spool: Spool | None = None,
    ) -> None:
        self._settings = settings
        self._database = database
        self._memory = memory
        self._clock = clock
        self._spool = spool
        self._spool_thread = DaemonThreads("rp-history-spool")
        self._thread = DaemonThreads("rp-history-write")
        self._last_sweep = 0.0
        #: spawns not yet stored, oldest first (appended by the spool thread)
        self._queue: deque[Waiting] = deque()
        self._queue_lock = threading.Lock()
        self._retry: threading.Timer | None = None
        #: when the database thread began the write it is in (None between writes)
        self._writing_since: float | None = None
        self._closed = False
        if spool is not None:
            self._spool_thread.submit(self._load_spool)

    # -- on the event loop ------------------------------------------------------------------

    def record(self, end: SpawnEnd) -> Future[Any] | None:
        """Keep a finished spawn: snapshot now (on the loop), spool and store on threads.

        Never raises: a spawn must not fail because its history could not be kept."""
        try:
            snap = snapshot(end)
        except Exception:
            self._settings.log.exception(
                "richprogress: could not read a finished spawn for the history"
            )
            return None
        key = (snap["user_name"], snap["server_name"])
        self._memory.keep(key, snap)
        try:
            return self._spool_thread.submit(
                self._spool_and_queue, Waiting(uuid.uuid4().hex, key, snap)
            )
        except RuntimeError:  # the store was closed (the hub is stopping): memory has it
            return None

    # -- the spool thread -------------------------------------------------------------------

    def _load_spool(self) -> None:
        assert self._spool is not None
        try:
            # each line judged alone: one that cannot be stored and shown is set aside
            left = self._spool.load(check=checked_row)
        except Exception:  # a bug here must not cost the hub its history
            self._settings.log.exception(
                "richprogress: cannot read the spawn spool %s", self._spool.path
            )
            return
        if not left:
            return
        self._settings.log.info(
            "richprogress: %d finished spawns wait in the spawn spool %s; storing them",
            len(left),
            self._spool.path,
        )
        with self._queue_lock:
            for spawn in left:
                key = (spawn.snapshot["user_name"], spawn.snapshot["server_name"])
                self._memory.keep(key, spawn.snapshot)
                self._queue.append(
                    Waiting(spawn.uid, key, spawn.snapshot, row=spawn.checked, waited=True)
                )
        self._thread.submit(self.drain)

    def _spool_and_queue(self, spawn: Waiting) -> None:
        # the spawns that could not be spooled before go first: the file keeps end order
        self._respool()
        if self._spool is not None:
            spawn.spooled = self._spool.append(spawn.uid, spawn.snap)
        with self._queue_lock:
            if not spawn.spooled:
                unspooled = sum(1 for s in self._queue if not s.spooled)
                if unspooled >= MAX_UNSPOOLED:
                    self._settings.log.warning(
                        "richprogress: the spawn of %s/%s (id %s) is not durable and %d others wait "
                        "in memory already; only the server's last spawn is kept, in memory",
                        spawn.key[0],
                        spawn.key[1],
                        spawn.uid,
                        unspooled,
                    )
                    return
            self._queue.append(spawn)
        if not spawn.spooled and self._spool is not None:
            self._settings.log.warning(
                "richprogress: the spawn of %s/%s (id %s) is not durable: the spool %s could not "
                "take it (the log says why); it waits in memory only and is spooled when there is room",
                spawn.key[0],
                spawn.key[1],
                spawn.uid,
                self._spool.path,
            )
        since = self._writing_since
        if since is not None and time.monotonic() - since > STALLED_SECONDS:
            self._waits(
                spawn, f"the database has not answered for {time.monotonic() - since:.0f} s"
            )
        self._thread.submit(self.drain)

    def _respool(self) -> None:
        """Spool the queued spawns that could not be spooled before, oldest first; stop at
        the first the spool still cannot take (on the spool thread)."""
        if self._spool is None:
            return
        with self._queue_lock:
            pending = [s for s in self._queue if not s.spooled and not s.done]
        for spawn in pending:
            if spawn.done:
                continue
            if not self._spool.append(spawn.uid, spawn.snap, retry=True):
                return
            with self._queue_lock:
                spawn.spooled = True
                done = spawn.done
            if done:  # stored meanwhile: the line is not needed (see _stored)
                self._spool.stored(spawn.uid)
            self._settings.log.info(
                "richprogress: the spawn of %s/%s (id %s) is durable now, in the spool %s",
                spawn.key[0],
                spawn.key[1],
                spawn.uid,
                self._spool.path,
            )

    def _waits(self, spawn: Waiting, why: str) -> None:
        """Count and log a spawn that the database does not take at once (once per spawn)."""
        if spawn.waited:
            return
        spawn.waited = True
        count_spool_event("waiting")
        where = (
            f"in the spool {self._spool.path}"
            if self._spool is not None and spawn.spooled
            else "in memory only (not durable)"
        )
        self._settings.log.warning(
            "richprogress: the spawn of %s/%s (id %s) waits %s: %s; %d spawns wait",
            spawn.key[0],
            spawn.key[1],
            spawn.uid,
            where,
            why,
            len(self._queue),
        )

    # -- the database thread ----------------------------------------------------------------

    def drain(self) -> int:
        """Store the waiting spawns in order, on the calling thread (the database thread);
        stop at the first that the database does not take. How many were stored."""
        stored = 0
        while True:
            with self._queue_lock:
                if not self._queue:
                    return stored
                spawn = self._queue[0]
            if self.write(spawn) is None:
                with self._queue_lock:
                    for later in self._queue:
                        self._waits(later, "the database cannot be used")
                self._retry_later()
                return stored
            with self._queue_lock:
                if self._queue and self._queue[0] is spawn:
                    self._queue.popleft()
            stored += 1

    def write_now(self, key: ServerKey, snap: dict[str, Any]) -> int | None:
        """Spool (when there is a spool) and store one snapshot now, on the calling thread,
        as the two threads do for a recorded spawn (a benchmark's measure); its row's id."""
        spawn = Waiting(uuid.uuid4().hex, key, snap)
        if self._spool is not None:
            self._spool.append(spawn.uid, snap)
        return self.write(spawn)

    def write(self, spawn: Waiting) -> int | None:
        """Store one spawn now (once, by its ``spawn_uid``); its row's id, or None when
        the database could not take it."""
        if spawn.row is None:
            try:
                spawn.row = {**build_row(spawn.snap), "spawn_uid": spawn.uid}
            except Exception:  # a snapshot that cannot be stored must not hold up the rest
                self._settings.log.exception(
                    "richprogress: cannot store the spawn %s of %s/%s; dropped",
                    spawn.uid,
                    *spawn.key,
                )
                self._stored(spawn, None)
                # nor stay in memory, where every read of that server would fail on it:
                # ``written`` with an id lets it go
                self._memory.written(spawn.key, spawn.snap, {}, -1)
                return -1
        row = spawn.row
        self._writing_since = time.monotonic()  # connecting may hang too (a stalled server)
        engine = self._database.connect()
        if engine is None:
            self._writing_since = None
            self._memory.written(spawn.key, spawn.snap, row, None)
            return None
        operation = "write"
        inserted = False
        try:
            with engine.begin() as conn:
                new_id = self._existing(conn, spawn.uid)
                if new_id is None:
                    inserted = True
                    result = conn.execute(insert(spawns_table).values(**row))
                    new_id = int(result.inserted_primary_key[0])  # type: ignore[index]
                    operation = "prune"  # the insert is undone with it: the spawn waits
                    self._trim_server(conn, row["user_name"], row["server_name"])
                    self._sweep(conn)
                    operation = "write"  # the commit, as the block ends
        except IntegrityError:
            # another writer stored this spawn id meanwhile (two hubs on one spool)
            new_id = self._stored_elsewhere(spawn)
            if new_id is None:
                return None
        except Exception as exc:
            if self._database.went_down(exc, operation):
                self._memory.written(spawn.key, spawn.snap, row, None)
                return None
            # not an outage: the database refuses this row, and would refuse it again; it
            # must not hold up the spawns queued behind it (went_down logged why)
            return self._refused(spawn)
        finally:
            self._writing_since = None
        self._stored(spawn, new_id, inserted)
        return new_id

    def _stored_elsewhere(self, spawn: Waiting) -> int | None:
        engine = self._database.connect()
        try:
            with engine.connect() as conn:  # type: ignore[union-attr]
                found = self._existing(conn, spawn.uid)
        except Exception as exc:
            self._database.went_down(exc, "write")
            return None
        if found is None:
            self._database.went_down(RuntimeError("the spawn's row was refused"), "write")
            return self._refused(spawn)
        return found

    def _refused(self, spawn: Waiting) -> int:
        """A spawn the database will not take (not an outage): set aside, counted and
        logged, so the rest are stored; memory still tells it as the server's last spawn."""
        count_spool_event("refused")
        self._settings.log.error(
            "richprogress: the spawn history database refused the spawn %s of %s/%s; it is not stored",
            spawn.uid,
            *spawn.key,
        )
        spawn.done = True  # before the spool hears of it (see _respool)
        if spawn.row is not None:
            self._memory.written(spawn.key, spawn.snap, spawn.row, None)
        if self._spool is not None:
            self._spool.stored(spawn.uid)
        return -1

    @staticmethod
    def _existing(conn: Connection, uid: str) -> int | None:
        found = conn.execute(
            select(spawns_table.c.id).where(spawns_table.c.spawn_uid == uid)
        ).scalar()
        return int(found) if found is not None else None

    def _stored(self, spawn: Waiting, new_id: int | None, inserted: bool = False) -> None:
        # done before the spool hears of it: a spawn the spool thread spools meanwhile
        # (``_respool``) is then told stored by that thread, one way or the other
        spawn.done = True
        if self._spool is not None:
            self._spool.stored(spawn.uid)
        if spawn.waited and inserted:
            count_spool_event("replayed")
        if spawn.row is not None:
            self._memory.written(spawn.key, spawn.snap, spawn.row, new_id)

    def _retry_later(self) -> None:
        """Drain again after ``retry_seconds`` (one timer at a time)."""
        if self._closed or (self._retry is not None and self._retry.is_alive()):
            return
        self._retry = threading.Timer(max(0.05, self._settings.retry_seconds), self._retry_now)
        self._retry.daemon = True
        self._retry.start()

    def _retry_now(self) -> None:
        try:
            self._spool_thread.submit(self._respool)
            self._thread.submit(self.drain)
        except RuntimeError:  # closed meanwhile
            pass

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

    # -- waiting for the threads --------------------------------------------------------------

    @property
    def waiting(self) -> int:
        """Spawns ended but not yet stored."""
        return len(self._queue)

    def after_writes(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``fn(*args)`` on the database thread once the writes queued so far are done
        (``flush`` waits on a no-op; a test can hold the thread with a gate)."""
        return self._thread.submit(fn, *args)

    def wait_spooled(self, timeout: float = 30.0) -> None:
        """Wait until every spawn recorded so far is in the spool (fsynced) and queued."""
        self._spool_thread.submit(lambda: None).result(timeout)

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until every recorded spawn went through the database thread (stored, or
        waiting for the database to come back)."""
        deadline = time.monotonic() + timeout
        self.wait_spooled(timeout)
        self.after_writes(lambda: None).result(max(0.0, deadline - time.monotonic()))

    def close(self, timeout: float = STOP_SECONDS) -> None:
        """Stop both threads, waiting at most ``timeout`` seconds for the writes queued so
        far; spool what is not durable yet. What the database did not take stays in the
        spool for the next start; the spool is cut when it holds nothing else."""
        if self._closed:
            return
        self._closed = True
        if self._retry is not None:
            self._retry.cancel()
        deadline = time.monotonic() + timeout
        try:
            self._spool_thread.submit(self._respool)
        except RuntimeError:
            pass
        self._spool_thread.shutdown(timeout)
        if not self._thread.shutdown(max(0.0, deadline - time.monotonic())):
            with self._queue_lock:
                spooled = sum(1 for s in self._queue if s.spooled and not s.done)
                lost = sum(1 for s in self._queue if not s.spooled and not s.done)
            self._settings.log.warning(
                "richprogress: the spawn history database did not finish its writes within %.1f s "
                "of the stop; %d finished spawns wait in the spool %s for the next start, %d "
                "were not durable and are lost",
                timeout,
                spooled,
                self._spool.path if self._spool is not None else "(none)",
                lost,
            )
        if self._spool is not None:
            self._spool.close()
