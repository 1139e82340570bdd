"""RichKubeSpawner: KubeSpawner with indexed, event-driven progress and spawn timelines.

One and only purpose: feed a spawn's timeline (see ``richprogress.spawner``) from the
Kubernetes events about its pod and its PVC, as they arrive, without polling.

- The events reflector is KubeSpawner's own ``EventReflector`` (same list and watch code)
  whose ``resources`` dict also feeds an ``EventIndex`` keyed by the involved object
  ``(namespace, kind, name)``. A spawn subscribes to its pod's and its PVC's keys and is
  woken only by those events: no 1 s poll, no sort of the namespace's events.
- PVC events come from a second events reflector with the field selector
  ``involvedObject.kind=PersistentVolumeClaim``. We keep the stock Pod-kind reflector as it
  is, rather than one reflector without a kind selector, so the hub caches only the two
  kinds it shows (a namespace also holds events of Deployments, ReplicaSets, Services, ...)
  and anything reading ``event_reflector.events`` keeps working.
- The pods reflector is indexed the same way, so a spawn learns its new pod's uid the
  moment the pod appears, and can tell the new pod's events from those of a previous pod
  with the same name (Kubernetes keeps events for about an hour; stock KubeSpawner shows
  the old ones on the first spawn after a hub start). See ``StaleEventFilter``.
- Some facts never become Events: Kubernetes reports an out-of-memory kill or a container
  that exited with an error only in the pod's ``containerStatuses``. The pod updates that
  wake a spawn are turned into core/v1-shaped Warning events (``container_terminations``)
  and formatted like any other, so the page can say "ran out of memory" rather than only
  the "keeps crashing" back-off that follows.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from kubespawner import KubeSpawner
from kubespawner.reflector import ResourceReflector
from kubespawner.spawner import EventReflector, PodReflector
from traitlets import Bool, Float

from .event_index import EventIndex, IndexedResources, ObjectKey, ObjectWatchers, Subscription
from .records import EventRecord
from .spawner import Closer, RichProgressMixin, _Broadcast
from .timeline import SpawnTimeline, parse_timestamp

POD = "Pod"
PVC = "PersistentVolumeClaim"


class _IndexedReflectorMixin(ResourceReflector):
    """Keep ``self.index`` in step with ``self.resources`` (list, relist and watch)."""

    index: EventIndex

    def _make_index(self) -> EventIndex:
        return EventIndex()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.index = self._make_index()
        self.resources = IndexedResources(self.index, dict(self.resources or {}))  # type: ignore[has-type]

    def adopt(self, fresh: Mapping[str, Any]) -> None:
        """Take a freshly listed ``resources`` dict: index it and wrap it."""
        if not isinstance(fresh, IndexedResources):
            self.index.replace_all(fresh)
            self.resources = IndexedResources(self.index, fresh)

    async def _list_and_update(self, resource_version: Any = None) -> Any:
        version = await super()._list_and_update(resource_version)
        # the stock code assigned a fresh plain dict; wrap it before anything can await,
        # so no watch update can slip past the index
        self.adopt(self.resources)
        return version


class IndexedEventReflector(_IndexedReflectorMixin, EventReflector):
    """KubeSpawner's events reflector, with its events indexed by involved object."""


class IndexedPodReflector(_IndexedReflectorMixin, PodReflector):
    """KubeSpawner's pods reflector, waking waiters when their pod changes."""

    def _make_index(self) -> EventIndex:
        return ObjectWatchers(POD)


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
        shown.sort(key=lambda e: (_first_time(e) or self.threshold))
        return shown

    def next_release(self) -> float | None:
        """Seconds until a held event must be decided by time alone."""
        if not self._held or not self.creating:
            return None
        oldest = min(since for since, _event in self._held.values())
        return max(0.0, oldest + self.hold_seconds - time.monotonic())


#: Termination reasons that mean the container failed even when no exit code says so.
_FAILED_TERMINATIONS = frozenset({"OOMKilled", "ContainerCannotRun", "StartError", "DeadlineExceeded"})

#: ``reportingComponent`` of the events we make from pod status (no Kubernetes component
#: reports these as Events).
STATUS_COMPONENT = "richprogress"


def _termination_message(container: str, terminated: Mapping[str, Any], limit: Any) -> str:
    """The raw message of a synthesized termination event, in the kubelet's plain style."""
    reason = str(terminated.get("reason") or "")
    code = terminated.get("exitCode")
    if reason == "OOMKilled":
        details = [f"exit code {code}"] if code is not None else []
        if limit:
            details.append(f"memory limit {limit}")
        suffix = f" ({', '.join(details)})" if details else ""
        return f"Container {container} was killed because it ran out of memory{suffix}"
    message = f"Container {container} terminated: {reason or 'Error'}"
    if code is not None:
        message += f" (exit code {code})"
    detail = " ".join(str(terminated.get("message") or "").split())
    return f"{message}: {detail}" if detail else message


def container_terminations(pod: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Warning events (core/v1 shape) for the failed container terminations in ``pod``'s status.

    A termination is failed when its reason is one of ``OOMKilled``, ``ContainerCannotRun``,
    ``StartError``, ``DeadlineExceeded`` or its exit code is not 0. Both the current state
    and ``lastState`` (a restarted container) are read. Each container and reason gets one
    stable ``uid``; ``count`` is the number of terminations so far (from ``restartCount``),
    so a repeat updates the same record with a bigger count. A pod being deleted yields
    nothing: its containers are stopped on purpose.
    """
    metadata = pod.get("metadata") or {}
    if metadata.get("deletionTimestamp"):
        return []
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    pod_uid = str(metadata.get("uid") or "")
    events: list[dict[str, Any]] = []
    for spec_key, status_key in (("initContainers", "initContainerStatuses"), ("containers", "containerStatuses")):
        limits = {
            c.get("name"): ((c.get("resources") or {}).get("limits") or {}).get("memory")
            for c in spec.get(spec_key) or []
            if isinstance(c, Mapping)
        }
        for container_status in status.get(status_key) or []:
            if not isinstance(container_status, Mapping):
                continue
            name = str(container_status.get("name") or "")
            restarts = container_status.get("restartCount")
            restarts = restarts if isinstance(restarts, int) and restarts >= 0 else 0
            terminated = (container_status.get("state") or {}).get("terminated")
            count = restarts + 1  # the current run ended: one more than the restarts so far
            if not isinstance(terminated, Mapping):
                terminated = (container_status.get("lastState") or {}).get("terminated")
                count = restarts
            if not isinstance(terminated, Mapping):
                continue
            reason = str(terminated.get("reason") or "")
            code = terminated.get("exitCode")
            if reason not in _FAILED_TERMINATIONS and code in (None, 0):
                continue
            reason = reason or "Error"
            when = terminated.get("finishedAt") or terminated.get("startedAt")
            field_path = f"spec.{spec_key}{{{name}}}"
            events.append(
                {
                    "kind": "Event",
                    "apiVersion": "v1",
                    "metadata": {
                        "uid": f"{pod_uid}.{name}.terminated.{reason}",
                        "name": f"{metadata.get('name')}.{name}.{reason}",
                        "namespace": metadata.get("namespace"),
                        "creationTimestamp": when,
                    },
                    "involvedObject": {
                        "kind": POD,
                        "apiVersion": "v1",
                        "namespace": metadata.get("namespace"),
                        "name": metadata.get("name"),
                        "uid": pod_uid,
                        "fieldPath": field_path,
                    },
                    "type": "Warning",
                    "reason": reason,
                    "message": _termination_message(name, terminated, limits.get(name)),
                    "count": max(1, count),
                    "firstTimestamp": when,
                    "lastTimestamp": when,
                    "eventTime": None,
                    "source": {"component": STATUS_COMPONENT},
                    "reportingComponent": STATUS_COMPONENT,
                }
            )
    return events


def _version(event: Mapping[str, Any]) -> tuple[Any, ...]:
    metadata = event.get("metadata") or {}
    return (metadata.get("resourceVersion"), event.get("count"), event.get("lastTimestamp"), str(event.get("series")))


def _event_ref(event: Mapping[str, Any]) -> str:
    metadata = event.get("metadata") or {}
    return f"{metadata.get('namespace')}/{metadata.get('name')}"


class RichKubeSpawner(RichProgressMixin, KubeSpawner):
    """KubeSpawner whose progress is indexed, event-driven and kept as a spawn timeline.

    Drop-in: ``c.JupyterHub.spawner_class = "richprogress.RichKubeSpawner"``. All
    KubeSpawner options work as before; the options of ``RichProgressMixin`` and
    ``EventFormatter`` (``c.EventFormatter.format_hook`` receives this spawner) apply.
    """

    # Our reflectors are indexed subclasses; keep them apart from stock KubeSpawner's so
    # the two classes can run in one process (the benchmark does) without sharing a
    # reflector of the wrong class.
    reflectors: dict[Any, ResourceReflector] = {}

    pvc_events_enabled = Bool(
        True,
        config=True,
        help="""
        Also show the events of the user's PersistentVolumeClaim (``pvc_name``).

        Watches events with ``involvedObject.kind=PersistentVolumeClaim`` with a second
        reflector (stock KubeSpawner only watches Pod events).
        """,
    )

    event_clock_skew = Float(
        5.0,
        config=True,
        help="""
        Seconds of tolerance when telling this spawn's events from a previous pod's.

        Events that first happened more than this long before the spawn request belong to
        an earlier pod of the same name and are not shown. Covers the one-second resolution
        of Kubernetes event timestamps and clock differences between hub and cluster.
        """,
    )

    def _default_waiting_for(self) -> dict[str, str]:
        return {
            "requested": "a machine to run your server",
            "scheduling": "a machine to run your server",
            "scaling": "a new machine to join the cluster",
            # NotTriggerScaleUp and friends: no new machine is coming
            "scaling:warning": "a machine to run your server",
            "scheduled": "the machine to prepare your server",
            "volume": "your storage to be ready",
            "image": "the software image to download",
            "starting": "your server to start",
        }

    # -- reflectors ---------------------------------------------------------------------------

    async def _start_watching_events(self, replace: bool = False) -> Any:
        reflector = await self._start_reflector(
            kind="events",
            reflector_class=IndexedEventReflector,
            fields={"involvedObject.kind": POD},
            omit_namespace=self.enable_user_namespaces,
            replace=replace,
        )
        if self.pvc_events_enabled:
            await self._start_watching_pvc_events(replace=replace)
        return reflector

    async def _start_watching_pvc_events(self, replace: bool = False) -> Any:
        return await self._start_reflector(
            kind="pvc-events",
            reflector_class=IndexedEventReflector,
            fields={"involvedObject.kind": PVC},
            omit_namespace=self.enable_user_namespaces,
            replace=replace,
        )

    async def _start_watching_pods(self, replace: bool = False) -> Any:
        return await self._start_reflector(
            kind="pods",
            reflector_class=IndexedPodReflector,
            labels={"component": self.component_label},
            omit_namespace=self.enable_user_namespaces,
            replace=replace,
        )

    @property
    def pvc_event_reflector(self) -> Any:
        """The reflector of PVC events (None before the first spawn)."""
        if self.events_enabled and self.pvc_events_enabled:
            return self.__class__.reflectors.get(self._get_reflector_key("pvc-events"))
        return None

    @property
    def events(self) -> list[Any]:
        """This pod's events (sorted, after the stock ``_last_event`` marker), read from
        the index instead of sorting every event of the namespace."""
        reflector = self.event_reflector
        if reflector is None or not isinstance(getattr(reflector, "index", None), EventIndex):
            return list(super().events)
        mine = reflector.index.objects_for((self.namespace, POD, self.pod_name))
        mine.sort(key=lambda event: event.get("lastTimestamp") or event.get("eventTime") or "")
        events: list[Any] = []
        for event in mine:
            if self._last_event and event["metadata"]["uid"] == self._last_event:
                events = []
            else:
                events.append(event)
        return events

    async def load_user_options(self) -> Any:
        """Load options as KubeSpawner does, then let the pump subscribe: the namespace
        and names are final only now (profiles may override them)."""
        result = await super().load_user_options()
        self._rp_options_loaded = True
        if self._rp_sub is not None:
            self._rp_sub.poke()
        return result

    async def _make_create_pod_request(self, pod: Any, request_timeout: Any) -> Any:
        """Before each attempt to create our pod, note the pod of that name that exists
        already: its events (and the Killing that KubeSpawner's 409 handling causes) are
        an old pod's, whatever their time."""
        spawn_filter = self._rp_filter
        reflector = self.pod_reflector
        if spawn_filter is not None and reflector is not None:
            spawn_filter.creating_pod(reflector.pods.get(f"{self.namespace}/{self.pod_name}"))
            if self._rp_sub is not None:
                self._rp_sub.poke()  # held events may now be decided by time
        return await super()._make_create_pod_request(pod, request_timeout)

    async def start(self) -> Any:
        """Start as KubeSpawner does, keeping the timeline (see ``RichProgressMixin``)."""
        self._rp_options_loaded = False
        return await super().start()

    # -- the pump's source: indexed events ------------------------------------------------------

    _rp_sub: Subscription | None = None
    _rp_options_loaded = False
    _rp_filter: StaleEventFilter | None = None
    _rp_subscribed: list[EventIndex] | None = None
    #: container terminations made into records this spawn: uid -> (count, first time)
    _rp_terminations: dict[str, tuple[int, Any]] | None = None

    def _rp_keys(self) -> tuple[ObjectKey, ObjectKey]:
        return ((self.namespace, POD, self.pod_name), (self.namespace, PVC, self.pvc_name))

    async def _rp_open_feed(self, timeline: SpawnTimeline, broadcast: _Broadcast, sub: Subscription) -> Closer | None:
        self._rp_sub = sub
        self._rp_filter = StaleEventFilter(timeline.started_at, skew=self.event_clock_skew)
        self._rp_terminations = {}
        self._rp_subscribed = []
        subscribed = self._rp_subscribed

        async def close() -> None:
            for index in subscribed:
                index.unsubscribe(sub)
            subscribed.clear()
            if self._rp_sub is sub:
                self._rp_sub = None

        return close

    async def _rp_subscribe(self, sub: Subscription) -> None:
        """Subscribe to our pod's and PVC's keys (after options are loaded)."""
        assert self._rp_subscribed is not None
        pod_key, pvc_key = self._rp_keys()
        pods = await self._start_watching_pods()
        pods.index.subscribe([pod_key], sub)
        self._rp_subscribed.append(pods.index)
        if not self.events_enabled:
            return
        events = await self._start_watching_events()
        events.index.subscribe([pod_key], sub)
        self._rp_subscribed.append(events.index)
        pvc_events = self.pvc_event_reflector
        if pvc_events is not None:
            if self._rp_filter is not None:
                self._rp_filter.set_baseline(pvc_events.index.objects_for(pvc_key))
            pvc_events.index.subscribe([pvc_key], sub)
            self._rp_subscribed.append(pvc_events.index)

    async def _rp_add_event(self, timeline: SpawnTimeline, broadcast: _Broadcast, event: Mapping[str, Any]) -> bool:
        formatter = self._rp_formatter or self.event_formatter
        if formatter.format_hook is None:
            # no hook to await: skip the coroutine of format_event_async
            record: EventRecord = formatter.format_event(event, self)
        else:
            record = await formatter.format_event_async(event, self)
        return self._rp_add_record(timeline, broadcast, record)

    async def _rp_add_terminations(self, timeline: SpawnTimeline, broadcast: _Broadcast, pod: Mapping[str, Any]) -> bool:
        """Add a record for each new failed container termination in our pod's status."""
        seen = self._rp_terminations
        if seen is None:
            seen = self._rp_terminations = {}
        changed = False
        for event in container_terminations(pod):
            uid = event["metadata"]["uid"]
            previous = seen.get(uid)
            if previous is not None:
                if event["count"] <= previous[0]:
                    continue  # the same termination, seen again (e.g. now as lastState)
                event["firstTimestamp"] = previous[1]  # when it first happened
            seen[uid] = (event["count"], event["firstTimestamp"])
            changed |= await self._rp_add_event(timeline, broadcast, event)
        return changed

    def _rp_handle_now(self, timeline: SpawnTimeline, broadcast: _Broadcast, source: str, obj: Mapping[str, Any]) -> bool | None:
        """An event to show or hide, with no hook to await and nothing held (which must
        come first), is handled inside the watch update; the rest goes to the pump."""
        spawn_filter = self._rp_filter
        if source != "event" or spawn_filter is None or spawn_filter.holding:
            return None
        formatter = self._rp_formatter or self.event_formatter
        if formatter.format_hook is not None:
            return None
        involved = obj.get("involvedObject")
        new_uid = spawn_filter.new_uid
        if (
            new_uid is not None
            and type(involved) is dict
            and involved.get("uid") == new_uid
            and involved.get("kind") == POD
            and new_uid not in spawn_filter.old_uids
        ):
            # the common case once our pod is known: what learn() and classify() would
            # decide (nothing to learn from our own pod's event; show it), read once
            verdict = "show"
        else:
            spawn_filter.learn(obj)
            verdict = spawn_filter.classify(obj)
        if verdict == "hold":
            return None  # the pump holds it and sets its timer for the release
        if verdict == "show":
            return self._rp_add_record(timeline, broadcast, formatter.format_event(obj, self))
        return False

    async def _rp_handle(self, timeline: SpawnTimeline, broadcast: _Broadcast, source: str, obj: Mapping[str, Any]) -> bool:
        spawn_filter = self._rp_filter
        if spawn_filter is None:
            return False
        if source == "object":
            spawn_filter.saw_pod(obj)
            if spawn_filter.new_uid is None or (obj.get("metadata") or {}).get("uid") != spawn_filter.new_uid:
                return False
            return await self._rp_add_terminations(timeline, broadcast, obj)
        if source != "event":
            return False
        spawn_filter.learn(obj)
        verdict = spawn_filter.classify(obj)
        if verdict == "hold":
            spawn_filter.hold(obj)
            return False
        if verdict == "show":
            return await self._rp_add_event(timeline, broadcast, obj)
        return False

    async def _rp_tick(self, timeline: SpawnTimeline, broadcast: _Broadcast, final: bool) -> bool:
        sub = self._rp_sub
        if sub is not None and self._rp_options_loaded and self._rp_subscribed is not None and not self._rp_subscribed:
            try:
                await self._rp_subscribe(sub)
            except Exception:
                # the spawn itself reports reflector failures; progress goes on with patience
                self.log.exception("richprogress: could not watch events for %s", self._log_name)
                self._rp_subscribed.append(EventIndex())  # do not retry on every wake-up
            if len(sub):
                return False  # the snapshot is handled on the next round
        changed = False
        if self._rp_filter is not None:
            for event in self._rp_filter.release(final=final):
                changed |= await self._rp_add_event(timeline, broadcast, event)
        return changed

    def _rp_next_wakeup(self, timeline: SpawnTimeline, state: dict[str, Any]) -> float | None:
        patience = super()._rp_next_wakeup(timeline, state)
        held = self._rp_filter.next_release() if self._rp_filter is not None else None
        if patience is None:
            return held
        if held is None:
            return patience
        return min(patience, held)
