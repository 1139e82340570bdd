"""The simulated API server's memory: objects by resource, resourceVersions, watch history.

One append-only history of changes (bounded) lets a watch replay everything newer than the
resourceVersion it asks for, as a real API server does; live changes go to per-watch queues.
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


@dataclass
class Change:
    """One entry of the history: a watch event for one object."""

    rv: int
    resource: str
    type: str  # ADDED, MODIFIED or DELETED
    obj: Obj


@dataclass(eq=False)
class Watcher:
    """One open watch: what it wants, and the queue its stream reads from."""

    resource: str
    namespace: str | None
    matches: Matcher
    queue: asyncio.Queue[Change] = field(default_factory=asyncio.Queue)

    def wants(self, change: Change) -> bool:
        if change.resource != self.resource:
            return False
        if self.namespace is not None:
            if (change.obj.get("metadata") or {}).get("namespace") != self.namespace:
                return False
        return self.matches(change.obj)


class ObjectStore:
    """In-memory objects of every simulated resource, with a watchable change history."""

    def __init__(self, history_size: int = 200_000) -> None:
        # Start from wall-clock milliseconds so that a hub which outlives a restart of the
        # simulated cluster resumes its watches with an rv that is still in the past.
        self._rv = int(time.time() * 1000)
        self.objects: dict[str, dict[tuple[str, str], Obj]] = {r: {} for r in RESOURCES}
        self.history: deque[Change] = deque(maxlen=history_size)
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
        self, resource: str, namespace: str | None = None, matches: Matcher | None = None
    ) -> list[Obj]:
        items = [
            obj
            for (ns, _), obj in self.objects[resource].items()
            if (namespace is None or ns == namespace) and (matches is None or matches(obj))
        ]
        return items

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

    def update(self, resource: str, namespace: str, name: str, mutate: Callable[[Obj], None]) -> Obj:
        """Store a changed copy of an object (MODIFIED); ``mutate`` edits the copy."""
        current = self.get(resource, namespace, name)
        obj = copy.deepcopy(current)
        mutate(obj)
        self._forget_json(current)
        rv = self._next_rv()
        obj["metadata"]["resourceVersion"] = str(rv)
        self.objects[resource][(namespace, name)] = obj
        self._publish(Change(rv, resource, "MODIFIED", obj))
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
        self._publish(Change(rv, resource, "DELETED", obj))
        return obj

    # -- watching --------------------------------------------------------------------
    def replay(self, resource: str, since_rv: int) -> Iterator[Change]:
        """History entries of ``resource`` newer than ``since_rv``, oldest first."""
        if self.history and self.history.maxlen and len(self.history) == self.history.maxlen:
            if since_rv < self.history[0].rv - 1:
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

    def _publish(self, change: Change) -> None:
        self.history.append(change)
        for watcher in list(self._watchers):
            if watcher.wants(change):
                watcher.queue.put_nowait(change)
        for listener in list(self._listeners):
            listener(change)
