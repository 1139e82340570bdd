"""RichKubeSpawner: KubeSpawner with indexed, event-driven progress and spawn timelines.

A spawn's timeline (see ``richprogress.stream.mixin``) is fed from the Kubernetes events
about its pod and its PVC (and the objects it follows), as they arrive, without polling.

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

The parts live in modules of their own: ``event_index`` and ``reflectors`` (the indexed
reflectors), ``stale_events`` (which events are this spawn's), ``pod_status`` (events made
from the pod's status), ``followed`` (followed objects and related events); this module
holds the spawner that ties them together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubespawner import KubeSpawner
from kubespawner.reflector import ResourceReflector
from traitlets import Bool, Callable, Float, List, TraitError, Union, validate

from richprogress.kube.container_log import (
    log_cause_event,
    log_target,
    read_container_log,
    still_running,
    termination_message_log,
)
from richprogress.kube.event_index import POD, PVC, EventIndex
from richprogress.kube.followed import (
    FOLLOWED,
    FollowedEventFilter,
    RelatedPodEventReflector,
    check_spec,
    followed_objects,
    related_key,
    reword_related,
    watch_followed,
    watch_related,
)
from richprogress.kube.pod_status import (
    STATUS_COMPONENT,
    container_terminations,
    own_termination_messages,
)
from richprogress.kube.pod_steps import PodSteps, step_record
from richprogress.kube.reflectors import IndexedEventReflector, IndexedPodReflector
from richprogress.kube.stale_events import StaleEventFilter
from richprogress.model.event_order import last_seen_order
from richprogress.model.records import EventRecord
from richprogress.model.settings import check_number, refusal, setting_name, takes_arguments
from richprogress.model.timeline import SpawnTimeline
from richprogress.model.times import isoformat_z, utcnow
from richprogress.stream.broadcast import TimelineBroadcast
from richprogress.stream.inbox import ObjectKey, Subscription
from richprogress.stream.mixin import RichProgressMixin
from richprogress.stream.notes import hook_guarded
from richprogress.stream.pump import Closer
from richprogress.stream.spawn_facts import keep_facts
from richprogress.wording.log_causes import read_log_cause

# the names this module held before it was split, still importable from here
__all__ = [
    "POD",
    "PVC",
    "STATUS_COMPONENT",
    "IndexedEventReflector",
    "IndexedPodReflector",
    "RichKubeSpawner",
    "StaleEventFilter",
    "container_terminations",
]


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

    # -- followed objects (logic in richprogress.kube.followed) -----------------------------

    followed_objects = Union(
        [List(), Callable()],
        default_value=[],
        config=True,
        help="""
        Further objects whose events the spawn page shows, besides the pod and its PVC.

        For hubs where something stands between the spawner and the pod: an operator that
        turns a custom resource into the pod, a controller that prepares storage or
        credentials. Each entry names a kind, optionally its ``api_version``
        (``group/version``; events of that kind with another apiVersion are skipped), and a
        ``name`` template (default ``{pod_name}``) using ``{pod_name}``, ``{pvc_name}``,
        ``{namespace}`` and KubeSpawner's own fields (``{username}``, ``{servername}``,
        ``{user_server}``, ...). Or a callable that takes the spawner and returns such a
        list (it may be async).

        Events come from one extra events watch per kind (field selector
        ``involvedObject.kind``), indexed like the pod's: no polling, and no new
        permission (the hub already lists and watches events).

        Example::

            c.RichKubeSpawner.followed_objects = [
                {"kind": "JupyterServer", "api_version": "hub.example.org/v1alpha1",
                 "name": "{pod_name}"},
                {"kind": "Certificate", "name": "{username}-tls"},
            ]

            def follow(spawner):
                return [{"kind": "Workspace", "name": spawner.user_options.get("ws", "")}]
            c.RichKubeSpawner.followed_objects = follow
        """,
    )

    # what each setting accepts (refusals and docs/configuration.md say the same)
    pvc_events_enabled.tag(allowed="True or False")
    event_clock_skew.tag(allowed="seconds, 0 to 3600")
    followed_objects.tag(
        allowed="a list of {'kind', 'name', 'api_version'} dicts, or a callable taking the spawner"
    )

    @validate("event_clock_skew")
    def _check_skew(self, proposal: Any) -> Any:
        return check_number(self, proposal, least=0, most=3600)

    @validate("followed_objects")
    def _check_followed_objects(self, proposal: Any) -> Any:
        value = proposal["value"]
        name = setting_name(self, "followed_objects")
        if callable(value):
            if not takes_arguments(value, 1):
                raise refusal(self, "followed_objects", value, "a callable must take the spawner as its one argument")
            return value
        try:
            return [check_spec(spec, f"{name}[{i}]") for i, spec in enumerate(value)]
        except ValueError as e:
            raise TraitError(str(e)) from None

    follow_related_events = Bool(
        True,
        config=True,
        help="""
        Also show events about other objects that name the user's pod as ``related``.

        E.g. the scheduler's ``Preempted`` on a placeholder pod that made room for the
        user's pod. These are Pod events the hub watches already; they are only indexed
        by their ``related`` pod too.
        """,
    )
    follow_related_events.tag(allowed="True or False")

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
            # also indexes events by their related pod
            reflector_class=RelatedPodEventReflector if self.follow_related_events else IndexedEventReflector,
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
        mine.sort(key=last_seen_order)
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
        # the profile's overrides (image, resources, ...) are this spawn's facts now
        keep_facts(self, self.spawn_timeline)
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
        # a failing modify_pod_hook is shown as the cause, not as a bare exception text
        with hook_guarded(self, "modify_pod_hook"):
            return await super().start()

    # -- the container's last words (logic in richprogress.kube.container_log) -------------

    async def _rp_last_words(self, timeline: SpawnTimeline) -> None:
        """Read the failing container's last log lines into ``timeline.container_log``
        (redacted), when a container ran and someone may see them; within
        ``container_log_timeout``."""
        if self.show_container_log == "nobody" or self.container_log_timeout <= 0:
            return
        reflector = self.pod_reflector
        pod = reflector.pods.get(f"{self.namespace}/{self.pod_name}") if reflector is not None else None
        target = log_target(pod)
        if target is None:
            return  # no container ran: no log to read, no request
        container, restarted = target
        found = await read_container_log(
            self.api, self.namespace, self.pod_name, container, restarted, timeout=self.container_log_timeout
        )
        if found is None:
            return
        timeline.container_log = dict(found)
        # a cause the lines name joins the story as an event about the pod; where the server
        # said it listens matters only while it runs (the hub's check got no answer)
        running = still_running(pod, container)
        cause = read_log_cause(found["lines"], listening=running, expected_port=self.port if running else None)
        if cause is not None and pod is not None:
            event = log_cause_event(pod, container, cause, isoformat_z(utcnow()))
            self._rp_add_record(timeline, self._rp_broadcast(timeline), await self._rp_format(event))

    # -- the pump's source: indexed events ------------------------------------------------------

    _rp_sub: Subscription | None = None
    _rp_options_loaded = False
    _rp_filter: StaleEventFilter | None = None
    _rp_subscribed: list[EventIndex] | None = None
    #: container terminations made into records this spawn: uid -> (count, first time)
    _rp_terminations: dict[str, tuple[int, Any]] | None = None
    #: (container, termination count) whose own termination message was read this spawn
    _rp_termination_texts: set[tuple[str, int]] | None = None
    #: which followed objects' and related events are this spawn's
    _rp_follow: FollowedEventFilter | None = None
    #: with events off (``events_enabled = False``), the steps the pod's status shows
    _rp_pod_steps: PodSteps | None = None

    def _rp_keys(self) -> tuple[ObjectKey, ObjectKey]:
        return ((self.namespace, POD, self.pod_name), (self.namespace, PVC, self.pvc_name))

    async def _rp_open_feed(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, sub: Subscription) -> Closer | None:
        self._rp_sub = sub
        self._rp_filter = StaleEventFilter(timeline.started_at, skew=self.event_clock_skew)
        self._rp_terminations = {}
        self._rp_termination_texts = set()
        self._rp_subscribed = []
        self._rp_follow = FollowedEventFilter(timeline.started_at, skew=self.event_clock_skew)
        self._rp_pod_steps = None if self.events_enabled else PodSteps()
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
        await self._rp_subscribe_followed(sub, events.index)

    async def _rp_subscribe_followed(self, sub: Subscription, pod_events: EventIndex) -> None:
        """Subscribe to followed objects' events and to events related to our pod."""
        follow = self._rp_follow
        assert self._rp_subscribed is not None and follow is not None
        if self.follow_related_events:
            watch_related(pod_events, related_key(self.namespace, self.pod_name), sub, follow)
        objects = await followed_objects(self, self.followed_objects)
        if objects:
            try:
                await watch_followed(self, objects, sub, self._rp_subscribed, follow)
            except Exception:
                # the pod's own events are subscribed already: go on without these
                self.log.exception("richprogress: could not watch events of followed objects for %s", self._log_name)

    async def _rp_format(self, event: Mapping[str, Any]) -> EventRecord:
        formatter = self._rp_formatter or self.event_formatter
        if formatter.format_hook is None:
            # no hook to await: skip the coroutine of format_event_async
            return formatter.format_event(event, self)
        return await formatter.format_event_async(event, self)

    async def _rp_add_event(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, event: Mapping[str, Any]) -> bool:
        return self._rp_add_record(timeline, broadcast, await self._rp_format(event))

    async def _rp_add_terminations(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, pod: Mapping[str, Any]) -> bool:
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
        return await self._rp_keep_termination_messages(timeline, broadcast, pod) or changed

    async def _rp_keep_termination_messages(
        self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, pod: Mapping[str, Any]
    ) -> bool:
        """Each new termination message a container wrote itself, through the gate for the
        container's text: kept (redacted) as the spawn's container log until a log read
        replaces it, for the viewers ``show_container_log`` names; and the cause it names,
        by its class and decisive word, as an event every viewer reads."""
        seen = self._rp_termination_texts
        if seen is None:
            seen = self._rp_termination_texts = set()
        changed = False
        for failed in own_termination_messages(pod):
            if (failed.container, failed.times) in seen:
                continue
            seen.add((failed.container, failed.times))
            kept, event = termination_message_log(pod, failed)
            current = timeline.container_log
            if self.show_container_log != "nobody" and (
                current is None
                or (current.get("source") == "termination message"
                    and failed.container in (current.get("container"), "notebook"))
            ):  # fmt: skip
                timeline.container_log = dict(kept)
            if event is not None:
                changed |= self._rp_add_record(timeline, broadcast, await self._rp_format(event))
        return changed

    def _rp_handle_now(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, source: str, obj: Mapping[str, Any]) -> bool | None:
        """An event to show or hide, with no hook to await and nothing held (which must
        come first), is handled inside the watch update; the rest goes to the pump.

        Runs once per event of a watched pod: plain attribute reads only (a trait read
        costs several times more), the common case decided first.
        """
        spawn_filter = self._rp_filter
        if source != "event" or spawn_filter is None or spawn_filter.holding:
            return None
        formatter = self._rp_formatter
        if formatter is None:
            formatter = self.event_formatter
        # the formatter's mirror of its format_hook trait (kept in step by an observer)
        if formatter._hook is not None:
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
            return self._rp_add_record(timeline, broadcast, formatter.format_event(obj, self))
        spawn_filter.learn(obj)
        verdict = spawn_filter.classify(obj)
        if verdict == "hold":
            return None  # the pump holds it and sets its timer for the release
        if verdict == "show":
            return self._rp_add_record(timeline, broadcast, formatter.format_event(obj, self))
        return False

    async def _rp_handle(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, source: str, obj: Mapping[str, Any]) -> bool:
        spawn_filter = self._rp_filter
        if spawn_filter is None:
            return False
        if source == FOLLOWED:  # a followed object's or related event
            follow = self._rp_follow
            if follow is None or not follow.shows(obj):
                return False
            formatter = self._rp_formatter or self.event_formatter
            record = reword_related(await formatter.format_event_async(obj, self), obj, self.pod_name)
            return self._rp_add_record(timeline, broadcast, record)
        if source == "object":
            spawn_filter.saw_pod(obj)
            if spawn_filter.new_uid is None or (obj.get("metadata") or {}).get("uid") != spawn_filter.new_uid:
                return False
            changed = False
            if self._rp_pod_steps is not None:  # no events: the pod's status moves the steps
                for step in self._rp_pod_steps.new_events(obj):
                    changed |= self._rp_add_record(timeline, broadcast, step_record(await self._rp_format(step)))
            return await self._rp_add_terminations(timeline, broadcast, obj) or changed
        if source != "event":
            return False
        spawn_filter.learn(obj)
        verdict = spawn_filter.classify(obj)
        if verdict == "hold":
            spawn_filter.hold(obj)
            return False
        if verdict == "show":
            changed = False
            if spawn_filter.holding:
                # held events come first: those decided by now (e.g. by the pod update of
                # this same batch) are shown before this one; if some still wait, this one
                # waits with them
                for event in spawn_filter.release():
                    changed |= await self._rp_add_event(timeline, broadcast, event)
                if spawn_filter.holding:
                    spawn_filter.hold(obj)
                    return changed
            return await self._rp_add_event(timeline, broadcast, obj) or changed
        return False

    async def _rp_tick(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, final: bool) -> bool:
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
