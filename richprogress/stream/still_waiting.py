"""The "Still waiting for ..." rows: what a spawn waits for at the step it is in.

``PatiencePlan`` (``richprogress.stream.patience``) says when a row is due; this module
words it and makes its record. One record per step (id ``patience-<step>``), whose
``count`` grows with each row said there. No JupyterHub or Kubernetes import here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from richprogress.model.records import PHASE_NAMES, PHASE_PROGRESS, EventRecord
from richprogress.model.timeline import SpawnTimeline
from richprogress.model.times import format_clock, isoformat_z, utcnow
from richprogress.stream.patience import PATIENCE_PREFIX, Due, with_note

#: what the row says the spawn waits for when nothing more fitting is configured
DEFAULT_WAITING_FOR = "your server to start"


def current_phase(timeline: SpawnTimeline) -> str:
    """The furthest step the timeline's progress has reached."""
    progress = timeline.progress
    for name in reversed(PHASE_NAMES):
        if PHASE_PROGRESS[name] <= progress:
            return name
    return PHASE_NAMES[0]


def phase_severity(timeline: SpawnTimeline, phase: str) -> str:
    """Severity of the latest record of ``phase`` (a warning there means we are stuck)."""
    for record in reversed(timeline.records()):
        if record.get("phase") == phase and not str(record.get("id", "")).startswith(PATIENCE_PREFIX):
            return str(record.get("severity") or "info")
    return "info"


def still_waiting_text(template: str, waiting_for: Mapping[str, str], phase: str, severity: str, elapsed: float) -> str:
    """``template`` (``patience_message``) filled in for ``phase``; a plain sentence when
    the template names a field it is not given."""
    what = (
        waiting_for.get(f"{phase}:{severity}")
        or waiting_for.get(phase)
        or waiting_for.get("requested")
        or DEFAULT_WAITING_FOR
    )
    try:
        return template.format(waiting_for=what, elapsed=format_clock(elapsed), seconds=int(elapsed))
    except (KeyError, IndexError, ValueError):
        return f"Still waiting for {what} ({format_clock(elapsed)})"


def still_waiting_record(
    formatter: Any,
    timeline: SpawnTimeline,
    due: Due,
    elapsed: float,
    *,
    template: str,
    waiting_for: Mapping[str, str],
    counts: dict[str, int],
) -> EventRecord:
    """The record of a row due at ``elapsed`` (seconds since the request); ``counts``,
    the rows said per step so far, counts this one."""
    phase = current_phase(timeline)
    text = still_waiting_text(template, waiting_for, phase, phase_severity(timeline, phase), elapsed)
    counts[phase] = counts.get(phase, 0) + 1
    record: EventRecord = formatter.format_message(
        with_note(text, due), id=f"{PATIENCE_PREFIX}{phase}", timestamp=isoformat_z(utcnow())
    )
    record["phase"] = phase
    record["count"] = counts[phase]
    record["since_spawn"] = round(elapsed, 3)
    return record
