"""A spawn's inbox: the events of its objects that it has not read yet, and a way to wait.

A ``Subscription`` is what a progress pump reads from. Whoever watches the cluster (the
Kubernetes side's event index) pushes each update of an object the subscription follows;
the pump drains what arrived and waits for more, with a patience deadline. Plain asyncio:
nothing here knows Kubernetes, so any spawner's stream can use it.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from richprogress.stream.batching import flush_running
from richprogress.stream.per_loop import PerLoop

#: (namespace, kind, name) of the object an event is about, e.g. ("jhub", "Pod", "jupyter-alice")
ObjectKey = tuple[str, str, str]


class _Deadline:
    """One subscription's entry in a ``_PatienceClock`` (``sub`` None once cancelled)."""

    __slots__ = ("when", "sub")

    def __init__(self, when: float, sub: Subscription) -> None:
        self.when = when
        self.sub: Subscription | None = sub

    def cancel(self) -> None:
        self.sub = None


class _PatienceClock:
    """One loop-wide timer for every waiting subscription's deadline.

    Each pump waits with a patience deadline (30 s and more away). One loop timer per pump
    would put hundreds of entries into the event loop's own timer heap, which every other
    timer of the hub (each ``asyncio.sleep``, each tornado timeout) then pays for on every
    push and pop, with a Python-level comparison per step. Here the deadlines sit in our
    own heap of plain tuples and the loop holds one timer, for the earliest of them.
    Cancelled entries are dropped lazily (when they come up, or by a rebuild when they
    outnumber the live ones).

    The clock is kept per loop in a ``WeakKeyDictionary``; it refers to its loop and to its
    loop timer only weakly, so a closed loop (one per test) is not kept alive by it.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop_ref = weakref.ref(loop)
        self._heap: list[tuple[float, int, _Deadline]] = []
        self._seq = itertools.count()
        self._timer: weakref.ref[asyncio.TimerHandle] | None = None
        self._timer_when = 0.0
        self._live = 0

    def belongs_to(self, loop: asyncio.AbstractEventLoop) -> bool:
        return self._loop_ref() is loop

    def add(self, sub: Subscription, when: float) -> _Deadline:
        entry = _Deadline(when, sub)
        heapq.heappush(self._heap, (when, next(self._seq), entry))
        self._live += 1
        if len(self._heap) > 64 and len(self._heap) > 2 * self._live:
            self._heap = [item for item in self._heap if item[2].sub is not None]
            heapq.heapify(self._heap)
        if self._timer is None or when < self._timer_when:
            self._arm(when)
        return entry

    def cancel(self, entry: _Deadline) -> None:
        if entry.sub is not None:
            entry.sub = None
            self._live -= 1
            # the loop timer is left as it is: firing early for a cancelled entry only
            # makes _fire look at the heap and re-arm

    def _arm(self, when: float) -> None:
        loop = self._loop_ref()
        if loop is None:
            return
        old = self._timer() if self._timer is not None else None
        if old is not None:
            old.cancel()
        self._timer_when = when
        self._timer = weakref.ref(loop.call_at(when, self._fire))

    def _fire(self) -> None:
        self._timer = None
        loop = self._loop_ref()
        if loop is None:
            return
        heap = self._heap
        # the loop runs a timer up to its clock resolution early; count those as due
        due_by = loop.time() + float(getattr(loop, "_clock_resolution", 0.0))
        while heap and (heap[0][2].sub is None or heap[0][0] <= due_by):
            _when, _seq, entry = heapq.heappop(heap)
            sub = entry.sub
            if sub is not None:
                entry.sub = None
                self._live -= 1
                sub._time_up(entry)
        if heap:
            self._arm(heap[0][0])


_clocks: PerLoop[_PatienceClock] = PerLoop(_PatienceClock)



class Subscription:
    """What one waiter (a spawn's progress pump) has not consumed yet, and a way to wait.

    ``push`` is called by the index (synchronously, from the watch task); ``drain`` hands
    over what arrived, in arrival order, one entry per changed object (the latest version of
    it). Holding only "changed since last drain" keeps a slow reader's memory bounded by the
    number of distinct events for its keys, not by the number of updates.
    """

    def __init__(self, keys: Iterable[ObjectKey] = ()) -> None:
        self.keys: set[ObjectKey] = set(keys)
        self._pending: OrderedDict[tuple[str, str], Mapping[str, Any]] = OrderedDict()
        # a flag plus at most one future (not an asyncio.Event and wait_for, which costs a
        # task per wait): waking a reader is one set_result
        self._woken = False
        self._waiter: asyncio.Future[None] | None = None
        # one deadline kept across waits while it still fits (a pump waits with the same
        # patience deadline after every event), in the loop-wide _PatienceClock rather
        # than as a timer of its own in the event loop's heap
        self._timer: _Deadline | None = None
        self._clock: _PatienceClock | None = None
        self.closed = False
        #: Optional ``handler(source, obj) -> bool``, called by ``push`` in place of queueing
        #: while the reader is idle (waiting, nothing queued), so a common event costs no
        #: wake-up of the reader's task. False means "not now": the object is queued.
        self.handler: Callable[[str, Mapping[str, Any]], bool] | None = None

    def push(self, source: str, ref: str, obj: Mapping[str, Any]) -> None:
        """Queue one new or changed object (``source`` tells events from pods)."""
        handler = self.handler
        if (
            handler is not None
            and self._waiter is not None  # the reader waits: it is not midway through a batch
            and not self._pending  # and nothing queued would come after this object
            and not self._woken
            and not self.closed
            and handler(source, obj)
        ):
            return
        key = (source, ref)
        # move to the end: the reader sees objects in the order of their latest change
        self._pending.pop(key, None)
        self._pending[key] = obj
        self._wake()

    def _wake(self) -> None:
        self._woken = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def poke(self) -> None:
        """Wake the reader without new data (e.g. to make it look at the clock)."""
        self._wake()

    def close(self) -> None:
        """Tell the reader to finish after draining (updates still kept for a batch are
        handed over first, so none is lost when a spawn's pump ends)."""
        flush_running()
        self.closed = True
        self._cancel_timer()
        self._wake()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            if self._clock is not None:
                self._clock.cancel(self._timer)
            self._timer = None

    def _time_up(self, entry: _Deadline) -> None:
        if self._timer is entry:
            self._timer = None
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def drain(self) -> list[tuple[str, Mapping[str, Any]]]:
        """Everything pushed since the last drain, as ``(source, object)`` pairs."""
        items = [(source, obj) for (source, _ref), obj in self._pending.items()]
        self._pending.clear()
        if not self.closed:
            self._woken = False
        return items

    def __len__(self) -> int:
        return len(self._pending)

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait until something was pushed (True) or ``timeout`` seconds passed (False).

        May return False a little early (a kept timer set for an earlier deadline): callers
        check the clock themselves, as the pump does.
        """
        if self._woken:
            return True
        if timeout is not None and timeout <= 0:
            return False
        loop = asyncio.get_running_loop()
        timer = self._timer
        if timeout is None:
            self._cancel_timer()
        else:
            deadline = loop.time() + timeout
            if timer is None or timer.when > deadline:
                # no deadline, or one that comes too late: set this one; a deadline due
                # earlier is kept (an early wake-up only makes the caller look again)
                self._cancel_timer()
                clock = self._clock
                if clock is None or not clock.belongs_to(loop):
                    clock = self._clock = _clocks.of(loop)
                self._timer = clock.add(self, deadline)
        waiter = self._waiter = loop.create_future()
        try:
            await waiter
        finally:
            self._waiter = None
        return self._woken
