"""The spool: finished spawns on local disk until the database has them.

Keep every finished spawn durable from a few milliseconds after its end, whatever the
database does (down, stalled, locked, deleted) and whatever happens to the hub (a restart,
a SIGKILL), so that the writer can store it later, in order, exactly once.

- **What.** An append-only file of JSON lines, one per finished spawn:
  ``{"v": 1, "uid": ..., "snapshot": {...}}``, the spawn's id and the snapshot
  ``rows.snapshot`` took at its end, fsynced before the database is asked (write-ahead: a
  hub killed during the database write finds the line at its next start). The spawn id is
  also the row's unique ``spawn_uid``. Once the database holds a spawn, a short line
  ``{"v": 1, "stored": uid}`` says so (not fsynced: it only saves work), so a restart
  does not store again a spawn that retention has since deleted.
- **Whole lines or none.** A line is written until every byte is in (``os.write`` may
  take part of it on a full disk), then fsynced; when that fails (``ENOSPC``, ``EIO``,
  a quota) the file is cut back to where the line began, so no half line is left for the
  next append to run into. Such a spawn is **not durable**: logged, counted
  ``unwritable``, and the writer tries to spool it again at the next spawn end or retry.
- **When it empties.** Once the database holds every spawn of the file and the file has
  passed ``CUT_BYTES``, or when the store closes (the hub stops), it is cut to nothing.
  Not after every spawn: cutting is a metadata change the file system journals, which cost
  as much as the append itself.
- **Bound.** At most ``max_bytes``; a spawn that does not fit is not spooled (the writer
  still tries the database, and memory keeps the server's last spawn). Logged when the
  bound is first reached and when there is room again; each such spawn is counted.
- **Reading it back** (``load``, at the store's start): line by line, each judged alone,
  never more than ``max_bytes`` in all nor a line longer than that in memory. A line that
  cannot be read (a crash in the middle of an append leaves a cut last line; a line
  nested too deep, of the wrong shape, or that the caller's ``check`` refuses) is set
  aside in ``<spool>.rejected`` (up to ``max_bytes`` there), counted ``skipped`` and
  logged; then the spool is rewritten without it. Duplicates by id are dropped.
- **Counted** by event (``count_spool_with``): ``waiting`` (a spawn the database did not take
  at once), ``replayed`` (stored after waiting), ``full``, ``unwritable`` (not durable),
  ``skipped`` (a line set aside), ``refused``.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, BinaryIO

__all__ = ["SPOOL_EVENTS", "Spool", "SpooledSpawn", "count_spool_event", "count_spool_with"]

#: what the spool counts (the metric's label values)
SPOOL_EVENTS = ("waiting", "replayed", "full", "unwritable", "skipped", "refused")

#: a file whose spawns are all stored is cut once it is this big (a few dozen spawns)
CUT_BYTES = 1024 * 1024

#: what ``load`` reads at a time while it skips a line too long to keep
_CHUNK = 1024 * 1024

#: the snapshot's moments, written as ISO 8601 and read back as datetimes
_MOMENTS = ("requested_at", "finished_at")

#: who counts the spool's events; ``setup(c)`` adds the metrics' counter
_counters: list[Callable[[str], None]] = []


def count_spool_with(counter: Callable[[str], None]) -> None:
    """Count every later spool event with ``counter(event)`` too (once per counter)."""
    if counter not in _counters:
        _counters.append(counter)


def count_spool_event(event: str) -> None:
    """Tell every counter of one spool event (one of ``SPOOL_EVENTS``)."""
    for counter in list(_counters):
        counter(event)


@dataclass
class SpooledSpawn:
    """One line of the spool: a finished spawn's id and snapshot (and, once ``load``'s
    check passed it, what the check gave back: the writer's built row)."""

    uid: str
    snapshot: dict[str, Any]
    checked: Any = field(default=None, compare=False)


def encode(uid: str, snap: dict[str, Any]) -> bytes:
    """One spool line (ending in a newline)."""
    data = {
        k: (v.isoformat() if k in _MOMENTS and isinstance(v, datetime) else v)
        for k, v in snap.items()
    }
    return (
        json.dumps({"v": 1, "uid": uid, "snapshot": data}, separators=(",", ":"), default=str)
        + "\n"
    ).encode()


def stored_line(uid: str) -> bytes:
    """The line that says the database holds a spawn."""
    return (json.dumps({"v": 1, "stored": uid}, separators=(",", ":")) + "\n").encode()


def decode(line: bytes) -> SpooledSpawn | str:
    """A spool line back as a spawn, or the id of a ``stored`` line (``ValueError`` when it
    is neither; a line nested too deep for the parser is one)."""
    try:
        data = json.loads(line.decode("utf-8"))
    except RecursionError:
        raise ValueError("it is nested too deep") from None
    if isinstance(data, dict) and isinstance(data.get("stored"), str) and "snapshot" not in data:
        return str(data["stored"])
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("uid"), str)
        or not isinstance(data.get("snapshot"), dict)
    ):
        raise ValueError("it is not a spooled spawn")
    snap = dict(data["snapshot"])
    for key in _MOMENTS:
        if not isinstance(snap.get(key), str):
            raise ValueError(f"its {key} is not a time")
        snap[key] = datetime.fromisoformat(snap[key])
    return SpooledSpawn(data["uid"], snap)


class Spool:
    """The spool file: append (whole lines, fsynced), read back, cut once everything in it
    is stored.

    Thread-safe: the writer's spool thread appends, its database thread marks spawns
    stored; each holds the lock for one file operation. ``write`` and ``fsync`` are
    ``os.write`` and ``os.fsync`` unless a test hands in a full disk."""

    def __init__(
        self,
        path: str,
        max_bytes: Callable[[], int],
        log: Callable[[], logging.Logger | logging.LoggerAdapter[Any]],
        count: Callable[[str], None] = count_spool_event,
        *,
        write: Callable[[int, memoryview], int] = os.write,
        fsync: Callable[[int], None] = os.fsync,
    ) -> None:
        self.path = path
        self.rejected_path = path + ".rejected"
        self._max_bytes = max_bytes
        self._log = log
        self._count = count
        self._write = write
        self._fsync = fsync
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._size = 0
        #: ids of the spawns in the file that the database does not hold yet
        self._unstored: set[str] = set()
        self._full = False
        self._broken = False
        #: a failed append could not be cut back: the file may end in a half line
        self._ragged = False
        self._closed = False

    @property
    def waiting(self) -> int:
        """Spawns in the file that the database does not hold yet."""
        return len(self._unstored)

    # -- reading back ---------------------------------------------------------------------

    def load(self, check: Callable[[SpooledSpawn], Any] | None = None) -> list[SpooledSpawn]:
        """The spawns a previous run left in the file and the database may not hold yet,
        oldest first (a missing file: none). ``check(spawn)`` may refuse one (raising);
        what it returns is kept as ``spawn.checked``."""
        with self._lock:
            try:
                f = open(self.path, "rb")  # noqa: SIM115 - closed below
            except FileNotFoundError:
                return []
            except OSError as exc:
                self._log().error(
                    "richprogress: cannot read the spawn spool %s (%s)", self.path, exc
                )
                return []
            with f:
                found, kept, set_aside, size = self._read(f, check)
            for uid in list(found):
                if uid not in kept:
                    del found[uid]  # the database holds it (a "stored" line)
            self._size = size
            if set_aside:
                self._rewrite(list(found.values()))
            self._unstored = set(found)
            return list(found.values())

    def _read(
        self, f: BinaryIO, check: Callable[[SpooledSpawn], Any] | None
    ) -> tuple[dict[str, SpooledSpawn], set[str], bool, int]:
        """Every line of ``f`` judged alone: the spawns, the ids still unstored, whether a
        line was set aside, and the file's length."""
        limit = max(1, self._max_bytes())
        found: dict[str, SpooledSpawn] = {}
        kept: set[str] = set()
        set_aside = False
        taken = 0  # bytes of spawns kept: never more than the bound in memory
        number = 0
        offset = 0
        while True:
            line = f.readline(limit + 1)
            if not line:
                return found, kept, set_aside, offset
            number += 1
            offset += len(line)
            if not line.endswith(b"\n"):
                if len(line) <= limit:  # the end of the file: an append cut short
                    self._set_aside(line, f"its last line ({len(line)} bytes) was cut short")
                    self._ragged = True  # until the rewrite takes it away
                    return found, kept, True, offset
                skipped = len(line) + self._skip_line(f)
                offset += skipped - len(line)
                self._set_aside(
                    None,
                    f"line {number} ({skipped} bytes) is longer than its bound ({limit} bytes)",
                )
                set_aside = True
                continue
            if not line.strip():
                continue
            try:
                spawn = decode(line)
                if isinstance(spawn, str):
                    kept.discard(spawn)
                    continue
                if spawn.uid in found:
                    continue
                if taken + len(line) > limit:
                    raise ValueError(
                        f"the spool holds more than its bound ({limit} bytes) before it"
                    )
                if check is not None:
                    spawn.checked = check(spawn)
            except Exception as exc:  # noqa: BLE001 - whatever a line holds, it is judged alone
                self._set_aside(line, f"line {number} cannot be read ({exc})")
                set_aside = True
                continue
            taken += len(line)
            found[spawn.uid] = spawn
            kept.add(spawn.uid)

    @staticmethod
    def _skip_line(f: BinaryIO) -> int:
        """Read past the rest of an over-long line, a chunk at a time; how many bytes."""
        skipped = 0
        while True:
            chunk = f.readline(_CHUNK)
            skipped += len(chunk)
            if not chunk or chunk.endswith(b"\n"):
                return skipped

    def _set_aside(self, line: bytes | None, why: str) -> None:
        """Count and log a line that is not stored; keep it in ``rejected_path`` (for the
        admin to look at) while that file stays within the bound."""
        self._count("skipped")
        where = "skipped"
        if line is not None:
            try:
                held = os.path.getsize(self.rejected_path)
            except OSError:
                held = 0
            if held + len(line) <= self._max_bytes():
                try:
                    with open(self.rejected_path, "ab") as out:
                        out.write(line if line.endswith(b"\n") else line + b"\n")
                    where = f"set aside in {self.rejected_path}"
                except OSError as exc:
                    where = f"skipped (cannot keep it in {self.rejected_path}: {exc})"
        self._log().warning("richprogress: the spawn spool %s: %s; %s", self.path, why, where)

    def _rewrite(self, spawns: list[SpooledSpawn]) -> None:
        """The file again, holding only ``spawns`` (written aside, fsynced, renamed over)."""
        fresh = self.path + ".new"
        self._close()
        try:
            with open(fresh, "wb") as out:
                for spawn in spawns:
                    out.write(encode(spawn.uid, spawn.snapshot))
                out.flush()
                os.fsync(out.fileno())
                size = out.tell()
            os.replace(fresh, self.path)
            self._fsync_folder()
        except OSError as exc:
            self._log().warning(
                "richprogress: cannot rewrite the spawn spool %s without its unreadable lines (%s)",
                self.path,
                exc,
            )
            return
        self._size = size
        self._ragged = False

    # -- writing --------------------------------------------------------------------------

    def append(self, uid: str, snap: dict[str, Any], *, retry: bool = False) -> bool:
        """Write one finished spawn, whole, and fsync it; False when it could not be (full,
        or the file cannot be written: logged and counted, and the file left as before).
        ``retry``: a spawn that could not be written before (counted then, not again)."""
        line = encode(uid, snap)
        with self._lock:
            if self._closed:
                return False
            limit = self._max_bytes()
            if self._size + len(line) > limit:
                if retry:
                    return False
                self._count("full")
                if not self._full:
                    self._full = True
                    self._log().error(
                        "richprogress: the spawn spool %s is full (%d bytes waiting, bound %d: "
                        "SpawnHistory.spool_max_bytes); spawns that end until the database takes "
                        "the waiting ones are not durable (kept in memory only)",
                        self.path,
                        self._size,
                        limit,
                    )
                return False
            try:
                self._append(line, sync=True)
            except OSError as exc:
                if retry:
                    return False
                self._count("unwritable")
                if not self._broken:
                    self._broken = True
                    self._log().error(
                        "richprogress: cannot write the spawn spool %s (%s); spawns that end are "
                        "not durable (kept in memory only) until it can be written (check the "
                        "disk has room and the folder is writable)",
                        self.path,
                        exc,
                    )
                return False
            if self._broken:
                self._broken = False
                self._log().info("richprogress: the spawn spool %s can be written again", self.path)
            self._unstored.add(uid)
            return True

    def _append(self, line: bytes, *, sync: bool) -> None:
        """``line`` at the file's end, every byte (and fsynced when ``sync``); on failure
        the file is cut back to where it began and the error raised."""
        fd = self._open()
        if self._ragged:
            # an earlier failure left a half line that could not be cut: end it, so that
            # it is one unreadable line rather than the start of this one
            self._write_all(fd, b"\n")
            self._ragged = False
        start = os.fstat(fd).st_size
        try:
            self._write_all(fd, line)
            if sync:
                self._fsync(fd)
        except OSError:
            try:
                os.ftruncate(fd, start)
            except OSError:
                self._ragged = True
            self._close()
            raise
        self._size = start + len(line)

    def _write_all(self, fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = self._write(fd, view)
            if written <= 0:
                raise OSError(errno.ENOSPC, "the file system took no more bytes")
            view = view[written:]

    def stored(self, uid: str) -> None:
        """The database holds this spawn now: say so in the file; once it holds all, cut
        the file to nothing."""
        with self._lock:
            if self._closed or uid not in self._unstored:
                return
            self._unstored.discard(uid)
            if not self._unstored and (self._size >= CUT_BYTES or self._full):
                self._cut()
                return
            try:  # without it, a restart finds the spawn stored (or deleted by retention)
                self._append(stored_line(uid), sync=False)
            except OSError:
                pass  # the row's unique spawn_uid still keeps it from being stored twice

    def close(self) -> None:
        """Close the file, cut to nothing when the database holds all it held."""
        with self._lock:
            if not self._unstored:
                self._cut()
            self._close()
            self._closed = True

    def _cut(self) -> None:
        if self._size:
            self._cut_to(0)
            self._size = 0
        if self._full:
            self._full = False
            self._log().info("richprogress: the spawn spool %s has room again", self.path)

    def _open(self) -> int:
        if self._fd is None:
            created = not os.path.exists(self.path)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            if created:  # the new name must last as well as the line
                self._fsync_folder()
        return self._fd

    def _fsync_folder(self) -> None:
        folder = os.open(os.path.dirname(os.path.abspath(self.path)), os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)

    def _close(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None

    def _cut_to(self, size: int) -> None:
        try:
            os.truncate(self.path, size)
        except OSError as exc:
            self._log().warning("richprogress: cannot cut the spawn spool %s (%s)", self.path, exc)
