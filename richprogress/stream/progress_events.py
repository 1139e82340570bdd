"""The progress events one reader of a spawn's timeline gets: its records so far, then
each change as it happens.

An event is ``{"progress", "message", "record"}``, with ``resolved`` (the ids of the rows
this record got past), ``verdict`` (``story.verdict.Verdict.to_dict()``, where it changed, on
the last record of the change it follows) and ``diagnosis`` (the verdict's cause in the older form, where it
changed; null when cleared) when they apply: the payload the pending page reads from JupyterHub's progress
stream. No JupyterHub or Kubernetes import here.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from richprogress.model.records import PHASE_PROGRESS
from richprogress.model.timeline import SpawnTimeline
from richprogress.story.verdict import PAGE_START
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
    # what this reader's page shows so far: the verdict it was sent last (a page starts
    # as "progressing", so that one is not sent), and the diagnosis (None: none shown)
    shown: Any = PAGE_START
    shown_diagnosis: Any = None
    floor_at = broadcast.floor_at
    batch, seen = timeline.snapshot()
    while True:
        last = len(batch) - 1
        for i, record in enumerate(batch):
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
            live = broadcast.live
            # The verdict is the one after the whole batch: it rides on the batch's last
            # record, so the page has every row it speaks of first (on an earlier one, a
            # "hopeless" banner would stand beside the row it names, not yet counted twice).
            if live is not None and i == last and live.verdict.says() != shown:
                # the one verdict the page renders, and its cause in the older form
                event["verdict"] = live.verdict.to_dict()
                if live.current is not shown_diagnosis:
                    event["diagnosis"] = dict(live.current) if live.current is not None else None
                    shown_diagnosis = live.current
                shown = live.verdict.says()
            yield event
        live = broadcast.live
        if live is not None and live.verdict.says() != shown and not batch:
            # the verdict changed by time alone (the spawn became slow): no record to ride on
            yield {"progress": min(progress, 99), "verdict": live.verdict.to_dict()}
            shown = live.verdict.says()
        if timeline.change_seq == seen:
            if timeline.outcome != "pending":
                return
            waiter = broadcast.waiter(broadcast.version)
            if waiter is not None:
                await waiter
        batch, seen = timeline.changes(seen)
