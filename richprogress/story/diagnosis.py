"""Why a spawn failed, in one sentence: the decisive record, its hint, the step it died in.

Plain, pure functions over EventRecords (no JupyterHub or Kubernetes import), shared by the
failure page, the "Copy details" report and ``richprogress explain --diagnose``:

- ``diagnose(records, failure_message)`` picks the record that best explains the failure;
- ``step_durations(records, started)`` says how long each step took;
- ``fold_records(records, keep)`` folds long runs of repeats so a timeline fits a screenshot.

The hub's own start timeout leaves an empty "Spawn failed: " message (DESIGN.md), so the
cause has to come from the records whenever they hold one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict

from richprogress.model.records import PHASE_LABELS, PHASE_NAMES, SEVERITIES, EventRecord
from richprogress.model.times import parse_timestamp
from richprogress.story.recovery import Subject, overcomes, problem_subject, success_subjects


class Diagnosis(TypedDict):
    """What the failure page shows first, and what ``explain --diagnose`` prints."""

    summary: str
    hint: str | None
    phase: str | None
    record_id: str | None


# -- hints ---------------------------------------------------------------------------------

# "your administrator", as the default rules' hints say it: one word for one person
ASK_ADMIN = "If it keeps failing, ask your administrator for help and send them this page."
HINT_RETRY = "Wait a few minutes and start your server again. " + ASK_ADMIN
HINT_IMAGE_NAME = (
    "Check the image name and tag you chose (spelling, registry, tag). "
    "If the name is right, the image may be private: ask your administrator for help and "
    "send them this page."
)
HINT_ADMIN = "This needs your administrator: ask them for help and send them this page."
HINT_SMALLER = "Choose a smaller server option if there is one, or start again later. " + ASK_ADMIN
HINT_MEMORY = (
    "Your server used more memory than it is allowed. Choose an option with more memory if "
    "there is one, or start it with fewer things running. " + ASK_ADMIN
)
HINT_CRASH = (
    "Your server keeps stopping right after it starts. Ask your administrator for help and send them "
    "this page."
)
HINT_SLOW_IMAGE = (
    "The first download of a large image onto a machine can take many minutes; it is usually "
    "faster the next time. Start your server again. " + ASK_ADMIN
)

#: Hint by the step it died in, when neither the rule nor a known failure gives one.
PHASE_HINTS: dict[str, str] = {
    "requested": HINT_RETRY,
    "scheduling": HINT_RETRY,
    "scaling": HINT_RETRY,
    "scheduled": HINT_RETRY,
    "volume": HINT_ADMIN,
    "image": HINT_IMAGE_NAME,
    "starting": HINT_ADMIN,
    "ready": HINT_RETRY,
}

#: Hint for a timeout with no record explaining it: nothing was wrong, only slow.
TIMEOUT_HINTS: dict[str, str] = {**PHASE_HINTS, "image": HINT_SLOW_IMAGE, "volume": HINT_RETRY}

#: How "while ..." reads for each step in the timeout sentence (a label alone reads badly
#: for the steps named after a state, e.g. "Machine found").
_WHILE: dict[str, str] = {
    name: "while " + label[0].lower() + label[1:] for name, label in PHASE_LABELS.items()
}
_WHILE["scheduled"] = "just after a machine was found"
_WHILE["ready"] = "just as it was getting ready"


# -- known failures ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Failure:
    """One known kind of failure: how to recognise it and how telling it is."""

    name: str
    reasons: frozenset[str]  # empty = any reason
    pattern: re.Pattern[str] | None  # searched in the raw message; None = any message
    weight: int  # higher explains more; the image-not-found beats the back-off after it
    phase: str
    hint: str


def _failure(
    name: str, reasons: str, pattern: str | None, weight: int, phase: str, hint: str
) -> _Failure:
    return _Failure(
        name,
        frozenset(reasons.split()),
        re.compile(pattern, re.IGNORECASE | re.DOTALL) if pattern else None,
        weight,
        phase,
        hint,
    )


#: First match wins; weights order them when several records match. An unknown error
#: weighs 70 and an unknown warning 20, so known follow-ups (back-offs) rank below a
#: surprising error and specific causes rank above it.
_FAILURES: tuple[_Failure, ...] = (
    _failure(
        "image-rate-limited",
        "Failed",
        r"Failed to pull image.*?(toomanyrequests|too many requests|rate limit|\b429\b)",
        85,
        "image",
        HINT_RETRY,
    ),
    _failure(
        "image-not-found",
        "Failed",
        r"Failed to pull image.*?(not ?found|manifest unknown|name unknown|does not exist|"
        r"access denied|unauthorized|failed to authorize|forbidden|authentication required|"
        r"\b40[013]\b)",
        90,
        "image",
        HINT_IMAGE_NAME,
    ),
    _failure(
        "image-invalid",
        "InspectFailed InvalidImageName ErrImageNeverPull",
        None,
        90,
        "image",
        HINT_IMAGE_NAME,
    ),
    _failure(
        "image-invalid",
        "Failed",
        r"Error: (InvalidImageName|ErrImageNeverPull)",
        90,
        "image",
        HINT_IMAGE_NAME,
    ),
    _failure("image-pull-failed", "Failed", r"Failed to pull image", 80, "image", HINT_IMAGE_NAME),
    _failure(
        "image-pull-follow-up",
        "Failed BackOff",
        r"Error: (ErrImagePull|ImagePullBackOff)|Back-off pulling image",
        30,
        "image",
        HINT_IMAGE_NAME,
    ),
    _failure("out-of-memory", "OOMKilling OOMKilled", None, 90, "starting", HINT_MEMORY),
    _failure(
        "out-of-memory", "", r"OOMKilled|OOM[- ]?kill|out of memory", 90, "starting", HINT_MEMORY
    ),
    _failure(
        "node-out-of-resources",
        "OutOfcpu OutOfmemory OutOfpods OutOfephemeral-storage",
        None,
        85,
        "scheduled",
        HINT_RETRY,
    ),
    _failure("crash-loop", "BackOff", r"restarting failed container", 40, "starting", HINT_CRASH),
    # The definitive error beats the generic retries after it ("did not pass a health check
    # yet", "not mounted yet; still trying"): a probe that killed the server, a disk held by
    # another pod, Karpenter saying no machine type fits.
    _failure("probe-killed", "Killing", r"failed (liveness|startup) probe", 85, "starting", HINT_CRASH),
    _failure("post-start-hook", "Killing", r"FailedPostStartHook", 80, "starting", HINT_ADMIN),
    _failure("post-start-hook", "FailedPostStartHook", None, 75, "starting", HINT_ADMIN),
    _failure("evicted", "Evicted Preempted Preempting", None, 80, "starting", HINT_RETRY),
    _failure("node-affinity", "NodeAffinity", None, 80, "scheduling", HINT_ADMIN),
    _failure(
        "no-machine-type-fits",
        "FailedScheduling",
        r"no instance type (has enough resources|satisfied resources)|exceed limits for (nodepool|provisioner)",
        88,
        "scheduling",
        HINT_SMALLER,
    ),
    _failure("no-scale-up", "NotTriggerScaleUp", None, 75, "scaling", HINT_SMALLER),
    _failure(
        "nothing-fits",
        "FailedScheduling",
        r"Insufficient|didn't match|untolerated taint|had taint|unbound|Too many pods|"
        r"volume node affinity conflict|didn't find available persistent volumes",
        60,
        "scheduling",
        HINT_RETRY,
    ),
    _failure("not-scheduled", "FailedScheduling", None, 45, "scheduling", HINT_RETRY),
    _failure("volume-provisioning", "ProvisioningFailed", None, 80, "volume", HINT_ADMIN),
    _failure("volume-held", "FailedAttachVolume", r"Multi-Attach error", 85, "volume", HINT_ADMIN),
    _failure(
        "volume-mount-retry",
        "FailedMount",
        r"Unable to (attach or )?mount volumes.*timed out",
        50,
        "volume",
        HINT_ADMIN,
    ),
    _failure(
        "volume", "FailedBinding FailedAttachVolume FailedMount", None, 70, "volume", HINT_ADMIN
    ),
    _failure(
        "sandbox-network",
        "FailedCreatePodSandBox",
        r"no IP addresses available|failed to assign an IP address|failed to setup network|plugin type=",
        75,
        "starting",
        HINT_ADMIN,
    ),
    _failure("sandbox", "FailedCreatePodSandBox", None, 60, "starting", HINT_RETRY),
    _failure("unhealthy", "Unhealthy", None, 35, "starting", HINT_CRASH),
)

_UNKNOWN_ERROR_WEIGHT = 70
_UNKNOWN_WARNING_WEIGHT = 20
_ERROR_BONUS = 10

#: Where a record belongs when its rule set no ``phase`` (e.g. #910-style rules).
_REASON_PHASES: dict[str, str] = {
    "FailedScheduling": "scheduling",
    "NodeAffinity": "scheduling",
    "TriggeredScaleUp": "scaling",
    "NotTriggerScaleUp": "scaling",
    "Nominated": "scaling",
    "ScaleUp": "scaling",
    "Scheduled": "scheduled",
    "TaintManagerEviction": "scheduled",
    "WaitForFirstConsumer": "volume",
    "ExternalProvisioning": "volume",
    "Provisioning": "volume",
    "ProvisioningSucceeded": "volume",
    "ProvisioningFailed": "volume",
    "FailedBinding": "volume",
    "SuccessfulAttachVolume": "volume",
    "FailedAttachVolume": "volume",
    "FailedMount": "volume",
    "Pulling": "image",
    "Pulled": "image",
    "InspectFailed": "image",
    "ErrImageNeverPull": "image",
    "Created": "starting",
    "Started": "starting",
    "Unhealthy": "starting",
    "FailedPostStartHook": "starting",
    "OOMKilling": "starting",
    "FailedCreatePodSandBox": "starting",
}

#: Records that follow a stop (ours or the hub's) and say nothing about how far it got.
_AFTERMATH_REASONS = frozenset({"Killing", "Stopped", "SuccessfulDelete"})

_SPAWN_FAILED_PREFIX = re.compile(r"^\s*(spawn failed\s*:?\s*)+", re.IGNORECASE)


def _text(record: Mapping[str, Any], key: str) -> str | None:
    """A string field, or None. Records may come from a user's hook: never trust types."""
    value = record.get(key)
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _classify(record: Mapping[str, Any]) -> _Failure | None:
    reason = _text(record, "reason") or ""
    # The event's own words: rules may reword the sentence in any way.
    raw = _text(record, "raw_message") or _text(record, "message") or ""
    for failure in _FAILURES:
        if failure.reasons and reason not in failure.reasons:
            continue
        if failure.pattern is not None and not failure.pattern.search(raw):
            continue
        return failure
    return None


def record_phase(record: Mapping[str, Any]) -> str | None:
    """The step a record reports on: its own ``phase``, else one known from its reason."""
    phase = _text(record, "phase")
    if phase in PHASE_LABELS:
        return phase
    failure = _classify(record)
    if failure is not None:
        return failure.phase
    return _REASON_PHASES.get(_text(record, "reason") or "")


def _severity(record: Mapping[str, Any]) -> str:
    """The record's severity; from its type when a hand-made record has none (or a bad one)."""
    severity = _text(record, "severity")
    if severity in SEVERITIES:
        return severity
    return "warning" if record.get("type") == "Warning" else "info"


def time_order(records: Sequence[EventRecord], *, first: bool = False) -> list[EventRecord]:
    """Records sorted by time, stably (equal or missing times keep their input order).

    ``first=True`` sorts by first occurrence (a timeline's reading order); otherwise by the
    latest occurrence (what happened last). A record with no timestamp takes the time of the
    record before it, so it stays where the input put it.

    Times are compared to the whole second: Kubernetes stamps ``firstTimestamp`` and
    ``lastTimestamp`` to the second but ``eventTime`` (events.k8s.io) to the microsecond, so
    an image pull stamped ``12:00:01`` would otherwise sort before a scheduling stamped
    ``12:00:01.8`` although it came after it. Within one second the input (arrival) order
    decides.
    """
    keyed: list[tuple[datetime | None, int, EventRecord]] = []
    previous: datetime | None = None
    for index, record in enumerate(records):
        stamps = (
            (record.get("first_timestamp"), record.get("timestamp"))
            if first
            else (record.get("timestamp"), record.get("first_timestamp"))
        )
        moment = next((m for m in map(parse_timestamp, stamps) if m is not None), None)
        if moment is not None:
            moment = moment.replace(microsecond=0)
        if moment is None:
            moment = previous
        previous = moment
        keyed.append((moment, index, record))
    # Records before any timestamp sort first, as they came.
    known = [k for k in keyed if k[0] is not None]
    unknown = [k for k in keyed if k[0] is None]
    known.sort(key=lambda k: (k[0], k[1]))
    return [k[2] for k in unknown] + [k[2] for k in known]


def _phase_index(phase: str | None) -> int:
    return PHASE_NAMES.index(phase) if phase in PHASE_NAMES else -1


def latest_phase(records: Sequence[EventRecord]) -> str | None:
    """The step of the latest record that says which step it is on (stops excluded)."""
    for record in reversed(time_order(records)):
        if _text(record, "reason") in _AFTERMATH_REASONS:
            continue
        phase = record_phase(record)
        if phase is not None:
            return phase
    return None


def decisive_record(records: Sequence[EventRecord]) -> EventRecord | None:
    """The record that best explains a failure, or None when none does.

    Candidates are warnings and errors (by ``severity``; by ``type`` only when a record has
    no valid severity) not overcome later: a FailedScheduling followed by a scale-up or a
    Scheduled is over, and so is a failed pull followed by a ``Pulled`` of the same image
    (a later success of the same kind, ``recovery``). Among them the most telling wins: a
    known specific cause over its follow-ups, an error over a warning, then the latest.
    """
    ordered, overcome, failures = _scan(records)
    best: tuple[int, int, EventRecord] | None = None
    for position, record in enumerate(ordered):
        if overcome[position] or _severity(record) == "info":
            continue
        severity = _severity(record)
        failure = failures[position]
        if failure is not None:
            weight = failure.weight
        elif severity == "error":
            weight = _UNKNOWN_ERROR_WEIGHT
        else:
            weight = _UNKNOWN_WARNING_WEIGHT
        if severity == "error":
            weight += _ERROR_BONUS
        # ">=" so that among equals the latest wins.
        if best is None or (weight, position) >= (best[0], best[1]):
            best = (weight, position, record)
    return best[2] if best else None


def got_past(records: Sequence[EventRecord]) -> frozenset[str]:
    """The ids of the warnings and errors the spawn got past: a later step was reached, or
    a later success of the same kind ended them (``recovery``: the Pulled after a failed
    pull). The pages mark their rows "resolved"; ``decisive_record`` never picks them."""
    ordered, overcome, _failures = _scan(records)
    return frozenset(
        str(record.get("id"))
        for position, record in enumerate(ordered)
        if overcome[position] and _severity(record) != "info"
    )


def _scan(records: Sequence[EventRecord]) -> tuple[list[EventRecord], list[bool], list[_Failure | None]]:
    """The records in time order, whether each problem among them was got past, and each
    one's classified failure (None where it was got past, or is no problem)."""
    ordered = time_order(records)
    # progress_after[i]: the furthest step a plain, good record reached after position i.
    progress_after = [-1] * (len(ordered) + 1)
    # overcome[i]: a later step was reached, or a later success of the same kind got past
    # the problem at i (``recovery``: the Pulled after a failed pull)
    overcome = [False] * len(ordered)
    failures: list[_Failure | None] = [None] * len(ordered)
    successes: dict[str, list[Subject]] = {}
    for position in range(len(ordered) - 1, -1, -1):
        later = ordered[position]
        reached = -1
        severity = _severity(later)
        if severity == "info" and _text(later, "reason") not in _AFTERMATH_REASONS:
            # a patience row ("Still waiting for ...") restates the step: it gets past nothing
            if not (_text(later, "id") or "").startswith("patience-"):
                reached = _phase_index(record_phase(later))
            for success in success_subjects(later):
                successes.setdefault(success[0], []).append(success)
        elif severity != "info":
            if progress_after[position + 1] > _phase_index(record_phase(later)):
                overcome[position] = True
            else:
                failure = failures[position] = _classify(later)
                problem = problem_subject(failure.name if failure else None, later) if successes else None
                if problem is not None:
                    overcome[position] = any(overcomes(s, problem) for s in successes.get(problem[0], ()))
        progress_after[position] = max(reached, progress_after[position + 1])
    return ordered, overcome, failures


def ended_running(records: Sequence[EventRecord]) -> bool:
    """Whether the events end with the server running: a container started after every
    error and every warning other than a health check still settling (a readiness probe
    that fails at first is normal). For event lists with no outcome of their own (the
    command line): a spawn that became ready never ends with "What went wrong"."""
    started = -1
    trouble = -1
    for position, record in enumerate(time_order(records)):
        reason = _text(record, "reason")
        if reason == "Started":
            started = position
        elif _severity(record) == "error" or (_severity(record) == "warning" and reason != "Unhealthy"):
            trouble = position
    return started > trouble


def clean_failure_message(message: str | None) -> str:
    """The exception's text without JupyterHub's "Spawn failed:" prefixes; "" if nothing left."""
    if not message:
        return ""
    return _SPAWN_FAILED_PREFIX.sub("", str(message)).strip()


def timeout_sentence(phase: str | None) -> str:
    """What to say when the hub gave up and no record says why."""
    while_ = _WHILE.get(phase or "requested", _WHILE["requested"])
    return f"Your server did not start within the time limit {while_}."


def diagnose(records: Sequence[EventRecord], failure_message: str | None = None) -> Diagnosis:
    """Say in one sentence why a spawn failed, what the user can do, and in which step.

    ``failure_message`` is the exception's text (may be "" or just "Spawn failed: " when
    the hub's own timeout fired). The records win over it when one explains the failure.
    Deterministic and pure.
    """
    record = decisive_record(records)
    reached = latest_phase(records)
    if record is not None:
        failure = _classify(record)
        phase = record_phase(record) or reached or "requested"
        hint = _text(record, "hint") or (failure.hint if failure else None)
        if not hint:
            hint = PHASE_HINTS.get(phase or "requested", HINT_RETRY)
        summary = " ".join((_text(record, "message") or _text(record, "raw_message") or "").split())
        if not summary:
            summary = clean_failure_message(failure_message) or timeout_sentence(phase)
        return Diagnosis(summary=summary, hint=hint, phase=phase, record_id=_text(record, "id"))
    phase = reached or "requested"
    cleaned = clean_failure_message(failure_message)
    if cleaned:
        return Diagnosis(
            summary=cleaned[0].upper() + cleaned[1:],
            hint=PHASE_HINTS.get(phase, HINT_RETRY),
            phase=phase,
            record_id=None,
        )
    return Diagnosis(
        summary=timeout_sentence(phase),
        hint=TIMEOUT_HINTS.get(phase, HINT_RETRY),
        phase=phase,
        record_id=None,
    )


# -- how long each step took ---------------------------------------------------------------


def _as_datetime(value: str | datetime | None) -> datetime | None:
    if isinstance(value, datetime):
        return parse_timestamp(value.isoformat())
    return parse_timestamp(value)


def record_offset(record: Mapping[str, Any], started: datetime | None) -> float | None:
    """Seconds from the spawn start to a record's first occurrence (never negative).

    Uses the record's first timestamp when the start is known (a step begins at its first
    event); else the spawner's ``since_spawn``.
    """
    if started is not None:
        for key in ("first_timestamp", "timestamp"):
            moment = parse_timestamp(record.get(key))
            if moment is not None:
                return max(0.0, (moment - started).total_seconds())
    since = _number(record.get("since_spawn"))
    return None if since is None else max(0.0, since)


def _at_second(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record's timestamps cut to the whole second (the precision of most Kubernetes
    stamps; see ``time_order``), so steps begin in the order they are read."""
    stamps: dict[str, Any] = {}
    for key in ("first_timestamp", "timestamp"):
        moment = parse_timestamp(record.get(key))
        stamps[key] = moment.replace(microsecond=0) if moment is not None else None
    return {**record, **{k: v.isoformat() for k, v in stamps.items() if v is not None}}


def step_durations(
    records: Sequence[EventRecord],
    started: str | datetime | None,
    finished: str | datetime | None = None,
) -> list[dict[str, Any]]:
    """The steps a spawn went through, in order, with when each began and how long it took.

    Each item: ``{"phase", "label", "start", "duration"}`` (seconds from ``started``; when
    ``started`` is None, from the first record). Consecutive records of one step make one
    item; a step that comes back (an init container's image, then the main one) is a new
    item, because that is what happened. The last step lasts until ``finished`` (or its
    last record when ``finished`` is not given). With a start, the time before the first
    record is the "requested" step. Record times count to the whole second, as
    ``time_order`` compares them: a step never begins before the one read before it.

    Steps never go back within a pod: a record of an earlier step (an init container's
    start, then the main image's pull) folds the steps since that step's last appearance
    back into it; only a new pod (a second "Scheduled") starts the story again. Within one
    second, records go in step order (a pull stamped in the second of its Scheduled).
    """
    start_at = _as_datetime(started)
    ordered = [_at_second(record) for record in time_order(records, first=True)]
    if start_at is None:
        for record in ordered:
            start_at = parse_timestamp(record.get("first_timestamp") or record.get("timestamp"))
            if start_at is not None:
                break
    steps: list[dict[str, Any]] = []
    last_seen: float | None = None
    if started is not None:
        steps.append({"phase": "requested", "label": PHASE_LABELS["requested"], "start": 0.0})
    for marked in _steps_in_order(ordered, start_at):
        record = dict(marked)
        phase = record_phase(record)
        offset = record_offset(record, start_at)
        if phase is None or offset is None:
            continue
        latest = record_offset({"timestamp": record.get("timestamp")}, start_at)
        last_seen = max(x for x in (last_seen, offset, latest) if x is not None)
        _advance(steps, phase, offset, new_pod=_text(record, "reason") == "Scheduled")
    end_at = _as_datetime(finished)
    end = (
        max(0.0, (end_at - start_at).total_seconds())
        if end_at is not None and start_at is not None
        else last_seen
    )
    for step, following in zip(steps, steps[1:] + [None], strict=True):
        stop = following["start"] if following is not None else end
        step["duration"] = None if stop is None else round(max(0.0, stop - step["start"]), 3)
        step["start"] = round(step["start"], 3)
    # A zero-length "requested" step (the first event came at once) says nothing.
    if len(steps) > 1 and steps[0]["phase"] == "requested" and not steps[0]["duration"]:
        steps.pop(0)
    return steps


_PHASE_INDEX = {name: index for index, name in enumerate(PHASE_LABELS)}


def _steps_in_order(
    ordered: Sequence[Mapping[str, Any]], start_at: datetime | None
) -> list[Mapping[str, Any]]:
    """The records that mark steps, those of one second in step order (stable)."""
    # patience rows restate the current step; they never mark one
    marked = [
        r
        for r in ordered
        if _text(r, "reason") not in _AFTERMATH_REASONS
        and not (_text(r, "id") or "").startswith("patience-")
    ]

    def key(item: tuple[int, Mapping[str, Any]]) -> tuple[float, int, int]:
        index, record = item
        offset = record_offset(record, start_at)
        phase = record_phase(record)
        return (
            float("-inf") if offset is None else float(int(offset)),
            _PHASE_INDEX.get(phase or "", len(_PHASE_INDEX)),
            index,
        )

    # Offsets can be None (no stamp): those keep their place by sorting only known runs.
    if any(record_offset(r, start_at) is None for r in marked):
        return marked
    return [record for _, record in sorted(enumerate(marked), key=key)]


def _advance(steps: list[dict[str, Any]], phase: str, offset: float, *, new_pod: bool) -> None:
    """Move the step strip to ``phase`` at ``offset``, never back to an earlier step."""
    if steps and steps[-1]["phase"] == phase:
        return
    current = _PHASE_INDEX[steps[-1]["phase"]] if steps else -1
    if _PHASE_INDEX[phase] > current or (new_pod and current > _PHASE_INDEX[phase]):
        steps.append({"phase": phase, "label": PHASE_LABELS[phase], "start": offset})
        return
    # an earlier step again: it goes on, absorbing the steps since it was last seen
    for index in range(len(steps) - 1, -1, -1):
        if steps[index]["phase"] == phase:
            del steps[index + 1 :]
            return
    # a step never seen, earlier than the current one: part of the current step


# -- folding -------------------------------------------------------------------------------


class Fold(TypedDict):
    """Records folded out of view: ``folded`` of them, ``count`` occurrences in all."""

    folded: int
    count: int
    reason: str | None  # None when the folded records differ
    message: str | None
    first: float | None  # since-spawn offsets of the first and last folded record
    last: float | None
    first_timestamp: str | None
    last_timestamp: str | None
    ids: list[str]


def _fold(run: Sequence[Mapping[str, Any]]) -> Fold:
    reasons = {_text(r, "reason") for r in run}
    messages = {_text(r, "message") for r in run}
    return Fold(
        folded=len(run),
        count=sum(max(1, int(_number(r.get("count")) or 1)) for r in run),
        reason=reasons.pop() if len(reasons) == 1 else None,
        message=messages.pop() if len(messages) == 1 else None,
        first=_number(run[0].get("since_spawn")),
        last=_number(run[-1].get("since_spawn")),
        first_timestamp=_text(run[0], "first_timestamp") or _text(run[0], "timestamp"),
        last_timestamp=_text(run[-1], "timestamp") or _text(run[-1], "first_timestamp"),
        ids=[str(r.get("id")) for r in run],
    )


def is_fold(item: Mapping[str, Any]) -> bool:
    """Whether an item of ``fold_records``'s result is a fold (else it is a record)."""
    return "folded" in item


# Internally a row is a list of records: one record shown, or several folded together.
_Row = list[EventRecord]


def _split_around(span: Sequence[EventRecord], decisive_id: str | None) -> list[_Row]:
    """Rows folding ``span``, with the decisive record (if inside) left as its own row."""
    for index, record in enumerate(span):
        if decisive_id is not None and record.get("id") == decisive_id:
            before, after = list(span[:index]), list(span[index + 1 :])
            return [row for row in (before, [record], after) if row]
    return [list(span)] if span else []


def fold_records(
    records: Sequence[EventRecord],
    keep: int = 0,
    *,
    decisive_id: str | None = None,
    min_run: int = 3,
) -> list[EventRecord | Fold]:
    """Fold a timeline so it fits a screenshot; folds are data (``Fold``), records unchanged.

    1. A run of ``min_run`` (at least 3) or more consecutive records with the same reason
       and message shows its first and last record with a fold of the ones between.
    2. If more than ``keep`` rows remain (``keep`` > 0), the middle is folded into one
       fold: the first rows (how it began) and the last rows (how it ended) stay.
    The record whose id is ``decisive_id`` is never folded away.
    """
    # (records, folded?) pairs; a "fold" of one record would cost a row and hide it.
    rows: list[tuple[_Row, bool]] = []
    index = 0
    while index < len(records):
        end = index + 1
        key = (_text(records[index], "reason"), _text(records[index], "message"))
        while (
            end < len(records)
            and (
                _text(records[end], "reason"),
                _text(records[end], "message"),
            )
            == key
        ):
            end += 1
        run = records[index:end]
        if len(run) >= max(min_run, 3):
            rows.append(([run[0]], False))
            for row in _split_around(run[1:-1], decisive_id):
                rows.append((row, len(row) > 1))
            rows.append(([run[-1]], False))
        else:
            rows.extend(([record], False) for record in run)
        index = end
    if keep > 0 and len(rows) > keep:
        # Keep a few rows of the start and more of the end, where failures are explained.
        keep = max(keep, 4)
        head = max(1, (keep - 1) // 3)
        tail = keep - 1 - head
        middle = [record for row, _ in rows[head : len(rows) - tail] for record in row]
        if decisive_id is not None and tail > 3 and any(r.get("id") == decisive_id for r in middle):
            # Showing it costs two rows (it splits the fold): take them from the end.
            tail -= 2
            middle = [record for row, _ in rows[head : len(rows) - tail] for record in row]
        pieces = _split_around(middle, decisive_id)
        rows = rows[:head] + [(row, len(row) > 1) for row in pieces] + rows[len(rows) - tail :]
    return [_fold(row) if folded else row[0] for row, folded in rows]
