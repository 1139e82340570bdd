"""Whether a ``c.SpawnHistory.url`` can hold the history, said before the hub starts.

A URL that cannot work would otherwise start a hub whose history fails at its first use
(an outage logged, pages answering 500): a URL SQLAlchemy cannot read, a kind of database
it has no dialect for, a driver that is not installed, a SQLite URL naming a folder (a
trailing ``/``) or no file at all (in memory: nothing would outlive the process). And it
must never be JupyterHub's own SQLite file, whatever its spelling: a second writer there
can lock the hub's database. So the file is compared by its resolved path, without the
URL's query (``?timeout=5``) and whatever ``./``, ``..``, symbolic or hard links lead to it.

``spool_path_problem`` says the same of ``c.SpawnHistory.spool_path``: empty, a folder, a
folder that does not exist.
"""

from __future__ import annotations

import os

from sqlalchemy.engine import URL, make_url

from richprogress.history.database import driver_url

__all__ = ["HUB_FILE", "spool_path_problem", "sqlite_path", "url_problem"]

#: the name of JupyterHub's own database file (its default ``db_url``)
HUB_FILE = "jupyterhub.sqlite"


def sqlite_path(url: URL) -> str | None:
    """The file a SQLite URL names, as written (a ``file:`` URI's path too); None for
    another database, "" for none (in memory)."""
    if not url.drivername.startswith("sqlite"):
        return None
    database = url.database or ""
    if database == ":memory:":
        return ""
    if database.startswith("file:"):  # sqlite:///file:path?uri=true
        database = database[len("file:") :].split("?", 1)[0]
        if database in ("", ":memory:") or "mode=memory" in (url.query.get("mode") or ""):
            return ""
    return database


def _same_file(a: str, b: str) -> bool:
    """The same file by its resolved path, or (both existing) by device and inode: a hard
    link is another name of the same file."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def url_problem(url: str, hub_db_url: str | None = None) -> str | None:
    """What is wrong with ``url`` as the history's database, in words; None if nothing is.

    ``hub_db_url``: JupyterHub's own ``db_url``, when known (at hub start), so that its
    file is refused under any name; the file name ``jupyterhub.sqlite`` is refused anyway.
    """
    try:
        parsed = make_url(url)
    except Exception:
        return "not a SQLAlchemy URL (e.g. sqlite:///richprogress_history.sqlite, postgresql://user:password@host/db)"
    path = sqlite_path(parsed)
    if path is not None:
        if path == "":
            return "an in-memory SQLite database keeps nothing: name a file (e.g. sqlite:///richprogress_history.sqlite)"
        if path.endswith(("/", os.sep)) or os.path.isdir(path):
            return "names a folder, not a file: add a file name (e.g. .../richprogress_history.sqlite)"
        hub_path = None
        if hub_db_url:
            try:
                hub_path = sqlite_path(make_url(hub_db_url))
            except Exception:
                hub_path = None
        if os.path.basename(os.path.realpath(path)) == HUB_FILE or (hub_path and _same_file(path, hub_path)):
            return "is JupyterHub's own database: use a file of its own (e.g. sqlite:///richprogress_history.sqlite)"
        return None
    try:
        dialect = make_url(driver_url(url)).get_dialect()
    except Exception:
        return f"SQLAlchemy knows no database {parsed.drivername!r} (e.g. postgresql, mysql+pymysql, sqlite)"
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        return f"the driver for {parsed.drivername!r} is not installed ({' '.join(str(exc).split())})"
    return None


def spool_path_problem(path: str) -> str:
    """What keeps ``path`` from being the spool's file, or "": a spool that cannot be
    opened would lose, at the first database outage, the spawns it promised to keep."""
    if not path.strip():
        return "an empty path: name a file, or set spool_max_bytes = 0 for no spool"
    if path.endswith(("/", os.sep)) or os.path.isdir(path):
        return "names a folder, not a file: add a file name (e.g. .../richprogress_history.spool)"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"its folder {folder} does not exist"
    if os.path.basename(path) == HUB_FILE:
        return "is JupyterHub's own database"
    return ""
