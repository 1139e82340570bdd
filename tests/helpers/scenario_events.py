"""Kubernetes Event objects as ``kubectl get events -o json`` lists them, played from the
simulated cluster's scenario files (``richprogress/demo/cluster/scenarios/``) at fixed
times, so that tests of ``richprogress explain`` read realistic input deterministically.

It plays a scenario the way the simulated kubelet does (``demo/cluster/kubelet.py``: steps
after their delays, the loop with its growing back-off, a ``key`` seen before repeats that
event) and shapes each event as the API server returns it (``demo/cluster/events.py``):
the kubelet's style with ``count`` and whole-second ``firstTimestamp``/``lastTimestamp``,
the scheduler's (events.k8s.io) with a microsecond ``eventTime`` and ``series`` on repeats,
each named ``<object>.<hex of the UnixNano of its first occurrence>`` as client-go names
them. Every write takes the namespace's next ``resourceVersion``, as etcd's revision grows.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from richprogress.demo.cluster.scenarios import builtin_scenarios, expand, normalize_image

START = datetime(2026, 5, 4, 9, 0, 0, tzinfo=timezone.utc)
JUPYTER_SERVER_API = "demo.richprogress.org/v1alpha1"


def _seconds(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _micros(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _go_duration(seconds: float) -> str:
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes}m{rest}s" if minutes else f"{rest}s"


def _uid(*parts: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(parts)))


@dataclass
class Namespace:
    """One namespace's events, as its API server keeps them."""

    name: str = "jhub"
    version: int = 48_000
    #: the writes played so far and not yet made: (when, order of play, the write)
    _pending: list[tuple[datetime, int, Callable[[], None]]] = field(default_factory=list)
    _events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def events(self) -> list[dict[str, Any]]:
        """Every event, in the order it was first written (what a live watch delivers
        first, and so the order a spawn page shows): the writes of all plays are made in
        the order of their times, as one API server would have made them."""
        for _, _, write in sorted(self._pending, key=lambda pending: pending[:2]):
            write()
        self._pending.clear()
        return self._events

    def _write(self, event: dict[str, Any]) -> None:
        self.version += 1
        event["metadata"]["resourceVersion"] = str(self.version)

    def play(
        self, scenario: str, pod: str, *, after: float = 0.0, until: float = 90.0, image: str | None = None
    ) -> None:
        """Play ``scenario`` for ``pod``, starting ``after`` seconds past START, for ``until``
        simulated seconds (the hub's start timeout, say). Events of several pods played in
        turn keep their own times; ``kubectl_list`` sorts them as the API server lists them."""
        played = builtin_scenarios()[scenario]
        user = pod.removeprefix("jupyter-")
        image = image or "quay.io/jupyter/base-notebook:2026-05-01"
        values = {
            "node": "sim-node-1",
            **played.vars,
            "pod": pod,
            "namespace": self.name,
            "pod_uid": _uid(self.name, pod),
            "user": user,
            "image": image,
            "image_ref": normalize_image(image),
            "container": "notebook",
            "scheduler": "default-scheduler",
            "claim": f"claim-{user}",
            "volume": f"pvc-{_uid(self.name, pod, 'volume')}",
        }
        values = {key: expand(value, values) for key, value in values.items()}
        keyed: dict[str, dict[str, Any]] = {}
        clock = after

        def step(spec: dict[str, Any], delay: float) -> bool:
            nonlocal clock
            clock += delay
            if clock - after > until:
                return False
            moment = START + timedelta(seconds=clock)
            for event in spec.get("events", []):
                self._later(moment, lambda event=event, now=dict(values): self._emit(event, now, keyed, moment))
            return True

        loop = played.loop
        growth = float(loop.get("delay_factor", 1.0)) if loop else 1.0
        cap = float(loop.get("max_delay", 300.0)) if loop else 300.0
        values["backoff"] = _go_duration(min(10.0, cap))
        for spec in played.steps:
            if not step(spec, spec.get("delay", 0)):
                return
        iteration = 0
        while loop is not None:
            iteration += 1
            factor = growth ** (iteration - 1)
            values["backoff"] = _go_duration(min(10.0 * growth**iteration, cap))
            for spec in played.steps[loop["from"] :]:
                delay = min(spec["repeat_delay"] * factor, cap) if "repeat_delay" in spec else spec.get("delay", 0)
                if not step(spec, delay):
                    return

    def _later(self, moment: datetime, write: Callable[[], None]) -> None:
        self._pending.append((moment, len(self._pending), write))

    def _emit(
        self, spec: dict[str, Any], values: dict[str, str], keyed: dict[str, dict[str, Any]], moment: datetime
    ) -> None:
        key = spec.get("key")
        if key in keyed:
            event = keyed[key]
            if event.get("series") is not None or (event["eventTime"] and event["lastTimestamp"] is None):
                count = (event.get("series") or {"count": 1})["count"] + 1
                event["series"] = {"count": count, "lastObservedTime": _micros(moment)}
            else:
                event["count"] += 1
                event["lastTimestamp"] = _seconds(moment)
            self._write(event)
            return
        kind = spec.get("object", "Pod")
        name = values["claim"] if kind == "PersistentVolumeClaim" else values["pod"]
        involved: dict[str, Any] = {
            "kind": kind,
            "namespace": self.name,
            "name": name,
            "uid": _uid(self.name, kind, name),
            "apiVersion": {"JupyterServer": JUPYTER_SERVER_API, "Deployment": "apps/v1"}.get(kind, "v1"),
            "resourceVersion": "",
        }
        if "fieldPath" in spec:
            involved["fieldPath"] = expand(spec["fieldPath"], values)
        component = expand(spec["component"], values)
        instance = expand(spec.get("instance", "{node}" if component == "kubelet" else ""), values)
        # client-go's recorders name an event after the nanosecond it first happened
        nanos = (moment - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1) * 1000
        event: dict[str, Any] = {
            "kind": "Event",
            "apiVersion": "v1",
            "metadata": {
                "name": f"{name}.{nanos:x}",
                "namespace": self.name,
                "uid": _uid(self.name, name, str(nanos)),
                "creationTimestamp": _seconds(moment),
            },
            "involvedObject": involved,
            "reason": expand(spec["reason"], values),
            "message": expand(spec["message"], values),
            "type": spec.get("type", "Normal"),
            "reportingComponent": component,
            "reportingInstance": instance,
        }
        if spec.get("api", "core") == "events.k8s.io":
            event.update(
                {"source": {}, "firstTimestamp": None, "lastTimestamp": None, "eventTime": _micros(moment)}
            )
            event["action"] = spec.get("action") or event["reason"]
        else:
            source = {"component": component}
            if component == "kubelet" and instance:
                source["host"] = instance
            event.update(
                {
                    "source": source,
                    "firstTimestamp": _seconds(moment),
                    "lastTimestamp": _seconds(moment),
                    "count": 1,
                    "eventTime": None,
                }
            )
            if spec.get("action"):
                event["action"] = spec["action"]
        self._write(event)
        self._events.append(event)
        if key:
            keyed[key] = event

    def other(self, kind: str, name: str, reason: str, message: str, component: str, at: float) -> None:
        """One event about an object no scenario plays (a Deployment, a Node), ``at``
        seconds past START."""
        spec = {"object": kind, "reason": reason, "message": message, "component": component}
        moment = START + timedelta(seconds=at)
        self._later(moment, lambda: self._emit(spec, {"pod": name, "claim": name}, {}, moment))

    def kubectl_list(self) -> dict[str, Any]:
        """``kubectl get events -o json`` of the whole namespace: a List sorted by name, as
        the API server lists (etcd keys), not by time."""
        items = sorted(self.events, key=lambda event: event["metadata"]["name"])
        return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}

    def of(self, name: str) -> list[dict[str, Any]]:
        """The events ``--field-selector involvedObject.name=NAME`` keeps, in first-write order."""
        return [event for event in self.events if event["involvedObject"]["name"] == name]
