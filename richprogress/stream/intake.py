"""How the pump takes one record into a spawn's timeline.

``add_record`` stamps the record's since-spawn reading, adds it, keeps the live diagnosis
current and marks the problem rows it got past as resolved. No JupyterHub or Kubernetes
import here: the spawner calls it and acts on the live diagnosis when it changed.
"""

from __future__ import annotations

from richprogress.model.records import EventRecord
from richprogress.model.timeline import SpawnTimeline
from richprogress.story.resolved import PROBLEM_SEVERITIES, newly_resolved
from richprogress.stream.broadcast import TimelineBroadcast


def add_record(timeline: SpawnTimeline, broadcast: TimelineBroadcast, record: EventRecord) -> tuple[bool, bool]:
    """Add ``record``; (whether the timeline changed, whether the live diagnosis did).

    The record is handed over: the timeline keeps it as it is (no copy), so callers pass a
    record of their own (the formatter returns a new one each time).
    """
    clock = broadcast.clock
    clock.stamp(record, timeline.started_ts)
    stored, changed = timeline.add_owned(record)
    if not changed:
        return False, False
    since = stored.get("since_spawn") or 0.0
    if since > clock.last:  # (``clock.passed``, inline: this runs once per event shown)
        clock.last = since
    live = broadcast.live
    live_changed = live is not None and live.note(timeline, stored)
    if broadcast.open_problems or stored.get("severity") in PROBLEM_SEVERITIES:
        # problems this record got past are marked "resolved": in the timeline (the
        # failure page, the JSON, a replay) and, for live pages, on this record's event
        newly, broadcast.open_problems = newly_resolved(timeline.records())
        for problem in newly:
            problem["overcome"] = True
        if newly:
            broadcast.resolved_by[str(stored["id"])] = [str(problem["id"]) for problem in newly]
    return True, live_changed
