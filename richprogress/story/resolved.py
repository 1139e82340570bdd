"""Rows the spawn got past: a warning or an error that a later step or a later success of
the same kind ended (the failed pull before the pull that worked, the FailedScheduling
before the scale-up's machine came).

As records arrive, say which earlier problem records are now over, so the pages can mark
their rows "resolved" (record key ``overcome: true``; on the live stream, the ids ride as
``resolved`` on the event of the record that got past them) instead of leaving a red
"does not exist" above a server that is starting. The decision itself is
``diagnosis.got_past``, the same one that keeps such records from being named the cause.
Pure: no JupyterHub or Kubernetes import.
"""

from __future__ import annotations

from collections.abc import Sequence

from richprogress.model.records import EventRecord
from richprogress.story.diagnosis import got_past

#: the severities of a problem row
PROBLEM_SEVERITIES = frozenset({"warning", "error"})


def newly_resolved(records: Sequence[EventRecord]) -> tuple[list[EventRecord], int]:
    """The problem records the spawn has got past that are not marked yet (the caller marks
    them: ``overcome: true``), and how many problem records are still open (0: nothing to
    look at until the next one). A record updated after what ended it (its count grew) comes
    as a new, unmarked record, and stays open unless something got past it again."""
    past = got_past(records)
    newly: list[EventRecord] = []
    still_open = 0
    for record in records:
        if record.get("severity") not in PROBLEM_SEVERITIES:
            continue
        if str(record.get("id")) not in past:
            still_open += 1
        elif record.get("overcome") is not True:
            newly.append(record)
    return newly, still_open
