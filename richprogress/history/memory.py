"""The last spawn of each server, kept in memory until the database has it.

Answer for a spawn whose write is not done yet, or could not be
done (the database is down), so the failure page never says less than the database would.

Bounded: at most ``limit()`` servers, the least recently ended dropped first. Spawns kept
here have negative ids (-1, -2, ...), which no database row has, so a page can ask for one
by id. The lock is held for microseconds: ``keep`` runs on the hub's event loop.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from richprogress.history.rows import (
    SUMMARY_COLUMNS,
    Account,
    build_row,
    full_spawn,
    owned,
    summary_of,
)

__all__ = ["MemorySpawns", "ServerKey", "with_unwritten"]

#: (user name, server name)
ServerKey = tuple[str, str]


class MemorySpawns:
    """The last spawn of each server (its snapshot, and its row once built), newest last."""

    def __init__(self, limit: Callable[[], int]) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._spawns: OrderedDict[ServerKey, dict[str, Any]] = OrderedDict()
        self._last_id = 0

    def keep(self, key: ServerKey, snap: dict[str, Any]) -> None:
        """Keep a just-finished spawn's snapshot as the server's last spawn."""
        with self._lock:
            self._last_id -= 1
            self._spawns[key] = {"snapshot": snap, "id": self._last_id}
            self._spawns.move_to_end(key)
            while len(self._spawns) > self._limit():
                self._spawns.popitem(last=False)

    def written(
        self, key: ServerKey, snap: dict[str, Any], row: dict[str, Any], new_id: int | None
    ) -> None:
        """After a write: a written spawn leaves memory (the database has it); an unwritten
        one (``new_id`` None) keeps its built row, so reads need not diagnose it again."""
        with self._lock:
            entry = self._spawns.get(key)
            if entry is None or entry["snapshot"] is not snap:
                return  # a newer spawn of this server replaced it meanwhile
            if new_id is not None:
                del self._spawns[key]
            else:
                entry["row"] = row

    def spawn(self, user: str, server: str, account: Account | None = None) -> dict[str, Any] | None:
        """The server's last spawn (full, as ``rows.full_spawn`` shapes it) while it is not
        (yet) in the database, when ``account`` made it (None: any account); else None."""
        with self._lock:
            entry = self._spawns.get((user, server))
            if entry is None or not owned(entry["snapshot"], account):
                return None
            snap, row, spawn_id = entry["snapshot"], entry.get("row"), entry["id"]
        if row is None:
            row = build_row(snap)  # outside the lock: it diagnoses the timeline
        return full_spawn({**row, "id": spawn_id})

    def summaries_of(self, user: str, account: Account | None = None) -> dict[str, dict[str, Any]]:
        """The summaries of a user's servers' unwritten last spawns that ``account`` made
        (None: any account), by server name."""
        with self._lock:
            entries = [
                (server, entry)
                for (name, server), entry in self._spawns.items()
                if name == user and owned(entry["snapshot"], account)
            ]
        found: dict[str, dict[str, Any]] = {}
        for server, entry in entries:
            row = entry.get("row") or build_row(entry["snapshot"])
            found[server] = summary_of({**row, "id": entry["id"]})
        return found


def with_unwritten(
    spawns: list[dict[str, Any]], unwritten: dict[str, Any] | None, limit: int
) -> list[dict[str, Any]]:
    """A server's stored spawns (summaries, newest first) with its unwritten last spawn on
    top, when there is one the list does not hold yet; still at most ``limit``."""
    if unwritten is not None and all(s["id"] != unwritten["id"] for s in spawns):
        spawns.insert(0, {k: unwritten.get(k) for k in SUMMARY_COLUMNS})
        del spawns[limit:]
    return spawns
