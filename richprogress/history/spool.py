"""The spool: finished spawns on local disk until the database has them.

Keep every finished spawn durable from a few milliseconds after its end, whatever the
database does (down, stalled, locked, deleted) and whatever happens to the hub (a restart,
a SIGKILL), so that the writer can store it later, in order, exactly once.

- **What.** An append-only file of JSON lines, one per finished spawn:
  ``{"v": 1, "uid": ..., "snapshot": {...}}``, the spawn's id and the snapshot
  ``rows.snapshot`` took at its end. Each line is written with one ``write`` and fsynced
  before the database is asked (write-ahead: a hub killed during the database write
  finds the line at its next start). The spawn id is also the row's unique ``spawn_uid``:
  storing a line twice stores one row.
- **When it empties.** Once the database holds every spawn of the file and the file has
  passed ``CUT_BYTES`` (or the store closes), it is cut to nothing (no fsync needed: a line
  that comes back after a crash is stored once anyway). Not after every spawn: cutting is
  a metadata change the file system journals, which cost as much as the append itself.
- **Bound.** At most ``max_bytes``; a spawn that does not fit is not spooled (the writer
  still tries the database, and memory keeps the server's last spawn). Logged when the
  bound is first reached and when there is room again; each such spawn is counted.
- **Reading it back** (``load``, at the store's start): lines in order, duplicates by id
  dropped; a line that cannot be read (a crash in the middle of an append leaves a cut
  last line) is skipped with a log line, and a cut tail is removed so the next append
  starts on a line of its own.
- **Counted** by event (``count_spool_with``): ``waiting`` (a spawn the database did not take
  at once), ``replayed`` (stored after waiting), ``full``, ``unwritable``, ``skipped``.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = ["SPOOL_EVENTS", "Spool", "SpooledSpawn", "count_spool_event", "count_spool_with"]

#: what the spool counts (the metric's label values)
SPOOL_EVENTS = ("waiting", "replayed", "full", "unwritable", "skipped", "refused")

#: a file whose spawns are all stored is cut once it is this big (a few dozen spawns)
CUT_BYTES = 1024 * 1024

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
    """One line of the spool: a finished spawn's id and snapshot."""

    uid: str
    snapshot: dict[str, Any]


def encode(uid: str, snap: dict[str, Any]) -> bytes:
    """One spool line (ending in a newline)."""
    data = {k: (v.isoformat() if k in _MOMENTS and isinstance(v, datetime) else v) for k, v in snap.items()}
    return (json.dumps({"v": 1, "uid": uid, "snapshot": data}, separators=(",", ":"), default=str) + "\n").encode()


def decode(line: bytes) -> SpooledSpawn:
    """A spool line back as a spawn (``ValueError`` when it is not one)."""
    data = json.loads(line)
    if not isinstance(data, dict) or not isinstance(data.get("uid"), str) or not isinstance(data.get("snapshot"), dict):
        raise ValueError("not a spooled spawn")
    snap = dict(data["snapshot"])
    for key in _MOMENTS:
        snap[key] = datetime.fromisoformat(snap[key])
    return SpooledSpawn(data["uid"], snap)


class Spool:
    """The spool file: append (fsynced), read back, cut once everything in it is stored.

    Thread-safe: the writer's spool thread appends, its database thread marks spawns
    stored; each holds the lock for one file operation."""

    def __init__(
        self,
        path: str,
        max_bytes: Callable[[], int],
        log: Callable[[], logging.Logger | logging.LoggerAdapter[Any]],
        count: Callable[[str], None] = count_spool_event,
    ) -> None:
        self.path = path
        self._max_bytes = max_bytes
        self._log = log
        self._count = count
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._size = 0
        #: ids of the spawns in the file that the database does not hold yet
        self._unstored: set[str] = set()
        self._full = False
        self._broken = False

    @property
    def waiting(self) -> int:
        """Spawns in the file that the database does not hold yet."""
        return len(self._unstored)

    def load(self) -> list[SpooledSpawn]:
        """The spawns a previous run left in the file, oldest first (a missing file: none)."""
        with self._lock:
            try:
                with open(self.path, "rb") as f:
                    data = f.read()
            except FileNotFoundError:
                return []
            except OSError as exc:
                self._log().error("richprogress: cannot read the spawn spool %s (%s)", self.path, exc)
                return []
            found: dict[str, SpooledSpawn] = {}
            lines = data.split(b"\n")
            tail = lines.pop()  # after the last newline: b"" unless an append was cut
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    spawn = decode(line)
                except (ValueError, KeyError, TypeError):
                    self._skipped(f"line {number} cannot be read")
                    continue
                found.setdefault(spawn.uid, spawn)
            self._size = len(data)
            if tail:
                # a hub stopped in the middle of an append: that spawn never got past its end
                self._skipped(f"its last line ({len(tail)} bytes) was cut short")
                self._size = len(data) - len(tail)
                self._cut_to(self._size)
            self._unstored = set(found)
            return list(found.values())

    def append(self, uid: str, snap: dict[str, Any]) -> bool:
        """Write one finished spawn and fsync it; False when it could not be (full, or the
        file cannot be written: logged and counted)."""
        line = encode(uid, snap)
        with self._lock:
            limit = self._max_bytes()
            if self._size + len(line) > limit:
                self._count("full")
                if not self._full:
                    self._full = True
                    self._log().error(
                        "richprogress: the spawn spool %s is full (%d bytes waiting, bound %d: "
                        "SpawnHistory.spool_max_bytes); spawns that end until the database takes "
                        "the waiting ones are kept in memory only",
                        self.path, self._size, limit,
                    )
                return False
            try:
                fd = self._open()
                os.write(fd, line)
                os.fsync(fd)
            except OSError as exc:
                self._count("unwritable")
                if not self._broken:
                    self._broken = True
                    self._log().error(
                        "richprogress: cannot write the spawn spool %s (%s); spawns are kept in "
                        "memory only until it can be written (check the folder is writable)",
                        self.path, exc,
                    )
                self._close()
                return False
            if self._broken:
                self._broken = False
                self._log().info("richprogress: the spawn spool %s can be written again", self.path)
            self._size += len(line)
            self._unstored.add(uid)
            return True

    def stored(self, uid: str) -> None:
        """The database holds this spawn now; once it holds all, cut the file to nothing."""
        with self._lock:
            self._unstored.discard(uid)
            if not self._unstored and (self._size >= CUT_BYTES or self._full):
                self._cut()

    def close(self) -> None:
        """Close the file, cut to nothing when the database holds all it held."""
        with self._lock:
            if not self._unstored:
                self._cut()
            self._close()

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
                folder = os.open(os.path.dirname(os.path.abspath(self.path)), os.O_RDONLY)
                try:
                    os.fsync(folder)
                finally:
                    os.close(folder)
        return self._fd

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

    def _skipped(self, why: str) -> None:
        self._count("skipped")
        self._log().warning("richprogress: the spawn spool %s: %s; skipped", self.path, why)
