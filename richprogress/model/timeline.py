"""One spawn's timeline: its start, its records, its outcome and the failure's reason.

The spawner keeps one ``SpawnTimeline`` per server (``spawner.spawn_timeline``), from the
spawn request until the next spawn starts, so the failure page can still say what went wrong
after a reload. The web side only reads it. No JupyterHub or Kubernetes import here.

Besides the records, a timeline keeps a *change log*: every added or changed record gets
the next change number (``change_seq``). A live reader (a progress stream) remembers the
number it has read up to and asks ``changes(since)`` for what changed after it, so waking
a reader costs what changed, not a copy and scan of every record (a long spawn with several
open tabs holds hundreds). The log is compacted as it grows, so its memory stays within a
small multiple of the records kept.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from richprogress.model.records import PHASE_PROGRESS, EventRecord
from richprogress.model.times import isoformat_z, parse_timestamp, utcnow

Outcome = Literal["pending", "ready", "failed", "stopped"]
OUTCOMES: tuple[str, ...] = ("pending", "ready", "failed", "stopped")

#: Records kept per spawn. A pod that crash-loops for an hour produces a handful of events
#: whose ``count`` grows, not thousands, so this bound is only hit by pathological clusters;
#: past it the oldest records go first (the latest are the ones that explain a failure).
DEFAULT_MAX_RECORDS = 500

#: the failure message of a spawn someone stopped before it was ready (the pages then say
#: "Stopped after", not "Gave up after")
STOPPED_BEFORE_READY = "The server was stopped before it was ready."
#: the failure text of a spawn whose ``start()`` was cancelled (a stop while it ran)
CANCELLED = "The spawn was cancelled."
#: failure texts that mean a person stopped the spawn (see ``RichProgressMixin``)
STOPPED_MESSAGES = frozenset({STOPPED_BEFORE_READY, CANCELLED})


class SpawnTimeline:
    """The records of the current (or last) spawn of one server, bounded in size."""

    def __init__(
        self,
        *,
        server_name: str = "",
        started_at: datetime | None = None,
        max_records: int = DEFAULT_MAX_RECORDS,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.server_name = server_name
        self._clock = clock
        self.started_at = started_at or clock()
        self.finished_at: datetime | None = None
        self.outcome: Outcome = "pending"
        #: the failure's text from the exception; may be "" (the hub's own timeout has none)
        self.failure_message: str | None = None
        self.max_records = max_records
        #: set when the spawner ended the spawn early because of a fatal cause
        #: (``live_diagnosis.stopped_early_facts``: at, summary, record_id, count)
        self.stopped_early: dict[str, Any] | None = None
        #: the failing container's last log lines, redacted when read
        #: (``story.container_log.ContainerLog``); None when none was read. Not in
        #: ``to_dict()``: who may see it is the pages' decision (``show_container_log``)
        self.container_log: dict[str, Any] | None = None
        self.dropped = 0
        self._records: OrderedDict[str, EventRecord] = OrderedDict()
        self._progress = 0
        #: the change log: change numbers (ascending) and the record each one stored
        self._seq = 0
        self._log_seqs: list[int] = []
        self._log: list[EventRecord] = []

    @property
    def started_at(self) -> datetime:
        """When the spawn was requested (aware datetime, UTC)."""
        return self._started_at

    @started_at.setter
    def started_at(self, value: datetime) -> None:
        self._started_at = value
        #: the same moment as POSIX seconds, for the per-event arithmetic of the spawner
        self.started_ts = value.timestamp()

    # -- writing (spawner side) -------------------------------------------------------

    def since_spawn(self, timestamp: str | None, received_at: datetime | None = None) -> float:
        """Seconds from the spawn request to an event.

        Uses the event's own timestamp when it has one (so a replay shows the same clock),
        else the time it reached us. Never negative: a cluster clock slightly behind the
        hub's must not show ``-0:01``.
        """
        moment = parse_timestamp(timestamp) or received_at or self._clock()
        return max(0.0, (moment - self.started_at).total_seconds())

    def add(self, record: EventRecord, received_at: datetime | None = None) -> tuple[EventRecord, bool]:
        """Add or update a record (same ``id`` = same event, e.g. its count grew).

        Returns the stored record (with ``since_spawn``) and whether anything changed, so
        callers can skip re-emitting an identical update.
        """
        stored: EventRecord = dict(record)  # type: ignore[assignment]
        if stored.get("since_spawn") is None:
            stored["since_spawn"] = self.since_spawn(record.get("timestamp"), received_at)
        return self.add_owned(stored)

    def add_owned(self, record: EventRecord) -> tuple[EventRecord, bool]:
        """``add`` for a record the caller hands over and never touches again, with its
        ``since_spawn`` set: stored as it is, without a copy (the spawner's hot path)."""
        records = self._records
        key = record["id"]
        previous = records.get(key)
        if previous is not None:
            if previous == record:
                return previous, False
            records[key] = record
        else:
            # a new id: nothing to compare with
            records[key] = record
            if len(records) > self.max_records:
                while len(records) > self.max_records:
                    records.popitem(last=False)
                    self.dropped += 1
        phase = record.get("phase")
        # A hook may put anything here; only a known phase name moves the progress.
        if phase is not None and type(phase) is str and phase in PHASE_PROGRESS:
            if PHASE_PROGRESS[phase] > self._progress:
                self._progress = PHASE_PROGRESS[phase]
        self._seq += 1
        self._log_seqs.append(self._seq)
        self._log.append(record)
        if len(self._log) > 2 * len(records) + 64:
            self._compact_log()
        return record, True

    def _compact_log(self) -> None:
        """Keep only log entries that hold a current record (an older version of a
        record, or a dropped one, is never read again: ``changes`` skips it anyway)."""
        records = self._records
        kept = [(seq, rec) for seq, rec in zip(self._log_seqs, self._log, strict=True) if records.get(rec["id"]) is rec]
        self._log_seqs = [seq for seq, _rec in kept]
        self._log = [rec for _seq, rec in kept]

    # -- the change log (live readers) ---------------------------------------------------

    @property
    def change_seq(self) -> int:
        """The number of the latest change (0 before the first record); grows by one per
        added or changed record."""
        return self._seq

    def changes(self, since: int) -> tuple[list[EventRecord], int]:
        """The records added or changed after change number ``since``, and ``change_seq``.

        Each record comes once, in its latest version, in the order of its latest change;
        dropped records (past ``max_records``) do not come. Costs what changed, not the
        number of records kept.
        """
        seq = self._seq
        if since >= seq:
            return [], seq
        log = self._log
        start = len(log) - (seq - since)  # no compaction since ``since``: a plain slice
        if start < 0 or self._log_seqs[start] != since + 1:
            start = bisect_right(self._log_seqs, since)
        records = self._records
        return [rec for rec in log[start:] if records.get(rec["id"]) is rec], seq

    def snapshot(self) -> tuple[list[EventRecord], int]:
        """The records in arrival order and ``change_seq``: a new reader's starting point."""
        return list(self._records.values()), self._seq

    def finish(self, outcome: Outcome, failure_message: str | None = None) -> None:
        """Record how the spawn ended. A later ``finish`` does not overwrite a failure."""
        if self.outcome == "failed" and outcome != "failed":
            return
        self.outcome = outcome
        self.finished_at = self._clock()
        if failure_message is not None:
            self.failure_message = failure_message

    # -- reading (pages, handlers) ----------------------------------------------------

    def records(self) -> list[EventRecord]:
        """The records in arrival order."""
        return list(self._records.values())

    @property
    def progress(self) -> int:
        """Highest phase progress reached (0-100); never goes back."""
        return self._progress

    def elapsed(self) -> float:
        """Seconds from the spawn request to its end, or to now while it runs."""
        end = self.finished_at or self._clock()
        return max(0.0, (end - self.started_at).total_seconds())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, served by the timeline endpoint."""
        return {
            "server_name": self.server_name,
            "started": isoformat_z(self.started_at),
            "finished": isoformat_z(self.finished_at) if self.finished_at else None,
            "elapsed": round(self.elapsed(), 3),
            "outcome": self.outcome,
            "reason": self.failure_message,
            "progress": self._progress,
            "dropped": self.dropped,
            "stopped_early": self.stopped_early,
            "records": self.records(),
        }
