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


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a PostgreSQL server; yield ``postgresql+psycopg2://rp@127.0.0.1:PORT/rp``."""
    bindir = postgres_bindir()
    if bindir is None:
        raise RuntimeError("PostgreSQL not found: apt-get install postgresql (scripts/dev setup)")
    user = _run_as()
    folder = Path(tempfile.mkdtemp(prefix="richprogress-pg-"))
    data = folder / "data"
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    proc: subprocess.Popen[bytes] | None = None
    try:
        subprocess.run(
            [str(bindir / "initdb"), "-D", str(data), "-U", "rp", "--auth=trust", "-E", "UTF8", "--no-sync"],
            check=True,
            capture_output=True,
            user=user,
            cwd=folder,
        )
        port = free_port()
        log = open(folder / "postgres.log", "wb")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(
            [
                str(bindir / "postgres"), "-D", str(data), "-h", "127.0.0.1", "-p", str(port),
                "-k", str(folder), "-c", "fsync=off", "-c", "full_page_writes=off",
                "-c", "synchronous_commit=off",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            user=user,
            cwd=folder,
        )
        log.close()
        _wait_ready(bindir, port, proc, folder)
        subprocess.run(
            [str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "rp", "rp"],
            check=True,
            capture_output=True,
        )
        yield f"postgresql+psycopg2://rp@127.0.0.1:{port}/rp"
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


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
