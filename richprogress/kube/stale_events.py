"""Which events with our pod's name belong to *this* spawn (``StaleEventFilter``).

Kubernetes keeps a deleted pod's events for about an hour, under the same object name as
the next pod; stock KubeSpawner shows them on the first spawn after a hub start. The
filter tells them apart by pod uid and time. Plain data and time: no Kubernetes client
import here.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from richprogress.kube.event_index import POD, PVC
from richprogress.model.event_order import first_seen_order
from richprogress.model.times import parse_timestamp


def _first_time(event: Mapping[str, Any]) -> datetime | None:
    """When an event first happened (second resolution for core/v1 timestamps)."""
    metadata = event.get("metadata") or {}
    for value in (event.get("firstTimestamp"), event.get("eventTime"), metadata.get("creationTimestamp")):
        parsed = parse_timestamp(value)
        if parsed is not None:
            return parsed
    return _last_time(event)


def _last_time(event: Mapping[str, Any]) -> datetime | None:
    """When an event last happened."""
    series = event.get("series") or {}
    for value in (series.get("lastObservedTime"), event.get("lastTimestamp"), event.get("eventTime")):
        parsed = parse_timestamp(value)
        if parsed is not None:
            return parsed
    return None


class StaleEventFilter:
    """Decide which events with our pod's name belong to *this* spawn's pod.

    Kubernetes events of a deleted pod stay for about an hour, with the same
    ``involvedObject.name`` as the next pod. Rules:

    - a pod the pods reflector holds when KubeSpawner is about to create ours is an old
      one (``creating_pod``); KubeSpawner deletes it on the 409 that follows;
    - the new pod is the one that appears (in the pods reflector) without a
      ``deletionTimestamp`` and created no earlier than the spawn request minus ``skew``;
      once its uid is known, only events with that ``involvedObject.uid`` are shown;
    - any pod uid with an event or a creation time before that threshold is an old pod's,
      and its events are never shown, even recent ones (the "Killing" of a stale pod that
      KubeSpawner deletes on a 409);
    - an event of a not-yet-known uid is held (not shown) until the new pod is seen, or
      for at most ``hold_seconds`` once the pod is being created, or until the spawn ends;
      then it is shown if it happened after the threshold;
    - PVC events are about a volume that outlives spawns (same uid every time). Those
      already known when the spawn subscribed (the *baseline*; the subscription is made
      before KubeSpawner creates the PVC) are shown only if they change later (their
      count grows); others when they last happened after the threshold.

    ``skew`` covers the one-second resolution of ``firstTimestamp`` and clock differences
    between hub and cluster.
    """

    def __init__(self, started_at: datetime, skew: float = 5.0, hold_seconds: float = 1.0) -> None:
        self.started_at = started_at
        self.threshold = started_at - timedelta(seconds=skew)
        self.hold_seconds = hold_seconds
        self._baseline: dict[str, tuple[Any, ...]] = {}
        self.new_uid: str | None = None
        #: KubeSpawner has started creating our pod (pods seen before are old ones)
        self.creating = False
        self.old_uids: set[str] = set()
        self._held: dict[str, tuple[float, Mapping[str, Any]]] = {}

    def creating_pod(self, existing: Mapping[str, Any] | None) -> None:
        """KubeSpawner is about to create our pod; ``existing`` is the pod of that name the
        pods reflector holds right now, which can only be an old one."""
        self.creating = True
        uid = ((existing or {}).get("metadata") or {}).get("uid")
        if uid and uid != self.new_uid:
            self.old_uids.add(uid)

    def saw_pod(self, pod: Mapping[str, Any]) -> None:
        metadata = pod.get("metadata") or {}
        uid = metadata.get("uid")
        if not uid or uid in self.old_uids:
            return
        if not self.creating:
            # seen before KubeSpawner asked for our pod: not ours
            self.old_uids.add(uid)
            return
        created = parse_timestamp(metadata.get("creationTimestamp"))
        if "deletionTimestamp" in metadata and metadata.get("deletionTimestamp") and uid != self.new_uid:
            self.old_uids.add(uid)
        elif created is not None and created < self.threshold:
            self.old_uids.add(uid)
        elif uid not in self.old_uids:
            if self.new_uid is not None and self.new_uid != uid:
                # a second fresh pod: KubeSpawner replaced the first (409 retry); the
                # latest one is ours
                self.old_uids.add(self.new_uid)
            self.new_uid = uid

    def set_baseline(self, events: list[Mapping[str, Any]]) -> None:
        """Remember the PVC events that existed when the spawn subscribed."""
        for event in events:
            self._baseline[_event_ref(event)] = _version(event)

    def learn(self, event: Mapping[str, Any]) -> None:
        """Note an old pod's uid from an event that happened before the spawn request."""
        involved = event.get("involvedObject") or {}
        uid = involved.get("uid")
        if uid and involved.get("kind") == POD and uid != self.new_uid:
            first = _first_time(event)
            if first is not None and first < self.threshold:
                self.old_uids.add(uid)

    def classify(self, event: Mapping[str, Any]) -> str:
        """``show``, ``hide`` or ``hold``."""
        involved = event.get("involvedObject") or {}
        if involved.get("kind") == PVC:
            last = _last_time(event) or _first_time(event)
            if last is None:
                return "show"
            if self._baseline.get(_event_ref(event)) == _version(event):
                # unchanged since before this spawn subscribed, which happens before
                # KubeSpawner creates (or finds) the PVC
                return "hide"
            return "show" if last >= self.threshold else "hide"
        uid = involved.get("uid")
        if uid and uid in self.old_uids:
            return "hide"
        if uid and self.new_uid is not None:
            # the common case once our pod is known: no timestamp to parse
            return "show" if uid == self.new_uid else "hide"
        first = _first_time(event)
        recent = first is None or first >= self.threshold
        if not uid:
            return "show" if recent else "hide"
        return "hold" if recent else "hide"

    @property
    def holding(self) -> bool:
        """Whether events wait for a decision (later events must not overtake them)."""
        return bool(self._held)

    def hold(self, event: Mapping[str, Any]) -> None:
        ref = _event_ref(event)
        self._held.pop(ref, None)
        self._held[ref] = (time.monotonic(), event)

    def release(self, final: bool = False) -> list[Mapping[str, Any]]:
        """Held events that can now be decided and are to be shown, oldest first."""
        if not self._held:
            return []
        now = time.monotonic()
        shown = []
        for ref, (since, event) in list(self._held.items()):
            verdict = self.classify(event)
            if verdict == "hold" and (final or (self.creating and now - since >= self.hold_seconds)):
                verdict = "show"
            if verdict != "hold":
                del self._held[ref]
                if verdict == "show":
                    shown.append(event)
        # (by the second, then write order: a kubelet's whole "04Z" may follow a "04.84")
        shown.sort(key=lambda e: first_seen_order(_first_time(e) or self.threshold, e))
        return shown

    def next_release(self) -> float | None:
        """Seconds until a held event must be decided by time alone."""
        if not self._held or not self.creating:
            return None
        oldest = min(since for since, _event in self._held.values())
        return max(0.0, oldest + self.hold_seconds - time.monotonic())


def _version(event: Mapping[str, Any]) -> tuple[Any, ...]:
    metadata = event.get("metadata") or {}
    return (metadata.get("resourceVersion"), event.get("count"), event.get("lastTimestamp"), str(event.get("series")))


def _event_ref(event: Mapping[str, Any]) -> str:
    metadata = event.get("metadata") or {}
    return f"{metadata.get('namespace')}/{metadata.get('name')}"

