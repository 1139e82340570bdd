"""The simulated API server's memory: objects by resource, resourceVersions, watch history.

One append-only history of changes lets a watch replay everything newer than the
resourceVersion it asks for, as a real API server does; live changes go to per-watch queues.
The history keeps about five simulated minutes of changes (``WATCH_WINDOW_SECONDS``, divided
by the cluster's speed like every other delay): a watch from an older resourceVersion is
``410 Gone``, as on a real server, whose watch cache and etcd compaction (every 5 minutes by
default) forget older versions (k8s.io/apiserver v0.31,
``staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go``: "too old resource version").
Each change keeps the object's previous version, so a watch with a selector can tell an
object that leaves it (DELETED) or enters it (ADDED) from one that changes inside it.
Lists come in key order (``namespace/name``, byte order, like etcd's keys).
Objects are never mutated after they are stored: every change stores a new dict, so history
entries and list answers can share them safely.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

Obj = dict[str, Any]
Matcher = Callable[[Mapping[str, Any]], bool]

# resource (URL plural) -> (kind, namespaced)
RESOURCES: dict[str, tuple[str, bool]] = {
    "pods": ("Pod", True),
    "events": ("Event", True),
    "persistentvolumeclaims": ("PersistentVolumeClaim", True),
    "services": ("Service", True),
    "secrets": ("Secret", True),
    "configmaps": ("ConfigMap", True),
    "namespaces": ("Namespace", False),
    # the CRD-style custom resource (custom.py), served under /apis/<group>/<version>/
    "jupyterservers": ("JupyterServer", True),
}


def utc_now_seconds() -> str:
    """Wall-clock time as Kubernetes writes ``lastTimestamp``: UTC, second precision, 'Z'."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc_now_micros() -> str:
    """Wall-clock time as Kubernetes writes ``eventTime``: UTC, microseconds, 'Z'."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Conflict(Exception):
    """The object already exists (HTTP 409 AlreadyExists)."""


class NotFound(Exception):
    """The object does not exist (HTTP 404 NotFound)."""


class TooOld(Exception):
    """The asked resourceVersion is older than the kept history (HTTP 410 Gone)."""


class Stale(Exception):
    """A replace carried a resourceVersion that is no longer the object's (HTTP 409 Conflict)."""


#: How long the history keeps a change, in simulated seconds (etcd's default compaction
#: interval, which bounds what a real watch can resume from).
WATCH_WINDOW_SECONDS = 300.0


def sort_key(namespace: str, name: str) -> str:
    """The object's key as etcd orders it: ``namespace/name`` (``name`` when cluster-scoped)."""
    return f"{namespace}/{name}" if namespace else name


@dataclass
class Change:
    """One entry of the history: a watch event for one object."""

    rv: int
    resource: str
    type: str  # ADDED, MODIFIED or DELETED
    obj: Obj
    prev: Obj | None = None  # the version before a MODIFIED or DELETED
    at: float = 0.0  # time.monotonic() when it happened


@dataclass(eq=False)
class Watcher:
    """One open watch: what it wants, and the queue its stream reads from."""

    resource: str
    namespace: str | None
    matches: Matcher
    queue: asyncio.Queue[Change] = field(default_factory=asyncio.Queue)

    def wants(self, change: Change) -> bool:
        return self.convert(change) is not None

    def convert(self, change: Change) -> tuple[str, Obj] | None:
        """The watch event this watcher sends for a change, or None.

        As the API server's cache watcher does (k8s.io/apiserver v0.31,
        ``staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go``,
        ``convertToWatchEvent``): an update that moves an object into the selector is ADDED,
        one that moves it out is DELETED carrying the previous version with the update's
        resourceVersion, one inside it is MODIFIED, and one outside it is not sent.
        """
        if change.resource != self.resource:
            return None
        if self.namespace is not None:
            if (change.obj.get("metadata") or {}).get("namespace") != self.namespace:
                return None
        if change.type != "MODIFIED" or change.prev is None:
            return (change.type, change.obj) if self.matches(change.obj) else None
        now, before = self.matches(change.obj), self.matches(change.prev)
        if now and before:
            return "MODIFIED", change.obj
        if now:
            return "ADDED", change.obj
        if before:
            gone = copy.deepcopy(change.prev)
            gone["metadata"]["resourceVersion"] = str(change.rv)
            return "DELETED", gone
        return None


class ObjectStore:
    """In-memory objects of every simulated resource, with a watchable change history."""

    def __init__(
        self, history_size: int = 200_000, speed: Callable[[], float] = lambda: 1.0
    ) -> None:
        # Start from wall-clock milliseconds so that a hub which outlives a restart of the
        # simulated cluster resumes its watches with an rv that is still in the past.
        self._rv = int(time.time() * 1000)
        self.objects: dict[str, dict[tuple[str, str], Obj]] = {r: {} for r in RESOURCES}
        self.history: deque[Change] = deque(maxlen=history_size)
        self._speed = speed
        # The newest resourceVersion that fell out of the window: watches from before it
        # are 410 Gone even when the history is empty. At start nothing is forgotten: this
        # store's whole history is there.
        self._forgotten_rv = 0
        self._watchers: set[Watcher] = set()
        self._listeners: list[Callable[[Change], None]] = []
        # id(stored object) -> (object, its JSON): lists of 30k events are re-sent every
        # ~10 s per reflector, and stored objects never change, so serialize each once.
        self._json: dict[int, tuple[Obj, str]] = {}

    # -- resourceVersions ------------------------------------------------------------
    @property
    def resource_version(self) -> str:
        return str(self._rv)

    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    # -- reads -----------------------------------------------------------------------
    def get(self, resource: str, namespace: str, name: str) -> Obj:
        try:
            return self.objects[resource][(namespace, name)]
        except KeyError:
            raise NotFound(name) from None

    def find(self, resource: str, namespace: str, name: str) -> Obj | None:
        return self.objects[resource].get((namespace, name))

    def list(
        self,
        resource: str,
        namespace: str | None = None,
        matches: Matcher | None = None,
        *,
        key_order: bool = False,
    ) -> list[Obj]:
        """Stored objects in creation order, or with ``key_order`` in the order a real
        server lists them (etcd's key order: ``namespace/name``)."""
        objects = self.objects[resource]
        keys = [key for key in objects if namespace is None or key[0] == namespace]
        if key_order:
            keys.sort(key=lambda key: sort_key(*key))
        return [objects[key] for key in keys if matches is None or matches(objects[key])]

    def to_json(self, resource: str, obj: Obj) -> str:
        """``json.dumps(obj)`` on one line; cached while ``obj`` is the stored version."""
        cached = self._json.get(id(obj))
        if cached is not None and cached[0] is obj:
            return cached[1]
        text = json.dumps(obj)
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace", "")) if RESOURCES[resource][1] else ""
        key = (namespace, str(meta.get("name", "")))
        if self.objects[resource].get(key) is obj:  # only current objects: bounded cache
            self._json[id(obj)] = (obj, text)
        return text

    def _forget_json(self, obj: Obj | None) -> None:
        if obj is not None:
            self._json.pop(id(obj), None)

    # -- writes ----------------------------------------------------------------------
    def create(self, resource: str, obj: Obj) -> Obj:
        """Store a new object, filling in uid, resourceVersion and creationTimestamp."""
        obj = copy.deepcopy(obj)
        kind, namespaced = RESOURCES[resource]
        meta = obj.setdefault("metadata", {})
        namespace = meta.get("namespace", "") if namespaced else ""
        name = meta.get("name")
        if not name:
            raise ValueError("metadata.name is required")
        key = (namespace, name)
        if key in self.objects[resource]:
            raise Conflict(name)
        obj.setdefault("apiVersion", "v1")
        obj.setdefault("kind", kind)
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", utc_now_seconds())
        rv = self._next_rv()
        meta["resourceVersion"] = str(rv)
        self.objects[resource][key] = obj
        self._publish(Change(rv, resource, "ADDED", obj))
        return obj

    def replace(self, resource: str, namespace: str, name: str, new: Obj) -> Obj:
        """Store ``new`` in place of the object (PUT), keeping what the server owns.

        A ``metadata.resourceVersion`` in ``new`` must be the stored one (optimistic
        concurrency, as on a real server); uid and creationTimestamp stay.
        """
        current = self.get(resource, namespace, name)
        wanted = (new.get("metadata") or {}).get("resourceVersion")
        if wanted and wanted != current["metadata"]["resourceVersion"]:
            raise Stale(name)
        keep = {k: current["metadata"][k] for k in ("uid", "creationTimestamp", "namespace", "name") if k in current["metadata"]}

        def mutate(obj: Obj) -> None:
            obj.clear()
            obj.update(copy.deepcopy(new))
            obj.setdefault("apiVersion", current.get("apiVersion", "v1"))
            obj.setdefault("kind", current.get("kind", RESOURCES[resource][0]))
            obj.setdefault("metadata", {}).update(keep)

        return self.update(resource, namespace, name, mutate)

    def update(self, resource: str, namespace: str, name: str, mutate: Callable[[Obj], None]) -> Obj:
        """Store a changed copy of an object (MODIFIED); ``mutate`` edits the copy.

        A change that changes nothing is not written, as the real API server skips a
        no-op update (same resourceVersion, no watch event): the kubelet's repeated
        "unschedulable" status must not move the pod's resourceVersion, which the
        scheduler's event series key holds (recorder.py)."""
        current = self.get(resource, namespace, name)
        obj = copy.deepcopy(current)
        mutate(obj)
        if obj == current:
            return obj
        self._forget_json(current)
        rv = self._next_rv()
        obj["metadata"]["resourceVersion"] = str(rv)
        self.objects[resource][(namespace, name)] = obj
        self._publish(Change(rv, resource, "MODIFIED", obj, prev=current))
        return obj

    def delete(self, resource: str, namespace: str, name: str) -> Obj:
        """Remove an object; watchers get DELETED carrying the deletion's resourceVersion."""
        current = self.objects[resource].pop((namespace, name), None)
        if current is None:
            raise NotFound(name)
        self._forget_json(current)
        obj = copy.deepcopy(current)
        rv = self._next_rv()
        obj["metadata"]["resourceVersion"] = str(rv)
        self._publish(Change(rv, resource, "DELETED", obj, prev=current))
        return obj

    # -- watching --------------------------------------------------------------------
    def replay(self, resource: str, since_rv: int) -> Iterator[Change]:
        """History entries of ``resource`` newer than ``since_rv``, oldest first."""
        self._forget_old()
        if since_rv < self._forgotten_rv:
            raise TooOld(str(since_rv))
        # The history is in rv order: walk back from the newest entry, so a watch that
        # resumes near the present costs only what it replays.
        newer: list[Change] = []
        for change in reversed(self.history):
            if change.rv <= since_rv:
                break
            if change.resource == resource:
                newer.append(change)
        yield from reversed(newer)

    def subscribe(self, watcher: Watcher) -> None:
        self._watchers.add(watcher)

    def unsubscribe(self, watcher: Watcher) -> None:
        self._watchers.discard(watcher)

    def add_listener(self, listener: Callable[[Change], None]) -> None:
        """Call ``listener`` synchronously for every change (used by the simulated kubelet)."""
        self._listeners.append(listener)

    def window_seconds(self) -> float:
        """How long (wall-clock seconds) the history keeps a change at the current speed."""
        return WATCH_WINDOW_SECONDS / (self._speed() or 1.0)

    def _forget_old(self) -> None:
        horizon = time.monotonic() - self.window_seconds()
        while self.history and self.history[0].at < horizon:
            self._forgotten_rv = self.history.popleft().rv

    def _publish(self, change: Change) -> None:
        change.at = time.monotonic()
        if self.history.maxlen and len(self.history) == self.history.maxlen:
            self._forgotten_rv = self.history[0].rv
        self.history.append(change)
        self._forget_old()
        for watcher in list(self._watchers):
            if watcher.wants(change):
                watcher.queue.put_nowait(change)
        for listener in list(self._listeners):
            listener(change)
