"""The one verdict: what the spawn pages say about a spawn at one moment, decided once.

``decide(records, ...)`` reads a spawn's records, its outcome and the clock and says:

- the **state** of the spawn (``STATES``): progressing, waiting (something slow is in hand:
  a machine is being added), slow (longer than usual), blocked (a cause is known and may
  clear up), hopeless (a cause waiting cannot fix, and the evidence shows it held), failed,
  stopped (a person stopped it), ready; and the two only a page can know: stopping (its
  user clicked Stop) and lost (its stream lost the hub);
- the **cause**, when there is one, with how sure it is (``certainty``): ``reported`` (the
  events state it, and it may clear up), ``unconfirmed`` (a cause waiting could not fix,
  seen once: the first "not found" of a just-pushed tag looks like a missing image) or
  ``decisive`` (it held: it happened again, or lasted; or the numbers show it can never
  fit);
- what the page **shows** in that state (``SHOWS``: the banner, the bar, the typical-time
  lines, the redirect line, the stop buttons, the note beside the step) and the **words**
  of each state (``STATE_WORDS``).

The live stream sends it as ``verdict`` whenever it changes; the failure page, "Copy
details", the JSON and text endpoints and ``richprogress explain`` render the same verdict.
No other module decides what the pages say. Pure: no JupyterHub or Kubernetes import, no
clock of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from types import MappingProxyType
from typing import Any, Literal

from richprogress.model.records import PHASE_LABELS, EventRecord
from richprogress.model.timeline import STOPPED_MESSAGES
from richprogress.story.diagnosis import diagnose
from richprogress.story.fail_fast import Assessment, FailFastPolicy, assess, record_count
from richprogress.story.known_failures import classify
from richprogress.story.record_text import text_field
from richprogress.story.steps import marks_step, phase_index, record_phase
from richprogress.wording.error_classes import fixer_of

State = Literal[
    "progressing", "waiting", "slow", "blocked", "hopeless", "failed", "stopped", "ready",
    "stopping", "lost",
]
STATES: tuple[str, ...] = (
    "progressing", "waiting", "slow", "blocked", "hopeless", "failed", "stopped", "ready",
    "stopping", "lost",
)
#: the states only a page can know (the hub never decides them)
PAGE_STATES: tuple[str, ...] = ("stopping", "lost")

Certainty = Literal["reported", "unconfirmed", "decisive"]
#: who can make the cause go away
Fixer = Literal["you", "admin", "cluster"]


@dataclass(frozen=True)
class Show:
    """What the page shows in one state (one row of ``SHOWS``)."""

    #: the live banner above the timeline: "blocked" (amber), "hopeless" (red) or None
    banner: str | None
    #: the bar: "normal", "trying" (amber stripes), "danger", "stopped" (grey), "done"
    bar: str
    #: the typical-time lines ("usually ready in about 5 s")
    typical: bool
    #: "You will be redirected automatically when it is ready."
    redirect_line: bool
    #: the stop buttons: "stop" (the stock one), "change" (also "Stop and change
    #: options"), None (nothing left to stop, or stopping already)
    stop: str | None
    #: the note beside the step label ("still trying"), None for none
    step_note: str | None


#: what each state shows; a test pins that no pair of them contradicts the page
SHOWS: Mapping[str, Show] = MappingProxyType(
    {
        "progressing": Show(None, "normal", True, True, "stop", None),
        "waiting": Show(None, "normal", True, True, "stop", None),
        "slow": Show(None, "normal", True, True, "stop", None),
        "blocked": Show("blocked", "trying", False, True, "change", "still trying"),
        "hopeless": Show("hopeless", "danger", False, False, "change", "cannot continue"),
        "failed": Show(None, "danger", False, False, None, None),
        "stopped": Show(None, "stopped", False, False, None, None),
        "ready": Show(None, "done", False, True, None, None),
        "stopping": Show(None, "stopped", False, False, None, "stopping"),
        "lost": Show(None, "normal", False, False, "stop", None),
    }
)


@dataclass(frozen=True)
class StateWords:
    """The words of a state: the banner's first line, the status line under the bar."""

    kicker: str | None
    status: str | None


#: the words of each state (None: the step's own words, or nothing)
STATE_WORDS: Mapping[str, StateWords] = MappingProxyType(
    {
        "progressing": StateWords(None, None),
        "waiting": StateWords(None, None),
        # the typical-time line says "This is taking longer than usual", with the usual time
        "slow": StateWords(None, None),
        "blocked": StateWords("Still trying", "Something is in the way; the cluster keeps trying: the reason is below."),
        "hopeless": StateWords("This will not fix itself", "Waiting will not get past this: the reason is below."),
        "failed": StateWords(None, None),
        "stopped": StateWords(None, "The server was stopped before it was ready."),
        "ready": StateWords(None, "Your server is ready."),
        "stopping": StateWords(None, "Stopping the server..."),
        "lost": StateWords(None, None),
    }
)


@dataclass(frozen=True)
class Cause:
    """Why the spawn is stuck or failed, as sure as the evidence is."""

    summary: str
    hint: str | None
    #: the step it is about (a ``PHASE_LABELS`` name)
    phase: str | None
    #: the record that says so; None when only the hub's own error does
    record_id: str | None
    certainty: Certainty
    fixer: Fixer
    #: how often the record happened
    count: int
    #: the record names a cause waiting cannot fix (its rule's ``fatal``)
    fatal: bool


@dataclass(frozen=True)
class Verdict:
    """What the pages say about a spawn at one moment."""

    state: str
    #: the step: the furthest one reached while the spawn runs; the one it died in after
    step: str
    cause: Cause | None
    #: seconds since the spawn request, when decided
    elapsed: float | None = None
    #: the spawner ended the spawn early because of the cause (fail-fast)
    stopped_early: bool = False

    def says(self) -> tuple[str, Cause | None, bool]:
        """What the pages say in this verdict: two verdicts that say the same differ only
        in their clock (the page follows the step from the rows)."""
        return (self.state, self.cause, self.stopped_early)

    @property
    def show(self) -> Show:
        return SHOWS[self.state]

    def to_dict(self) -> dict[str, Any]:
        """The verdict as JSON: its fields plus ``step_label``, ``show`` and ``words``."""
        data: dict[str, Any] = {
            "state": self.state,
            "step": self.step,
            "step_label": PHASE_LABELS.get(self.step, self.step),
            "cause": asdict(self.cause) if self.cause is not None else None,
            "elapsed": None if self.elapsed is None else round(self.elapsed, 3),
            "stopped_early": self.stopped_early,
            "show": asdict(self.show),
            "words": asdict(STATE_WORDS[self.state]),
        }
        return data

    def diagnosis(self) -> dict[str, Any] | None:
        """The cause in the diagnosis's four keys (``story.diagnosis.Diagnosis``), as the
        stored spawns and the JSON endpoints have always carried it; None without one."""
        if self.cause is None:
            return None
        return {
            "summary": self.cause.summary,
            "hint": self.cause.hint,
            "phase": self.cause.phase,
            "record_id": self.cause.record_id,
        }


#: what is said beside a cause waiting could not fix, while it was seen only once: the
#: first "not found" of a tag a registry replica does not have yet reads the same
_UNCONFIRMED_NOTES: Mapping[str, str] = MappingProxyType(
    {
        "image-not-found": "This usually means a wrong name or tag; the cluster will try again.",
        "image-invalid": "This usually means a wrong name; the cluster will try again.",
    }
)
_UNCONFIRMED_NOTE = "The cluster will try again; if it happens again, waiting will not help."

#: who can fix a kind of failure (``known_failures`` names); the rest: the cluster retries
_FIXERS: Mapping[str, Fixer] = MappingProxyType(
    {
        "image-not-found": "you",
        "image-invalid": "you",
        "image-wrong-platform": "you",
        "image-inspect-failed": "admin",
        "image-pull-failed": "admin",
        "out-of-memory": "you",
        "crash-loop": "admin",
        "container-exit": "admin",
        "server-log": "admin",
        "probe-killed": "admin",
        "post-start-hook": "admin",
        # the chosen option asks for a kind of machine the cluster has none of: another
        # option may fit (and an admin can fix the option)
        "node-affinity": "you",
        "no-such-machine": "you",
        "no-machine-type-fits": "you",
        "no-scale-up": "admin",
        "quota": "admin",
        "volume-provisioning": "admin",
        "volume-held": "admin",
        "volume": "admin",
        "sandbox-network": "admin",
    }
)

#: records that say a machine is being added for the pod (cluster-autoscaler, Karpenter)
SCALE_UP_REASONS = frozenset({"TriggeredScaleUp", "Nominated", "ScaleUp"})
#: records that say no machine will be added
_NO_SCALE_UP_REASONS = frozenset({"NotTriggerScaleUp", "FailedScaleUp", "ScaleUpFailed"})


def furthest_step(records: Sequence[Mapping[str, Any]]) -> str:
    """The furthest step any record reached (the pages' step never goes back: a repeated
    FailedScheduling after a scale-up began does not undo the scale-up)."""
    best = 0
    for record in records:
        if marks_step(record):
            best = max(best, phase_index(record_phase(record)))
    return list(PHASE_LABELS)[best]


def scale_up_in_hand(records: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the latest word on adding a machine is that one is being added."""
    in_hand = False
    for record in records:
        reason = text_field(record, "reason")
        if reason in SCALE_UP_REASONS:
            in_hand = True
        elif reason in _NO_SCALE_UP_REASONS:
            in_hand = False
        elif reason == "Scheduled":
            in_hand = False
    return in_hand


def _record(records: Sequence[EventRecord], record_id: str | None) -> EventRecord | None:
    if record_id is None:
        return None
    return next((r for r in reversed(records) if r.get("id") == record_id), None)


def _fixer(record: Mapping[str, Any] | None) -> Fixer:
    # a cause the cause reader worded says who can fix it (its error class)
    read = fixer_of(text_field(record, "rule")) if record is not None else None
    if read is not None:
        return read
    failure = classify(record) if record is not None else None
    return _FIXERS.get(failure.name, "cluster") if failure is not None else "cluster"


#: what a page says before any verdict reaches it
PAGE_START: tuple[str, Cause | None, bool] = ("progressing", None, False)


def _unconfirmed(summary: str, record: Mapping[str, Any]) -> str:
    failure = classify(record)
    note = _UNCONFIRMED_NOTES.get(failure.name if failure else "", _UNCONFIRMED_NOTE)
    summary = summary.rstrip()
    return f"{summary}{'' if summary.endswith(('.', '!', '?')) else '.'} {note}"


def decide(
    records: Sequence[EventRecord],
    *,
    outcome: str = "pending",
    failure_message: str | None = None,
    now: float | None = None,
    first_seen: Mapping[str, float] | None = None,
    policy: FailFastPolicy = FailFastPolicy(),
    late: bool = False,
    stopped_early: bool = False,
    assessment: Assessment | None = None,
) -> Verdict:
    """The verdict on a spawn (see the module's docstring). Deterministic and pure.

    ``outcome``: the timeline's ("pending", "ready", "failed"); ``failure_message``: the
    exception's text of a failed spawn; ``now``: seconds since the spawn request, by the
    clock ``first_seen`` (record id -> when the spawner first saw it) uses; ``late``: the
    spawn runs past its typical time (``stream.patience``); ``stopped_early``: fail-fast
    ended it; ``assessment``: fail-fast's ``assess`` of the same moment, when the caller
    has it already.
    """
    if outcome == "ready":
        return Verdict("ready", "ready", None, now)
    if outcome == "failed":
        return _failed(records, failure_message, now, stopped_early)
    step = furthest_step(records)
    if assessment is None:
        assessment = assess(records, now=now or 0.0, first_seen=first_seen, policy=policy)
    found = assessment.diagnosis
    if found is None:
        state = "slow" if late else "waiting" if scale_up_in_hand(records) else "progressing"
        return Verdict(state, step, None, now)
    record = _record(records, found["record_id"])
    if (
        not found["fatal"]
        and record_phase(record or {}) in ("scheduling", "scaling")
        and scale_up_in_hand(records)
    ):
        # "No machine has enough free memory" while a machine is being added: in hand
        return Verdict("slow" if late else "waiting", step, None, now)
    held = assessment.stop or assessment.held
    certainty: Certainty = "decisive" if found["fatal"] and held else "unconfirmed" if found["fatal"] else "reported"
    summary = found["summary"]
    if certainty == "unconfirmed" and record is not None:
        summary = _unconfirmed(summary, record)
    cause = Cause(
        summary=summary,
        hint=found["hint"],
        phase=found["phase"],
        record_id=found["record_id"],
        certainty=certainty,
        fixer=_fixer(record),
        count=found["count"],
        fatal=found["fatal"],
    )
    return Verdict("hopeless" if certainty == "decisive" else "blocked", step, cause, now)


def _failed(
    records: Sequence[EventRecord], failure_message: str | None, now: float | None, stopped_early: bool
) -> Verdict:
    if failure_message in STOPPED_MESSAGES:
        return Verdict("stopped", furthest_step(records), None, now)
    found = diagnose(records, failure_message)
    record = _record(records, found["record_id"])
    fatal = record is not None and record.get("fatal") is True
    cause = Cause(
        summary=found["summary"],
        hint=found["hint"],
        phase=found["phase"],
        record_id=found["record_id"],
        # it did not start: what stopped it is as sure as it gets
        certainty="decisive" if stopped_early or fatal else "reported",
        fixer=_fixer(record),
        count=record_count(record) if record is not None else 1,
        fatal=fatal,
    )
    return Verdict("failed", found["phase"] or "requested", cause, now, stopped_early)
