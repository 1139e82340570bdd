"""The progress events one reader of a spawn's timeline gets: its records so far, then
each change as it happens.

An event is ``{"progress", "message", "record"}``, with ``resolved`` (the ids of the rows
this record got past) and ``diagnosis`` (the live diagnosis, where it changed; null when
cleared) when they apply: the payload the pending page reads from JupyterHub's progress
stream. No JupyterHub or Kubernetes import here.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from richprogress.model.records import PHASE_PROGRESS
from richprogress.model.timeline import SpawnTimeline
from richprogress.stream.broadcast import TimelineBroadcast


async def progress_events(
    choose: Callable[[], tuple[SpawnTimeline, TimelineBroadcast]],
) -> AsyncGenerator[dict[str, Any], None]:
    """The events of the timeline ``choose()`` gives when reading starts (as a spawner's
    ``progress()`` generator chooses it on its first step, not when it is made).

    Reads the timeline's change log from its own position, so each wake-up costs what
    changed since the last one (several changes handled in one batch come together).
    Ends when the timeline has ended and every change was sent.
    """
    timeline, broadcast = choose()
    progress = 0
    shown: Any = None  # the live diagnosis this reader sent last (None: none shown)
    floor_at = broadcast.floor_at
    batch, seen = timeline.snapshot()
    while True:
        for record in batch:
            phase = record.get("phase")
            # the bar follows the steps reached and never goes back; 100 is the hub's
            # "ready" event, never ours
            progress = max(progress, PHASE_PROGRESS.get(phase or "", 0), floor_at.get(record["id"], 0))
            event: dict[str, Any] = {
                "progress": min(progress, 99),
                "message": record.get("message") or "",
                "record": dict(record),
            }
            if broadcast.resolved_by:
                resolved = broadcast.resolved_by.get(record["id"])
                if resolved is not None:
                    event["resolved"] = list(resolved)
            live = broadcast.live.current if broadcast.live is not None else None
            if live is not shown:
                event["diagnosis"] = dict(live) if live is not None else None
                shown = live
            yield event
        if timeline.change_seq == seen:
            if timeline.outcome != "pending":
                return
            waiter = broadcast.waiter(broadcast.version)
            if waiter is not None:
                await waiter
        batch, seen = timeline.changes(seen)
