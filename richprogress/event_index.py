"""An index of Kubernetes events by the object they are about, with asyncio waiters.

KubeSpawner's events reflector keeps every event of a namespace in one dict, and stock
``progress()`` re-sorts all of them once a second for every open progress page. Here each
watch update lands in an ``EventIndex`` keyed by ``(namespace, kind, name)`` of the
event's involved object, and wakes only the ``Subscription`` s waiting on that key. A
progress stream then costs work per event *of its own pod*, not per event in the namespace.

The reflector's ``resources`` dict is replaced by an ``IndexedResources`` dict that forwards
every write and delete to an index (see ``richprogress.kubespawner``), so KubeSpawner's own
watch loop is used unchanged. No Kubernetes client import here: this module is plain data
structures and asyncio, testable alone.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .coalesce import Coalescer, flush_running, loop_coalescer
from .event_order import last_seen_order

#: (namespace, kind, name) of the object an event is about, e.g. ("jhub", "Pod", "jupyter-alice")
ObjectKey = tuple[str, str, str]

#: the kinds of object a spawn follows
POD = "Pod"
PVC = "PersistentVolumeClaim"


def object_key(event: Mapping[str, Any]) -> ObjectKey:
    """The index key of an event: its involved object's namespace, kind and name.

    The involved object's namespace may be missing on hand-made events; the event's own
    namespace is the same for namespaced objects.
    """
    involved = event.get("involvedObject") or {}
    metadata = event.get("metadata") or {}
    namespace = involved.get("namespace") or metadata.get("namespace") or ""
    return (str(namespace), str(involved.get("kind") or ""), str(involved.get("name") or ""))


def _resource_version(obj: Mapping[str, Any]) -> Any:
    return (obj.get("metadata") or {}).get("resourceVersion")


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


_clocks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _PatienceClock] = weakref.WeakKeyDictionary()


def _patience_clock(loop: asyncio.AbstractEventLoop) -> _PatienceClock:
    clock = _clocks.get(loop)
    if clock is None:
        clock = _clocks[loop] = _PatienceClock(loop)
    return clock



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
                    clock = self._clock = _patience_clock(loop)
                self._timer = clock.add(self, deadline)
        waiter = self._waiter = loop.create_future()
        try:
            await waiter
        finally:
            self._waiter = None
        return self._woken


class EventIndex:
    """Events grouped by involved object, mirroring one reflector's ``resources``.

    ``ref`` is the reflector's key of an event (``namespace/name`` of the Event object).
    The index holds references to the same dicts as the reflector, so its own memory is the
    grouping only; an object's entry disappears with its last event (Kubernetes deletes
    events after about an hour, and a relist drops what the API server no longer has).
    """

    source = "event"

    def __init__(self, key_func: Callable[[Mapping[str, Any]], ObjectKey] = object_key) -> None:
        self._key_func = key_func
        self._by_key: dict[ObjectKey, dict[str, Mapping[str, Any]]] = {}
        self._key_of: dict[str, ObjectKey] = {}
        self._subs: dict[ObjectKey, set[Subscription]] = {}
        #: the running loop's Coalescer (set on the first put in a loop)
        self.coalescer: Coalescer | None = None

    # -- writes (from the reflector) ------------------------------------------------------

    def put(self, ref: str, obj: Mapping[str, Any]) -> None:
        """Add or replace one object and wake the subscribers of its key: at once when
        the hub is quiet, in the loop's next batch when it is busy (``coalesce``)."""
        loop = asyncio._get_running_loop()
        if loop is not None:
            coalescer = self.coalescer
            if coalescer is None or not coalescer.belongs_to(loop):
                # (reflectors outlive loops in tests: one coalescer per loop)
                coalescer = self.coalescer = loop_coalescer(loop)
            if coalescer.offer(self, ref, obj):
                return
        self.put_now(ref, obj)

    def _settle(self) -> None:
        """Hand over the loop's batch, so the index is whole when it is read."""
        coalescer = self.coalescer
        if coalescer is not None and coalescer.kept:
            coalescer.flush()

    def put_now(self, ref: str, obj: Mapping[str, Any]) -> None:
        """``put`` without batching."""
        try:
            key = self._key_func(obj)
        except Exception:  # a malformed object must not break the watch loop
            return
        old_key = self._key_of.get(ref)
        if old_key is not None and old_key != key:
            self._discard(ref, old_key)
        self._by_key.setdefault(key, {})[ref] = obj
        self._key_of[ref] = key
        subs = self._subs.get(key)
        if subs:
            for sub in subs:
                sub.push(self.source, ref, obj)

    def remove(self, ref: str) -> None:
        """Forget one object (a DELETED watch event). Subscribers are not woken: a deleted
        event (expired after its TTL) says nothing new about a spawn."""
        self._settle()  # a kept put of this object comes first
        key = self._key_of.pop(ref, None)
        if key is not None:
            self._discard(ref, key)

    def _discard(self, ref: str, key: ObjectKey) -> None:
        group = self._by_key.get(key)
        if group is not None:
            group.pop(ref, None)
            if not group:
                del self._by_key[key]

    def replace_all(self, resources: Mapping[str, Mapping[str, Any]]) -> None:
        """Make the index mirror a fresh list (a relist), waking subscribers only for
        objects that are new or whose resourceVersion changed (missed by the watch)."""
        self._settle()
        previous = {ref: self._by_key.get(key, {}).get(ref) for ref, key in self._key_of.items()}
        self._by_key = {}
        self._key_of = {}
        missed: list[tuple[str, Mapping[str, Any], set[Subscription]]] = []
        for ref, obj in resources.items():
            try:
                key = self._key_func(obj)
            except Exception:
                continue
            self._by_key.setdefault(key, {})[ref] = obj
            self._key_of[ref] = key
            subs = self._subs.get(key)
            if subs:
                old = previous.get(ref)
                if old is None or _resource_version(old) != _resource_version(obj) or old != obj:
                    missed.append((ref, obj, subs))
        # a list comes sorted by name, not by time (the first list of a new reflector can
        # hold several of a starting spawn's events): hand them over oldest first
        missed.sort(key=lambda item: last_seen_order(item[1]))
        for ref, obj, subs in missed:
            for sub in subs:
                sub.push(self.source, ref, obj)

    # -- reads ------------------------------------------------------------------------------

    def objects_for(self, key: ObjectKey) -> list[Mapping[str, Any]]:
        """The objects currently known for one key (unordered)."""
        self._settle()
        return list(self._by_key.get(key, {}).values())

    def subscribe(self, keys: Iterable[ObjectKey], sub: Subscription | None = None) -> Subscription:
        """Register a subscription for ``keys``; it first receives what is already known.

        A ``Subscription`` may be registered with several indexes (pod events and PVC events
        come from two reflectors).
        """
        self._settle()
        keys = list(keys)
        if sub is None:
            sub = Subscription(keys)
        else:
            sub.keys.update(keys)
        for key in keys:
            self._subs.setdefault(key, set()).add(sub)
            known = sorted(self._by_key.get(key, {}).items(), key=lambda item: last_seen_order(item[1]))
            for ref, obj in known:
                sub.push(self.source, ref, obj)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        """Drop a subscription from every key (always called when a spawn's pump ends)."""
        for key in sub.keys:
            subs = self._subs.get(key)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    del self._subs[key]

    def stats(self) -> dict[str, int]:
        """Sizes, for tests and the benchmark: objects, keys, subscribed keys."""
        self._settle()
        return {
            "objects": len(self._key_of),
            "keys": len(self._by_key),
            "subscribed_keys": len(self._subs),
        }


class ObjectWatchers(EventIndex):
    """Wake subscribers when a watched object itself (our pod) changes.

    Keyed by the object's own ``(namespace, kind, name)``; used on the pods reflector so a
    spawn learns its new pod's uid the moment the pod appears, without polling.
    """

    source = "object"

    def __init__(self, kind: str) -> None:
        def key_func(obj: Mapping[str, Any]) -> ObjectKey:
            metadata = obj.get("metadata") or {}
            return (str(metadata.get("namespace") or ""), kind, str(metadata.get("name") or ""))

        super().__init__(key_func)


class IndexedResources(dict[str, Any]):
    """A reflector's ``resources`` dict that forwards writes and deletes to an index.

    KubeSpawner's watch loop does ``resources[ref] = obj`` and ``resources.pop(ref, None)``;
    both land here. A relist assigns a whole new dict, which the reflector wraps again
    (calling ``EventIndex.replace_all``).
    """

    def __init__(self, index: EventIndex, initial: Mapping[str, Any] | None = None) -> None:
        super().__init__(initial or {})
        self.index = index

    def __setitem__(self, ref: str, obj: Any) -> None:
        super().__setitem__(ref, obj)
        self.index.put(ref, obj)

    def pop(self, ref: str, *default: Any) -> Any:
        value = super().pop(ref, *default)
        self.index.remove(ref)
        return value

    def __delitem__(self, ref: str) -> None:
        super().__delitem__(ref)
        self.index.remove(ref)
