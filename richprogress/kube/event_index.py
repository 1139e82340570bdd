"""An index of Kubernetes events by the object they are about, with asyncio waiters.

KubeSpawner's events reflector keeps every event of a namespace in one dict, and stock
``progress()`` re-sorts all of them once a second for every open progress page. Here each
watch update lands in an ``EventIndex`` keyed by ``(namespace, kind, name)`` of the
event's involved object, and wakes only the ``Subscription`` s waiting on that key. A
progress stream then costs work per event *of its own pod*, not per event in the namespace.

The reflector's ``resources`` dict is replaced by an ``IndexedResources`` dict that forwards
every write and delete to an index (see ``richprogress.kube.spawner``), so KubeSpawner's own
watch loop is used unchanged. No Kubernetes client import here: this module is plain data
structures and asyncio, testable alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from richprogress.model.event_order import last_seen_order
from richprogress.stream.batching import Coalescer, loop_coalescer
from richprogress.stream.inbox import ObjectKey, Subscription

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
        the hub is quiet, in the loop's next batch when it is busy
        (``richprogress.stream.batching``)."""
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
