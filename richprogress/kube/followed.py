"""Events of the further objects a spawn depends on: custom resources, and events naming our pod.

This module says which objects besides the pod and its PVC a spawn follows, watches their
events event-driven and indexed as the pod's are, and decides which of them belong to this
spawn. ``RichKubeSpawner`` calls in here; nothing here knows the progress pump.

- **Followed objects** are named by kind (and optionally ``apiVersion``) and a name template
  that uses the spawner's fields (``{pod_name}``, ``{pvc_name}``, ``{namespace}``, and
  KubeSpawner's ``{username}``, ``{servername}``, ...), e.g. the ``JupyterServer`` an
  operator reconciles into the user's pod. Their events are plain core/v1 Events (Kubernetes
  records every controller's events there), so one events reflector per followed kind, with
  the field selector ``involvedObject.kind=<kind>``, gives them as they happen. The hub needs
  no new permission: it already lists and watches events. A kind whose objects never get an
  event costs one idle watch, nothing per event.
- **Related events**: some events are about another object but name our pod as ``related``:
  the scheduler's ``Preempted`` on a placeholder pod that made room for ours (regarding =
  victim, related = preemptor, see kubernetes ``pkg/scheduler/framework/preemption``).
  These are Pod events, so the stock Pod events reflector already holds them; its index
  also keys them by ``related`` (``RelatedEventIndex``), at the cost of one dict lookup per
  event.

Both reach the spawner's subscription with the source ``FOLLOWED``, not ``"event"``, so the
pod's own events keep their fast path untouched and followed ones are decided here
(``FollowedEventFilter``), by time and by what was known before the spawn.
"""

from __future__ import annotations

import inspect
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from richprogress.kube.event_index import POD, EventIndex
from richprogress.kube.reflectors import IndexedEventReflector
from richprogress.kube.stale_events import _first_time, _last_time
from richprogress.model.display import display_line
from richprogress.model.records import EventRecord
from richprogress.stream.inbox import ObjectKey, Subscription

#: the subscription source of followed objects' and related events
FOLLOWED = "followed"
#: the kind part of an index key for events whose ``related`` object is a pod
RELATED_POD = "related:" + POD

#: names a name template may use besides KubeSpawner's own (``{username}``, ...)
_SPAWNER_FIELDS = ("pod_name", "pvc_name", "namespace")
_SPEC_KEYS = frozenset({"kind", "name", "api_version"})
#: the fields a name template may use: ours, then those of KubeSpawner 7's
#: ``_expand_user_properties`` (a typo would otherwise skip the object at every spawn)
NAME_FIELDS = (
    *_SPAWNER_FIELDS,
    "userid", "username", "servername", "user_server", "unescaped_username", "unescaped_servername",
    "hubnamespace", "safe_username", "safe_servername", "safe_user_server",
    "escaped_username", "escaped_servername", "escaped_user_server",
)


@dataclass(frozen=True)
class FollowedObject:
    """One object whose events a spawn shows: kind, name, and optionally its apiVersion."""

    kind: str
    name: str
    namespace: str
    #: ``group/version`` (``v1`` for core); None accepts any version of the kind
    api_version: str | None = None

    @property
    def key(self) -> ObjectKey:
        return (self.namespace, self.kind, self.name)


def check_spec(spec: Any, where: str) -> dict[str, str]:
    """Check one ``followed_objects`` entry; raise ``ValueError`` naming ``where``.

    An entry is ``{"kind": "JupyterServer", "name": "{pod_name}", "api_version": "g/v1"}``;
    ``name`` defaults to ``{pod_name}``, ``api_version`` to any.
    """
    if not isinstance(spec, Mapping):
        raise ValueError(f"{where}: must be a dict with 'kind' (and 'name', 'api_version'), not {spec!r}")
    unknown = set(spec) - _SPEC_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(_SPEC_KEYS)}")
    kind = spec.get("kind")
    if not isinstance(kind, str) or not kind or not kind.isidentifier():
        raise ValueError(f"{where}: 'kind' must be a Kubernetes kind such as 'JupyterServer', not {kind!r}")
    name = spec.get("name", "{pod_name}")
    api_version = spec.get("api_version")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}: 'name' must be a non-empty name template, not {name!r}")
    try:
        fields = {field for _, field, _, _ in string.Formatter().parse(name) if field is not None}
    except ValueError as e:
        raise ValueError(f"{where}: 'name' {name!r} is not a valid template: {e}") from None
    unknown_fields = sorted(f for f in fields if f not in NAME_FIELDS)
    if unknown_fields:
        raise ValueError(
            f"{where}: 'name' {name!r} names {', '.join('{' + f + '}' for f in unknown_fields)}, which a "
            f"name template is not given; fields: {', '.join('{' + f + '}' for f in NAME_FIELDS)}"
        )
    if api_version is not None and (not isinstance(api_version, str) or not api_version):
        raise ValueError(f"{where}: 'api_version' must be 'group/version' or omitted, not {api_version!r}")
    checked = {"kind": kind, "name": name}
    if api_version:
        checked["api_version"] = api_version
    return checked


def expand_name(template: str, fields: Mapping[str, str], expand_user: Callable[[str], str]) -> str:
    """Fill a name template: our spawner fields first, then KubeSpawner's own expansion."""
    for field in _SPAWNER_FIELDS:
        template = template.replace("{" + field + "}", fields.get(field, ""))
    return expand_user(template)


async def followed_objects(spawner: Any, option: Any) -> list[FollowedObject]:
    """The objects this spawn follows, from the ``followed_objects`` option.

    ``option`` is a list of entries (see ``check_spec``) or a callable taking the spawner
    and returning such a list (or an awaitable of one). A broken entry or callable is
    logged and skipped: progress must never break a spawn.
    """
    specs = option
    if callable(option):
        try:
            specs = option(spawner)
            if inspect.isawaitable(specs):
                specs = await specs
        except Exception:
            spawner.log.exception("richprogress: followed_objects callable failed; following none")
            return []
    fields = {"pod_name": spawner.pod_name, "pvc_name": spawner.pvc_name, "namespace": spawner.namespace}
    found: list[FollowedObject] = []
    for i, raw in enumerate(specs or ()):
        try:
            spec = check_spec(raw, f"followed_objects[{i}]")
            name = expand_name(spec["name"], fields, spawner._expand_user_properties)
        except Exception as e:
            spawner.log.error("richprogress: skipping %s", display_line(str(e)))  # names may be typed
            continue
        found.append(FollowedObject(spec["kind"], name, spawner.namespace, spec.get("api_version")))
    return found


# -- indexes -----------------------------------------------------------------------------------


class FollowedEventIndex(EventIndex):
    """The index of a followed kind's events: as ``EventIndex``, but pushed as ``FOLLOWED``."""

    source = FOLLOWED


def _related_key(event: Mapping[str, Any]) -> ObjectKey | None:
    related = event.get("related")
    if type(related) is not dict or related.get("kind") != POD:
        return None
    namespace = related.get("namespace") or (event.get("metadata") or {}).get("namespace") or ""
    return (str(namespace), RELATED_POD, str(related.get("name") or ""))


def related_key(namespace: str, pod_name: str) -> ObjectKey:
    """The key under which ``RelatedEventIndex`` holds events naming this pod as related."""
    return (namespace, RELATED_POD, pod_name)


class RelatedEventIndex(EventIndex):
    """``EventIndex`` that also keys events by their ``related`` pod.

    Subscribers of ``related_key(ns, pod)`` get those events with the source ``FOLLOWED``.
    Events without ``related`` (nearly all) cost one ``dict.get`` more than in ``EventIndex``.
    """

    def __init__(self) -> None:
        super().__init__()
        self._rel_by_key: dict[ObjectKey, dict[str, Mapping[str, Any]]] = {}
        self._rel_key_of: dict[str, ObjectKey] = {}

    def put_now(self, ref: str, obj: Mapping[str, Any]) -> None:
        super().put_now(ref, obj)
        if obj.get("related") is None and ref not in self._rel_key_of:
            return
        key = _related_key(obj)
        self._rel_forget(ref)
        if key is None:
            return
        self._rel_by_key.setdefault(key, {})[ref] = obj
        self._rel_key_of[ref] = key
        for sub in self._subs.get(key, ()):
            sub.push(FOLLOWED, ref, obj)

    def _rel_forget(self, ref: str) -> None:
        old = self._rel_key_of.pop(ref, None)
        if old is not None:
            group = self._rel_by_key.get(old)
            if group is not None:
                group.pop(ref, None)
                if not group:
                    del self._rel_by_key[old]

    def remove(self, ref: str) -> None:
        super().remove(ref)
        self._rel_forget(ref)

    def replace_all(self, resources: Mapping[str, Mapping[str, Any]]) -> None:
        before = {ref: self._rel_by_key[key][ref] for ref, key in self._rel_key_of.items()}
        super().replace_all(resources)
        self._rel_by_key = {}
        self._rel_key_of = {}
        for ref, obj in resources.items():
            key = _related_key(obj)
            if key is None:
                continue
            self._rel_by_key.setdefault(key, {})[ref] = obj
            self._rel_key_of[ref] = key
            if before.get(ref) != obj:  # new, or changed while the watch was down
                for sub in self._subs.get(key, ()):
                    sub.push(FOLLOWED, ref, obj)

    def related_to(self, key: ObjectKey) -> list[Mapping[str, Any]]:
        """Events currently known that name this pod as related (unordered)."""
        self._settle()
        return list(self._rel_by_key.get(key, {}).values())

    def subscribe(self, keys: Iterable[ObjectKey], sub: Subscription | None = None) -> Subscription:
        keys = list(keys)
        sub = super().subscribe(keys, sub)
        for key in keys:
            for ref, obj in self._rel_by_key.get(key, {}).items():
                sub.push(FOLLOWED, ref, obj)
        return sub


class FollowedEventReflector(IndexedEventReflector):
    """KubeSpawner's events reflector for one followed kind (field selector on the kind)."""

    def _make_index(self) -> EventIndex:
        return FollowedEventIndex()


class RelatedPodEventReflector(IndexedEventReflector):
    """KubeSpawner's Pod events reflector, its events also indexed by ``related`` pod."""

    def _make_index(self) -> EventIndex:
        return RelatedEventIndex()


# -- which followed events are this spawn's -----------------------------------------------------


def _event_ref(event: Mapping[str, Any]) -> str:
    metadata = event.get("metadata") or {}
    return f"{metadata.get('namespace')}/{metadata.get('name')}"


def _version(event: Mapping[str, Any]) -> tuple[Any, ...]:
    metadata = event.get("metadata") or {}
    series = event.get("series") or {}
    return (metadata.get("resourceVersion"), event.get("count"), event.get("lastTimestamp"), str(series))


class FollowedEventFilter:
    """Decide which events of followed objects (and related events) belong to this spawn.

    A followed object may outlive spawns (a custom resource kept per user) or be new each
    time with the name of the last one; Kubernetes keeps events for about an hour either
    way. So, as for the PVC: events known when the spawn subscribed (the *baseline*,
    taken before KubeSpawner creates anything) are shown only once they change (a repeat);
    others are shown when they last happened no earlier than the spawn request minus
    ``skew``. An ``api_version`` given for a kind must match the event's involved object.
    """

    def __init__(self, started_at: datetime, skew: float = 5.0) -> None:
        self.threshold = started_at - timedelta(seconds=skew)
        self._baseline: dict[str, tuple[Any, ...]] = {}
        #: kind -> the apiVersion its events must carry (kinds followed with one)
        self.api_versions: dict[str, str] = {}

    def follow(self, objects: Iterable[FollowedObject]) -> None:
        for obj in objects:
            if obj.api_version:
                self.api_versions[obj.kind] = obj.api_version

    def set_baseline(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Remember events that existed when the spawn subscribed."""
        for event in events:
            self._baseline[_event_ref(event)] = _version(event)

    def shows(self, event: Mapping[str, Any]) -> bool:
        """Whether this followed or related event is to be shown."""
        involved = event.get("involvedObject") or {}
        wanted = self.api_versions.get(str(involved.get("kind") or ""))
        if wanted is not None and involved.get("apiVersion") not in (None, "", wanted):
            return False
        if self._baseline.get(_event_ref(event)) == _version(event):
            return False
        last = _last_time(event) or _first_time(event)
        return last is None or last >= self.threshold


async def watch_followed(spawner: Any, objects: list[FollowedObject], sub: Subscription,
                         subscribed: list[EventIndex], spawn_filter: FollowedEventFilter) -> None:
    """Start (or reuse) one events reflector per followed kind and subscribe ``sub`` to the
    followed objects' keys; the events known now become ``spawn_filter``'s baseline."""
    by_kind: dict[str, list[ObjectKey]] = {}
    for obj in objects:
        by_kind.setdefault(obj.kind, []).append(obj.key)
    spawn_filter.follow(objects)
    for kind, keys in by_kind.items():
        reflector = await spawner._start_reflector(
            kind=f"followed-events:{kind}",
            reflector_class=FollowedEventReflector,
            fields={"involvedObject.kind": kind},
            omit_namespace=spawner.enable_user_namespaces,
        )
        index = reflector.index
        for key in keys:
            spawn_filter.set_baseline(index.objects_for(key))
        index.subscribe(keys, sub)
        subscribed.append(index)


def watch_related(index: EventIndex, key: ObjectKey, sub: Subscription, spawn_filter: FollowedEventFilter) -> bool:
    """Subscribe ``sub`` to events naming our pod as related, if ``index`` keeps them."""
    if not isinstance(index, RelatedEventIndex):
        return False
    spawn_filter.set_baseline(index.related_to(key))
    index.subscribe([key], sub)
    return True


def reword_related(record: EventRecord, event: Mapping[str, Any], pod_name: str) -> EventRecord:
    """Say what an event about *another* pod means for ours, when it names ours as related.

    The default ``preempted`` rule speaks to the pod that was preempted ("Your server was
    stopped"). When that pod is another one and ours is the event's ``related`` object, ours
    is the preemptor (kubernetes ``pkg/scheduler/framework/preemption``: regarding = victim,
    related = preemptor): the other pod gave way to ours, which is news, not a failure.
    """
    involved = event.get("involvedObject") or {}
    if involved.get("kind") != POD or involved.get("name") == pod_name:
        return record
    if record.get("reason") == "Preempted":
        record = dict(record)  # type: ignore[assignment]
        record["message"] = f"Pod {involved.get('name')} was preempted to make room for your server"
        record["severity"] = "info"
        record["hint"] = None
        record["phase"] = "scheduling"
        record["rule"] = "related-preempted"
    return record
