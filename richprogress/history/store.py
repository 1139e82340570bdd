"""SpawnHistory: finished spawns, kept in a database so their story outlives the spawner.

One and only purpose: write each finished spawn (DESIGN.md contract 6) and answer the
questions the pages ask (a server's last spawn, its past spawns, recent failures across
users, counts by cause), through SQLAlchemy.

- **Off the event loop.** ``record()`` runs on the loop: it only snapshots the timeline
  (a list copy) and the spawner's facts, keeps the snapshot in memory, and queues the
  write on one writer thread (one thread: SQLite wants a single writer, and writes stay in
  order). Diagnosis, JSON and the database work happen on that thread.
- **Memory first, then the database.** Until its write is done, and whenever the
  database cannot be reached, a server's last spawn is answered from memory (bounded).
  A broken database is logged once; the store retries it after ``retry_seconds``.
- **Bounded.** After each write, the server's spawns beyond ``keep_per_server`` are
  deleted through the per-server index (no scan of other servers). Spawns older than
  ``max_age_days`` are deleted at most every ``sweep_seconds``, through the time index.
- **Never JupyterHub's own file.** The default is ``richprogress_history.sqlite`` in the
  hub's working directory (beside ``jupyterhub.sqlite``, on z2jh's hub volume): a second
  writer in JupyterHub's SQLite file could lock the hub's own database.
"""

from __future__ import annotations

import json
import os
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import and_, case, create_engine, delete, event, func, insert, select
from sqlalchemy.engine import Engine
from traitlets import Float, Integer, TraitError, Unicode, default, validate
from traitlets.config import LoggingConfigurable

from ..spawn_events import SpawnEnd
from ..timeline import utcnow
from .rows import (
    SUMMARY_COLUMNS,
    build_row,
    full_spawn,
    naive_utc,
    snapshot,
    step_totals,
    summary_of,
    timeline_of,
)
from .schema import SchemaTooNew, ensure_schema, spawns_table

__all__ = ["DEFAULT_FILE", "SpawnHistory", "build_row", "driver_url", "snapshot", "timeline_of"]

T = TypeVar("T")

#: the default database file, in the hub's working directory
DEFAULT_FILE = "richprogress_history.sqlite"

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

    @validate("url")
    def _check_url(self, proposal: Any) -> str:
        value = str(proposal["value"])
        if value.startswith("sqlite") and value.rstrip("/").endswith("jupyterhub.sqlite"):
            raise TraitError(
                f"SpawnHistory.url {value!r} is JupyterHub's own database: use a file of its "
                "own (e.g. sqlite:///richprogress_history.sqlite)"
            )
        return value

    keep_per_server = Integer(
        20,
        config=True,
        help="""
        Finished spawns kept per server (user and server name); older ones are deleted
        when a new one is written. At least 1.
        """,
    )

    @validate("keep_per_server")
    def _check_keep(self, proposal: Any) -> int:
        if int(proposal["value"]) < 1:
            raise TraitError("SpawnHistory.keep_per_server must be at least 1")
        return int(proposal["value"])

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

    sweep_seconds = Float(
        3600.0,
        config=True,
        help="Seconds between two deletions of spawns older than ``max_age_days``.",
    )

    def __init__(self, clock: Callable[[], datetime] = utcnow, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._clock = clock
        self._engine: Engine | None = None
        #: guards the in-memory spawns only (held for microseconds: record() takes it on
        #: the event loop); connecting has its own lock, as it can take seconds
        self._lock = threading.Lock()
        self._connect_lock = threading.Lock()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rp-history-write")
        self._readers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="rp-history-read")
        #: (user, server) -> the last spawn's full dict, newest last
        self._memory: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
        self._memory_ids = 0
        self._down_until = 0.0
        self._logged_down = False
        self._last_sweep = 0.0
        self._pending: set[Future[Any]] = set()
        self._connecting: Future[Engine | None] | None = None

    # -- the database connection ------------------------------------------------------------

    def _connect(self, wait: float | None = None) -> Engine | None:
        """The engine with the schema in place; None while the database is down.

        ``wait``: called on the event loop (a page being rendered), so connect on a reader
        thread and wait at most this long; None when not yet connected by then. A SQLite
        file is local and connects at once, so it is always connected in place.
        """
        if self._engine is not None:
            return self._engine
        if time.monotonic() < self._down_until:
            return None
        if wait is not None and not self.url.startswith("sqlite"):
            with self._lock:
                if self._connecting is None or self._connecting.done():
                    self._connecting = self._readers.submit(self._connect)
                connecting = self._connecting
            try:
                return connecting.result(timeout=wait)
            except Exception:  # not yet: the page keeps to memory this time
                return None
        with self._connect_lock:
            if self._engine is not None:
                return self._engine
            try:
                engine = self._make_engine()
                ensure_schema(engine)
            except Exception as exc:
                self._went_down(exc)
                return None
            self._engine = engine
            if self._logged_down:
                self.log.info("richprogress: the spawn history database is reachable again")
                self._logged_down = False
        return self._engine

    def _make_engine(self) -> Engine:
        if self.url.startswith("sqlite"):
            engine = create_engine(
                self.url, connect_args={"timeout": 5, "check_same_thread": False}
            )

            @event.listens_for(engine, "connect")
            def _pragmas(dbapi_conn: Any, record: Any) -> None:
                cursor = dbapi_conn.cursor()
                # readers (pages) never wait for the writer thread, and it fsyncs less
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
                cursor.close()

            return engine
        url = driver_url(self.url)
        # a database that does not answer must not hold a thread for minutes
        connect_args = {"connect_timeout": 10} if "psycopg2" in url else {}
        return create_engine(
            url, pool_pre_ping=True, pool_size=3, max_overflow=2, connect_args=connect_args
        )

    def _went_down(self, exc: BaseException) -> None:
        """Log the first failure once; keep to memory for ``retry_seconds``."""
        if isinstance(exc, SchemaTooNew):
            self._down_until = float("inf")
        else:
            self._down_until = time.monotonic() + self.retry_seconds
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.dispose()
        if not self._logged_down:
            self._logged_down = True
            self.log.error(
                "richprogress: the spawn history database %s cannot be used (%s: %s); "
                "finished spawns are kept in memory until it can",
                _safe_url(self.url),
                type(exc).__name__,
                exc,
            )

    @property
    def available(self) -> bool:
        """Whether the database answered the last time it was asked."""
        return self._connect() is not None

    def _query(self, fn: Callable[[Any], T], fallback: T, wait: float | None = None) -> T:
        engine = self._connect(wait)
        if engine is None:
            return fallback
        try:
            with engine.connect() as conn:
                return fn(conn)
        except Exception as exc:
            self._went_down(exc)
            return fallback

    # -- writing --------------------------------------------------------------------------

    def record(self, end: SpawnEnd) -> Future[Any] | None:
        """Keep a finished spawn: snapshot now (on the loop), write on the writer thread.

        Never raises: a spawn must not fail because its history could not be kept."""
        try:
            snap = snapshot(end)
        except Exception:
            self.log.exception("richprogress: could not read a finished spawn for the history")
            return None
        key = (snap["user_name"], snap["server_name"])
        with self._lock:
            self._memory_ids -= 1
            self._memory[key] = {"snapshot": snap, "id": self._memory_ids}
            self._memory.move_to_end(key)
            while len(self._memory) > self.memory_servers:
                self._memory.popitem(last=False)
        future = self._writer.submit(self._write, key, snap)
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)
        return future

    def _write(self, key: tuple[str, str], snap: dict[str, Any]) -> int | None:
        row = build_row(snap)
        engine = self._connect()
        if engine is None:
            self._remember_row(key, snap, row, None)
            return None
        try:
            with engine.begin() as conn:
                result = conn.execute(insert(spawns_table).values(**row))
                new_id = result.inserted_primary_key[0]  # type: ignore[index]
                self._trim_server(conn, row["user_name"], row["server_name"])
                self._sweep(conn)
        except Exception as exc:
            self._went_down(exc)
            self._remember_row(key, snap, row, None)
            return None
        self._remember_row(key, snap, row, int(new_id))
        return int(new_id)

    def _remember_row(
        self, key: tuple[str, str], snap: dict[str, Any], row: dict[str, Any], new_id: int | None
    ) -> None:
        """After a write: a written spawn leaves memory (the database has it); an unwritten
        one keeps its built row, so reads need not diagnose it again."""
        with self._lock:
            entry = self._memory.get(key)
            if entry is None or entry["snapshot"] is not snap:
                return  # a newer spawn of this server replaced it meanwhile
            if new_id is not None:
                del self._memory[key]
            else:
                entry["row"] = row

    def _trim_server(self, conn: Any, user: str, server: str) -> None:
        """Delete this server's spawns beyond ``keep_per_server`` (per-server index only)."""
        t = spawns_table
        where = and_(t.c.user_name == user, t.c.server_name == server)
        cutoff = conn.execute(
            select(t.c.id).where(where).order_by(t.c.id.desc()).offset(self.keep_per_server).limit(1)
        ).scalar()
        if cutoff is not None:
            conn.execute(delete(t).where(where, t.c.id <= cutoff))

    def _sweep(self, conn: Any, force: bool = False) -> None:
        """Delete spawns older than ``max_age_days``, at most every ``sweep_seconds``."""
        if self.max_age_days <= 0:
            return
        now = time.monotonic()
        if not force and self._last_sweep and now - self._last_sweep < self.sweep_seconds:
            return
        self._last_sweep = now
        cutoff = naive_utc(self._clock() - timedelta(days=self.max_age_days))
        conn.execute(delete(spawns_table).where(spawns_table.c.finished_at < cutoff))

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until every queued write is done (tests, benchmarks, shutdown)."""
        marker = self._writer.submit(lambda: None)
        marker.result(timeout)

    def close(self) -> None:
        """Finish queued writes and release the database."""
        self._writer.shutdown(wait=True)
        self._readers.shutdown(wait=True)
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    # -- reading --------------------------------------------------------------------------

    def _memory_spawn(self, user: str, server: str) -> dict[str, Any] | None:
        """The server's last spawn while it is not (yet) in the database."""
        with self._lock:
            entry = self._memory.get((user, server))
            if entry is None:
                return None
            snap, row, spawn_id = entry["snapshot"], entry.get("row"), entry["id"]
        if row is None:
            row = build_row(snap)
        return full_spawn({**row, "id": spawn_id})

    def last_spawn(
        self, user: str, server: str = "", *, wait: float | None = None
    ) -> dict[str, Any] | None:
        """The server's last finished spawn (full), or None when it has none.

        ``wait``: see ``_connect`` (pages pass it; they run on the event loop)."""
        unwritten = self._memory_spawn(user, server)
        if unwritten is not None:
            return unwritten
        t = spawns_table

        def q(conn: Any) -> dict[str, Any] | None:
            row = conn.execute(
                select(t)
                .where(t.c.user_name == user, t.c.server_name == server)
                .order_by(t.c.id.desc())
                .limit(1)
            ).mappings().first()
            return full_spawn(dict(row)) if row is not None else None

        return self._query(q, None, wait)

    def last_by_server(
        self, user: str, limit: int = 200, *, wait: float | None = None
    ) -> dict[str, dict[str, Any]]:
        """The last finished spawn (summary) of each of a user's servers, by server name."""
        t = spawns_table

        def q(conn: Any) -> dict[str, dict[str, Any]]:
            latest = (
                select(t.c.server_name, func.max(t.c.id).label("id"))
                .where(t.c.user_name == user)
                .group_by(t.c.server_name)
                .limit(limit)
                .subquery()
            )
            rows = conn.execute(
                select(*[t.c[c] for c in SUMMARY_COLUMNS]).join(latest, t.c.id == latest.c.id)
            ).mappings()
            return {r["server_name"]: summary_of(dict(r)) for r in rows}

        empty: dict[str, dict[str, Any]] = {}
        found = self._query(q, empty, wait)
        with self._lock:
            entries = [
                (server, entry)
                for (name, server), entry in self._memory.items()
                if name == user
            ]
        for server, entry in entries:
            row = entry.get("row") or build_row(entry["snapshot"])
            found[server] = summary_of({**row, "id": entry["id"]})
        return found

    def list_spawns(
        self, user: str, server: str = "", *, limit: int = 20, before: int | None = None
    ) -> list[dict[str, Any]]:
        """A server's finished spawns, newest first (summaries); ``before`` pages by id."""
        t = spawns_table

        def q(conn: Any) -> list[dict[str, Any]]:
            query = select(*[t.c[c] for c in SUMMARY_COLUMNS]).where(
                t.c.user_name == user, t.c.server_name == server
            )
            if before is not None:
                query = query.where(t.c.id < before)
            rows = conn.execute(query.order_by(t.c.id.desc()).limit(limit)).mappings()
            return [summary_of(dict(r)) for r in rows]

        none: list[dict[str, Any]] = []
        spawns = self._query(q, none)
        pending = self._memory_spawn(user, server)
        if pending is not None and before is None and all(s["id"] != pending["id"] for s in spawns):
            spawns.insert(0, {k: pending.get(k) for k in SUMMARY_COLUMNS})
            del spawns[limit:]
        return spawns

    def get_spawn(self, user: str, server: str, spawn_id: int) -> dict[str, Any] | None:
        """One spawn of that server (full), or None."""
        if spawn_id < 0:
            found = self._memory_spawn(user, server)
            return found if found is not None and found["id"] == spawn_id else None
        t = spawns_table

        def q(conn: Any) -> dict[str, Any] | None:
            row = conn.execute(
                select(t).where(t.c.id == spawn_id, t.c.user_name == user, t.c.server_name == server)
            ).mappings().first()
            return full_spawn(dict(row)) if row is not None else None

        return self._query(q, None)

    def recent_failures(
        self, *, cause: str | None = None, limit: int = 50, before: int | None = None
    ) -> list[dict[str, Any]]:
        """Failed spawns across users, newest first (summaries); ``before`` pages by id."""
        t = spawns_table

        def q(conn: Any) -> list[dict[str, Any]]:
            query = select(*[t.c[c] for c in SUMMARY_COLUMNS]).where(t.c.outcome == "failed")
            if cause:
                query = query.where(t.c.cause == cause)
            if before is not None:
                query = query.where(t.c.id < before)
            rows = conn.execute(query.order_by(t.c.id.desc()).limit(limit)).mappings()
            return [summary_of(dict(r)) for r in rows]

        none: list[dict[str, Any]] = []
        return self._query(q, none)

    def cause_counts(self, since: datetime) -> dict[str, int]:
        """Failed spawns since ``since``, counted by cause (largest first)."""
        return {cause: counts[0] for cause, counts in self.cause_counts_since(since).items()}

    def cause_counts_since(self, since: datetime, *also: datetime) -> dict[str, tuple[int, ...]]:
        """Failed spawns by cause, counted since ``since`` and since each later moment in
        ``also``, in one pass over the index (largest first by the first count)."""
        t = spawns_table
        columns = [func.count()] + [
            func.sum(case((t.c.finished_at >= naive_utc(moment), 1), else_=0)) for moment in also
        ]

        def q(conn: Any) -> dict[str, tuple[int, ...]]:
            rows = conn.execute(
                select(t.c.cause, *columns)
                .where(t.c.outcome == "failed", t.c.finished_at >= naive_utc(since))
                .group_by(t.c.cause)
            ).all()
            counted = ((c or "unknown", tuple(int(n or 0) for n in ns)) for c, *ns in rows)
            return dict(sorted(counted, key=lambda item: -item[1][0]))

        empty: dict[str, tuple[int, ...]] = {}
        return self._query(q, empty)

    def outcome_counts_since(self, since: datetime, *also: datetime) -> dict[str, tuple[int, ...]]:
        """Finished spawns by outcome (ready, failed, stopped), counted since ``since`` and
        since each later moment in ``also``, in one pass over the (outcome, time) index."""
        t = spawns_table
        columns = [func.count()] + [
            func.sum(case((t.c.finished_at >= naive_utc(moment), 1), else_=0)) for moment in also
        ]

        def q(conn: Any) -> dict[str, tuple[int, ...]]:
            rows = conn.execute(
                select(t.c.outcome, *columns)
                .where(t.c.finished_at >= naive_utc(since))
                .group_by(t.c.outcome)
            ).all()
            return {str(o): tuple(int(n or 0) for n in ns) for o, *ns in rows}

        empty: dict[str, tuple[int, ...]] = {}
        return self._query(q, empty)

    def ready_seconds_since(self, since: datetime, limit: int = 2000) -> list[float]:
        """How long the newest ``limit`` ready starts since ``since`` took, in seconds
        (newest first): enough for a typical time, bounded at any number of spawns."""
        t = spawns_table

        def q(conn: Any) -> list[float]:
            rows = conn.execute(
                select(t.c.elapsed)
                .where(t.c.outcome == "ready", t.c.finished_at >= naive_utc(since))
                .order_by(t.c.finished_at.desc())
                .limit(limit)
            ).scalars()
            return [float(v) for v in rows if v is not None]

        none: list[float] = []
        return self._query(q, none)

    def typical_summaries(self, since: datetime, per_profile: int) -> list[dict[str, Any]]:
        """Ready spawns finished since ``since``, the newest ``per_profile`` of each profile:
        what typical start times are computed from (``typical.as_summary`` reads the dicts).

        One query (a window function over the time index); the steps come from the small
        ``steps`` column, and only rows written before schema 2 have their payload unpacked.
        Called once at hub start (``typical_loader``), never per page view.
        """
        t = spawns_table
        ranked = (
            select(
                t.c.id,
                t.c.finished_at,
                t.c.elapsed,
                t.c.profile_slug,
                t.c.steps,
                func.row_number()
                .over(partition_by=t.c.profile_slug, order_by=t.c.finished_at.desc())
                .label("rank"),
            )
            .where(t.c.outcome == "ready", t.c.finished_at >= naive_utc(since))
            .subquery()
        )

        def q(conn: Any) -> list[dict[str, Any]]:
            rows = conn.execute(select(ranked).where(ranked.c.rank <= per_profile)).mappings().all()
            out = [
                {
                    "finished_at": r["finished_at"],
                    "outcome": "ready",
                    "elapsed": r["elapsed"],
                    "profile_slug": r["profile_slug"],
                    "steps": json.loads(r["steps"]) if r["steps"] else None,
                    "id": r["id"],
                }
                for r in rows
            ]
            old = [s["id"] for s in out if s["steps"] is None]
            if old:  # written before schema 2: unpack those payloads only
                steps: dict[int, Any] = {}
                for start in range(0, len(old), 500):
                    chunk = old[start : start + 500]
                    for spawn_id, payload in conn.execute(
                        select(t.c.id, t.c.payload).where(t.c.id.in_(chunk))
                    ):
                        steps[spawn_id] = step_totals(json.loads(zlib.decompress(payload)).get("steps") or [])
                for s in out:
                    if s["steps"] is None:
                        s["steps"] = steps.get(s["id"], {})
            return out

        none: list[dict[str, Any]] = []
        return self._query(q, none)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a reading method on a reader thread (handlers: the loop never waits on it)."""
        import asyncio

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._readers, lambda: fn(*args, **kwargs))


def driver_url(url: str) -> str:
    """``postgresql://`` with the driver this machine has.

    SQLAlchemy 2.1 reads a bare ``postgresql://`` as psycopg 3, 2.0 as psycopg2; z2jh's hub
    image ships psycopg2. When the default driver is missing and psycopg2 is present, use it.
    """
    import importlib.util

    if not url.startswith("postgresql://"):
        return url
    try:
        from sqlalchemy.dialects import registry

        registry.load("postgresql").import_dbapi()
        return url
    except Exception:
        pass
    if importlib.util.find_spec("psycopg2") is not None:
        return "postgresql+psycopg2://" + url[len("postgresql://") :]
    return url


def _safe_url(url: str) -> str:
    """The URL without its password, for the log."""
    try:
        from sqlalchemy.engine import make_url

        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "(unparsable URL)"

