"""The spawn history's database connection, and what happens while it is down.

Hand the store a SQLAlchemy engine with the schema in place, or
None while the database cannot be used, without ever making the hub wait long for it.

- **Lazy.** The engine is made at first use (the hub may start before its database).
- **Outage.** A failure that says the database cannot be used (``is_outage``: it cannot be
  connected to, the connection broke, a timeout) is logged once (the URL without its
  password); the database is left alone for ``retry_seconds``, then tried again, and its
  return is logged too. A database from a newer release (``SchemaTooNew``) is left alone
  for good. Any other failure (a value the driver refuses, a bug in a query) is logged and
  fails that one use only: one odd request must not take the history away from everyone.
- **Reads** (``read``) raise ``Unavailable`` while the database is down, so a page can tell
  "nothing stored" from "cannot tell"; ``query`` answers a fallback instead. The pages run
  them on their own threads with a deadline (``read_pool``), never on the hub's loop.
- **SQLite files, checked.** Before each connection is opened and before each write batch
  (``check_file``), the file, its ``-wal``/``-shm``/``-journal`` and its folder must be
  writable: SQLite maps ``-shm`` into memory, and one it cannot extend kills the process
  (SIGBUS). An unwritable file is an outage (logged once, with the path and what to
  fix). A file deleted or replaced under the open engine is noticed (its device and inode)
  and opened anew, schema and all, instead of writing on into the unlinked file.
- **Journal mode** (``sqlite_journal_mode``): WAL on a local file system, DELETE on a network
  one (NFS, CIFS, FUSE, ...: WAL's shared memory does not work across machines), read
  from ``/proc/mounts`` for the file's folder.
- **Counted.** Every failed use is counted by operation (``connect``, ``read``, and the
  writer's ``write`` and ``prune``) in ``richprogress_store_errors_total``, which the
  example alert watches. The store does not know the metrics: ``setup(c)`` hands it their
  counter (``count_errors_with``).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from sqlalchemy import create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine, make_url

from richprogress.history.schema import SchemaTooNew, ensure_schema
from richprogress.model.display import display_line

__all__ = [
    "Database",
    "DatabaseSettings",
    "HistoryFileUnwritable",
    "JOURNAL_MODES",
    "Unavailable",
    "check_writable",
    "driver_url",
    "is_outage",
    "journal_mode_for",
    "make_engine",
    "safe_url",
    "sqlite_path",
]

T = TypeVar("T")


class DatabaseSettings(Protocol):
    """What ``Database`` reads from its owner (``SpawnHistory``), at each use."""

    @property
    def url(self) -> str: ...

    @property
    def retry_seconds(self) -> float: ...

    @property
    def sqlite_journal_mode(self) -> str: ...

    @property
    def log(self) -> logging.Logger | logging.LoggerAdapter[Any]: ...


#: who counts the store's errors by operation; ``setup(c)`` adds the metrics' counter
_error_counters: list[Callable[[str], None]] = []


def count_errors_with(counter: Callable[[str], None]) -> None:
    """Count every later store error with ``counter(operation)`` too (adding the same
    counter twice counts once)."""
    if counter not in _error_counters:
        _error_counters.append(counter)


def count_error(operation: str) -> None:
    """Tell every counter of one store error (``connect``, ``read``, ``write``, ``prune``)."""
    for counter in list(_error_counters):
        counter(operation)


class Unavailable(Exception):
    """The database cannot be used now (down since a failure, or failing now)."""


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` says the database cannot be used (so every use would fail), rather
    than that one statement was refused.

    Outages: a database from a newer release; SQLAlchemy's ``OperationalError`` (no
    connection, a locked SQLite file, a server shutting down) and ``InterfaceError``; any
    driver error that invalidated its connection (a disconnect); the pool's timeout; and
    plain OS and timeout errors. Not outages: a value the driver cannot send
    (``OverflowError`` for a too large number on SQLite, ``ValueError`` for a NUL byte on
    PostgreSQL), a ``DataError``, a ``ProgrammingError``, an ``IntegrityError``.
    """
    if isinstance(exc, SchemaTooNew):
        return True
    if isinstance(exc, sa_exc.DBAPIError):
        return bool(exc.connection_invalidated) or isinstance(
            exc, (sa_exc.OperationalError, sa_exc.InterfaceError)
        )
    return isinstance(exc, (sa_exc.TimeoutError, sa_exc.DisconnectionError, OSError, TimeoutError))


class Database:
    """The engine of the history's database, made at first use and dropped while it is down."""

    def __init__(
        self, settings: DatabaseSettings, count_error: Callable[[str], None] = count_error
    ) -> None:
        self._settings = settings
        self._count_error = count_error
        self._engine: Engine | None = None
        #: connecting can take seconds: it has a lock of its own
        self._connect_lock = threading.Lock()
        #: guards dropping a changed file's engine (held for microseconds)
        self._lock = threading.Lock()
        self._down_until = 0.0
        self._logged_down = False
        #: the SQLite file's (path, device, inode) when the engine was made
        self._file: tuple[str, int, int] | None = None
        #: engines left as they are (their files became unwritable): kept, never closed
        self._abandoned: list[Engine] = []

    def connect(self) -> Engine | None:
        """The engine with the schema in place; None while the database is down. Called
        on the writer's and the pages' threads only (``read_pool``), never on the loop."""
        if self._engine is not None and self._file is None:
            return self._engine
        if self._engine is not None:
            self.check_file()
            if self._engine is not None:
                return self._engine
        if time.monotonic() < self._down_until:
            return None
        with self._connect_lock:
            if self._engine is not None:
                return self._engine
            try:
                engine = make_engine(self._settings.url, self._settings.sqlite_journal_mode)
                ensure_schema(engine)
                path = sqlite_path(self._settings.url)
                identity = _identity(path) if path else None
            except Exception as exc:
                self.went_down(exc, "connect")
                return None
            self._engine, self._file = engine, identity
            if self._logged_down:
                self._settings.log.info("richprogress: the spawn history database is reachable again")
                self._logged_down = False
        return self._engine

    def is_down(self) -> bool:
        """Whether the database is being left alone after an outage (no wait, no lock)."""
        return self._engine is None and time.monotonic() < self._down_until

    def check_file(self) -> None:
        """Before a write batch (and each use): a SQLite file that was deleted or replaced
        since the engine opened it is opened anew; one that cannot be written is an outage.
        An ``os.stat`` and a few ``open`` calls: microseconds."""
        opened, engine = self._file, self._engine
        if opened is None or engine is None:
            return
        path, device, inode = opened
        try:
            now = os.stat(path)
            what = None if (now.st_dev, now.st_ino) == (device, inode) else "replaced by another file"
        except FileNotFoundError:
            what = "removed"
        except OSError as exc:
            self.went_down(exc, "connect")
            return
        if what is not None:
            with self._lock:  # a reader and the writer may both notice: one says it
                if self._engine is not engine:
                    return
                self._engine, self._file = None, None
            self._settings.log.warning(
                "richprogress: the spawn history file %s was %s; opening it anew (the spawns "
                "stored before are not in the new file)", path, what,
            )
            engine.dispose()
            return
        try:
            check_writable(path)
        except HistoryFileUnwritable as exc:
            with self._lock:
                if self._engine is not engine:
                    return
                self._engine, self._file = None, None
            # never touch its connections again, not even to close them: SQLite maps the
            # -shm file, and a mapping of a file that became unwritable dies with SIGBUS
            self._abandoned.append(engine)
            self.went_down(exc, "connect")

    def went_down(self, exc: BaseException, operation: str) -> bool:
        """Count the failure of ``operation`` (connect, read, write, prune); whether it
        was an outage. An outage (``is_outage``; any failure to connect) is logged at its
        first failure and keeps the store to memory for ``retry_seconds``; any other
        failure is logged and leaves the database in use."""
        self._count_error(operation)
        if operation != "connect" and not is_outage(exc):
            self._settings.log.error(
                "richprogress: the spawn history database refused one %s (%s: %s); "
                "it stays in use",
                operation,
                type(exc).__name__,
                display_line(exc, 500),  # it may quote a request's text: escaped, cut
            )
            return False
        if isinstance(exc, SchemaTooNew):
            self._down_until = float("inf")
        else:
            self._down_until = time.monotonic() + self._settings.retry_seconds
        engine, self._engine, self._file = self._engine, None, None
        if engine is not None:
            engine.dispose()
        if not self._logged_down:
            self._logged_down = True
            self._settings.log.error(
                "richprogress: the spawn history database %s cannot be used (%s: %s); "
                "finished spawns wait until it can",
                safe_url(self._settings.url),
                type(exc).__name__,
                display_line(exc, 500),
            )
        return True

    def read(self, fn: Callable[[Connection], T]) -> T:
        """``fn`` on a connection; ``Unavailable`` while the database is down or when
        ``fn`` meets an outage. Any other error of ``fn`` is logged, counted and raised:
        it fails this read only."""
        engine = self.connect()
        if engine is None:
            raise Unavailable(safe_url(self._settings.url))
        try:
            with engine.connect() as conn:
                return fn(conn)
        except Exception as exc:
            if self.went_down(exc, "read"):
                raise Unavailable(safe_url(self._settings.url)) from exc
            raise

    def query(self, fn: Callable[[Connection], T], fallback: T) -> T:
        """``fn`` on a connection, or ``fallback`` while the database is down (``read``;
        an error that is no outage is raised)."""
        try:
            return self.read(fn)
        except Unavailable:
            return fallback

    def close(self) -> None:
        """Release the engine."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


#: ``sqlite_journal_mode`` values
JOURNAL_MODES = ("auto", "wal", "delete")

#: file systems where WAL is unsafe (its shared memory is not shared across machines)
NETWORK_FILE_SYSTEMS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "afs", "9p", "ceph", "glusterfs",
     "lustre", "gpfs", "beegfs", "ocfs2", "gfs2", "virtiofs", "sshfs", "davfs"}
)


class HistoryFileUnwritable(OSError):
    """A SQLite file of the history (or its folder) that the hub cannot write."""


def sqlite_path(url: str) -> str | None:
    """The file a ``sqlite://`` URL names (absolute), or None (another database, memory)."""
    if not url.startswith("sqlite"):
        return None
    try:
        database = make_url(url).database
    except Exception:
        return None
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return os.path.abspath(database)


def _identity(path: str) -> tuple[str, int, int]:
    st = os.stat(path)
    return (path, st.st_dev, st.st_ino)


def check_writable(path: str) -> None:
    """Raise ``HistoryFileUnwritable`` unless the folder of ``path`` and each of the
    database's files that exist (the file, ``-wal``, ``-shm``, ``-journal``) can be written.

    ``os.access``, never ``open``: closing any descriptor of a file drops every POSIX lock
    this process holds on it, SQLite's included (another process could then checkpoint or
    truncate the WAL under our connections). ``access`` also says no to root for an
    immutable file and on a read-only mount."""
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        raise HistoryFileUnwritable(f"the folder {folder} of the spawn history does not exist: create it")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise HistoryFileUnwritable(
            f"the folder {folder} cannot be written by the hub: make it writable "
            "(chmod u+w, or chattr -i if it is immutable)"
        )
    for name in (path, path + "-wal", path + "-shm", path + "-journal"):
        if os.path.lexists(name) and not os.access(name, os.W_OK):
            raise HistoryFileUnwritable(
                f"the file {name} cannot be written by the hub: make it writable "
                "(chmod u+w, or chattr -i if it is immutable)"
            )


def mount_fstype(path: str, mounts_file: str = "/proc/mounts") -> str | None:
    """The file system type of the mount holding ``path`` (from ``/proc/mounts``), or None."""
    real = os.path.realpath(path)
    best, fstype = "", None
    try:
        with open(mounts_file) as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) < 3:
                    continue
                point = fields[1].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
                inside = real == point or real.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best):
                    best, fstype = point, fields[2]
    except OSError:
        return None
    return fstype


def journal_mode_for(path: str | None, setting: str) -> str:
    """The journal mode to use: ``wal`` or ``delete``. ``auto``: WAL on a local file system,
    DELETE on a network one, or when the file system cannot be told."""
    if setting in ("wal", "delete"):
        return setting
    if path is None:
        return "wal"
    fstype = mount_fstype(os.path.dirname(path))
    if fstype is None or fstype in NETWORK_FILE_SYSTEMS or fstype.startswith("fuse"):
        return "delete"
    return "wal"


def make_engine(url: str, journal_mode: str = "auto") -> Engine:
    """An engine for ``url``: SQLite in the journal mode ``journal_mode_for`` picks, shared
    by the writer and reader threads, its files checked before each connection is opened;
    other databases with a small pool and a connect timeout."""
    if url.startswith("sqlite"):
        path = sqlite_path(url)
        mode = journal_mode_for(path, journal_mode)
        engine = create_engine(url, connect_args={"timeout": 5, "check_same_thread": False})

        @event.listens_for(engine, "do_connect")
        def _check(dialect: Any, record: Any, cargs: Any, cparams: Any) -> None:
            if path is not None:
                check_writable(path)  # SIGBUS otherwise, on an -shm it cannot extend

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, record: Any) -> None:
            cursor = dbapi_conn.cursor()
            if mode == "wal":
                # readers (pages) never wait for the writer thread, and it fsyncs less
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
            else:
                cursor.execute("PRAGMA journal_mode=DELETE")
            cursor.close()

        return engine
    url = driver_url(url)
    # a database that does not answer must not hold a thread for minutes
    connect_args = {"connect_timeout": 10} if "psycopg2" in url else {}
    return create_engine(url, pool_pre_ping=True, pool_size=3, max_overflow=2, connect_args=connect_args)


def driver_url(url: str) -> str:
    """``postgresql://`` with the driver this machine has.

    SQLAlchemy 2.1 reads a bare ``postgresql://`` as psycopg 3, 2.0 as psycopg2; z2jh's hub
    image ships psycopg2. When the default driver is missing and psycopg2 is present, use it.
    """
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


def safe_url(url: str) -> str:
    """The URL without its password, for the log."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "(unparsable URL)"
