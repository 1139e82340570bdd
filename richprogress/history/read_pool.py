"""The pages' reads of the spawn history: on a few threads, within a deadline, never
queued behind a stuck one.

A handler (or a template helper, which JupyterHub's async Jinja awaits) asks
``ReadPool.read(fn, deadline)`` and awaits it on the event loop; ``fn`` runs on one of
``workers`` threads. The answer is a ``Read``: the value, or why the database was not
asked or did not answer in time (the caller then shows what memory holds and says so).

- **Deadline.** The loop waits at most ``deadline`` seconds; a read still running then is
  left to finish on its thread (a thread cannot be stopped), and its answer is dropped.
- **Bounded threads.** ``workers`` threads, never more: a stalled database (a SIGSTOPped
  PostgreSQL, a network black hole) holds at most that many. Daemon threads
  (``daemon_threads``): a read stuck there does not keep a stopping hub alive.
- **Fail fast.** While a read has been running for longer than its deadline (stuck), and
  while ``max_waiting`` reads wait for a thread, a new read is not queued: it answers at
  once, so a page under a stalled database costs no wait at all after the first.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from richprogress.history.daemon_threads import DaemonThreads
from richprogress.history.database import Unavailable

__all__ = ["REASONS", "Read", "ReadPool", "Reason"]

T = TypeVar("T")

#: why a read has no answer from the database
Reason = Literal["down", "timeout", "stalled", "busy"]

#: each reason as a sentence (the 503 answers, the log); they claim only what was seen
REASONS: dict[str, str] = {
    "down": "its database failed at the last try (the hub's log says why)",
    "timeout": "its database did not answer in time",
    "stalled": "an earlier read is still waiting for its database",
    "busy": "too many reads are waiting for its database",
}


@dataclass(frozen=True)
class Read(Generic[T]):
    """A read's answer: ``value`` from the database, or, when ``reason`` is set, the
    fallback the caller gave (what memory holds)."""

    value: T
    reason: Reason | None = None

    @property
    def available(self) -> bool:
        """Whether the database answered."""
        return self.reason is None

    @property
    def why(self) -> str:
        """``reason`` as a sentence ("" when the database answered)."""
        return REASONS[self.reason] if self.reason else ""


class ReadPool:
    """A few reader threads with deadlines (see the module's docstring)."""

    def __init__(self, workers: int = 2, max_waiting: int = 32) -> None:
        self._executor = DaemonThreads("rp-history-page", workers)
        #: reads taken at most: one per thread, and ``max_waiting`` in the queue
        self._most_in_flight = workers + max_waiting
        #: guards the three below (held for microseconds, on the loop and on the threads)
        self._lock = threading.Lock()
        #: read number -> when its thread began it
        self._running: dict[int, float] = {}
        #: reads taken and not yet finished or dropped from the queue; counted when taken
        #: (not when a thread begins one), so "busy" does not depend on how soon threads run
        self._in_flight = 0
        self._count = 0

    def stuck(self, deadline: float) -> bool:
        """Whether a read has been running for longer than ``deadline`` seconds."""
        limit = time.monotonic() - deadline
        with self._lock:
            return any(began < limit for began in self._running.values())

    async def read(
        self, fn: Callable[[], T], fallback: Callable[[], T], deadline: float
    ) -> Read[T]:
        """``fn()`` on a reader thread, awaited at most ``deadline`` seconds; else
        ``fallback()`` (called on the loop: it must be quick) with the reason. ``fn``
        raises ``Unavailable`` when the database cannot be used (reason ``down``); any
        other error of ``fn`` is raised here (that request fails, no one else's)."""
        if self.stuck(deadline):
            return Read(fallback(), "stalled")
        with self._lock:
            busy = self._in_flight >= self._most_in_flight
            if not busy:
                self._in_flight += 1
                self._count += 1
                number = self._count
        if busy:
            return Read(fallback(), "busy")

        def run() -> T:
            with self._lock:
                self._running[number] = time.monotonic()
            try:
                return fn()
            finally:
                with self._lock:
                    del self._running[number]
                    self._in_flight -= 1

        future = self._executor.submit(run)
        waited = asyncio.wrap_future(future)
        # a read given up on may fail later: its error is nobody's to log as "never retrieved"
        waited.add_done_callback(lambda done: done.cancelled() or done.exception())
        try:
            value = await asyncio.wait_for(asyncio.shield(waited), deadline)
        except asyncio.TimeoutError:
            if future.cancel():  # never began: it leaves the queue
                with self._lock:
                    self._in_flight -= 1
            return Read(fallback(), "timeout")
        except Unavailable:
            return Read(fallback(), "down")
        return Read(value)

    def close(self) -> None:
        """Stop the threads without waiting for a read stuck on the database."""
        self._executor.shutdown(0, cancel_futures=True)
