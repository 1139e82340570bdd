"""Batching when busy: watch updates handled at once when the hub is quiet, together when not.

For each update a reflector receives, this decides whether to handle it now or with the
others arriving around it, and runs the batch. Handling one event costs
far more when it runs alone, milliseconds after the last one (code and data gone cold
in the CPU caches: tens of microseconds on a busy hub), than back to back with others
(a few). So:

- an update that comes more than ``age`` seconds after the previous one (a lone event) is
  handled at once, inside the watch loop's call, as before;
- one that comes sooner starts (or joins) a batch. The batch is handed over by the first
  update that finds it ``age`` seconds old (riding on that update's wake-up of the loop,
  so a busy hub pays no extra one), or by a timer ``deadline`` seconds after it began
  when the updates stop coming. An event therefore waits at most ``deadline`` seconds
  (the goal: on the page within 100 ms of reaching the reflector).

A batch also wakes each progress reader once for all its changes. One ``Coalescer`` per
event loop is shared by every indexed reflector (``loop_coalescer``). No Kubernetes or
JupyterHub import here; the clock is injectable for tests.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from richprogress.stream.per_loop import PerLoop

#: An update later than this after the previous one is a lone one (handled at once); a
#: batch older than this is handed over by the next update (seconds). 40 ms makes a
#: batch of the updates of a hub that gets 25 or more a second (100 spawns at once do).
BATCH_AGE = 0.04
#: The most a batch waits when no further update comes to hand it over (seconds). With
#: the event loop's own delays on a busy hub, the p99 from reflector to page measured
#: 45-85 ms (``benchmarks/progress_scaling.py``): within the 100 ms goal.
BATCH_DEADLINE = 0.07


class Batched(Protocol):
    """Something whose updates can wait for a batch (an ``EventIndex``)."""

    def put_now(self, ref: str, obj: Mapping[str, Any]) -> None:
        """Handle one update now."""


class Coalescer:
    """Decides "now or in a batch" for each update of one event loop, and runs batches.

    Kept updates are one list for the whole loop, so a batch hands them over in their
    arrival order across reflectors (a pod's status before the event that followed it).
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        age: float = BATCH_AGE,
        deadline: float = BATCH_DEADLINE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # the loop only weakly: one coalescer per loop is kept in a WeakKeyDictionary
        self._loop_ref = weakref.ref(loop)
        self.age = age
        self.deadline = deadline
        self._clock = clock
        self._last = float("-inf")  # when the previous update came
        self._started = 0.0  # when the gathering batch began
        #: updates kept for the batch, in arrival order
        self.kept: list[tuple[Batched, str, Mapping[str, Any]]] = []
        self._timer: asyncio.TimerHandle | None = None
        #: True while a batch is handed over (updates made meanwhile go through at once)
        self.flushing = False
        #: batches handed over, for tests and the benchmark
        self.batches = 0

    def belongs_to(self, loop: asyncio.AbstractEventLoop) -> bool:
        return self._loop_ref() is loop

    def offer(self, who: Batched, ref: str, obj: Mapping[str, Any]) -> bool:
        """Take an update for the batch (True), or leave it to be handled now (False)."""
        if self.flushing:
            return False
        now = self._clock()
        last, self._last = self._last, now
        kept = self.kept
        if not kept:
            if now - last >= self.age:
                return False  # a lone update
            self._started = now
            loop = self._loop_ref()
            if loop is None:
                return False
            self._timer = loop.call_later(self.deadline, self.flush)
        kept.append((who, ref, obj))
        if now - self._started >= self.age:
            self.flush()  # old enough: handed over on this update's wake-up
        return True

    def flush(self) -> None:
        """Hand over every kept update now (also before the index is read, and before a
        spawn's pump ends)."""
        if self._timer is not None:
            # cancelled, a timer never wakes the loop: it is dropped when it comes up
            self._timer.cancel()
            self._timer = None
        if not self.kept or self.flushing:
            return
        self.batches += 1
        self.flushing = True
        try:
            while self.kept:  # (a handler may read an index, which flushes: nothing is lost)
                kept, self.kept = self.kept, []
                for who, ref, obj in kept:
                    who.put_now(ref, obj)
        finally:
            self.flushing = False


_coalescers: PerLoop[Coalescer] = PerLoop(Coalescer)


def loop_coalescer(loop: asyncio.AbstractEventLoop) -> Coalescer:
    """The ``Coalescer`` of ``loop`` (made on first use)."""
    return _coalescers.of(loop)


def flush_running() -> None:
    """Hand over the running loop's batch, if any (before a reader stops listening)."""
    loop = asyncio._get_running_loop()
    if loop is not None:
        coalescer = _coalescers.get(loop)
        if coalescer is not None:
            coalescer.flush()
