"""One spawn timeline's wake-up channel for its readers, and the pump's state per timeline.

The ``progress()`` readers of a timeline wait here, and the pump (the timeline's only
writer, ``RichProgressMixin``) wakes them once per change or batch of changes. The same
object carries what the pump keeps per timeline between events: the since-spawn clock, the
parent spawner's progress floor, the live diagnosis and the rows marked resolved. No
JupyterHub or Kubernetes import here.
"""

from __future__ import annotations

import asyncio

from richprogress.stream.live_diagnosis import LiveDiagnoser
from richprogress.stream.since_spawn import SinceSpawnClock


class TimelineBroadcast:
    """Wakes every reader of one timeline when the pump changed it (no polling).

    A reader checks the timeline's ``change_seq`` and then asks ``waiter(version)`` for a
    future that ``notify`` resolves (None when ``version`` moved meanwhile: look again).
    One plain future per waiting reader, made only when it waits (cheaper than an
    ``asyncio.Event`` per change). Several changes handled in one batch resolve each
    reader's future once: the first ``notify`` empties the list of waiters, and the reader
    reads every change of the batch when it runs.
    """

    def __init__(self) -> None:
        self.version = 0
        self._waiters: list[asyncio.Future[None]] = []
        #: progress reported by the parent spawner's own progress() (plain spawners only)
        self.progress_floor = 0
        #: ``progress_floor`` when each record of the parent's messages was added, so a
        #: reconnecting page replays the same bar as the live one showed
        self.floor_at: dict[str, int] = {}
        #: the records' since_spawn readings (the clock column never runs back)
        self.clock = SinceSpawnClock()
        #: the spawn's live diagnosis (made by the spawner that owns the timeline)
        self.live: LiveDiagnoser | None = None
        #: problem records not yet got past (``richprogress.story.resolved``): while 0, a
        #: plain record needs no look back at the timeline
        self.open_problems = 0
        #: record id -> ids of the problem records it got past (sent with it as ``resolved``)
        self.resolved_by: dict[str, list[str]] = {}

    def waiter(self, version: int) -> asyncio.Future[None] | None:
        if version != self.version:
            return None
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        return future

    def notify(self) -> None:
        self.version += 1
        if self._waiters:
            waiters, self._waiters = self._waiters, []
            for future in waiters:
                if not future.done():  # a reader cancelled while waiting
                    future.set_result(None)
