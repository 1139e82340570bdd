"""The live diagnosis of one spawn, kept current as its records arrive, and fail-fast's pieces.

The state that ``RichProgressMixin`` keeps per spawn for fail-fast (what the page shows
as the cause while the spawn runs, and whether waiting can still help), and the row, the
facts and the error it uses when it ends a spawn early. The decisions themselves are
``richprogress.story.fail_fast.assess`` (pure); this module only feeds it and keeps its
answer. JupyterHub is imported only for its ``SpawnException``, when there is one.

Cheap per event: a record of ``info`` severity that is not fatal is looked at only while a
problem is shown (it may be the one that overcomes it, e.g. the ``Scheduled`` after a
``FailedScheduling``); so a healthy spawn never runs the diagnosis at all.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any

from richprogress.model.records import EventRecord
from richprogress.model.timeline import SpawnTimeline
from richprogress.model.times import format_clock, format_duration, isoformat_z
from richprogress.story.fail_fast import FailFastPolicy, LiveDiagnosis, assess, is_fatal
from richprogress.story.verdict import SCALE_UP_REASONS, Verdict, decide

#: the id of the timeline row that says the spawn was stopped early
STOPPED_EARLY_ID = "richprogress-stopped-early"
#: its ``reason`` pill
STOPPED_EARLY_REASON = "StoppedEarly"


class LiveDiagnoser:
    """One spawn's live verdict (``verdict``, ``story.verdict.decide``) and whether
    fail-fast is due (``stop_due``).

    ``note`` is called for each record the timeline added or changed, ``refresh`` when time
    alone may change the verdict (``recheck_in`` says when), ``note_late`` when the spawn
    runs past its typical time or no longer does. Times are the timeline's ``elapsed()``:
    seconds since the spawn request, by the timeline's (injectable) clock.
    """

    def __init__(self, policy: FailFastPolicy) -> None:
        self.policy = policy
        #: record id -> seconds since the spawn request when it was first seen (fatal ones)
        self.first_seen: dict[str, float] = {}
        self.verdict: Verdict = Verdict("progressing", "requested", None)
        #: the verdict's cause in the stream's older ``diagnosis`` form (None: no cause)
        self.current: LiveDiagnosis | None = None
        self.stop_due = False
        self.late = False
        self._recheck_at: float | None = None

    @property
    def shows_cause(self) -> bool:
        """Whether the page shows a cause (blocked, hopeless, or stopped because of it):
        a "still waiting" row would then only repeat it, or contradict it."""
        return self.verdict.cause is not None

    @property
    def hopeless(self) -> bool:
        """Whether the page says waiting cannot fix the cause (or the spawn was stopped)."""
        return self.verdict.state in ("hopeless", "failed")

    @property
    def stopped(self) -> bool:
        return self.verdict.stopped_early

    def note(self, timeline: SpawnTimeline, record: Mapping[str, Any]) -> bool:
        """A record was added or changed; True when the verdict changed."""
        if self.stopped:
            return False
        fatal = is_fatal(record)
        if fatal:
            self.first_seen.setdefault(str(record.get("id")), timeline.elapsed())
        if (
            fatal
            or record.get("severity") in ("warning", "error")
            or self.verdict.state != "progressing"
            or record.get("reason") in SCALE_UP_REASONS
        ):
            return self.refresh(timeline)
        return False

    def note_late(self, timeline: SpawnTimeline, late: bool) -> bool:
        """The spawn runs past its typical time (or not); True when the verdict changed."""
        if late == self.late or self.stopped:
            return False
        self.late = late
        return self.refresh(timeline)

    def refresh(self, timeline: SpawnTimeline) -> bool:
        """Decide the verdict now; True when it changed."""
        if self.stopped:
            return False
        now = timeline.elapsed()
        records = timeline.records()
        assessment = assess(records, now=now, first_seen=self.first_seen, policy=self.policy)
        self.stop_due = assessment.stop
        self._recheck_at = None if assessment.recheck_in is None else now + assessment.recheck_in
        verdict = decide(records, now=now, late=self.late, assessment=assessment)
        if verdict.says() == self.verdict.says():
            return False
        self.verdict = verdict
        self.current = _legacy(verdict)
        return True

    def recheck_in(self, timeline: SpawnTimeline) -> float | None:
        """Seconds until the verdict may change by time alone (a fatal cause's hold)."""
        if self._recheck_at is None or self.stopped:
            return None
        return max(0.0, self._recheck_at - timeline.elapsed())

    def mark_stopped(self) -> LiveDiagnosis | None:
        """The spawn is being ended because of the verdict's cause: say so from now on."""
        cause = self.verdict.cause
        if cause is not None:
            cause = replace(cause, certainty="decisive")
        self.verdict = Verdict(
            "failed", cause.phase or self.verdict.step if cause else self.verdict.step,
            cause, self.verdict.elapsed, stopped_early=True,
        )
        self.current = _legacy(self.verdict)
        self.stop_due = False
        self._recheck_at = None
        return self.current


def _legacy(verdict: Verdict) -> LiveDiagnosis | None:
    """The verdict's cause as the stream's ``diagnosis`` (its older form): state
    ``trying`` (blocked), ``hopeless`` or ``stopped``."""
    cause = verdict.cause
    if cause is None:
        return None
    state = "stopped" if verdict.stopped_early else "hopeless" if verdict.state == "hopeless" else "trying"
    return LiveDiagnosis(
        summary=cause.summary,
        hint=cause.hint,
        phase=cause.phase,
        record_id=cause.record_id,
        state=state,
        fatal=cause.fatal,
        count=cause.count,
    )


def stopped_early_record(timeline: SpawnTimeline, start_timeout: float | None) -> EventRecord:
    """The timeline row that says the spawn was ended early, and why there was no point
    in waiting for the start timeout. Info severity and no step: it never competes with the
    cause for the diagnosis."""
    elapsed = timeline.elapsed()
    limit = format_duration(start_timeout) if start_timeout else ""
    message = f"Stopped early, at {format_clock(elapsed)}: waiting cannot fix this"
    message += f", so there was no need to wait for the {limit} time limit" if limit else ""
    now = isoformat_z(timeline.started_at + timedelta(seconds=elapsed))
    return {
        "id": STOPPED_EARLY_ID,
        "timestamp": now,
        "first_timestamp": now,
        "type": "Custom",
        "severity": "info",
        "reason": STOPPED_EARLY_REASON,
        "object": {"kind": None, "name": None, "container": None, "field_path": None},
        "component": None,
        "count": 1,
        "message": message,
        "raw_message": message,
        "rule": None,
        "phase": None,
        "hint": None,
        "since_spawn": round(elapsed, 3),
    }


def stop_early(timeline: SpawnTimeline, live: LiveDiagnoser | None, start_timeout: float | None) -> tuple[str, EventRecord]:
    """Fail-fast ends the spawn now: mark the diagnosis stopped and keep the facts on the
    timeline; returns the summary (the spawn's failure text) and the row that says so."""
    diagnosis = live.mark_stopped() if live is not None else None
    timeline.stopped_early = stopped_early_facts(diagnosis, timeline.elapsed())
    summary = diagnosis["summary"] if diagnosis else "The server cannot start."
    return summary, stopped_early_record(timeline, start_timeout)


def stopped_early_facts(diagnosis: LiveDiagnosis | None, at: float) -> dict[str, Any]:
    """What the timeline's JSON says about an early stop (``SpawnTimeline.stopped_early``)."""
    return {
        "at": round(at, 3),
        "summary": diagnosis["summary"] if diagnosis else None,
        "record_id": diagnosis["record_id"] if diagnosis else None,
        "count": diagnosis["count"] if diagnosis else None,
    }


try:  # JupyterHub >= 6: logged without a traceback, counted as a "failure" in metrics
    from jupyterhub.spawner import SpawnException as _FailureBase

    _HAS_SPAWN_EXCEPTION = True
except ImportError:
    # JupyterHub 5 has no SpawnException: it logs any other error of start() as "Unhandled
    # error" with its traceback, but an HTTPError as one line ("Error starting alice's
    # server: ..."), since its message is meant for the user
    from tornado.web import HTTPError as _FailureBase

    _HAS_SPAWN_EXCEPTION = False

#: JupyterHub 6's failure reason label for a spawn fail-fast ended
STOPPED_EARLY_METRIC_REASON = "stopped-early"


class StoppedEarly(_FailureBase):
    """The spawn was ended because a fatal cause held; its text is the diagnosis summary.

    JupyterHub shows ``jupyterhub_message`` on the progress stream ("Spawn failed: ...").
    """

    def __init__(self, summary: str) -> None:
        if _HAS_SPAWN_EXCEPTION:
            super().__init__(summary, reason=STOPPED_EARLY_METRIC_REASON)
        else:
            # JupyterHub 5: an HTTPError, whose message it logs in one line
            super().__init__(500, summary.replace("%", "%%"))
        self.summary = summary
        self.jupyterhub_message = summary

    def __str__(self) -> str:
        return self.summary


class _NotAgainAfterTimeout(logging.Filter):
    """Drops tornado's second report of a start fail-fast ended, on JupyterHub 5.

    JupyterHub 5 waits for a start with tornado's ``gen.with_timeout`` (its
    ``slow_spawn_timeout``); a start that fails after that wait is logged by tornado once
    more, "Exception in Future ... after timeout", with its traceback, beside JupyterHub's
    own one line ("Error starting alice's server: ..."). Only a ``StoppedEarly`` is dropped.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, StoppedEarly)


def quiet_tornado_after_timeout() -> None:
    """Install ``_NotAgainAfterTimeout`` on tornado's application log, once (JupyterHub 5)."""
    if _HAS_SPAWN_EXCEPTION:
        return
    log = logging.getLogger("tornado.application")
    if not any(isinstance(f, _NotAgainAfterTimeout) for f in log.filters):
        log.addFilter(_NotAgainAfterTimeout())
