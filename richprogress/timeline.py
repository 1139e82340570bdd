"""One spawn's timeline: its start, its records, its outcome and the failure's reason.

The spawner keeps one ``SpawnTimeline`` per server (``spawner.spawn_timeline``), from the
spawn request until the next spawn starts, so the failure page can still say what went wrong
after a reload. The web side only reads it. No JupyterHub or Kubernetes import here.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, Literal

from .records import PHASE_PROGRESS, EventRecord

Outcome = Literal["pending", "ready", "failed", "stopped"]
OUTCOMES: tuple[str, ...] = ("pending", "ready", "failed", "stopped")

#: Records kept per spawn. A pod that crash-loops for an hour produces a handful of events
#: whose ``count`` grows, not thousands, so this bound is only hit by pathological clusters;
#: past it the oldest records go first (the latest are the ones that explain a failure).
DEFAULT_MAX_RECORDS = 500

#: the failure message of a spawn someone stopped before it was ready (the pages then say
#: "Stopped after", not "Gave up after")
STOPPED_BEFORE_READY = "The server was stopped before it was ready."


def utcnow() -> datetime:
    """The clock, in one place so tests can replace it."""
    return datetime.now(timezone.utc)


def isoformat_z(moment: datetime) -> str:
    """ISO 8601 in UTC ending in ``Z``, the one timestamp format richprogress emits."""
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_timestamp(value: str | None) -> datetime | None:
    """Parse a record timestamp (``...Z`` or with an offset); None when absent or unreadable."""
    if not value or not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed


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
        self.started_at: datetime = started_at or clock()
        self.finished_at: datetime | None = None
        self.outcome: Outcome = "pending"
        #: the failure's text from the exception; may be "" (the hub's own timeout has none)
        self.failure_message: str | None = None
        self.max_records = max_records
        #: set when the spawner ended the spawn early because of a fatal cause
        #: (``live_diagnosis.stopped_early_facts``: at, summary, record_id, count)
        self.stopped_early: dict[str, Any] | None = None
        self.dropped = 0
        self._records: OrderedDict[str, EventRecord] = OrderedDict()
        self._progress = 0

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
        previous = self._records.get(stored["id"])
        if previous is not None:
            if previous == stored:
                return previous, False
            self._records[stored["id"]] = stored
        else:
            self._records[stored["id"]] = stored
            while len(self._records) > self.max_records:
                self._records.popitem(last=False)
                self.dropped += 1
        phase = stored.get("phase")
        # A hook may put anything here; only a known phase name moves the progress.
        if isinstance(phase, str) and phase in PHASE_PROGRESS:
            self._progress = max(self._progress, PHASE_PROGRESS[phase])
        return stored, True

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
