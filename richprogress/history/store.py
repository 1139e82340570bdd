"""SpawnHistory: finished spawns, kept in a database so their story outlives the spawner.

The store a hub admin configures (``c.SpawnHistory``), and the one
object the rest of richprogress talks to. It writes each finished spawn and answers the questions the pages ask (a server's last spawn, its past
spawns, recent failures across users, counts by cause), by putting together:

- ``database.Database``: the engine, made at first use; a broken database is logged once
  and tried again after ``retry_seconds``; pages never wait on it for long;
- ``writer.SpawnWriter``: off the event loop, on one writer thread, with retention
  (``keep_per_server``, ``max_age_days``);
- ``spool.Spool``: every finished spawn, fsynced to a local file before the database is
  asked, until the database holds it (``spool_path``, bounded by ``spool_max_bytes``);
- ``memory.MemorySpawns``: a server's last spawn until its write is done, and whenever
  the database cannot be reached (bounded by ``memory_servers``);
- ``reads``: the queries;
- ``read_pool.ReadPool``: the pages' reads (``read_*`` methods, awaited on the hub's
  loop): on a few threads of their own, within ``read_timeout``; past it, or while the
  database is down or a read is stuck on it, what memory holds, marked as such.

**Never JupyterHub's own file.** The default is ``richprogress_history.sqlite`` in the
hub's working directory (beside ``jupyterhub.sqlite``, on z2jh's hub volume): a second
writer in JupyterHub's SQLite file could lock the hub's own database.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future
from datetime import datetime
from typing import Any, TypeVar

from traitlets import CaselessStrEnum, Float, Integer, TraitError, Unicode, default, validate
from traitlets.config import LoggingConfigurable

from richprogress.history import reads
from richprogress.history.database import JOURNAL_MODES, Database, driver_url, sqlite_path
from richprogress.history.memory import MemorySpawns, with_unwritten
from richprogress.history.read_pool import Read, ReadPool
from richprogress.history.rows import Account, build_row, snapshot, timeline_of
from richprogress.history.spool import Spool
from richprogress.history.url_check import spool_path_problem, url_problem
from richprogress.history.writer import SpawnWriter
from richprogress.model.settings import check_number, setting_name, show
from richprogress.model.times import utcnow
from richprogress.stream.spawn_end import SpawnEnd

__all__ = ["DEFAULT_FILE", "SpawnHistory", "build_row", "driver_url", "snapshot", "timeline_of"]

T = TypeVar("T")

#: the default database file, in the hub's working directory
DEFAULT_FILE = "richprogress_history.sqlite"
#: the spool's file name beside a database that is not a SQLite file
DEFAULT_SPOOL = "richprogress_history.spool"


class SpawnHistory(LoggingConfigurable):
    """Where finished spawns are kept (configure it as ``c.SpawnHistory``).

    Example::

        # a PostgreSQL database the hub can reach (psycopg2 is in z2jh's hub image)
        c.SpawnHistory.url = "postgresql://richprogress:secret@db:5432/richprogress"
        c.SpawnHistory.keep_per_server = 50
        c.SpawnHistory.max_age_days = 30
    """

    url = Unicode(
        config=True,
        help="""
        SQLAlchemy URL of the database that keeps finished spawns.

        Default: ``sqlite:///richprogress_history.sqlite``, a file in the hub's working
        directory (beside ``jupyterhub.sqlite``; on z2jh that folder is on the hub's volume,
        so the history survives a ``helm upgrade``). Never point it at JupyterHub's own
        SQLite file: a second writer there can lock the hub's database. A PostgreSQL or
        MySQL URL works as well (the tables are created on first use).
        """,
    )

    @default("url")
    def _default_url(self) -> str:
        return "sqlite:///" + os.path.join(os.getcwd(), DEFAULT_FILE)

    url.tag(allowed="a SQLAlchemy URL of a database of its own (never JupyterHub's own file)")

    @validate("url", "spool_path")
    def _check_place(self, proposal: Any) -> str:
        name = proposal["trait"].name
        value = str(proposal["value"])
        problem = (url_problem if name == "url" else spool_path_problem)(value)
        if problem:
            raise TraitError(f"{setting_name(self, name)} = {show(value)}: {problem}")
        return value

    keep_per_server = Integer(
        20,
        config=True,
        help="""
        Finished spawns kept per server (user and server name); older ones are deleted
        when a new one is written. At least 1.
        """,
    )

    keep_per_server.tag(allowed="a whole number, at least 1")

    @validate("keep_per_server")
    def _check_keep(self, proposal: Any) -> int:
        return int(check_number(self, proposal, least=1))

    max_age_days = Float(
        90.0,
        config=True,
        help="""
        Days a finished spawn is kept; older ones are deleted. 0 keeps them until
        ``keep_per_server`` pushes them out.
        """,
    )

    memory_servers = Integer(
        2000,
        config=True,
        help="""
        Servers whose last spawn is also kept in memory: until its write is done, and
        while the database cannot be reached.
        """,
    )

    retry_seconds = Float(
        60.0,
        config=True,
        help="Seconds after a database error before the store tries the database again.",
    )

    read_timeout = Float(
        2.0,
        config=True,
        help="""
        Seconds a page or an API request waits for the spawn history database (0.05 to
        60). Past it, and while a read is still stuck on the database, the page shows
        what the hub remembers (each server's last unwritten spawn) and says the history
        is unavailable right now; the list endpoints answer 503. The hub itself never waits: the
        reads run on threads of their own.
        """,
    )

    sweep_seconds = Float(
        3600.0,
        config=True,
        help="Seconds between two deletions of spawns older than ``max_age_days``.",
    )

    spool_path = Unicode(
        config=True,
        help="""
        The spool: a local file where each finished spawn is written (one JSON line,
        fsynced) before the database is asked, and kept until the database holds it.
        Spawns that end while the database is down, stalled, locked or deleted, or while
        the hub is killed, are stored from it later, in order and once each.

        Default: beside the SQLite file of ``url`` (``richprogress_history.spool`` for
        ``richprogress_history.sqlite``), or ``richprogress_history.spool`` in the hub's
        working directory for another database. Put it on the hub's volume (z2jh: the
        folder of ``jupyterhub.sqlite``), or the spool does not outlive the hub's pod.
        An empty path, a folder, or a file in a folder that does not exist stops the hub
        at start.
        """,
    )

    @default("spool_path")
    def _default_spool_path(self) -> str:
        path = sqlite_path(self.url)
        if path is None:
            return os.path.join(os.getcwd(), DEFAULT_SPOOL)
        return os.path.splitext(path)[0] + ".spool"

    spool_max_bytes = Integer(
        64 * 1024 * 1024,
        config=True,
        help="""
        The most bytes the spool may hold (default 64 MiB: about a thousand failed spawns
        of a hundred events each). When the database is down long enough to fill it, later
        spawns are kept in memory only (the server's last one), which is logged and counted
        (``richprogress_store_spool_events_total{event="full"}``). 0: no spool.
        """,
    )

    sqlite_journal_mode = CaselessStrEnum(
        list(JOURNAL_MODES),
        default_value="auto",
        config=True,
        help="""
        The journal mode of a SQLite history file: ``wal`` (readers never wait for the
        writer), ``delete`` (SQLite's classic rollback journal), or ``auto`` (the default):
        WAL on a local file system, DELETE on a network one (NFS, CIFS, FUSE, Ceph, ...,
        read from ``/proc/mounts``), where WAL's shared-memory file is unsafe.
        """,
    )

    # what each setting accepts (refusals and docs/configuration.md say the same)
    max_age_days.tag(allowed="days, 0 (no age limit) to 36500")
    memory_servers.tag(allowed="a whole number, at least 1")
    retry_seconds.tag(allowed="seconds, 0 or more")
    sweep_seconds.tag(allowed="seconds, 0 or more")
    read_timeout.tag(allowed="seconds, from 0.05 to 60")
    spool_path.tag(allowed="a file path")
    spool_max_bytes.tag(allowed="a whole number of bytes, 0 (no spool) or more")
    sqlite_journal_mode.tag(allowed="'auto', 'wal' or 'delete'")

    @validate("spool_max_bytes")
    def _check_spool_max_bytes(self, proposal: Any) -> int:
        return int(check_number(self, proposal, least=0))

    @validate("read_timeout")
    def _check_read_timeout(self, proposal: Any) -> float:
        return float(check_number(self, proposal, least=0.05, most=60))

    @validate("max_age_days")
    def _check_max_age(self, proposal: Any) -> float:
        # beyond a century the cutoff date would overflow
        return float(check_number(self, proposal, least=0, most=36500))

    @validate("memory_servers")
    def _check_memory_servers(self, proposal: Any) -> int:
        return int(check_number(self, proposal, least=1))

    @validate("retry_seconds", "sweep_seconds")
    def _check_seconds(self, proposal: Any) -> float:
        return float(check_number(self, proposal, least=0))

    def __init__(self, clock: Callable[[], datetime] = utcnow, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # the parts read this object's traits at each use, so they follow its config
        self._database = Database(self)
        self._memory = MemorySpawns(lambda: self.memory_servers)
        self._pages = ReadPool()
        spool = (
            Spool(self.spool_path, lambda: self.spool_max_bytes, lambda: self.log)
            if self.spool_max_bytes > 0
            else None
        )
        # the writer reads back what a previous run left in the spool (its own thread)
        self.writer = SpawnWriter(self, self._database, self._memory, clock, spool)

    @property
    def available(self) -> bool:
        """Whether the database answered the last time it was asked."""
        return self._database.connect() is not None

    # -- writing --------------------------------------------------------------------------

    def record(self, end: SpawnEnd) -> Future[Any] | None:
        """Keep a finished spawn: snapshot now (on the loop), write on the writer thread.

        Never raises: a spawn must not fail because its history could not be kept."""
        return self.writer.record(end)

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until every queued write is done or waits for the database (tests,
        benchmarks, shutdown)."""
        self.writer.flush(timeout)

    def wait_spooled(self, timeout: float = 30.0) -> None:
        """Wait until every spawn recorded so far is in the spool (fsynced)."""
        self.writer.wait_spooled(timeout)

    @property
    def waiting(self) -> int:
        """Spawns that ended and are not stored yet (in the spool, or in memory)."""
        return self.writer.waiting

    def close(self) -> None:
        """Finish queued writes and release the database (spawns the database did not take
        stay in the spool for the next start)."""
        self.writer.close()
        self._pages.close()
        self._database.close()

    # -- reading: memory first for a server's last spawn, then the database ----------------
    #
    # A user's spawns are those of one ``account`` (``rows.Account``: a user deleted and
    # made again under the same name is another account); ``account=None`` is an admin's
    # view, every spawn stored under the name. The pages' reads (``read_*``) take it
    # without a default: each page says whose view it is.

    def last_spawn(self, user: str, server: str = "", *, account: Account | None = None) -> dict[str, Any] | None:
        """The server's last finished spawn (full), or None when it has none (or while
        the database is down). Blocks: a page awaits ``read_last_spawn`` instead."""
        unwritten = self._memory.spawn(user, server, account)
        if unwritten is not None:
            return unwritten
        return self._database.query(lambda conn: reads.last_spawn(conn, user, server, account), None)

    def last_by_server(
        self, user: str, limit: int = 200, *, account: Account | None = None
    ) -> dict[str, dict[str, Any]]:
        """The last finished spawn (summary) of each of a user's servers, by server name."""
        empty: dict[str, dict[str, Any]] = {}
        found = self._database.query(lambda conn: reads.last_by_server(conn, user, limit, account), empty)
        found.update(self._memory.summaries_of(user, account))
        return found

    def list_spawns(
        self,
        user: str,
        server: str = "",
        *,
        limit: int = 20,
        before: int | None = None,
        account: Account | None = None,
    ) -> list[dict[str, Any]]:
        """A server's finished spawns, newest first (summaries); ``before`` pages by id."""
        none: list[dict[str, Any]] = []
        spawns = self._database.query(
            lambda conn: reads.list_spawns(conn, user, server, limit=limit, before=before, account=account),
            none,
        )
        if before is not None:  # a later page: the unwritten spawn is on the first
            return spawns
        return with_unwritten(spawns, self._memory.spawn(user, server, account), limit)

    def get_spawn(
        self, user: str, server: str, spawn_id: int, *, account: Account | None = None
    ) -> dict[str, Any] | None:
        """One spawn of that server (full), or None."""
        if spawn_id < 0:  # only spawns in memory have negative ids
            found = self._memory.spawn(user, server, account)
            return found if found is not None and found["id"] == spawn_id else None
        return self._database.query(lambda conn: reads.get_spawn(conn, user, server, spawn_id, account), None)

    def recent_failures(
        self, *, cause: str | None = None, limit: int = 50, before: int | None = None
    ) -> list[dict[str, Any]]:
        """Failed spawns across users, newest first (summaries); ``before`` pages by id."""
        none: list[dict[str, Any]] = []
        return self._database.query(
            lambda conn: reads.recent_failures(conn, cause=cause, limit=limit, before=before), none
        )

    def cause_counts(self, since: datetime) -> dict[str, int]:
        """Failed spawns since ``since``, counted by cause (largest first)."""
        return {cause: counts[0] for cause, counts in self.cause_counts_since(since).items()}

    def cause_counts_since(self, since: datetime, *also: datetime) -> dict[str, tuple[int, ...]]:
        """Failed spawns by cause, counted since ``since`` and since each later moment in
        ``also``, in one pass over the index (largest first by the first count)."""
        empty: dict[str, tuple[int, ...]] = {}
        return self._database.query(lambda conn: reads.cause_counts_since(conn, since, also), empty)

    def outcome_counts_since(self, since: datetime, *also: datetime) -> dict[str, tuple[int, ...]]:
        """Finished spawns by outcome (ready, failed, stopped), counted since ``since`` and
        since each later moment in ``also``, in one pass over the (outcome, time) index."""
        empty: dict[str, tuple[int, ...]] = {}
        return self._database.query(lambda conn: reads.outcome_counts_since(conn, since, also), empty)

    def ready_seconds_since(self, since: datetime, limit: int = 2000) -> list[float]:
        """How long the newest ``limit`` ready starts since ``since`` took, in seconds
        (newest first): enough for a typical time, bounded at any number of spawns."""
        none: list[float] = []
        return self._database.query(lambda conn: reads.ready_seconds_since(conn, since, limit), none)

    def typical_summaries(self, since: datetime, per_profile: int) -> list[dict[str, Any]]:
        """Ready spawns finished since ``since``, the newest ``per_profile`` of each profile:
        what typical start times are computed from (``reads.typical_summaries``).

        Called once at hub start (``typical_loader``), never per page view.
        """
        none: list[dict[str, Any]] = []
        return self._database.query(lambda conn: reads.typical_summaries(conn, since, per_profile), none)

    # -- the pages' reads: awaited on the hub's loop, never waiting past read_timeout ----

    async def read(self, fn: Callable[[], T], fallback: Callable[[], T]) -> Read[T]:
        """``fn()`` (reads of this store, ``Database.read``) on a page reader thread
        within ``read_timeout``; ``fallback()`` (memory, on the loop) with the reason while
        the database is down, a read is stuck on it, or it does not answer in time."""
        if self._database.is_down():
            return Read(fallback(), "down")
        return await self._pages.read(fn, fallback, self.read_timeout)

    async def read_last_spawn(
        self, user: str, server: str = "", *, account: Account | None
    ) -> Read[dict[str, Any] | None]:
        """``last_spawn`` for a page: from memory when the database cannot answer."""
        unwritten = self._memory.spawn(user, server, account)
        if unwritten is not None:
            return Read(unwritten)
        return await self.read(
            lambda: self._database.read(lambda conn: reads.last_spawn(conn, user, server, account)),
            lambda: None,
        )

    async def read_last_by_server(
        self, user: str, limit: int = 200, *, account: Account | None
    ) -> Read[dict[str, dict[str, Any]]]:
        """``last_by_server`` for a page: memory's unwritten spawns when the database
        cannot answer."""
        empty: Callable[[], dict[str, dict[str, Any]]] = dict
        found = await self.read(
            lambda: self._database.read(lambda conn: reads.last_by_server(conn, user, limit, account)),
            empty,
        )
        found.value.update(self._memory.summaries_of(user, account))
        return found

    async def read_list_spawns(
        self,
        user: str,
        server: str = "",
        *,
        limit: int = 20,
        before: int | None = None,
        account: Account | None,
    ) -> Read[list[dict[str, Any]]]:
        """``list_spawns`` for an endpoint: when the database cannot answer, the reason
        (the list says 503: memory holds one spawn, not the list)."""
        none: Callable[[], list[dict[str, Any]]] = list
        found = await self.read(
            lambda: self._database.read(
                lambda conn: reads.list_spawns(conn, user, server, limit=limit, before=before, account=account)
            ),
            none,
        )
        if found.available and before is None:
            return Read(with_unwritten(found.value, self._memory.spawn(user, server, account), limit))
        return found

    async def read_spawn(
        self, user: str, server: str, spawn_id: int, *, account: Account | None
    ) -> Read[dict[str, Any] | None]:
        """``get_spawn`` for an endpoint (a spawn in memory, negative id, needs no database)."""
        if spawn_id < 0:
            return Read(self.get_spawn(user, server, spawn_id, account=account))
        return await self.read(
            lambda: self._database.read(lambda conn: reads.get_spawn(conn, user, server, spawn_id, account)),
            lambda: None,
        )
