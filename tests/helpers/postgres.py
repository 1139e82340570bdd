"""A throwaway PostgreSQL server for the tests: ``postgres_server()``, a context manager.

Debian's ``postgresql`` package (``scripts/dev setup`` installs it) provides ``initdb`` and
``postgres``. We make a cluster in a temporary folder, start ``postgres`` on a free loopback
port (its socket in the same folder), yield its SQLAlchemy URL, and stop it by its pid
(SIGINT: PostgreSQL's fast shutdown), then delete the folder. PostgreSQL refuses to run as
root, so under root the server runs as the ``postgres`` system user (or ``nobody``).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from richprogress.demo.hub import free_port


def postgres_bindir() -> Path | None:
    """The folder holding ``initdb`` and ``postgres`` (the newest Debian version), or None."""
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.isfile(os.path.join(folder, "postgres")):
            return Path(folder)
    found = shutil.which("postgres")
    return Path(found).parent if found else None


def _run_as() -> str | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root and no unprivileged user to run PostgreSQL as")


class PostgresServer:
    """A throwaway PostgreSQL cluster that a test can stop, start, pause and resume (the
    fault cases); a context manager that deletes it at the end.

    ``url``: ``postgresql+psycopg2://rp@127.0.0.1:PORT/rp``, the same across restarts.
    """

    def __init__(self) -> None:
        bindir = postgres_bindir()
        if bindir is None:
            raise RuntimeError("PostgreSQL not found: apt-get install postgresql (scripts/dev setup)")
        self.bindir = bindir
        self.user = _run_as()
        self.folder = Path(tempfile.mkdtemp(prefix="richprogress-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self.url = f"postgresql+psycopg2://rp@127.0.0.1:{self.port}/rp"
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> PostgresServer:
        try:
            if self.user is not None:
                entry = pwd.getpwnam(self.user)
                os.chown(self.folder, entry.pw_uid, entry.pw_gid)
            subprocess.run(
                [str(self.bindir / "initdb"), "-D", str(self.data), "-U", "rp", "--auth=trust",
                 "-E", "UTF8", "--no-sync"],
                check=True, capture_output=True, user=self.user, cwd=self.folder,
            )
            self.start()
            subprocess.run(
                [str(self.bindir / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "rp", "rp"],
                check=True, capture_output=True,
            )
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.resume()
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def start(self) -> None:
        """Start the server (again) on its port; wait until it accepts connections."""
        log = open(self.folder / "postgres.log", "ab")  # noqa: SIM115 - closed below
        self.proc = subprocess.Popen(
            [
                str(self.bindir / "postgres"), "-D", str(self.data), "-h", "127.0.0.1", "-p", str(self.port),
                "-k", str(self.folder), "-c", "fsync=off", "-c", "full_page_writes=off",
                "-c", "synchronous_commit=off",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            user=self.user,
            cwd=self.folder,
        )
        log.close()
        _wait_ready(self.bindir, self.port, self.proc, self.folder)

    def stop(self) -> None:
        """Stop the server by its pid (SIGINT: PostgreSQL's fast shutdown)."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)

    def pids(self) -> list[int]:
        """The server's processes: the postmaster and its children (from /proc)."""
        if self.proc is None:
            return []
        found = [self.proc.pid]
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                fields = Path(stat).read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.proc.pid:
                found.append(int(stat.split("/")[2]))
        return found

    def pause(self) -> None:
        """SIGSTOP every process of the server: it holds connections but answers nothing."""
        for pid in self.pids():
            os.kill(pid, signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT every process of the server."""
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a PostgreSQL server; yield ``postgresql+psycopg2://rp@127.0.0.1:PORT/rp``."""
    with PostgresServer() as server:
        yield server.url


def _wait_ready(bindir: Path, port: int, proc: subprocess.Popen[bytes], folder: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                "postgres exited during start-up:\n"
                + (folder / "postgres.log").read_text(errors="replace")[-2000:]
            )
        ready = subprocess.run(
            [str(bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-U", "rp"],
            capture_output=True,
        )
        if ready.returncode == 0:
            return
        time.sleep(0.2)
    raise RuntimeError("postgres did not accept connections within 60 s")
