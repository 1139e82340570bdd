"""The steps of a spawn: which step a record reports on, how far a spawn got, and when
each step began and how long it took (``step_durations``, for the failure page's step
strip, the "Copy details" report and the typical times).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from richprogress.model.records import PHASE_LABELS, EventRecord
from richprogress.model.times import finite_seconds, parse_timestamp
from richprogress.story.known_failures import classify
from richprogress.story.ordering import time_order
from richprogress.story.record_text import text_field

#: Where a record belongs when its rule set no ``phase`` (e.g. rules in kubespawner's #910 format).
_REASON_PHASES: dict[str, str] = {
    "FailedScheduling": "scheduling",
    "NodeAffinity": "scheduling",
    "TriggeredScaleUp": "scaling",
    # no machine is being added (only a triggered scale-up, a nomination or a scale-up means
    # one is): the search for a machine goes on
    "NotTriggerScaleUp": "scheduling",
    "Nominated": "scaling",
    "ScaleUp": "scaling",
    "Scheduled": "scheduled",
    "TaintManagerEviction": "scheduled",
    "WaitForFirstConsumer": "volume",
    "ExternalProvisioning": "volume",
    "Provisioning": "volume",
    "ProvisioningSucceeded": "volume",
    "ProvisioningFailed": "volume",
    "FailedBinding": "volume",
    "SuccessfulAttachVolume": "volume",
    "FailedAttachVolume": "volume",
    "FailedMount": "volume",
    "Pulling": "image",
    "Pulled": "image",
    "InspectFailed": "image",
    "ErrImageNeverPull": "image",
    "Created": "starting",
    "Started": "starting",
    "Unhealthy": "starting",
    "FailedPostStartHook": "starting",
    "OOMKilling": "starting",
    "FailedCreatePodSandBox": "starting",
}

#: Records that follow a stop (ours or the hub's) and say nothing about how far it got.
AFTERMATH_REASONS = frozenset({"Killing", "Stopped", "SuccessfulDelete"})


def record_phase(record: Mapping[str, Any]) -> str | None:
    """The step a record reports on: its own ``phase``, else one known from its reason."""
    phase = text_field(record, "phase")
    if phase in PHASE_LABELS:
        return phase
    failure = classify(record)
    if failure is not None:
        return failure.phase
    return _REASON_PHASES.get(text_field(record, "reason") or "")


_PHASE_INDEX = {name: index for index, name in enumerate(PHASE_LABELS)}


def phase_index(phase: str | None) -> int:
    """How far along the steps ``phase`` is (0 for the first), or -1 for no known step."""
    return _PHASE_INDEX.get(phase or "", -1)


def marks_step(record: Mapping[str, Any]) -> bool:
    """Whether a record can mark the step a spawn is on: not the aftermath of a stop, and
    not a patience row ("Still waiting for ..."), which only restates the current step."""
    return text_field(record, "reason") not in AFTERMATH_REASONS and not (
        text_field(record, "id") or ""
    ).startswith("patience-")


def latest_phase(records: Sequence[EventRecord]) -> str | None:
    """The step of the latest record that says which step it is on (stops excluded)."""
    for record in reversed(time_order(records)):
        if text_field(record, "reason") in AFTERMATH_REASONS:
            continue
        phase = record_phase(record)
        if phase is not None:
            return phase
    return None



def _as_datetime(value: str | datetime | None) -> datetime | None:
    if isinstance(value, datetime):
        return parse_timestamp(value.isoformat())
    return parse_timestamp(value)


def record_offset(record: Mapping[str, Any], started: datetime | None) -> float | None:
    """Seconds from the spawn start to a record's first occurrence (never negative).

    Uses the record's first timestamp when the start is known (a step begins at its first
    event); else the spawner's ``since_spawn``.
    """
    if started is not None:
        for key in ("first_timestamp", "timestamp"):
            moment = parse_timestamp(record.get(key))
            if moment is not None:
                return max(0.0, (moment - started).total_seconds())
    since = finite_seconds(record.get("since_spawn"))
    return None if since is None else max(0.0, since)


def _at_second(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record's timestamps cut to the whole second (the precision of most Kubernetes
    stamps; see ``time_order``), so steps begin in the order they are read."""
    stamps: dict[str, Any] = {}
    for key in ("first_timestamp", "timestamp"):
        moment = parse_timestamp(record.get(key))
        stamps[key] = moment.replace(microsecond=0) if moment is not None else None
    return {**record, **{k: v.isoformat() for k, v in stamps.items() if v is not None}}


def step_durations(
    records: Sequence[EventRecord],
    started: str | datetime | None,
    finished: str | datetime | None = None,
) -> list[dict[str, Any]]:
    """The steps a spawn went through, in order, with when each began and how long it took.

    Each item: ``{"phase", "label", "start", "duration"}`` (seconds from ``started``; when
    ``started`` is None, from the first record). Consecutive records of one step make one
    item; a step that comes back (an init container's image, then the main one) is a new
    item, because that is what happened. The last step lasts until ``finished`` (or its
    last record when ``finished`` is not given). With a start, the time before the first
    record is the "requested" step. Record times count to the whole second, as
    ``time_order`` compares them: a step never begins before the one read before it.

    Steps never go back within a pod: a record of an earlier step (an init container's
    start, then the main image's pull) folds the steps since that step's last appearance
    back into it; only a new pod (a second "Scheduled") starts the story again. Within one
    second, records go in step order (a pull stamped in the second of its Scheduled).
    """
    start_at = _as_datetime(started)
    ordered = [_at_second(record) for record in time_order(records, first=True)]
    if start_at is None:
        for record in ordered:
            start_at = parse_timestamp(record.get("first_timestamp") or record.get("timestamp"))
            if start_at is not None:
                break
    steps: list[dict[str, Any]] = []
    last_seen: float | None = None
    if started is not None:
        steps.append({"phase": "requested", "label": PHASE_LABELS["requested"], "start": 0.0})
    for marked in _steps_in_order(ordered, start_at):
        record = dict(marked)
        phase = record_phase(record)
        offset = record_offset(record, start_at)
        if phase is None or offset is None:
            continue
        latest = record_offset({"timestamp": record.get("timestamp")}, start_at)
        last_seen = max(x for x in (last_seen, offset, latest) if x is not None)
        _advance(steps, phase, offset, new_pod=text_field(record, "reason") == "Scheduled")
    end_at = _as_datetime(finished)
    end = (
        max(0.0, (end_at - start_at).total_seconds())
        if end_at is not None and start_at is not None
        else last_seen
    )
    for step, following in zip(steps, steps[1:] + [None], strict=True):
        stop = following["start"] if following is not None else end
        step["duration"] = None if stop is None else round(max(0.0, stop - step["start"]), 3)
        step["start"] = round(step["start"], 3)
    # A zero-length "requested" step (the first event came at once) says nothing.
    if len(steps) > 1 and steps[0]["phase"] == "requested" and not steps[0]["duration"]:
        steps.pop(0)
    return steps


def _steps_in_order(
    ordered: Sequence[Mapping[str, Any]], start_at: datetime | None
) -> list[Mapping[str, Any]]:
    """The records that mark steps, those of one second in step order (stable)."""
    marked = [r for r in ordered if marks_step(r)]

    def key(item: tuple[int, Mapping[str, Any]]) -> tuple[float, int, int]:
        index, record = item
        offset = record_offset(record, start_at)
        phase = record_phase(record)
        return (
            float("-inf") if offset is None else float(int(offset)),
            _PHASE_INDEX.get(phase or "", len(_PHASE_INDEX)),
            index,
        )

    # Offsets can be None (no stamp): those keep their place by sorting only known runs.
    if any(record_offset(r, start_at) is None for r in marked):
        return marked
    return [record for _, record in sorted(enumerate(marked), key=key)]


def _advance(steps: list[dict[str, Any]], phase: str, offset: float, *, new_pod: bool) -> None:
    """Move the step strip to ``phase`` at ``offset``, never back to an earlier step."""
    if steps and steps[-1]["phase"] == phase:
        return
    current = _PHASE_INDEX[steps[-1]["phase"]] if steps else -1
    if _PHASE_INDEX[phase] > current or (new_pod and current > _PHASE_INDEX[phase]):
        steps.append({"phase": phase, "label": PHASE_LABELS[phase], "start": offset})
        return
    # an earlier step again: it goes on, absorbing the steps since it was last seen
    for index in range(len(steps) - 1, -1, -1):
        if steps[index]["phase"] == phase:
            del steps[index + 1 :]
            return
    # a step never seen, earlier than the current one: part of the current step

