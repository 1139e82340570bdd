"""When a "still waiting" row is due, and whether it says "longer than usual": one story
with the pending page's typical times.

The schedule of one spawn's patience rows (``RichProgressMixin``'s "Still waiting for
..."; their words are ``still_waiting``'s), told so that it never contradicts what the
page says about typical times (``static/typical-times.js``, ``richprogress.typical.words``):

- Without typical times the rows come as they always did: at ``after``, then at growing
  intervals (``after * growth ** n``), counted from the spawn request.
- While the current step has a typical time and is not late, there is no row: the page's
  step line ("Adding a machine usually takes 2-4 min; 1:20 so far") already speaks, and a
  "still waiting" there would sound like trouble where there is none.
- Once the step runs past its p90, or the whole start past its p90 -- the moment the page
  says "This is taking longer than usual" -- a row comes at that very moment, and says
  "this is taking longer than usual (usually 2-4 min)"; later rows at growing intervals
  from it (``after``, ``after * growth``, ...) say so too.

The step and its start are read the way the page reads them: the furthest step any record
reached, from the ``since_spawn`` of the record that reached it (``static/pages/pending.js``
``advanceStep`` / ``TypicalLine.enterStep``), and "late" is the page's
``isLongerThanUsual``. Pure bookkeeping: no clock of its own (``now`` is the timeline's
``elapsed()``), no JupyterHub import.
"""

from __future__ import annotations

from dataclasses import dataclass

from richprogress.model.records import PHASE_NAMES, PHASE_PROGRESS
from richprogress.model.timeline import SpawnTimeline
from richprogress.typical.statistics import Span, Typical
from richprogress.typical.words import late_after, patience_note

#: the id prefix of patience rows (they restate the step, never move it)
PATIENCE_PREFIX = "patience-"


@dataclass(frozen=True)
class Due:
    """A patience row is due now; ``note`` ("this is taking longer than usual (usually
    2-4 min)") when the step or the start is late, else None (the plain row)."""

    note: str | None


class PatiencePlan:
    """One spawn's patience schedule (see the module's docstring).

    ``follow(timeline)`` reads what changed since the last call; ``next_due(now)`` says when
    to look again (seconds since the spawn request); ``take(now, hopeless=...)`` says
    whether a row is due now and moves the schedule on.
    """

    def __init__(self, after: float, growth: float, typical: Typical | None = None) -> None:
        self.after = after
        self.growth = max(growth, 1.01)
        self.typical = typical
        #: rows of the plain schedule passed (said or not), counted from the request
        self.n = 0
        #: the furthest step a record reached, and when (seconds since the request)
        self.step: str | None = None
        self.step_start: float | None = None
        #: "longer than usual" rows said since the spawn became late, and the last one's time
        self.late_n = 0
        self.late_last: float | None = None
        self._seen = 0

    # -- what the page sees --------------------------------------------------------------

    def follow(self, timeline: SpawnTimeline) -> None:
        """Take in the records added or changed since the last call (costs what changed;
        nothing at all without typical times, where the step does not matter)."""
        if self.typical is None or self.after <= 0:
            return
        changed, self._seen = timeline.changes(self._seen)
        now = timeline.elapsed()
        for record in changed:
            phase = record.get("phase")
            if not isinstance(phase, str) or phase not in PHASE_PROGRESS:
                continue
            if self.step is not None and PHASE_NAMES.index(phase) <= PHASE_NAMES.index(self.step):
                continue
            since = record.get("since_spawn")
            start = min(float(since), now) if isinstance(since, (int, float)) else now
            was_late = self.is_late(now)
            self.step, self.step_start = phase, start
            if not self.is_late(now) or not was_late:
                # a new step that is not late (yet): its first "longer" row comes at the
                # very moment the page says so, not at the old step's cadence
                self.late_n, self.late_last = 0, None

    def _step_span(self) -> Span | None:
        if self.typical is None or self.step is None:
            return None
        return self.typical["steps"].get(self.step)

    def late_at(self) -> float | None:
        """When the page starts to say "longer than usual" for this step (seconds since the
        request): the step's start plus its p90, or the whole start's p90, the earlier
        (each p90 as the page words it: ``richprogress.typical.words.late_after``)."""
        moments = []
        span = self._step_span()
        if span is not None and self.step_start is not None:
            moments.append(self.step_start + late_after(span))
        total = self.typical["total"] if self.typical is not None else None
        if total is not None:
            moments.append(late_after(total))
        return min(moments) if moments else None

    def is_late(self, now: float) -> bool:
        at = self.late_at()
        return at is not None and now >= at

    # -- the schedule --------------------------------------------------------------------

    def _plain_due(self) -> float | None:
        return None if self.after <= 0 else self.after * self.growth**self.n

    def _late_due(self) -> float | None:
        at = self.late_at()
        if at is None or self.after <= 0:
            return None
        if self.late_n == 0 or self.late_last is None:
            return at
        return max(at, self.late_last + self.after * self.growth ** (self.late_n - 1))

    def _guard(self, now: float) -> float | None:
        """The latest time to look again so that a step reached meanwhile (which may be
        late sooner than anything known now) is not missed: now plus the shortest p90 of
        the steps after this one. Records can reach the timeline without waking the pump
        (``Subscription.handler``), so the pump cannot count on being told."""
        if self.typical is None or self.is_late(now):
            return None
        index = PHASE_NAMES.index(self.step) if self.step is not None else -1
        later = [late_after(span) for step, span in self.typical["steps"].items()
                 if step in PHASE_PROGRESS and PHASE_NAMES.index(step) > index]
        return now + max(min(later), 1.0) if later else None

    def next_due(self, now: float) -> float | None:
        """When to look again (seconds since the request); None: never (rows are off)."""
        if self.after <= 0:
            return None
        moments = [m for m in (self._plain_due(), self._late_due(), self._guard(now)) if m is not None]
        return min(moments) if moments else None

    def take(self, now: float, *, hopeless: bool = False) -> Due | None:
        """Whether a row is due at ``now``; moves the schedule past it. ``hopeless``: the
        page already says that waiting will not help, so the row is skipped (not delayed)."""
        if self.after <= 0:
            return None
        plain = self._plain_due()
        plain_hit = plain is not None and now >= plain
        while plain is not None and now >= plain:  # overdue rows are skipped, not sent in a burst
            self.n += 1
            plain = self._plain_due()
        if self.is_late(now):
            due = self._late_due()
            if due is None or now < due:
                return None
            self.late_n += 1
            self.late_last = now
            if hopeless:
                return None
            span = self._step_span()
            # (a hair over: ``start + late <= now`` must read as ``now - start >= late``)
            step_elapsed = now - self.step_start + 1e-9 if self.step_start is not None else None
            return Due(patience_note(self.typical, step=self.step if span else None,
                                     step_elapsed=step_elapsed, total_elapsed=now))
        if self._step_span() is not None or not plain_hit or hopeless:
            # the page's "usually takes" line speaks for a step that is on time
            return None
        return Due(None)


def with_note(text: str, due: Due) -> str:
    """The row's text: the spawner's "Still waiting for ..." and, when late, the note."""
    return f"{text}; {due.note}" if due.note else text
