"""Replaying a real spawn's events: a ``kubectl get events -o json`` dump as a scenario.

``python -m richprogress.demo --replay alice.json`` shows an admin their own spawn's events
on the demo hub's real page, worded by the hub's configured rules. The dump (a kubectl List
with ``items``, a JSON array, or JSON lines: what ``richprogress explain`` reads) becomes
the scenario ``replay`` (``replay_scenario``): one step per occurrence, at the dump's own
relative times (the cluster's speed divides them, as it does every scenario's), each event
re-pointed at the demo's pod. The simulated kubelet emits them with the pod's own name, uid
and namespace (``involvedObject``), so the spawner takes them as its own; the old pod's
name and claim inside the messages become the new ones. A repeated event (``count`` 4, or
``series.count``) is emitted that many times between its first and last time, as the same
Event counting up.

The pod's status follows what the events say: ``Scheduled`` schedules it, ``Started``
runs it (ready, unless a warning comes after: then the spawn waits for the cause to show,
as the real one did). Events of other objects than the pod and its claim are left out.

Bad input raises ``ReplayError`` with one line that says what is wrong, before any server
starts (the launcher checks the file first).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from richprogress.cli import InputError, parse_events, read_text_file
from richprogress.model.times import parse_timestamp

from .scenarios import Scenario

#: the scenario name (and ``richprogress.demo/scenario`` annotation) of a replay
REPLAY_SCENARIO = "replay"
#: at most this many emissions of one repeated event (a crash loop of a day counts 300)
MAX_REPEATS = 30
#: simulated seconds from the pod's creation to the first replayed event
FIRST_DELAY = 0.5
#: the objects whose events are replayed, as the simulated kubelet names them
_KINDS = {"Pod": "Pod", "PersistentVolumeClaim": "PersistentVolumeClaim"}
_IMAGE = re.compile(r'[Ii]mage "([^"]+)"')


class ReplayError(ValueError):
    """A dump that cannot be replayed; the text is one line saying why."""


@dataclass(frozen=True)
class Replay:
    """A dump made ready to play: the scenario, and what the launcher says about it."""

    scenario: Scenario
    #: the pod whose events these are, as the dump names it
    pod: str
    #: events replayed, and events of other objects left out
    events: int
    skipped: int
    #: simulated seconds from the first event to the last
    duration: float
    #: the image the dump's last pull event names (the demo's profile asks for it), or None
    image: str | None


def read_dump(path: str | Path) -> list[dict[str, Any]]:
    """The events of the dump file at ``path``; ``ReplayError`` for anything else."""
    try:
        text = read_text_file(str(path))
    except InputError as error:
        raise ReplayError(str(error)) from None
    try:
        return parse_events(text)
    except InputError as error:
        raise ReplayError(f"{path}: {error}") from None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _involved(event: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(event.get("involvedObject") or event.get("regarding"))


def _times(event: Mapping[str, Any]) -> tuple[datetime, datetime] | None:
    """(first, last) occurrence of an event, by the fields kubectl shows; None without any."""
    series = _mapping(event.get("series"))
    metadata = _mapping(event.get("metadata"))
    first = (
        parse_timestamp(event.get("firstTimestamp"))
        or parse_timestamp(event.get("eventTime"))
        or parse_timestamp(event.get("deprecatedFirstTimestamp"))
        or parse_timestamp(metadata.get("creationTimestamp"))
    )
    last = (
        parse_timestamp(series.get("lastObservedTime"))
        or parse_timestamp(event.get("lastTimestamp"))
        or parse_timestamp(event.get("deprecatedLastTimestamp"))
    )
    if first is None and last is None:
        return None
    first = first or last
    assert first is not None
    return first, max(first, last or first)


def _count(event: Mapping[str, Any]) -> int:
    series = _mapping(event.get("series"))
    for value in (series.get("count"), event.get("count"), event.get("deprecatedCount")):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 1


def _main_pod(events: Sequence[Mapping[str, Any]]) -> str:
    """The pod the dump is about: the one with the most events (a namespace's dump holds
    others; a field-selected one holds one)."""
    counts: dict[str, int] = {}
    for event in events:
        obj = _involved(event)
        if obj.get("kind") == "Pod" and _text(obj.get("name")):
            counts[obj["name"]] = counts.get(obj["name"], 0) + 1
    if not counts:
        raise ReplayError("no event is about a pod (involvedObject.kind Pod); nothing to replay")
    return max(counts, key=lambda name: counts[name])


def _claim_of(pod: str) -> str:
    """KubeSpawner's claim name for a pod name (``jupyter-alice`` -> ``claim-alice``)."""
    return "claim-" + pod[len("jupyter-") :] if pod.startswith("jupyter-") else ""


def _repoint(message: str, pod: str, namespace: str, claim: str) -> str:
    """The message with the old pod, namespace and claim names as the demo pod's
    placeholders (``expand`` leaves every other brace alone)."""
    names = [(pod, "{pod}")] + ([(claim, "{claim}")] if claim else [])
    for name, placeholder in names:
        if namespace:
            message = message.replace(f"{namespace}/{name}", f"{{namespace}}/{placeholder}")
        message = re.sub(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", placeholder, message)
    return message


def build_replay(events: Sequence[Mapping[str, Any]]) -> Replay:
    """The ``replay`` scenario of a dump's events; ``ReplayError`` when it cannot be played."""
    pod = _main_pod(events)
    namespace = ""
    claim = _claim_of(pod)
    timed: list[tuple[datetime, int, int, dict[str, Any], datetime, int]] = []
    skipped = 0
    for index, event in enumerate(events):
        obj = _involved(event)
        kind, name = _text(obj.get("kind")), _text(obj.get("name"))
        if not ((kind == "Pod" and name == pod) or (kind == "PersistentVolumeClaim" and claim and name == claim)):
            skipped += 1
            continue
        namespace = namespace or _text(obj.get("namespace"))
        times = _times(event)
        if times is None:
            raise ReplayError(
                f"event {index + 1} ({_text(event.get('reason')) or 'no reason'}) has no time "
                "(firstTimestamp, lastTimestamp or eventTime); its timing cannot be replayed"
            )
        timed.append((times[0], index, 0, dict(event), times[1], _count(event)))
    if not timed:
        raise ReplayError(f"no event of pod {pod} has a time; nothing to replay")
    # each occurrence, in time order (the dump's order among equal times)
    occurrences: list[tuple[datetime, int, int, dict[str, Any]]] = []
    for first, index, _, event, last, count in timed:
        times_played = min(count, MAX_REPEATS)
        span = (last - first) / max(times_played - 1, 1)
        for n in range(times_played):
            # the last repeat at the dump's own last time, not a rounding error before it
            occurrences.append((last if n and n == times_played - 1 else first + span * n, index, n, event))
    occurrences.sort(key=lambda item: (item[0], item[1], item[2]))
    start = occurrences[0][0]
    steps: list[dict[str, Any]] = []
    previous = start
    last_warning = max(
        (when for when, _i, _n, event in occurrences if _text(event.get("type")) == "Warning"), default=None
    )
    scheduled = False
    ready = False
    image: str | None = None
    for when, index, _n, event in occurrences:
        spec = _event_spec(event, index, pod, namespace, claim)
        step: dict[str, Any] = {
            "delay": FIRST_DELAY if not steps else (when - previous).total_seconds(),
            "events": [spec],
        }
        reason = spec["reason"]
        if reason == "Scheduled" and spec["object"] == "Pod" and not scheduled:
            step["pod"] = {"scheduled": True}
            scheduled = True
        elif reason == "Started" and spec["object"] == "Pod":
            # a warning after it (a crash, a failing probe) means the server never got ready
            ok = last_warning is None or last_warning <= when
            step["pod"] = {"phase": "Running", "container": {"state": "running", "ready": ok}}
            if not scheduled:
                step["pod"]["scheduled"] = scheduled = True
            ready = ready or ok
        if reason in ("Pulling", "Pulled"):
            # the last image pulled is the server's (init containers pull first)
            found = _IMAGE.search(_text(event.get("message") or event.get("note")))
            image = found.group(1) if found else image
        steps.append(step)
        previous = when
    scenario = Scenario(
        name=REPLAY_SCENARIO,
        title=f"Replay of {pod}'s events",
        description=f"{len(timed)} events of pod {pod}, at their own times.",
        outcome="ready" if ready else "never-ready",
        vars={},
        steps=tuple(steps),
        loop=None,
    )
    return Replay(
        scenario=scenario,
        pod=pod,
        events=len(timed),
        skipped=skipped,
        duration=(occurrences[-1][0] - start).total_seconds(),
        image=image,
    )


def _event_spec(event: Mapping[str, Any], index: int, pod: str, namespace: str, claim: str) -> dict[str, Any]:
    """The scenario event (``scenarios/README.md``) of one dump event, re-pointed."""
    obj = _involved(event)
    source = _mapping(event.get("source"))
    component = (
        _text(event.get("reportingComponent"))
        or _text(event.get("reportingController"))
        or _text(source.get("component"))
    )
    instance = _text(event.get("reportingInstance")) or _text(source.get("host"))
    message = _text(event.get("message")) or _text(event.get("note"))
    spec: dict[str, Any] = {
        # one key per dump event: its repeats count up on the same Event, as they did
        "key": f"replay-{index}",
        "reason": _text(event.get("reason")),
        "type": _text(event.get("type")) or "Normal",
        "message": _repoint(message, pod, namespace, claim),
        "component": component,
        "instance": instance,
        "object": _KINDS.get(_text(obj.get("kind")), "Pod"),
        # written as the dump's did: eventTime and series (events.k8s.io) or counts (core)
        "api": "events.k8s.io" if event.get("eventTime") and not event.get("lastTimestamp") else "core",
    }
    field_path = _text(obj.get("fieldPath"))
    if field_path:
        spec["fieldPath"] = field_path
    action = _text(event.get("action"))
    if action:
        spec["action"] = action
    return spec


def load_replay(path: str | Path) -> Replay:
    """``build_replay`` of the dump at ``path``; a ``ReplayError`` names the file."""
    events = read_dump(path)
    try:
        return build_replay(events)
    except ReplayError as error:
        raise ReplayError(f"{path}: {error}") from None
